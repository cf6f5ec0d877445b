"""Fuzzing the model's side of the add graph: over 1,000 generated malformed answers —
truncated JSON, wrong types, deep nesting, unknown ids, NaN/Infinity, empty answers, prose, code fences,
wrong tool arguments, huge strings, unicode junk, repetition, answers cut off at the output cap — for fact
extraction, the judgment, graph relations and graph conflicts, driven through the real graph and nodes with
scripted fake chat models. Expected: no crash (only MemoryXError), and no lost fact: every extracted fact
ends as a memory or a recorded decision, and a failed run leaves its facts in a failed judgment record.

Fast on purpose: one Services (SQLite, Qdrant edge, embedded FalkorDB) with a deterministic fake embedding,
reused by every case; `random.Random(SEED)` makes every run the same.
"""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from memoryx.core.scope import Scope
from memoryx.errors import MemoryXError, NotFoundError
from memoryx.graphs.add import add_run_config, builder
from memoryx.nodes.extract_facts import extract_facts
from memoryx.nodes.graph_conflicts import resolve_graph_conflicts
from memoryx.nodes.graph_linking import link_entities
from memoryx.nodes.graph_relations import extract_relations
from memoryx.nodes.judge import judge
from memoryx.runtime.context import Context
from memoryx.settings import Settings

SEED = 20261122
# node-level cases are cheap; the full add runs (extraction and judgment both fuzzed) prove the wiring
CASES = {"extraction": 300, "judge": 300, "add_runs": 100, "relations": 150, "conflicts": 150}
USERS = [f"fuzz_{i}" for i in range(5)]


class Scripted(FakeMessagesListChatModel):
    """Answers the scripted messages in order (cycling); tool binding accepted and ignored."""

    def bind_tools(self, tools, **kwargs: Any):
        return self


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    from memoryx.runtime.services import build_services

    settings = Settings(data_dir=tmp_path_factory.mktemp("fuzz") / "data", graph_backend="falkordb",
                        checkpointer="none", graph_extraction_mode="auto")
    svc = build_services(settings, llm=Scripted(responses=[AIMessage(content="{}")]),
                         embeddings=DeterministicFakeEmbedding(size=32))
    yield svc
    svc.close()


# --------------------------------------------------------------------------------------- the generator


def junk(rng: random.Random, n: int) -> str:
    """Unicode junk: ASCII, Latin/Greek/..., CJK, emoji, control characters and lone surrogates."""
    ranges = [(0x20, 0x7E), (0x0, 0x1F), (0x80, 0x2FFF), (0x3000, 0x9FFF), (0x1F300, 0x1FAFF), (0xD800, 0xDFFF)]
    return "".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(n))


def mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """`value` with some nodes replaced by values of the wrong type, NaN, Infinity, huge strings or junk."""
    if rng.random() < 0.25 and depth > 0:
        return rng.choice([None, True, 0, -1, 10**30, 3.5, float("nan"), float("inf"), "", "x", [], {}, [[[]]],
                           {"a": {"b": []}}, "a" * rng.randint(5_000, 60_000), junk(rng, 40), "99", "-1"])
    if isinstance(value, dict):
        out = {k: mutate(rng, v, depth + 1) for k, v in value.items() if rng.random() > 0.1}
        if rng.random() < 0.2:
            out[junk(rng, 6)] = junk(rng, 10)
        return out
    if isinstance(value, list):
        return [mutate(rng, v, depth + 1) for v in value] + ([mutate(rng, value[0], depth + 1)] if value and rng.random() < 0.2 else [])
    return value


