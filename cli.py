"""`memoryx` command line.

    memoryx demo                                  # scripted English + Chinese conversation, offline
    memoryx add "I moved to Berlin" --user-id alice
    memoryx search "where do I live?" --user-id alice --json
    memoryx serve --host 127.0.0.1 --port 8000

Tables for people, `--json` for scripts. Exit codes: 0 ok, 1 usage or input error, 2 not found,
3 a store is unavailable (e.g. the data directory is held by `memoryx serve`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

EXIT_OK, EXIT_USAGE, EXIT_NOT_FOUND, EXIT_UNAVAILABLE = 0, 1, 2, 3

SERVER_INFO = "server.json"


class UsageError(Exception):
    """Bad command-line input (exit code 1)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's default exit code 2 means "not found" here
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}\nRun `{self.prog} --help` for the options.", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


# --------------------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------------------


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((120, 20)).columns, 200))


_ISO = __import__("re").compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def _cell(value: Any, width: int) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.3f}"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False) if value else "-"
    else:
        text = str(value)
        if _ISO.match(text):  # 2026-11-21T23:21:24.866264+00:00 -> 2026-11-21 23:21:24
            text = text[:10] + " " + text[11:19]
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def _display_len(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _display_len(text))


def print_table(rows: list[dict], columns: Sequence[tuple[str, str]], *, wide: str | None = None) -> None:
    """Columns: (key, header). `wide` takes the remaining terminal width."""
    if not rows:
        print("(none)")
        return
    total = _width()
    fixed = {k: max(len(h), *(_display_len(_cell(r.get(k), 40)) for r in rows)) for k, h in columns if k != wide}
    fixed = {k: min(w, 40) for k, w in fixed.items()}
    widths = dict(fixed)
    if wide:
        used = sum(fixed.values()) + 2 * (len(columns) - 1)
        widths[wide] = max(20, total - used)
    header = "  ".join(_pad(h, widths[k]) for k, h in columns)
    print(header.rstrip())
    print("  ".join("-" * widths[k] for k, _ in columns))
    for r in rows:
        cells = []
        for k, _ in columns:
            text = _cell(r.get(k), widths[k])
            while _display_len(text) > widths[k] and len(text) > 1:  # CJK cells are two columns wide
                text = text[:-2] + "…"
            cells.append(_pad(text, widths[k]))
        print("  ".join(cells).rstrip())


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def print_record(record: dict, keys: Iterable[str] | None = None) -> None:
    keys = list(keys or record.keys())
    width = max(len(k) for k in keys)
    for k in keys:
        if k in record:
            print(f"{k.ljust(width)}  {_cell(record[k], 10_000)}")


# --------------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------------


def _scope_kwargs(args) -> dict:
    return {"user_id": args.user_id, "agent_id": args.agent_id, "run_id": args.run_id}


def _require_scope(args, what: str) -> dict:
    kw = _scope_kwargs(args)
    if not any(kw.values()):
        raise UsageError(f"{what} needs a scope: pass --user-id (or --agent-id / --run-id), e.g. --user-id alice.")
    return kw


def _json_arg(text: str | None, name: str) -> Any:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{name} is not valid JSON ({exc.msg} at position {exc.pos}); e.g. {name} '{{\"topic\": \"food\"}}'.") from None
    if not isinstance(value, dict):
        raise UsageError(f"{name} must be a JSON object, e.g. '{{\"topic\": \"food\"}}'.")
    return value


def _open_memory(args):
    from memoryx.memory import Memory

    return Memory()


def _server_hint(settings) -> str:
    info_path = Path(settings.data_dir) / SERVER_INFO
    hint = ""
    try:
        info = json.loads(info_path.read_text())
        pid = int(info.get("pid", 0))
        os.kill(pid, 0)
        hint = (f"\n`memoryx serve` (pid {pid}) is serving this data directory at {info.get('url')}: use its HTTP API "
                f"(e.g. curl '{info.get('url')}/v1/memories?user_id=...') or stop it first.")
    except (OSError, ValueError, TypeError):
        pass
    return hint


