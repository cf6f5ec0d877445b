"""Memory layers: working memory tied to a run and closed with it (end_run or an idle
TTL), promotion from short-term to long-term by access and importance in a consolidation pass, and
get_context drawing from all three layers within its budget. SQLite + embedded Qdrant edge + MiniLM."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.lifecycle.layers import LONG_TERM, SHORT_TERM, WORKING, close_run, idle_runs, layer_of, promotions
from memoryx.search.context_block import LONG_TERM_HEADER, WORKING_HEADER, build_context, estimate_tokens
from tests.support import NoModel, shared_embeddings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
ALICE, RUN = Scope(user_id="alice"), Scope(user_id="alice", run_id="chat-1")


def make_memory(tmp_path, **overrides) -> Memory:
    return Memory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite", llm=NoModel(),
                  embeddings=shared_embeddings(), **overrides)


def put(m: Memory, text: str, *, scope: Scope = ALICE, days: float = 0, importance: float = 0.5) -> str:
    row = m.services.sql.insert_memory(scope=scope, text=text, importance=importance, created_at=T0 + timedelta(days=days))
    m.services.projector.sync_memories([row["id"]])
    return row["id"]


def layer(m: Memory, memory_id: str) -> str:
    return layer_of(m.services.sql.get_memory(memory_id))


def test_layer_rules():
    base = {"status": "active", "memory": "x", "created_at": T0.isoformat()}
    assert layer_of({**base, "run_id": "r"}) == WORKING and layer_of(base) == SHORT_TERM
    assert layer_of({**base, "run_id": "r", "metadata": {"layer": LONG_TERM}}) == LONG_TERM
    mems = [{**base, "id": "a", "access_count": 3}, {**base, "id": "b", "importance": 0.9}, {**base, "id": "c"}]
    assert [p["id"] for p in promotions(mems, min_access=3, min_importance=0.8)] == ["a", "b"]
    run = [{**base, "id": "k", "run_id": "r", "importance": 0.7}, {**base, "id": "z", "run_id": "r", "importance": 0.1}]
    kept, archived = close_run(run, keep_importance=0.5, why="ended")
    assert [k["id"] for k in kept] == ["k"] and [a["id"] for a in archived] == ["z"]
    later = (T0 + timedelta(hours=5)).timestamp()
    assert idle_runs(run, later, 4) == {"r"} and idle_runs(run, later, 6) == set() and idle_runs(run, later, 0) == set()


def test_pass_promotes_recalled_and_important_memories(tmp_path):
    with make_memory(tmp_path) as m:
        recalled = put(m, "I am allergic to peanuts")
        vital = put(m, "My daughter is called Emma", importance=0.9)
        plain = put(m, "I watched a documentary about whales")
        for _ in range(3):
            m.services.sql.record_access([recalled])
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=1))
        assert report["promoted"] == 2
        assert (layer(m, recalled), layer(m, vital), layer(m, plain)) == (LONG_TERM, LONG_TERM, SHORT_TERM)
        ops = m.judgments(report["trace_id"])["parsed_operations"]["promotions"]
        assert {p["id"] for p in ops} == {recalled, vital} and all("long-term" in p["reason"] for p in ops)


def test_end_run_keeps_what_mattered_and_archives_the_rest(tmp_path):
    with make_memory(tmp_path) as m:
        keep = put(m, "We agreed to book the flight to Lisbon on Friday", scope=RUN, importance=0.8)
        drop = put(m, "The user said hello", scope=RUN, importance=0.1)
        assert layer(m, keep) == WORKING
        out = m.end_run("chat-1", user_id="alice")
        assert out["kept"] == [keep] and out["archived"] == [drop]
        assert layer(m, keep) == SHORT_TERM and m.services.sql.get_memory(drop)["status"] == "archived"
        undone = m.rollback(out["trace_id"])  # staged before: staged again
        assert m.services.sql.get_memory(drop)["status"] == "staged" and undone["results"]


def test_idle_run_is_closed_by_a_pass_with_a_ttl(tmp_path):
    with make_memory(tmp_path, working_memory_ttl_hours=2) as m:
        drop = put(m, "The user said hello", scope=RUN, importance=0.1)
        open_run = put(m, "Still talking", scope=Scope(user_id="alice", run_id="chat-2"), days=1, importance=0.1)
        m.consolidate(user_id="alice", now=T0 + timedelta(days=1, hours=1))
        assert m.services.sql.get_memory(drop)["status"] == "archived"
        assert layer(m, open_run) == WORKING and m.services.sql.get_memory(open_run)["status"] == "active"


def test_get_context_draws_from_all_three_layers(tmp_path):
    with make_memory(tmp_path) as m:
        core = put(m, "I am allergic to peanuts", importance=0.9)
        short = put(m, "I bought a new road bike last week")
        working = put(m, "Right now we are planning a dinner menu", scope=RUN)
        m.consolidate(user_id="alice", now=T0 + timedelta(days=1))
        assert layer(m, core) == LONG_TERM
        ctx = m.get_context("what bike did I buy?", user_id="alice", run_id="chat-1", max_tokens=400)
        text = ctx["context"]
        assert LONG_TERM_HEADER in text and WORKING_HEADER in text and "peanuts" in text and "dinner menu" in text
        assert {core, working} <= set(ctx["memories"]) and text.count("peanuts") == 1
        assert ctx["tokens"] <= 400
        alone = m.get_context("what bike did I buy?", user_id="alice", max_tokens=400)  # no run: no working section
        assert WORKING_HEADER not in alone["context"] and short in alone["memories"]


def test_layer_sections_stay_within_a_sixth_of_the_budget():
    core = [{"id": f"c{i}", "memory": "a long-term memory with several words in it"} for i in range(20)]
    out = build_context([], max_tokens=120, long_term=core)
    assert out["truncated"] and estimate_tokens(out["context"]) <= 120 // 6 + 1