def malformed(rng: random.Random, good: Any, *, tool_names: tuple[str, ...] = ()) -> AIMessage:
    """One malformed answer derived from a good one (a JSON-able structure)."""
    text = json.dumps(good, ensure_ascii=rng.random() < 0.5)
    kind = rng.choice(["truncated", "cut_off", "types", "nesting", "nan", "empty", "prose", "fence", "long",
                       "unicode", "repeat", "tools", "mutated_text"])
    if kind == "truncated":
        return AIMessage(content=text[: rng.randint(0, max(0, len(text) - 1))])
    if kind == "cut_off":  # the output cap reached mid-answer
        return AIMessage(content=text[: rng.randint(1, max(1, len(text) - 1))],
                         response_metadata={"finish_reason": rng.choice(["length", "max_tokens"])})
    if kind == "types":
        return AIMessage(content=json.dumps(mutate(rng, good)))
    if kind == "nesting":
        n = rng.choice([40, 900, 5_000, 50_000])
        return AIMessage(content=rng.choice(["[" * n, "{\"a\":" * n + "1" + "}" * n, "[" * n + "]" * n,
                                             json.dumps(good)[:-1] + ", \"x\": " + "[" * n + "]" * n + "}"]))
    if kind == "nan":
        return AIMessage(content=text.replace("0.7", rng.choice(["NaN", "Infinity", "-Infinity"]))
                         .replace("\"0\"", rng.choice(["NaN", "1e999", "-0"])).replace(": 0", ": NaN"))
    if kind == "empty":
        return AIMessage(content=rng.choice(["", " ", "\n", "{}", "[]", "null", "```json\n```", "{ }", "<think></think>"]))
    if kind == "prose":
        return AIMessage(content=rng.choice(["Sure! Here is what I found.", "I cannot help with that.",
                                             "The user likes tea. Done.", "Answer: " + text[: len(text) // 2]]))
    if kind == "fence":
        body = rng.choice([text, text[: len(text) // 2], json.dumps(mutate(rng, good))])
        return AIMessage(content=rng.choice([f"```json\n{body}\n```", f"```\n{body}", f"Here:\n```JSON\n{body}\n```\nok"]))
    if kind == "long":
        return AIMessage(content=json.dumps(mutate(rng, good)).replace("\"x\"", json.dumps("word " * 20_000)))
    if kind == "unicode":
        return AIMessage(content=rng.choice([junk(rng, rng.randint(1, 400)), text.replace("e", junk(rng, 3))]))
    if kind == "repeat":
        return AIMessage(content=rng.choice(["the ", "{\"", "facts ", "。"]) * rng.randint(500, 4000),
                         response_metadata={"finish_reason": "length"})
    if kind == "tools":
        name = rng.choice(list(tool_names) + ["", "unknown_tool", junk(rng, 5)])
        args = mutate(rng, good)
        if rng.random() < 0.5 and isinstance(args, dict):
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "c1", "type": "tool_call"}])
        return AIMessage(content=rng.choice(["", text[:20]]), invalid_tool_calls=[
            {"name": name, "args": text[: rng.randint(0, len(text))], "id": "c1", "error": "bad", "type": "invalid_tool_call"}])
    return AIMessage(content=text.replace("\"", rng.choice(["'", "", "\\\""]), rng.randint(1, 6)))


def answers(rng: random.Random, good: Any, **kw) -> list[AIMessage]:
    """A malformed first answer, then a malformed (70 %) or a good one (the retry working)."""
    second = malformed(rng, good, **kw) if rng.random() < 0.7 else AIMessage(content=json.dumps(good))
    return [malformed(rng, good, **kw), second]


def random_facts(rng: random.Random) -> list[str]:
    words = ["tea", "jazz", "Berlin", "上海", "猫", "hiking", "piano", "Acme", "寿司", "yoga"]
    return [f"User likes {rng.choice(words)} {rng.randint(0, 10**6)}" for _ in range(rng.randint(1, 3))]


def facts_json(texts: list[str]) -> dict:
    return {"facts": [{"text": t, "category": "preference", "importance": 0.7, "memory_type": "preference"} for t in texts]}


# --------------------------------------------------------------------------------------- checks

MESSAGES = [{"role": "user", "content": "I like tea, jazz and hiking in the Alps."}]


def failed_record(services, trace_id: str, crashes: list, facts: list | None = None) -> None:
    """A run that raised left a failed judgment record holding its extracted facts."""
    try:
        record = services.sql.get_judgment(trace_id)
    except NotFoundError:
        crashes.append(("no judgment record after a failed run", trace_id))
        return
    if record["status"] != "failed":
        crashes.append(("failed run, record not failed", record["status"]))
    if facts is not None and [f["text"] for f in record["extracted_facts"] or []] != [f["text"] for f in facts]:
        crashes.append(("facts missing from the failed record", trace_id))


def extraction_case(services, rng, crashes: list, answers_: list[AIMessage]) -> None:
    trace_id = str(uuid.uuid4())
    services.extraction_llm = Scripted(responses=answers_)
    state = {"trace_id": trace_id, "user_id": rng.choice(USERS), "normalized_messages": MESSAGES}
    try:
        out = extract_facts(state, Runtime(context=Context(services=services, graph_enabled=False, review=False)))
    except MemoryXError:
        return failed_record(services, trace_id, crashes)
    except Exception as exc:  # noqa: BLE001 - what this test hunts
        return crashes.append((type(exc).__name__, str(exc)[:300]))
    for fact in out["facts"] + out["agent_facts"]:
        if not (isinstance(fact["text"], str) and fact["text"].strip() and 0.0 <= fact["importance"] <= 1.0):
            crashes.append(("bad fact", repr(fact)[:200]))
        fact["text"].encode("utf-8")  # storable: no lone surrogate


def judge_case(services, rng, crashes: list, answers_: list[AIMessage]) -> None:
    trace_id = str(uuid.uuid4())
    services.judgment_llm = Scripted(responses=answers_)
    facts = [{"text": t, "category": "preference", "importance": 0.7, "memory_type": "preference", "owner": "user"}
             for t in random_facts(rng)]
    candidates = [{"ref": str(i), "id": str(uuid.uuid4()), "memory": f"User likes tea {i}", "owner": "user"} for i in range(3)]
    state = {"trace_id": trace_id, "user_id": rng.choice(USERS), "normalized_messages": MESSAGES, "facts": facts,
             "agent_facts": [], "candidates": candidates}
    try:
        out = judge(state, Runtime(context=Context(services=services, graph_enabled=False, review=False)))
    except MemoryXError:
        return failed_record(services, trace_id, crashes, facts)
    except Exception as exc:  # noqa: BLE001
        return crashes.append((type(exc).__name__, str(exc)[:300]))
    ids = {c["id"] for c in candidates}
    for i, fact in enumerate(facts):
        if not any(op.get("fact_index") == i and op["event"] in ("ADD", "UPDATE", "NONE") for op in out["operations"]):
            crashes.append(("lost fact", fact["text"]))
    for op in out["operations"]:
        if op["event"] != "ADD" and op.get("id") not in ids:
            crashes.append(("operation on an unknown id", repr(op)[:200]))


def check_run(services, graph, rng, crashes: list, *, extraction: list[AIMessage], judgment: list[AIMessage]) -> None:
    """One add run; then: a MemoryXError at most, and every extracted fact kept or recorded."""
    user = rng.choice(USERS)
    trace_id = str(uuid.uuid4())
    services.extraction_llm = Scripted(responses=extraction)
    services.judgment_llm = Scripted(responses=judgment)
    context = Context(services=services, graph_enabled=False, review=False, similarity_threshold=-1.0, similar_top_k=3)
    try:
        out = graph.invoke({"messages": "I like things.", "user_id": user, "trace_id": trace_id},
                           add_run_config(trace_id, user_id=user, services=services), context=context)
    except MemoryXError:  # its facts (if any were extracted) are in the failed record: the run is resumable
        return failed_record(services, trace_id, crashes)
    except Exception as exc:  # noqa: BLE001 - what this test hunts
        crashes.append((type(exc).__name__, str(exc)[:300]))
        return
    results = out["result"]["results"]
    if not results and not services.sql.list_judgments(Scope(user_id=user), limit=1):
        return  # nothing extracted (an empty list is a valid answer): nothing to lose
    try:
        record = services.sql.get_judgment(trace_id)
    except NotFoundError:
        if results:
            crashes.append(("memories written without a judgment record", trace_id))
        return
    ops = record["parsed_operations"] or []
    live = {m["memory"] for m in services.sql.list_memories(Scope(user_id=user), limit=None)}
    for i, fact in enumerate(record["extracted_facts"] or []):
        kept = [op for op in ops if op.get("fact_index") == i and op["event"] in ("ADD", "UPDATE", "NONE")]
        if not kept:
            crashes.append(("lost fact", fact["text"][:80]))
        for op in kept:
            if op["event"] == "ADD" and op["text"] not in live:
                crashes.append(("ADD not stored", op["text"][:80]))


def graph_case(services, rng, crashes: list, *, relations: list[AIMessage], conflicts: list[AIMessage] | None) -> None:
    user = rng.choice(USERS)
    trace_id = str(uuid.uuid4())
    row = services.sql.insert_memory(scope=Scope(user_id=user), text=f"Works at Initech {rng.randint(0, 10**6)}")
    services.sql.save_judgment(trace_id, scope=Scope(user_id=user), status="done", reasoning="[ADD] test")
    good = AIMessage(content=json.dumps({"entities": [], "relations": [
        {"source": "I", "relationship": "works_at", "destination": "Initech", "memory": 0}]}))
    services.graph_llm = Scripted(responses=relations + (conflicts or [AIMessage(content='{"delete": []}')]))
    if conflicts is not None:
        services.graph_llm = Scripted(responses=[good] + conflicts)
    rt = Runtime(context=Context(services=services, graph_enabled=True, review=False))
    state: dict = {"user_id": user, "trace_id": trace_id, "executed": [{"id": row["id"], "memory": row["memory"], "event": "ADD"}]}
    try:
        for node in (extract_relations, link_entities, resolve_graph_conflicts):
            state = {**state, **node(state, rt)}
    except MemoryXError:
        if "failed" not in (services.sql.get_judgment(trace_id)["reasoning"] or ""):
            crashes.append(("graph failure not noted in the judgment", trace_id))
    except Exception as exc:  # noqa: BLE001
        crashes.append((type(exc).__name__, str(exc)[:300]))
    if not services.sql.get_memories([row["id"]]):
        crashes.append(("memory lost by a graph step", row["id"]))


# --------------------------------------------------------------------------------------- the test


def test_a_thousand_malformed_answers_crash_nothing_and_lose_no_fact(services):
    rng = random.Random(SEED)
    graph = builder.compile()
    crashes: list = []
    # existing relations for the conflict cases: something to judge as outdated
    for user in USERS:
        services.graph_llm = Scripted(responses=[AIMessage(content=json.dumps({"relations": [
            {"source": "I", "relationship": "lives_in", "destination": "Quito"},
            {"source": "I", "relationship": "likes", "destination": "tea"}]}))])
        graph_case(services, rng, crashes, relations=[], conflicts=None)
    assert crashes == []

    def judge_good(texts: list[str]) -> dict:
        return {"operations": [{"fact": i, "reason": "r", "event": rng.choice(["ADD", "UPDATE", "DELETE", "NONE"]),
                                "id": str(rng.randint(0, 3)), "text": t} for i, t in enumerate(texts)]}

    for _ in range(CASES["extraction"]):
        extraction_case(services, rng, crashes, answers(rng, facts_json(random_facts(rng))))
    for _ in range(CASES["judge"]):
        judge_case(services, rng, crashes, answers(rng, judge_good(random_facts(rng))))
    for _ in range(CASES["add_runs"]):
        texts = random_facts(rng)
        check_run(services, graph, rng, crashes, extraction=answers(rng, facts_json(texts)),
                  judgment=answers(rng, judge_good(texts)))
    rel_good = {"entities": [{"entity": "I", "entity_type": "person"}, {"entity": "Initech", "entity_type": "company"}],
                "relations": [{"source": "I", "relationship": "works_at", "destination": "Initech", "memory": 0}]}
    for _ in range(CASES["relations"]):
        graph_case(services, rng, crashes, relations=answers(rng, rel_good, tool_names=("extract_entities", "establish_relationships")),
                   conflicts=None)
    del_good = {"delete": [{"source": "I", "relationship": "lives_in", "destination": "Quito"}]}
    for _ in range(CASES["conflicts"]):
        graph_case(services, rng, crashes, relations=[], conflicts=answers(rng, del_good, tool_names=("delete_graph_memory",)))

    assert sum(CASES.values()) >= 1000
    assert crashes == [], f"{len(crashes)} problems, first ones: {crashes[:5]}"


class SlowScripted(Scripted):
    def _generate(self, *args, **kwargs):
        import time

        time.sleep(0.3)
        return super()._generate(*args, **kwargs)


def test_a_spent_time_budget_adds_the_facts_by_rule_and_skips_the_graph(services):
    user, trace_id = "budget_user", str(uuid.uuid4())
    services.sql.insert_memory(scope=Scope(user_id=user), text="User likes coffee")
    services.extraction_llm = SlowScripted(responses=[AIMessage(content=json.dumps(facts_json(["User likes green tea"])))])
    services.judgment_llm = services.graph_llm = Scripted(responses=[AIMessage(content="must not be asked")])
    context = Context(services=services, graph_enabled=True, review=False, similarity_threshold=-1.0)
    out = builder.compile().invoke({"messages": "I like green tea", "user_id": user, "trace_id": trace_id},
                                   add_run_config(trace_id, user_id=user, services=services, time_budget_s=0.2),
                                   context=context)
    assert [(r["event"], r["memory"]) for r in out["result"]["results"]] == [("ADD", "User likes green tea")]
    record = services.sql.get_judgment(trace_id)
    assert record["status"] == "done" and "time budget is spent" in record["reasoning"]
    assert "graph extraction skipped" in record["reasoning"]
    assert services.judgment_llm.i == 0  # never called