def _msg(exc: Exception) -> str:
    """The error's message (NotFoundError is a KeyError: str() would quote it), with its trace id."""
    text = str(exc.args[0]) if exc.args else type(exc).__name__
    trace_id = getattr(exc, "trace_id", None)
    return f"{text} (trace_id={trace_id})" if trace_id else text


def _unavailable_message(exc: Exception) -> str:
    from memoryx.settings import get_settings

    msg = f"Store unavailable: {_msg(exc)}"
    try:
        settings = get_settings()
    except Exception:
        return msg
    hint = _server_hint(settings)
    return msg + hint


def _progress(total: int, desc: str, enabled: bool):
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit="session", disable=not enabled, file=sys.stderr, leave=True)
    except ImportError:  # pragma: no cover
        class _Bar:
            def __init__(self):
                self.n = 0

            def update(self, k=1):
                self.n += k
                if enabled:
                    print(f"\r{desc}: {self.n}/{total}", end="", file=sys.stderr, flush=True)

            def set_postfix_str(self, s):
                pass

            def close(self):
                if enabled:
                    print(file=sys.stderr)

        return _Bar()


# --------------------------------------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------------------------------------

_MEM_COLUMNS = [("id", "ID"), ("memory", "MEMORY"), ("category", "CATEGORY"), ("created_at", "CREATED")]


def _print_add_result(result: dict) -> None:
    if result.get("status") == "awaiting_review":
        print(f"Awaiting review (trace {result['trace_id']}): nothing written yet. Pending operations:")
        print_table(result.get("pending_operations") or [], [("event", "EVENT"), ("id", "ID"), ("text", "TEXT"), ("reason", "REASON")], wide="text")
        return
    rows = result.get("results") or []
    if rows:
        columns = [("event", "EVENT"), ("id", "ID"), ("memory", "MEMORY")]
        if any(r.get("previous_memory") for r in rows):
            columns.append(("previous_memory", "PREVIOUS"))
        print_table(rows, columns, wide="memory")
    else:
        print("Nothing new to remember.")
    rel = result.get("relations") or {}
    added = rel.get("added_entities") if isinstance(rel, dict) else None
    if added:
        print(f"Graph: {len(added)} relation(s) added.")
    print(f"trace_id: {result.get('trace_id')}")


def cmd_add(args, m) -> int:
    scope = _require_scope(args, "add")
    if args.file:
        messages = _load_messages_file(Path(args.file))
    else:
        if not args.text:
            raise UsageError("Nothing to add: pass the text, e.g. memoryx add \"I live in Berlin\" --user-id alice, or --file conversation.json.")
        text = " ".join(args.text)
        messages = text if args.role == "raw" else [{"role": args.role, "content": text}]
    result = m.add(messages, **scope, metadata=_json_arg(args.metadata, "--metadata"), infer=not args.no_infer)
    if args.json:
        print_json(result)
    else:
        _print_add_result(result)
    return EXIT_OK


def cmd_search(args, m) -> int:
    scope = _require_scope(args, "search")
    result = m.search(" ".join(args.query), **scope, limit=args.limit, filters=_json_arg(args.filters, "--filters"),
                      threshold=args.threshold)
    if args.json:
        print_json(result)
        return EXIT_OK
    print_table(result.get("results") or [], [("score", "SCORE"), ("id", "ID"), ("memory", "MEMORY")], wide="memory")
    rels = result.get("relations") or []
    if rels:
        print("\nRelations:")
        for r in rels:
            print(f"  {r.get('source')} --{r.get('relationship')}--> {r.get('destination')}")
    return EXIT_OK


def cmd_list(args, m) -> int:
    scope = _require_scope(args, "list")
    result = m.get_all(**scope, limit=args.limit, filters=_json_arg(args.filters, "--filters"))
    if args.json:
        print_json(result)
    else:
        print_table(result["results"], _MEM_COLUMNS, wide="memory")
    return EXIT_OK


def cmd_get(args, m) -> int:
    record = m.get(args.memory_id)
    if args.json:
        print_json(record)
    else:
        print_record(record)
    return EXIT_OK


