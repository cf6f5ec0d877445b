"""`memoryx demo`: a short scripted conversation (English and Chinese) through add and search, a dated fact,
a group chat with two speakers, and the profile the conversation built."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from memoryx.cli.inputs import EXIT_OK
from memoryx.cli.remote import RemoteMemory
from memoryx.cli.render import print_json

DEMO_USER = "demo-user"
DEMO_CONVERSATION = [
    [{"role": "user", "content": "Hi! My name is Alice. I live in Berlin and I work at Zalando."},
     {"role": "assistant", "content": "Nice to meet you, Alice!"}],
    [{"role": "user", "content": "I love spicy Sichuan food. I also like jazz."},
     {"role": "assistant", "content": "Noted: Sichuan food and jazz."}],
    [{"role": "user", "content": "我下个月要去上海出差，我的妹妹住在杭州。"},
     {"role": "assistant", "content": "好的，祝你出差顺利！"}],
    [{"role": "user", "content": "我喜欢喝乌龙茶。"},
     {"role": "assistant", "content": "记住了，乌龙茶。"}],
    [{"role": "user", "content": "I just moved to Munich!"},
     {"role": "assistant", "content": "Congratulations on the move!"}],
    [{"role": "user", "content": "I don't like jazz anymore."},
     {"role": "assistant", "content": "Got it."}],
]
DEMO_QUERIES = ["Which city do I live in now?", "What food does she like?", "我妹妹住在哪里？", "她喜欢喝什么？"]
DEMO_EVENTS = {"ADD": "ADD", "UPDATE": "UPDATE", "DELETE": "DELETE", "NONE": "same"}
# a relative date is made absolute from the message's own timestamp (the original words are kept)
DEMO_DATED = [{"role": "user", "content": "I went to Paris yesterday.", "timestamp": "2026-05-08T10:00:00+00:00"}]
DEMO_GROUP = "demo-group"
DEMO_GROUP_CHAT = [{"role": "user", "name": "Caroline", "content": "I moved to Boston."},
                   {"role": "user", "name": "Melanie", "content": "I like painting."}]
DEMO_GROUP_QUERY = "Where does Caroline live?"


def cmd_demo(args, m) -> int:
    say = (lambda *a, **k: None) if args.json else print
    if isinstance(m, RemoteMemory):  # the server's models and stores; it reports neither
        out = {"server": m.url, "adds": [], "searches": []}
        say(f"Using the MemoryX server at {m.url} (user_id={DEMO_USER!r}; earlier demo memories are cleared)\n")
        return _run_demo(args, m, out, say)
    s = m.settings
    out = {"model": s.llm, "data_dir": str(s.data_dir), "adds": [], "searches": []}
    if s.llm == "offline" and not any((s.extraction_llm, s.judgment_llm, s.graph_llm)):
        say("Using the offline rule-based model (no API key, no network): fine for a demo, not for real use.\n"
            "  For a real model: export MEMORYX_LLM=openai:gpt-4o-mini OPENAI_API_KEY=... (or MEMORYX_LLM_BASE_URL=\n"
            "  http://localhost:11434/v1 for an OpenAI-compatible server such as Ollama or vLLM).")
    else:
        say(f"Using the chat model {s.llm!r}.")
    say(f"Data directory: {Path(s.data_dir).resolve()}  (user_id={DEMO_USER!r}; earlier demo memories are cleared)\n")
    return _run_demo(args, m, out, say)


def memoryx_command() -> str:
    """This same `memoryx` as the user's shell reaches it: `memoryx` when PATH finds this one, else its path
    (e.g. .venv/bin/memoryx), so a suggested command runs the same code."""
    exe = Path(sys.argv[0])
    if exe.name == "memoryx":
        found = shutil.which("memoryx")
        if found and Path(found).resolve() == exe.resolve():
            command = "memoryx"
        else:
            try:
                command = str(exe.absolute().relative_to(Path.cwd()))
            except ValueError:
                command = str(exe)
    else:
        command = f"{Path(sys.executable).name} -m memoryx.cli"
    return command


def _say_add(say, label: str, result: dict) -> None:
    say(f"> {label}")
    for item in result.get("results") or []:
        prev = f"   (was: {item['previous_memory']})" if item.get("previous_memory") else ""
        say(f"    {DEMO_EVENTS.get(item.get('event'), item.get('event', '?')):<7} {item.get('memory')}{prev}")
    if not result.get("results"):
        say("    (nothing new)")


def _say_search(say, query: str, found: dict) -> None:
    say(f"? {query}")
    for item in (found.get("results") or [])[:3]:
        say(f"    {item.get('score', 0):.3f}  {item.get('memory')}")
    if not found.get("results"):
        say("    (no memories found)")


def _run_demo(args, m, out: dict, say) -> int:
    m.delete_all(user_id=DEMO_USER)
    m.delete_all(group_id=DEMO_GROUP)
    for turn in DEMO_CONVERSATION:
        result = m.add(turn, user_id=DEMO_USER)
        out["adds"].append({"input": turn[0]["content"], "result": result})
        _say_add(say, turn[0]["content"], result)
    result = m.add(DEMO_DATED, user_id=DEMO_USER)
    out["adds"].append({"input": DEMO_DATED[0]["content"], "result": result})
    _say_add(say, f"{DEMO_DATED[0]['content']}   (sent {DEMO_DATED[0]['timestamp'][:10]})", result)
    say("")
    for query in DEMO_QUERIES:
        found = m.search(query, user_id=DEMO_USER, limit=3)
        out["searches"].append({"query": query, "result": found})
        _say_search(say, query, found)

    say(f"\nA group chat ({DEMO_GROUP}): each fact belongs to the participant who said it.")
    result = m.add(DEMO_GROUP_CHAT, group_id=DEMO_GROUP)
    out["group"] = {"add": result}
    _say_add(say, " / ".join(f"{t['name']}: {t['content']}" for t in DEMO_GROUP_CHAT), result)
    found = m.search(DEMO_GROUP_QUERY, group_id=DEMO_GROUP, limit=2)
    out["group"]["search"] = {"query": DEMO_GROUP_QUERY, "result": found}
    _say_search(say, DEMO_GROUP_QUERY, found)

    profile = m.get_profile(user_id=DEMO_USER)
    out["profile"] = profile
    say(f"\nProfile of {DEMO_USER} (kept by the add graph, each value with the memories it came from):")
    for field in ("name", "home", "work"):
        if profile.get(field):
            say(f"    {field:<12} {profile[field]['value']}")
    for field in ("relationships", "preferences", "dislikes"):
        if profile.get(field):
            say(f"    {field:<12} " + ", ".join(v["value"] for v in profile[field]))
    total = len(m.get_all(user_id=DEMO_USER)["results"])
    out["memories"] = total
    mx = memoryx_command()
    # the data directory the demo was given, so the suggested command reads what the demo wrote
    where = f" --data-dir {shlex.quote(args.data_dir)}" if getattr(args, "data_dir", None) else ""
    out["next"] = f"{mx} list --user-id {DEMO_USER}{where}"
    say(f"\n{total} memories stored for {DEMO_USER}. Next: `{out['next']}`, `{mx} history <id>`, `{mx} serve`, "
        "or `langgraph dev` to open the graphs in Studio.")
    if args.json:
        print_json(out)
    return EXIT_OK
