"""The consolidate graph: staging, merge by rule and by the judge model, compression, the
forgetting curve, archive/restore, dry runs, the scope lock and the report. SQLite + embedded Qdrant edge +
MiniLM; models are the offline one or scripted fakes."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone

import pytest

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.errors import ConcurrencyError
from memoryx.lifecycle.forgetting import retention, strength
from memoryx.lifecycle.similarity import may_share_summary, split_pairs, substance_differs, survivors
from tests.support import NoModel, scripted, shared_embeddings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
ALICE = Scope(user_id="alice")


def make_memory(tmp_path, llm="offline", **overrides) -> Memory:
    return Memory(data_dir=tmp_path / "data", graph_backend="none", checkpointer="sqlite", llm=llm,
                  embeddings=shared_embeddings(), **overrides)


def put(m: Memory, text: str, *, days: float = 0, memory_type: str = "semantic", importance: float = 0.5) -> str:
    row = m.services.sql.insert_memory(scope=ALICE, text=text, memory_type=memory_type, importance=importance,
                                       created_at=T0 + timedelta(days=days))
    m.services.projector.sync_memories([row["id"]])
    return row["id"]


def status(m: Memory, memory_id: str) -> str:
    return m.services.sql.get_memory(memory_id)["status"]


def found(m: Memory, query: str, **kw) -> list[str]:
    return [r["id"] for r in m.search(query, user_id="alice", limit=5, **kw)["results"]]


# ---- pure rules ------------------------------------------------------------------------------------------

def test_forgetting_curve_rates_per_type_and_access_reinforces():
    base = {"created_at": T0.isoformat(), "importance": 0.5, "access_count": 0}
    now = (T0 + timedelta(days=120)).timestamp()
    episode, pref = {**base, "memory_type": "episodic"}, {**base, "memory_type": "preference"}
    assert retention(episode, now) < 0.05 < retention(pref, now)  # preferences fade slower than episodes
    recalled = {**episode, "access_count": 5, "last_accessed_at": (T0 + timedelta(days=100)).isoformat()}
    assert strength(recalled) > strength(episode) and retention(recalled, now) > 0.5


def test_pair_rules_send_superseded_facts_to_the_model():
    assert substance_differs("My sister is 30", "My sister is 31")
    assert substance_differs("I like tea", "I don't like tea anymore")
    texts = {"a": "I live in Paris", "b": "I live in Paris.", "c": "My sister is 30", "d": "My sister is 31"}
    rule, judge = split_pairs({("a", "b"): 0.99, ("c", "d"): 0.97}, texts, 0.95, 0.85)
    assert [(p["a"], p["b"]) for p in rule] == [("a", "b")] and [(p["a"], p["b"]) for p in judge] == [("c", "d")]
    merges = survivors([{"a": "x", "b": "y", "similarity": 0.99, "reason": "r"},
                        {"a": "y", "b": "z", "similarity": 0.99, "reason": "r"}], {"x": (2,), "y": (1,), "z": (3,)})
    assert {(m["survivor"], m["merged"]) for m in merges} == {("y", "x"), ("y", "z")}  # the oldest survives


# ---- the graph -------------------------------------------------------------------------------------------

def test_staged_then_active_and_rule_merge_keeps_the_older(tmp_path):
    with make_memory(tmp_path, llm=NoModel()) as m:  # cosine >= 0.95 only: the model is never asked
        old = put(m, "I have a golden retriever named Max", days=0)
        new = put(m, "I have a golden retriever named Max.", days=3)
        other = put(m, "I work as a nurse at the city hospital", days=4)
        assert {status(m, i) for i in (old, new, other)} == {"staged"}
        assert set(found(m, "golden retriever")) >= {old, new}  # search sees staged memories
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=5))
        assert report["merged"] == 1 and report["merged_by_model"] == 0 and report["model_calls"] == 0
        assert status(m, old) == "active" and status(m, other) == "active"
        gone = m.services.sql.get_memory(new)
        assert gone["status"] == "merged" and gone["merged_into"] == old
        assert found(m, "golden retriever") [0] == old and new not in found(m, "golden retriever")
        assert new in found(m, "golden retriever", include_archived=True)
        assert [h["event"] for h in m.history(old)][-1] == "MERGE"
        judgment = m.judgments(report["trace_id"])
        assert judgment["operation_type"] == "CONSOLIDATE"
        merge = judgment["parsed_operations"]["merges"][0]
        assert merge["by"] == "rule" and "cosine" in merge["reason"] and merge["texts"]["merged"].endswith("Max.")


def test_uncertain_pairs_go_to_the_model_in_one_batched_call(tmp_path):
    answer = json.dumps({"pairs": [{"pair": 1, "same": True, "reason": "paraphrase"}]})
    with make_memory(tmp_path, llm=scripted(answer)) as m:
        a = put(m, "My favourite food is sushi", days=0)
        b = put(m, "Sushi is the food I like best", days=1)
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=2))
        if report["pairs"] == 0:
            pytest.skip("MiniLM puts this paraphrase below the judge threshold")
        assert report["model_calls"] == 1 and report["merged_by_model"] == 1
        assert status(m, b) == "merged" and status(m, a) == "active"
        assert "paraphrase" in m.judgments(report["trace_id"])["llm_response"]


def test_offline_model_refuses_superseded_values(tmp_path):
    with make_memory(tmp_path) as m:
        a = put(m, "My sister Anna is 30 years old", days=0)
        b = put(m, "My sister Anna is 31 years old", days=200)
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=201))
        assert report["merged"] == 0 and status(m, b) == "active"
        assert report["model_calls"] >= 1  # the pair was judged, not merged by rule
        # not merged, but contradicting: the later age supersedes the earlier (lifecycle.contradictions)
        assert report["contradictions"] == 1 and status(m, a) == "archived"


def test_compression_writes_a_linked_summary_and_demotes_sources(tmp_path):
    with make_memory(tmp_path) as m:
        ids = [put(m, f"I bought a latte at Starbucks on {day}", days=i, memory_type="episodic")
               for i, day in enumerate(("Monday", "Tuesday", "Wednesday", "Thursday"))]
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=5))
        assert report["compressed"] >= 1, report
        summary = m.services.sql.get_memory(report["summary_ids"][0])
        assert summary["metadata"]["abstraction"] == "summary" and len(summary["metadata"]["sources"]) >= 3
        src = summary["metadata"]["sources"][0]
        assert status(m, src) == "summarized" and m.services.sql.get_memory(src)["metadata"]["summary_id"] == summary["id"]
        assert set(summary["metadata"]["sources"]) <= set(ids)
        assert summary["id"] in found(m, "latte at Starbucks")
        from memoryx.search.scoring import final_scores

        cands = [{"relevance": 0.8, "memory": {"status": st, "importance": 0.5}} for st in ("active", "summarized")]
        final_scores(cands, m.settings)
        assert cands[1]["score"] == pytest.approx(cands[0]["score"] * m.settings.summarized_demotion)


def test_facts_about_different_people_keep_their_own_answers(tmp_path):
    """A cluster of facts (or events) that differ in names, numbers or ordinals is not summarised (each is the
    one answer to its own question, and a summary would demote it); the same event on other days is."""
    assert may_share_summary({"memory": "I had a latte on Monday", "memory_type": "episodic"},
                             {"memory": "I had a latte on Friday", "memory_type": "episodic"})
    assert not may_share_summary({"memory": "I met Leo for coffee", "memory_type": "episodic"},
                                 {"memory": "I met Mia for coffee", "memory_type": "episodic"})
    assert not may_share_summary({"memory": "I won my first chess tournament", "memory_type": "episodic"},
                                 {"memory": "I won my fourth chess tournament", "memory_type": "episodic"})
    assert not may_share_summary({"memory": "My cousin Leo teaches in Madrid", "memory_type": "semantic"},
                                 {"memory": "My cousin Mia teaches in Madrid", "memory_type": "semantic"})
    assert may_share_summary({"memory": "I love hiking in the mountains", "memory_type": "preference"},
                             {"memory": "I really love hiking in the mountains", "memory_type": "preference"})
    people = ("Leo261", "Mia205", "Noah17", "Sam249")  # MiniLM: pairwise cosine 0.88-0.93
    # clusters only: the short-term window would fold the older facts on the second pass (tests/lifecycle/test_layers.py)
    with make_memory(tmp_path, short_term_window_days=0) as m:
        facts = [put(m, f"My cousin {n} works as a teacher in Madrid", days=i) for i, n in enumerate(people)]
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=5))
        assert report["pairs"] == 6, report  # similar enough to cluster, and none merged (names differ)
        assert report["compressed"] == report["merged"] == 0 and {status(m, i) for i in facts} == {"active"}
        events = [put(m, f"I bought a latte at Starbucks on {day}", days=10 + i, memory_type="episodic")
                  for i, day in enumerate(("Monday", "Tuesday", "Wednesday", "Thursday"))]
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=15))
        assert report["compressed"] == 1 and {status(m, i) for i in events} == {"summarized"}
        assert {status(m, i) for i in facts} == {"active"}


def test_the_same_event_on_two_days_is_two_events(tmp_path):
    with make_memory(tmp_path, llm=NoModel()) as m:
        # one wording three times: only the day tells the events apart (near-identical wordings sit either side
        # of the rule's cosine depending on the encoder's precision, and would test the encoder instead)
        a = put(m, "I went to the gym after work", days=0, memory_type="episodic")
        b = put(m, "I went to the gym after work", days=2, memory_type="episodic")
        c = put(m, "I went to the gym after work", days=2.1, memory_type="episodic")  # the same day as b
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=3))
        assert report["merged"] == 1 and status(m, a) == "active"
        assert {status(m, b), status(m, c)} == {"active", "merged"}


def test_archived_invisible_then_restored(tmp_path):
    with make_memory(tmp_path) as m:
        old = put(m, "I went to a jazz concert downtown", days=0, memory_type="episodic", importance=0.3)
        keep = put(m, "I am allergic to peanuts", days=0, memory_type="semantic", importance=0.9)
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=200))
        assert report["archived"] == 1 and status(m, old) == "archived" and status(m, keep) == "active"
        assert old not in found(m, "jazz concert") and old in found(m, "jazz concert", include_archived=True)
        assert m.get(old)["status"] == "archived"  # never deleted
        assert m.restore(old)["status"] == "active" and old in found(m, "jazz concert")
        assert [h["event"] for h in m.history(old)][-2:] == ["ARCHIVE", "RESTORE"]


def test_dry_run_changes_nothing(tmp_path):
    with make_memory(tmp_path) as m:
        a = put(m, "I have a golden retriever named Max", days=0)
        b = put(m, "I have a golden retriever named Max.", days=1)
        c = put(m, "I went to a jazz concert downtown", days=0, memory_type="episodic", importance=0.3)
        before = {i: m.get(i) for i in (a, b, c)}
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=300), dry_run=True)
        assert report["dry_run"] and report["merged"] == 1 and report["archived"] >= 1
        assert {i: m.get(i) for i in (a, b, c)} == before
        assert m.list_judgments(user_id="alice") == []


def test_pass_waits_for_the_scope_lock_of_a_concurrent_add(tmp_path):
    with make_memory(tmp_path) as m:
        put(m, "I have a golden retriever named Max", days=0)
        put(m, "I have a golden retriever named Max.", days=1)
        done = threading.Event()
        result: dict = {}

        def run():
            result["report"] = m.consolidate(user_id="alice", now=T0 + timedelta(days=2))
            done.set()

        with m.services.sql.scope_lock(Scope(user_id="alice", agent_id="bot")):  # what execute_ops holds
            worker = threading.Thread(target=run)
            worker.start()
            assert not done.wait(1.5)  # blocked in apply while the add holds the owner's lock
            assert all(r["status"] == "staged" for r in m.services.sql.list_memories(ALICE, limit=None))
        worker.join(30)
        assert result["report"]["merged"] == 1
        with m.services.sql.scope_lock(ALICE), pytest.raises(ConcurrencyError):
            m.consolidate(user_id="alice")  # same thread: never re-entered


def test_report_counts_and_second_pass_is_quiet(tmp_path):
    # the forgetting curve's archive alone: no short-term window (tests/lifecycle/test_layers.py)
    with make_memory(tmp_path, short_term_window_days=0) as m:
        put(m, "I have a golden retriever named Max", days=0)
        put(m, "I have a golden retriever named Max.", days=1)
        put(m, "I went to a jazz concert downtown", days=0, memory_type="episodic", importance=0.3)
        first = m.consolidate(user_id="alice", now=T0 + timedelta(days=200))
        assert {k: first[k] for k in ("memories", "staged_seen", "merged", "archived")} == \
            {"memories": 3, "staged_seen": 3, "merged": 1, "archived": 1}
        assert first["entities_merged"] == 0 and first["links_found"] == 0  # no entities, no runs (graph upkeep)
        second = m.consolidate(user_id="alice", now=T0 + timedelta(days=200))
        assert (second["staged_seen"], second["merged"], second["archived"], second["model_calls"]) == (0, 0, 0, 0)


def test_archived_memories_leave_lists_and_the_judges_candidates(tmp_path):
    with make_memory(tmp_path) as m:
        old = put(m, "User lives in Berlin", days=0, memory_type="episodic", importance=0.1)
        m.consolidate(user_id="alice", now=T0 + timedelta(days=400))
        assert status(m, old) == "archived"
        assert old not in [r["id"] for r in m.get_all(user_id="alice")["results"]]
        assert old in [r["id"] for r in m.get_all(user_id="alice", include_archived=True)["results"]]
        # the offline judge would UPDATE a live "lives in Berlin"; an archived one is not a candidate
        added = m.add("I moved to Munich", user_id="alice")["results"]
        assert [r["event"] for r in added] == ["ADD"] and m.get(old)["memory"] == "User lives in Berlin"


@pytest.mark.parametrize("backend", ["edge", "server"])
def test_stored_vectors_and_batched_neighbours_read_what_a_pass_needs(tmp_path, backend):
    """A pass reads staged memories' vectors back from the vector store (no second embedding) and looks up
    their neighbours in batches: the same hits as one query each, on both backends."""
    import math

    from qdrant_client import QdrantClient

    from memoryx.stores.vectors import EdgeVectorStore, QdrantServerVectorStore

    store = EdgeVectorStore(tmp_path / "q", 4) if backend == "edge" else \
        QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "local")), 4)
    try:
        raw = {f"00000000-0000-0000-0000-00000000000{i}": [1.0, i / 10, (i % 3) / 5, 0.2] for i in range(6)}
        store.upsert_memories([{"id": k, "vector": v, "text": f"memory {k[-1]}", "user_id": "alice"}
                               for k, v in raw.items()])
        got = store.memory_vectors([*raw, "00000000-0000-0000-0000-0000000000ff"])
        assert set(got) == set(raw)  # an id without a point is left out
        for k, v in raw.items():  # stored normalised (cosine): the same direction
            norm = math.sqrt(sum(x * x for x in v))
            assert all(abs(a - b / norm) < 1e-5 for a, b in zip(got[k], v))
        queries = [got[k] for k in raw]
        batch = store.search_memories_batch(queries, ALICE, limit=3, threshold=0.5)
        single = [store.search_memories(q, ALICE, limit=3, threshold=0.5) for q in queries]
        assert [[(h.id, round(h.score, 5)) for h in hits] for hits in batch] == \
            [[(h.id, round(h.score, 5)) for h in hits] for hits in single]
        assert store.search_memories_batch(queries[:1], Scope(user_id="bob"), limit=3) == [[]]  # scoped
    finally:
        store.close()