def cmd_update(args, m) -> int:
    result = m.update(args.memory_id, " ".join(args.text), metadata=_json_arg(args.metadata, "--metadata"))
    if args.json:
        print_json(result)
    else:
        print(f"Updated {result['id']}: {result.get('previous_memory')!r} -> {result.get('memory')!r}")
    return EXIT_OK


def cmd_delete(args, m) -> int:
    if args.all:
        scope = _require_scope(args, "delete --all")
        if args.memory_id:
            raise UsageError("Pass either a memory id or --all with a scope, not both.")
        if not args.yes and sys.stdin.isatty():
            answer = input(f"Delete every memory of {', '.join(f'{k}={v}' for k, v in scope.items() if v)}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Cancelled.")
                return EXIT_OK
        result = m.delete_all(**scope)
    else:
        if not args.memory_id:
            raise UsageError("Pass the memory id to delete (see `memoryx list`), or --all with --user-id to delete a scope.")
        result = m.delete(args.memory_id)
    if args.json:
        print_json(result)
    else:
        print(result["message"] + (f" ({result['deleted']} memories)" if "deleted" in result else ""))
    return EXIT_OK


def cmd_history(args, m) -> int:
    events = m.history(args.memory_id)
    if args.json:
        print_json(events)
    else:
        print_table(events, [("created_at", "WHEN"), ("event", "EVENT"), ("old_memory", "OLD"), ("new_memory", "NEW"),
                             ("trace_id", "TRACE")], wide="new_memory")
    return EXIT_OK


def cmd_judgments(args, m) -> int:
    action = args.action
    if action == "list":
        rows = m.list_judgments(**_scope_kwargs(args), limit=args.limit)
        if args.json:
            print_json(rows)
        else:
            print_table(rows, [("trace_id", "TRACE"), ("created_at", "WHEN"), ("user_id", "USER"), ("status", "STATUS"),
                               ("latency_ms", "MS"), ("verification_result", "VERIFIED"), ("model_name", "MODEL")])
    elif action == "show":
        row = m.judgments(args.trace_id)
        print_json(row) if args.json else print_record(row)
    elif action == "verify":
        row = m.verify(args.trace_id, args.result, args.notes)
        print_json(row) if args.json else print(f"Judgment {args.trace_id} marked {row.get('verification_result', args.result.upper())}.")
    elif action == "stats":
        stats = m.judgment_stats(**_scope_kwargs(args))
        if args.json:
            print_json(stats)
        else:
            print_record({k: v for k, v in stats.items()})
    return EXIT_OK


def cmd_reindex(args, m) -> int:
    scope = _scope_kwargs(args)
    report = m.reindex(**scope)
    print_json(report) if args.json else print_record(report or {"status": "done"})
    return EXIT_OK


def cmd_reset(args, m) -> int:
    if not args.yes:
        raise UsageError("reset deletes every memory of every user; confirm with --yes.")
    m.reset()
    print_json({"message": "All memories deleted."}) if args.json else print("All memories deleted.")
    return EXIT_OK


# --- import ------------------------------------------------------------------------------------------


def _load_json(path: Path) -> Any:
    if not path.exists():
        raise UsageError(f"File not found: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not a JSON file: {exc}") from None


def _load_messages_file(path: Path) -> list[dict]:
    data = _load_json(path)
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not (isinstance(data, list) and data and all(isinstance(x, dict) and "content" in x for x in data)):
        raise UsageError(f"{path} must hold a JSON list of messages like [{{\"role\": \"user\", \"content\": \"...\"}}].")
    return [{"role": x.get("role", "user"), "content": x["content"], **({"name": x["name"]} if x.get("name") else {})}
            for x in data]


def _locomo_sessions(sample: dict, speaker_role: str | None) -> list[tuple[str, str | None, list[dict]]]:
    """[(session name, date, messages)] of one LoCoMo conversation, in order."""
    conv = sample.get("conversation") or {}
    speaker_a = conv.get("speaker_a")
    keys = sorted((k for k in conv if k.startswith("session_") and isinstance(conv[k], list)),
                  key=lambda k: int(k.split("_")[1]))
    sessions = []
    for key in keys:
        date = conv.get(f"{key}_date_time")
        msgs = []
        for turn in conv[key]:
            text = turn.get("text") or ""
            if turn.get("blip_caption"):
                text = f"{text} [shares a photo: {turn['blip_caption']}]"
            if not text.strip():
                continue
            role = "user" if (speaker_role is None or turn.get("speaker") == speaker_a) else "assistant"
            msg = {"role": role, "content": f"{turn.get('speaker')}: {text}", "name": turn.get("speaker")}
            if date:
                msg["timestamp"] = date
            msgs.append(msg)
        if msgs:
            sessions.append((key, date, msgs))
    return sessions


def cmd_import(args, m) -> int:
    data = _load_json(Path(args.file))
    fmt = args.format
    if fmt == "auto":
        is_locomo = isinstance(data, list) and data and isinstance(data[0], dict) and "conversation" in data[0]
        is_locomo = is_locomo or (isinstance(data, dict) and "conversation" in data)
        fmt = "locomo" if is_locomo else "messages"
    jobs: list[tuple[dict, str, Any]] = []  # (scope, label, messages)
    if fmt == "messages":
        scope = _require_scope(args, "import")
        messages = _load_messages_file(Path(args.file))
        step = max(1, args.batch)
        for i in range(0, len(messages), step):
            jobs.append((scope, f"messages {i + 1}-{min(i + step, len(messages))}", messages[i:i + step]))
    else:
        samples = data if isinstance(data, list) else [data]
        if args.limit:
            samples = samples[: args.limit]
        for sample in samples:
            scope = _scope_kwargs(args)
            if not any(scope.values()):
                scope = {"user_id": str(sample.get("sample_id") or "locomo"), "agent_id": None, "run_id": None}
            sessions = _locomo_sessions(sample, "speaker")
            if args.sessions:
                sessions = sessions[: args.sessions]
            for name, date, msgs in sessions:
                jobs.append((scope, f"{scope['user_id'] or scope['agent_id']}/{name}", msgs))
    if not jobs:
        raise UsageError(f"{args.file} holds no messages to import.")
    counts: dict[str, int] = {}
    bar = _progress(len(jobs), "Importing", enabled=not args.json and not args.quiet)
    try:
        for scope, label, msgs in jobs:
            result = m.add(msgs, **scope, infer=not args.no_infer, metadata={"source": Path(args.file).name, "session": label})
            for item in result.get("results") or []:
                counts[item.get("event", "?")] = counts.get(item.get("event", "?"), 0) + 1
            bar.update(1)
            bar.set_postfix_str(", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    finally:
        bar.close()
    summary = {"format": fmt, "batches": len(jobs), "events": counts}
    if args.json:
        print_json(summary)
    else:
        print(f"Imported {len(jobs)} batch(es) from {args.file} ({fmt}): "
              + (", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing new"))
    return EXIT_OK


# --- demo ----------------------------------------------------------------------------------------------

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


def cmd_demo(args, m) -> int:
    s = m.settings
    out = {"model": s.llm, "data_dir": str(s.data_dir), "adds": [], "searches": []}
    say = (lambda *a, **k: None) if args.json else print
    if s.llm == "offline" and not any((s.extraction_llm, s.judgment_llm, s.graph_llm)):
        say("Using the offline rule-based model (no API key, no network): fine for a demo, not for real use.\n"
            "  For a real model: export MEMORYX_LLM=openai:gpt-4o-mini OPENAI_API_KEY=... (or MEMORYX_LLM_BASE_URL=\n"
            "  http://localhost:11434/v1 for an OpenAI-compatible server such as Ollama or vLLM).")
    else:
        say(f"Using the chat model {s.llm!r}.")
    say(f"Data directory: {Path(s.data_dir).resolve()}  (user_id={DEMO_USER!r}; earlier demo memories are cleared)\n")
    m.delete_all(user_id=DEMO_USER)
    for turn in DEMO_CONVERSATION:
        user_text = turn[0]["content"]
        result = m.add(turn, user_id=DEMO_USER)
        out["adds"].append({"input": user_text, "result": result})
        say(f"> {user_text}")
        for item in result.get("results") or []:
            prev = f"   (was: {item['previous_memory']})" if item.get("previous_memory") else ""
            say(f"    {DEMO_EVENTS.get(item.get('event'), item.get('event', '?')):<7} {item.get('memory')}{prev}")
        if not result.get("results"):
            say("    (nothing new)")
    say("")
    for query in DEMO_QUERIES:
        found = m.search(query, user_id=DEMO_USER, limit=3)
        out["searches"].append({"query": query, "result": found})
        say(f"? {query}")
        for item in (found.get("results") or [])[:3]:
            say(f"    {item.get('score', 0):.3f}  {item.get('memory')}")
        if not found.get("results"):
            say("    (no memories found)")
    total = len(m.get_all(user_id=DEMO_USER)["results"])
    out["memories"] = total
    say(f"\n{total} memories stored for {DEMO_USER}. Next: `memoryx list --user-id {DEMO_USER}`, "
        f"`memoryx history <id>`, `memoryx serve`, or `langgraph dev` to open the graphs in Studio.")
    if args.json:
        print_json(out)
    return EXIT_OK


# --- serve ---------------------------------------------------------------------------------------------


def cmd_serve(args, m) -> int:
    import atexit
    import logging

    import uvicorn

    from memoryx.server.app import create_app

    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(memory=m)
    info_path = Path(m.settings.data_dir) / SERVER_INFO
    url = f"http://{args.host}:{args.port}"
    try:
        info_path.parent.mkdir(parents=True, exist_ok=True)
        info_path.write_text(json.dumps({"pid": os.getpid(), "url": url}))
        atexit.register(lambda: info_path.unlink(missing_ok=True))
    except OSError:
        pass
    print(f"MemoryX server on {url} (docs at {url}/docs, data in {Path(m.settings.data_dir).resolve()})", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    finally:
        info_path.unlink(missing_ok=True)
    return EXIT_OK


# --------------------------------------------------------------------------------------------------------
# parser
# --------------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("common options")
    g.add_argument("--user-id", help="scope: the user the memories belong to")
    g.add_argument("--agent-id", help="scope: the agent")
    g.add_argument("--run-id", help="scope: the run / session")
    g.add_argument("--json", action="store_true", help="print JSON for scripts instead of tables")
    g.add_argument("--data-dir", help="data directory of the embedded stores (default: MEMORYX_DATA_DIR or .memoryx)")
    g.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and debug logs")

    parser = _Parser(prog="memoryx", description="MemoryX: long-term memory for LLM chatbots and agents.",
                     epilog="Start with `memoryx demo`. Settings come from MEMORYX_* environment variables (or .env).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def cmd(name, func, help_, parents=(common,), **kw):
        p = sub.add_parser(name, help=help_, description=help_, parents=list(parents), **kw)
        p.set_defaults(func=func)
        return p

    p = cmd("add", cmd_add, "remember a message (facts are extracted by the model)")
    p.add_argument("text", nargs="*", help="the message text")
    p.add_argument("--file", help="a JSON list of {role, content} messages instead of text")
    p.add_argument("--role", default="user", choices=["user", "assistant", "system", "raw"], help="role of the text (default user)")
    p.add_argument("--metadata", help="JSON object stored with the memories")
    p.add_argument("--no-infer", action="store_true", help="store the text verbatim, without extraction")

    p = cmd("search", cmd_search, "find memories relevant to a query")
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--threshold", type=float)
    p.add_argument("--filters", help='JSON metadata filters, e.g. \'{"category": "preference"}\'')

    p = cmd("list", cmd_list, "list the memories of a scope, newest first")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--filters", help="JSON metadata filters")

    p = cmd("get", cmd_get, "show one memory")
    p.add_argument("memory_id")

    p = cmd("update", cmd_update, "change the text of a memory")
    p.add_argument("memory_id")
    p.add_argument("text", nargs="+")
    p.add_argument("--metadata", help="JSON object replacing the memory's metadata")

    p = cmd("delete", cmd_delete, "delete a memory (or --all of a scope)")
    p.add_argument("memory_id", nargs="?")
    p.add_argument("--all", action="store_true", help="delete every memory of the given scope")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")

    p = cmd("history", cmd_history, "the events of a memory, oldest first")
    p.add_argument("memory_id")

    p = cmd("judgments", cmd_judgments, "inspect and verify the model's ADD/UPDATE/DELETE judgments", parents=())
    jsub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    jl = jsub.add_parser("list", help="recent judgments", parents=[common])
    jl.add_argument("--limit", type=int, default=20)
    js = jsub.add_parser("show", help="one judgment by trace id", parents=[common])
    js.add_argument("trace_id")
    jv = jsub.add_parser("verify", help="record a human verdict", parents=[common])
    jv.add_argument("trace_id")
    jv.add_argument("result", type=str.upper, choices=["CORRECT", "INCORRECT", "PARTIAL"])
    jv.add_argument("--notes")
    jsub.add_parser("stats", help="accuracy of verified judgments, latency percentiles", parents=[common])

    cmd("reindex", cmd_reindex, "rebuild the vector and graph projections from SQL (optionally one scope)")

    p = cmd("import", cmd_import, "import a conversation file (JSON messages or LoCoMo)")
    p.add_argument("file")
    p.add_argument("--format", choices=["auto", "messages", "locomo"], default="auto")
    p.add_argument("--batch", type=int, default=2, help="messages per add() for a message list (default 2)")
    p.add_argument("--limit", type=int, help="LoCoMo: import only the first N conversations")
    p.add_argument("--sessions", type=int, help="LoCoMo: import only the first N sessions of each conversation")
    p.add_argument("--no-infer", action="store_true", help="store messages verbatim")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = cmd("serve", cmd_serve, "run the HTTP server (REST /v1, LangServe /graphs, /healthz, /metrics)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])

    cmd("demo", cmd_demo, "a short scripted conversation (English and Chinese) through add and search")

    p = cmd("reset", cmd_reset, "delete everything (all users)")
    p.add_argument("--yes", action="store_true")
    return parser


_NEEDS_SCOPE = {"add": "add", "search": "search", "list": "list"}


def _precheck(args) -> None:
    """Input errors that need no store: missing scope, malformed JSON options, missing files."""
    command = args.command
    if command in _NEEDS_SCOPE:
        _require_scope(args, _NEEDS_SCOPE[command])
    if command == "delete" and getattr(args, "all", False):
        _require_scope(args, "delete --all")
    for name in ("metadata", "filters"):
        if getattr(args, name, None) is not None:
            _json_arg(getattr(args, name), f"--{name}")
    for name in ("limit", "batch", "sessions"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be a positive number, got {value}.")
    path = getattr(args, "file", None)
    if path and not Path(path).exists():
        raise UsageError(f"File not found: {path}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    if args.command == "judgments" and not getattr(args, "action", None):
        print("memoryx judgments: choose an action: list, show TRACE_ID, verify TRACE_ID RESULT, stats", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "data_dir", None):
        os.environ["MEMORYX_DATA_DIR"] = args.data_dir
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import logging
    import warnings

    if getattr(args, "verbose", False):
        logging.basicConfig(level=logging.DEBUG)
    else:
        logging.basicConfig(level=logging.WARNING)
        warnings.filterwarnings("ignore")

    from memoryx.errors import InvalidInputError, MemoryXError, NotFoundError, ScopeError, StoreUnavailableError
    from memoryx.settings import get_settings

    get_settings.cache_clear()
    m = None
    try:
        _precheck(args)  # usage errors before the (slow) stores open
        m = _open_memory(args)
        return args.func(args, m)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except NotFoundError as exc:
        print(f"Not found: {_msg(exc)}\nSee the ids with `memoryx list --user-id <user>` "
              "(or `memoryx judgments list` for trace ids).", file=sys.stderr)
        return EXIT_NOT_FOUND
    except StoreUnavailableError as exc:
        print(_unavailable_message(exc), file=sys.stderr)
        return EXIT_UNAVAILABLE
    except (ScopeError, InvalidInputError) as exc:
        print(f"error: {_msg(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryXError as exc:
        if getattr(args, "verbose", False):
            raise
        print(f"error: {_msg(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except Exception as exc:
        if getattr(args, "verbose", False):
            raise
        print(f"Unexpected error: {type(exc).__name__}: {exc}\nRe-run with -v for the traceback.", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if m is not None:
            try:
                m.close()
            except Exception:
                pass


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
