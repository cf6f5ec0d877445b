"""SQLStore against real engines: SQLite (a file per test) and PostgreSQL (the session's test database)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from memoryx.core.scope import Scope
from memoryx.core.text import memory_hash
from memoryx.errors import ConcurrencyError, InvalidInputError, NotFoundError, StoreUnavailableError
from memoryx.stores.sql import SCHEMA_VERSION, OutboxRow, SQLStore

ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")


@pytest.fixture(params=["sqlite", "postgres"])
def url(request):
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_url")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(url):
    s = SQLStore(url)
    s.reset()  # the PostgreSQL database is shared by the session: start every test empty
    yield s
    s.close()


def _iso(s: str) -> datetime:
    dt = datetime.fromisoformat(s)
    assert dt.tzinfo is not None and dt.utcoffset() == timedelta(0)
    return dt


# ---- memories ---------------------------------------------------------------------------------------------

def test_memory_lifecycle_and_history(store):
    m = store.insert_memory(scope=ALICE, text="I live in Berlin", category="place", importance=0.8,
                            metadata={"source": "chat"}, trace_id="t1")
    assert m["memory"] == "I live in Berlin" and m["user_id"] == "alice" and m["agent_id"] is None
    assert m["hash"] == memory_hash("i live in berlin") and m["metadata"] == {"source": "chat"}
    assert m["deleted_at"] is None and m["access_count"] == 0
    _iso(m["created_at"])
    assert store.get_memory(m["id"], scope=ALICE) == m

    time.sleep(0.002)
    u = store.update_memory(m["id"], text="I live in Paris", trace_id="t2")
    assert u["memory"] == "I live in Paris" and u["hash"] == memory_hash("I live in Paris")
    assert _iso(u["updated_at"]) > _iso(u["created_at"]) and u["trace_id"] == "t2"
    # unchanged text and metadata: no write, no history
    store.update_memory(m["id"], text="I live in Paris", trace_id="t3")

    d = store.delete_memory(m["id"], trace_id="t4")
    assert d["deleted_at"] is not None
    again = store.delete_memory(m["id"], trace_id="t5")  # idempotent
    assert again["deleted_at"] == d["deleted_at"]

    hist = store.history(m["id"])
    assert [h["event"] for h in hist] == ["ADD", "UPDATE", "DELETE"]
    assert {h["memory_id"] for h in hist} == {m["id"]}
    assert [h["trace_id"] for h in hist] == ["t1", "t2", "t4"]
    assert (hist[1]["old_memory"], hist[1]["new_memory"]) == ("I live in Berlin", "I live in Paris")
    assert (hist[2]["old_memory"], hist[2]["new_memory"]) == ("I live in Paris", None)

    with pytest.raises(NotFoundError):
        store.get_memory(m["id"])
    assert store.get_memory(m["id"], include_deleted=True)["deleted_at"] == d["deleted_at"]
    with pytest.raises(NotFoundError):
        store.update_memory(m["id"], text="revive me")
    assert store.count_memories(ALICE) == 0
    assert store.list_memories(ALICE) == []
    assert [r["id"] for r in store.list_memories(ALICE, include_deleted=True)] == [m["id"]]


def test_update_changes_metadata_and_fields(store):
    m = store.insert_memory(scope=ALICE, text="likes tea", metadata={"a": 1})
    u = store.update_memory(m["id"], text="likes tea", metadata={"a": 2}, category="food", importance=0.9)
    assert u["metadata"] == {"a": 2} and u["category"] == "food" and u["importance"] == 0.9
    assert [h["event"] for h in store.history(m["id"])] == ["ADD", "UPDATE"]


def test_insert_replay_returns_existing_row(store):
    first = store.insert_memory(scope=ALICE, text="original", memory_id="11111111-1111-4111-8111-111111111111")
    replay = store.insert_memory(scope=ALICE, text="different text", memory_id=first["id"])
    assert replay == first
    assert len(store.history(first["id"])) == 1
    assert store.count_memories(ALICE) == 1


def test_invalid_input_writes_nothing(store):
    with pytest.raises(InvalidInputError):
        store.insert_memory(scope=ALICE, text="   \n ")
    with pytest.raises(InvalidInputError):
        store.insert_memory(scope=ALICE, text="ok", importance=1.5)
    with pytest.raises(InvalidInputError):
        store.insert_memory(scope=ALICE, text="ok", metadata={"bad": object()})
    assert store.count_memories() == 0
    m = store.insert_memory(scope=ALICE, text="keep me")
    with pytest.raises(InvalidInputError):
        store.update_memory(m["id"], text="")
    assert store.get_memory(m["id"])["memory"] == "keep me"
    assert len(store.history(m["id"])) == 1
    for call in (lambda: store.get_memory("nope"), lambda: store.update_memory("nope", text="x"),
                 lambda: store.delete_memory("nope"), lambda: store.history("nope")):
        with pytest.raises(NotFoundError):
            call()


def test_scope_isolation(store):
    a = store.insert_memory(scope=ALICE, text="alice fact")
    b = store.insert_memory(scope=BOB, text="bob fact")
    a_agent = store.insert_memory(scope=Scope(user_id="alice", agent_id="helper"), text="alice via helper")
    with pytest.raises(NotFoundError):
        store.get_memory(a["id"], scope=BOB)
    with pytest.raises(NotFoundError):
        store.get_memory(a["id"], scope=Scope(user_id="alice", agent_id="helper"))
    assert {m["id"] for m in store.list_memories(ALICE)} == {a["id"], a_agent["id"]}
    assert [m["id"] for m in store.list_memories(BOB)] == [b["id"]]
    assert [m["id"] for m in store.list_memories(Scope(user_id="alice", agent_id="helper"))] == [a_agent["id"]]
    assert [m["id"] for m in store.list_memories(Scope(agent_id="helper"))] == [a_agent["id"]]
    assert store.count_memories(ALICE) == 2 and store.count_memories(BOB) == 1 and store.count_memories() == 3
    assert len(store.list_memories(None)) == 3


def test_list_order_and_filters(store):
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    ids = []
    for i in range(5):
        m = store.insert_memory(scope=ALICE, text=f"fact {i}", created_at=base + timedelta(days=i),
                                memory_type="fact" if i % 2 == 0 else "episode",
                                category="even" if i % 2 == 0 else "odd")
        ids.append(m["id"])
        assert _iso(m["created_at"]) == base + timedelta(days=i)
    assert [m["id"] for m in store.list_memories(ALICE)] == ids[::-1]  # newest first
    assert [m["id"] for m in store.list_memories(ALICE, limit=2, offset=1)] == [ids[3], ids[2]]
    assert [m["id"] for m in store.list_memories(ALICE, memory_types=["episode"])] == [ids[3], ids[1]]
    assert [m["id"] for m in store.list_memories(ALICE, categories=["even"])] == [ids[4], ids[2], ids[0]]
    window = store.list_memories(ALICE, created_after=base + timedelta(days=1),
                                 created_before=(base + timedelta(days=3)).isoformat())
    assert [m["id"] for m in window] == [ids[2], ids[1]]
    assert len(store.list_memories(ALICE, limit=None)) == 5


def test_find_by_hash_is_normalised_and_scoped(store):
    m = store.insert_memory(scope=ALICE, text="  I  LIVE in\tBerlin ")
    assert store.find_by_hash(ALICE, memory_hash("i live in berlin"))["id"] == m["id"]
    # NFKC: full-width latin letters are the same text
    assert memory_hash("ｉ live in berlin") == memory_hash("i live in berlin")
    assert store.find_by_hash(BOB, memory_hash("i live in berlin")) is None
    assert store.find_by_hash(ALICE, memory_hash("i live in paris")) is None
    store.delete_memory(m["id"])
    assert store.find_by_hash(ALICE, memory_hash("i live in berlin")) is None


def test_get_memories_and_record_access(store):
    a = store.insert_memory(scope=ALICE, text="a")
    b = store.insert_memory(scope=ALICE, text="b")
    c = store.insert_memory(scope=ALICE, text="c")
    store.delete_memory(c["id"])
    assert [m["id"] for m in store.get_memories([b["id"], "missing", c["id"], a["id"]])] == [b["id"], a["id"]]
    store.record_access([a["id"], b["id"]])
    store.record_access([a["id"]])
    got = {m["id"]: m for m in store.get_memories([a["id"], b["id"]])}
    assert got[a["id"]]["access_count"] == 2 and got[b["id"]]["access_count"] == 1
    assert got[a["id"]]["last_accessed_at"] is not None


def test_raw_input_saved_once(store):
    msgs = [{"role": "user", "content": "我住在北京"}]
    store.save_raw_input(trace_id="t1", scope=ALICE, messages=msgs, metadata={"k": "v"})
    store.save_raw_input(trace_id="t1", scope=ALICE, messages=[{"role": "user", "content": "other"}], metadata=None)
    raw = store.get_raw_input("t1")
    assert raw["messages"] == msgs and raw["metadata"] == {"k": "v"} and raw["user_id"] == "alice"


# ---- judgments --------------------------------------------------------------------------------------------

def test_judgments_save_get_verify_stats(store):
    store.save_judgment("t1", scope=ALICE, operation_type="MEMORY_UPDATE", input_content="我在上海腾讯工作",
                        extracted_facts=["张三在上海腾讯工作"], status="running", model_name="offline")
    j = store.get_judgment("t1")
    assert j["status"] == "running" and j["user_id"] == "alice" and j["is_verified"] is False
    assert j["extracted_facts"] == ["张三在上海腾讯工作"] and j["executed_operations"] is None
    # second step of the same run: only the given fields change
    store.save_judgment("t1", parsed_operations=[{"event": "UPDATE", "id": "0"}, {"event": "ADD"}],
                        executed_operations={"relations_added": ["张三-工作于-上海"]}, execution_success=True,
                        latency_ms=100, status="done")
    j = store.get_judgment("t1")
    assert j["status"] == "done" and j["input_content"] == "我在上海腾讯工作" and j["latency_ms"] == 100
    assert j["executed_operations"] == {"relations_added": ["张三-工作于-上海"]}

    store.save_judgment("t2", scope=ALICE, parsed_operations={"memory": [{"event": "ADD"}]}, latency_ms=300,
                        execution_success=False, error_message="boom", status="failed")
    store.save_judgment("t3", scope=BOB, parsed_operations=[{"event": "DELETE"}], latency_ms=200,
                        execution_success=True, status="done")
    assert [x["trace_id"] for x in store.list_judgments(ALICE)] == ["t2", "t1"]
    assert [x["trace_id"] for x in store.list_judgments(limit=1)] == ["t3"]

    with pytest.raises(InvalidInputError):
        store.verify_judgment("t1", "MAYBE")
    with pytest.raises(InvalidInputError):
        store.save_judgment("t1", not_a_field=1)
    with pytest.raises(InvalidInputError):
        store.save_judgment("t1", status="weird")
    with pytest.raises(NotFoundError):
        store.get_judgment("missing")
    with pytest.raises(NotFoundError):
        store.verify_judgment("missing", "CORRECT")

    v = store.verify_judgment("t1", "correct", notes="looks right")
    assert v["is_verified"] and v["verification_result"] == "CORRECT" and v["verified_at"]
    assert v["verification_notes"] == "looks right"
    store.verify_judgment("t2", "INCORRECT")

    stats = store.judgment_stats()
    assert stats["total"] == 3 and stats["verified"] == 2 and stats["accuracy"] == 0.5
    assert stats["by_result"] == {"CORRECT": 1, "INCORRECT": 1, "PARTIAL": 0}
    assert stats["latency_ms"]["p50"] == 200 and stats["latency_ms"]["p99"] == 300
    assert stats["latency_ms"]["mean"] == pytest.approx(200)
    assert stats["success_rate"] == pytest.approx(2 / 3)
    assert stats["by_event"] == {"UPDATE": 1, "ADD": 2, "DELETE": 1}
    bob = store.judgment_stats(BOB)
    assert bob["total"] == 1 and bob["accuracy"] is None and bob["by_event"] == {"DELETE": 1}
    assert store.judgment_stats(Scope(user_id="nobody"))["latency_ms"]["p50"] is None


# ---- entities and relations -------------------------------------------------------------------------------

def test_entities_upsert_by_normalised_name(store):
    a = store.upsert_entity(scope=ALICE, name="Zhang_San", entity_type="person")
    assert a["name"] == "Zhang_San" and a["normalized_name"] == "zhang san" and a["type"] == "person"
    assert store.upsert_entity(scope=ALICE, name="  zhang   SAN ")["id"] == a["id"]
    zh = store.upsert_entity(scope=ALICE, name="张三")
    assert store.upsert_entity(scope=ALICE, name=" 张三 ")["id"] == zh["id"]
    assert store.upsert_entity(scope=ALICE, name="ＡＢＣ")["id"] == store.upsert_entity(scope=ALICE, name="abc")["id"]
    assert zh["type"] == "entity"
    assert store.upsert_entity(scope=ALICE, name="张三", entity_type="person")["type"] == "person"  # refined
    assert store.upsert_entity(scope=ALICE, name="张三")["type"] == "person"  # generic never overwrites
    # other scopes get their own entity; scopes with NULL fields are still unique (no NULL != NULL trap)
    assert store.upsert_entity(scope=BOB, name="张三")["id"] != zh["id"]
    helper = Scope(agent_id="helper")
    h1 = store.upsert_entity(scope=helper, name="Paris")
    assert store.upsert_entity(scope=helper, name="paris")["id"] == h1["id"]
    assert h1["user_id"] is None and h1["agent_id"] == "helper"

    found = store.find_entities_by_names(ALICE, ["张三", "ZHANG SAN", "unknown"])
    assert {e["id"] for e in found} == {zh["id"], a["id"]}
    assert store.find_entities_by_names(BOB, ["zhang san"]) == []
    assert {e["id"] for e in store.list_entities(ALICE)} == {a["id"], zh["id"],
                                                            store.find_entities_by_names(ALICE, ["abc"])[0]["id"]}
    assert [e["id"] for e in store.get_entities([zh["id"], "missing", a["id"]])] == [zh["id"], a["id"]]
    with pytest.raises(InvalidInputError):
        store.upsert_entity(scope=ALICE, name="  ")


def test_relations_lifecycle(store):
    m1 = store.insert_memory(scope=ALICE, text="张三在北京工作")
    m2 = store.insert_memory(scope=ALICE, text="张三喜欢咖啡")
    zs = store.upsert_entity(scope=ALICE, name="张三", entity_type="person")
    bj = store.upsert_entity(scope=ALICE, name="北京", entity_type="city")
    kf = store.upsert_entity(scope=ALICE, name="咖啡")
    r1 = store.add_relation(scope=ALICE, source_id=zs["id"], relation="工作于", target_id=bj["id"],
                            memory_id=m1["id"], trace_id="t1")
    assert (r1["source"], r1["relation"], r1["target"], r1["valid"]) == ("张三", "工作于", "北京", True)
    assert r1["invalidated_at"] is None and r1["memory_id"] == m1["id"]
    # identical valid relation: the same row (idempotent replay)
    assert store.add_relation(scope=ALICE, source_id=zs["id"], relation="工作于", target_id=bj["id"],
                              memory_id=m1["id"], trace_id="t1-replay")["id"] == r1["id"]
    r2 = store.add_relation(scope=ALICE, source_id=zs["id"], relation="喜欢", target_id=kf["id"],
                            memory_id=m2["id"], trace_id="t2")
    assert store.get_relations([r2["id"], "missing", r1["id"]]) == [r2, r1]

    assert {r["id"] for r in store.relations_around(ALICE, [bj["id"]])} == {r1["id"]}
    assert {r["id"] for r in store.relations_around(ALICE, [zs["id"]])} == {r1["id"], r2["id"]}
    assert store.relations_around(BOB, [zs["id"]]) == []
    assert [r["id"] for r in store.relations_for_memory(m1["id"])] == [r1["id"]]

    # deleting memory 1: its relation goes, 北京 becomes an orphan, 张三 stays (memory 2)
    with pytest.raises(NotFoundError):
        store.invalidate_relations([r1["id"], "missing"], trace_id="t3")
    assert store.get_relations([r1["id"]])[0]["valid"] is True  # nothing was written
    inv = store.invalidate_relations([r1["id"]], trace_id="t3")
    assert inv[0]["valid"] is False and inv[0]["invalidated_by"] == "t3" and inv[0]["invalidated_at"]
    again = store.invalidate_relations([r1["id"]], trace_id="t4")
    assert again[0]["invalidated_by"] == "t3"  # first invalidation kept
    assert store.relations_for_memory(m1["id"]) == []
    assert [r["id"] for r in store.relations_for_memory(m1["id"], include_invalid=True)] == [r1["id"]]
    assert [r["id"] for r in store.list_relations(ALICE)] == [r2["id"]]
    assert {r["id"] for r in store.list_relations(ALICE, include_invalid=True)} == {r1["id"], r2["id"]}
    assert {r["id"] for r in store.relations_around(ALICE, [bj["id"]], include_invalid=True)} == {r1["id"]}
    assert [e["id"] for e in store.orphan_entities([zs["id"], bj["id"], kf["id"]])] == [bj["id"]]

    # the same fact again after invalidation is a new row
    r1b = store.add_relation(scope=ALICE, source_id=zs["id"], relation="工作于", target_id=bj["id"],
                             memory_id=m1["id"], trace_id="t5")
    assert r1b["id"] != r1["id"] and r1b["valid"]
    store.invalidate_relations([r1b["id"]], trace_id="t6")

    store.delete_entities([bj["id"]])
    assert store.get_entities([bj["id"]]) == []
    assert store.get_relations([r1["id"], r1b["id"]]) == []  # relations pointing at it are gone too
    assert [r["id"] for r in store.list_relations(ALICE, include_invalid=True)] == [r2["id"]]


def test_add_relation_checks_entities_and_scope(store):
    a = store.upsert_entity(scope=ALICE, name="a")
    b = store.upsert_entity(scope=BOB, name="b")
    with pytest.raises(NotFoundError):
        store.add_relation(scope=ALICE, source_id=a["id"], relation="knows", target_id=b["id"],
                           memory_id=None, trace_id=None)
    with pytest.raises(NotFoundError):
        store.add_relation(scope=ALICE, source_id=a["id"], relation="knows", target_id="missing",
                           memory_id=None, trace_id=None)
    with pytest.raises(InvalidInputError):
        store.add_relation(scope=ALICE, source_id=a["id"], relation=" ", target_id=a["id"],
                           memory_id=None, trace_id=None)
    assert store.list_relations(None, include_invalid=True) == []
    fixed = store.add_relation(scope=ALICE, source_id=a["id"], relation="self", target_id=a["id"],
                               memory_id=None, trace_id=None, relation_id="r-1")
    assert fixed["id"] == "r-1"
    assert store.add_relation(scope=ALICE, source_id=a["id"], relation="self", target_id=a["id"],
                              memory_id=None, trace_id=None, relation_id="r-1") == fixed


def test_add_relations_batch_matches_add_relation(store):
    m1 = store.insert_memory(scope=ALICE, text="Alice lives in Rome", valid_at=datetime(2020, 5, 1, tzinfo=timezone.utc))
    a = store.upsert_entity(scope=ALICE, name="alice", entity_type="person")
    rome = store.upsert_entity(scope=ALICE, name="Rome")
    tea = store.upsert_entity(scope=ALICE, name="tea")
    old = store.add_relation(scope=ALICE, source_id=a["id"], relation="likes", target_id=tea["id"], memory_id=None,
                             trace_id="t0")
    items = [{"source_id": a["id"], "relation": "lives_in", "target_id": rome["id"], "memory_id": m1["id"]},
             {"source_id": a["id"], "relation": "likes", "target_id": tea["id"], "memory_id": None},  # exists
             {"source_id": a["id"], "relation": "lives_in", "target_id": rome["id"], "memory_id": m1["id"]}]  # twice
    rows = store.add_relations(scope=ALICE, items=items, trace_id="t1")
    assert rows[1] == old and rows[0] == rows[2] and rows[0]["id"] != old["id"]
    assert (rows[0]["source"], rows[0]["relation"], rows[0]["target"], rows[0]["trace_id"]) == ("alice", "lives_in", "Rome", "t1")
    assert rows[0]["valid_at"].startswith("2020-05-01")  # the memory's event time, as add_relation does
    assert store.get_relations([rows[0]["id"]]) == [rows[0]]
    assert {(j["kind"], j["target_id"]) for j in store.pending_projections()} >= {("relation", rows[0]["id"])}
    with pytest.raises(NotFoundError):  # an end outside the scope: nothing written
        store.add_relations(scope=BOB, items=items[:1], trace_id="t2")
    assert len(store.list_relations(None, include_invalid=True)) == 2


def test_transaction_joins_calls_into_one_commit(store):
    from sqlalchemy import event

    begins = []
    event.listen(store.engine, "begin", lambda conn: begins.append(1))
    published = []
    store.events.on("*", lambda payload: published.append(payload["event"]))
    with store.transaction():
        m = store.insert_memory(scope=ALICE, text="Alice likes tea", memory_id="m-tx")
        store.update_memory(m["id"], text="Alice likes green tea")
        store.save_judgment("trace-tx", scope=ALICE, status="done")
        assert published == []  # events wait for the commit
        assert store.get_memory(m["id"])["memory"] == "Alice likes green tea"  # joined reads see the writes
    assert len(begins) == 1
    assert published == ["memory.added", "memory.updated"]
    assert [(k, t) for k, t, _ in store.recorded_intents()] == [("memory", "m-tx"), ("memory", "m-tx")]
    jobs = {j["id"] for j in store.pending_projections()}
    assert store.recorded_intents()[-1][2] in jobs  # the last job id of the target is the one queued

    # an error anywhere inside rolls back every call, its events and its intents
    store.clear_projections(list(jobs))
    with pytest.raises(RuntimeError, match="boom"):
        with store.transaction():
            store.insert_memory(scope=ALICE, text="Alice likes coffee", memory_id="m-gone")
            store.save_judgment("trace-gone", scope=ALICE, status="done")
            raise RuntimeError("boom")
    assert store.get_memories(["m-gone"]) == [] and store.pending_projections() == []
    with pytest.raises(NotFoundError):
        store.get_judgment("trace-gone")
    assert published == ["memory.added", "memory.updated"]
    with pytest.raises(RuntimeError, match="read-only"):
        with store.transaction(write=False):
            store.insert_memory(scope=ALICE, text="Alice likes juice")


# ---- outbox, scope deletion, reset ------------------------------------------------------------------------

def test_projection_outbox(store):
    store.enqueue_projection(kind="memory", target_id="m1", error="qdrant down")
    store.enqueue_projection(kind="memory", target_id="m1", error="still down")
    store.enqueue_projection(kind="relation", target_id="r1", error="graph down")
    jobs = store.pending_projections()
    assert [(j["kind"], j["target_id"]) for j in jobs] == [("memory", "m1"), ("relation", "r1")]
    assert jobs[0]["error"] == "still down" and jobs[0]["attempts"] == 0
    store.fail_projection(jobs[0]["id"], "again")
    store.fail_projection(jobs[0]["id"], "and again")
    j = store.pending_projections(limit=1)[0]
    assert j["attempts"] == 2 and j["error"] == "and again"
    store.complete_projection(jobs[0]["id"])
    store.complete_projection(jobs[0]["id"])  # idempotent
    assert [j["target_id"] for j in store.pending_projections()] == ["r1"]
    with pytest.raises(InvalidInputError):
        store.enqueue_projection(kind="bogus", target_id="x", error="e")


def test_projected_jobs_go_with_the_next_write_transaction(store):
    with store.transaction():
        a = store.insert_memory(scope=ALICE, text="alice 1")
        b = store.insert_memory(scope=ALICE, text="alice 2")
    jobs = {target: job for _, target, job in store.recorded_intents()}
    store.clear_projections_later([jobs[a["id"]]])

    def queued() -> set[str]:  # read around the store's own flush: what the table holds now
        with store._tx() as s:
            return set(s.scalars(sa.select(OutboxRow.target_id)))

    assert queued() == {a["id"], b["id"]}  # a read transaction leaves them
    store.insert_memory(scope=BOB, text="bob 1")  # any write transaction takes them with it
    assert a["id"] not in queued() and b["id"] in queued()
    store.clear_projections_later([jobs[b["id"]]])
    assert b["id"] not in {p["target_id"] for p in store.pending_projections()}  # reading the outbox flushes first


def test_delete_scope_and_reset(store):
    a = store.insert_memory(scope=ALICE, text="alice 1")
    store.insert_memory(scope=Scope(user_id="alice", run_id="r1"), text="alice run")
    b = store.insert_memory(scope=BOB, text="bob 1")
    ea = store.upsert_entity(scope=ALICE, name="x")
    eb = store.upsert_entity(scope=BOB, name="x")
    store.add_relation(scope=ALICE, source_id=ea["id"], relation="is", target_id=ea["id"], memory_id=a["id"],
                       trace_id=None)
    store.save_judgment("ta", scope=ALICE, status="done")
    store.save_judgment("tb", scope=BOB, status="done")
    store.save_raw_input(trace_id="ta", scope=ALICE, messages=[], metadata=None)
    store.enqueue_projection(kind="memory", target_id=a["id"], error="e")
    store.enqueue_projection(kind="memory", target_id=b["id"], error="e")

    assert store.delete_scope(ALICE) == 2
    assert store.list_memories(None, include_deleted=True) == [store.get_memory(b["id"])]
    with pytest.raises(NotFoundError):
        store.history(a["id"])
    assert store.list_entities(None) == [store.get_entities([eb["id"]])[0]]
    assert store.list_relations(None, include_invalid=True) == []
    assert [j["trace_id"] for j in store.list_judgments()] == ["tb"]
    with pytest.raises(NotFoundError):
        store.get_raw_input("ta")
    # bob's rows stay queued: his memory, and his entity (graph changes are queued in their own transaction)
    assert {j["target_id"] for j in store.pending_projections()} == {b["id"], eb["id"]}

    store.reset()
    assert store.count_memories() == 0 and store.list_entities(None) == [] and store.pending_projections() == []
    assert store.schema_version() == SCHEMA_VERSION


# ---- schema, connection -----------------------------------------------------------------------------------

def test_schema_creation_is_idempotent(url, store):
    m = store.insert_memory(scope=ALICE, text="survives reopen")
    second = SQLStore(url)  # creates nothing, loses nothing
    try:
        assert second.get_memory(m["id"])["memory"] == "survives reopen"
        assert second.schema_version() == SCHEMA_VERSION
    finally:
        second.close()


def test_newer_schema_is_refused(sqlite_url):
    s = SQLStore(sqlite_url)
    with s.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO schema_version (version, applied_at) VALUES (999, '2030-01-01')")
    s.close()
    with pytest.raises(StoreUnavailableError, match="999"):
        SQLStore(sqlite_url)


@pytest.mark.parametrize("bad", [
    "postgresql+psycopg://postgres@127.0.0.1:1/nowhere",
    "postgresql://postgres@127.0.0.1:1/nowhere",
    "nosuchdialect://x/y",
    "this is not a url",
])
def test_bad_url_raises_store_unavailable(bad):
    with pytest.raises(StoreUnavailableError, match="MEMORYX_SQL_URL"):
        SQLStore(bad)


def test_closed_store_refuses_work(sqlite_url):
    s = SQLStore(sqlite_url)
    s.close()
    with pytest.raises(StoreUnavailableError):
        s.count_memories()


def test_concurrent_writers_in_threads(store):
    errors: list[BaseException] = []
    ids: list[str] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                ids.append(store.insert_memory(scope=ALICE, text=f"thread {n} fact {i}")["id"])
                e = store.upsert_entity(scope=ALICE, name="Shared Name")
                store.add_relation(scope=ALICE, source_id=e["id"], relation="same", target_id=e["id"],
                                   memory_id=None, trace_id=f"t{n}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.count_memories(ALICE) == 40 == len(set(ids))
    assert len(store.find_entities_by_names(ALICE, ["shared name"])) == 1
    assert len(store.list_relations(ALICE, include_invalid=True)) == 1


def test_database_enforces_one_valid_copy_of_a_relation(store):
    """The partial unique index, not only the Python check, stops a duplicate valid relation."""
    import sqlalchemy as sa
    from sqlalchemy.exc import IntegrityError

    from memoryx.stores.sql import RelationRow

    e = store.upsert_entity(scope=ALICE, name="e")
    r = store.add_relation(scope=ALICE, source_id=e["id"], relation="is", target_id=e["id"],
                           memory_id=None, trace_id=None)
    with store.engine.begin() as conn:
        key = conn.execute(sa.select(RelationRow.scope_key).where(RelationRow.id == r["id"])).scalar()
    row = dict(id="dup", scope_key=key, user_id="alice", source_id=e["id"], relation="is",
               target_id=e["id"], valid=True, created_at=datetime.now(timezone.utc))
    with pytest.raises(IntegrityError):
        with store.engine.begin() as conn:
            conn.execute(sa.insert(RelationRow).values(**row))
    with store.engine.begin() as conn:  # an invalidated copy is history and is allowed
        conn.execute(sa.insert(RelationRow).values(**{**row, "valid": False}))
    assert len(store.list_relations(ALICE, include_invalid=True)) == 2


# ---- scope lock -------------------------------------------------------------------------------------------

def test_scope_lock_excludes_threads(store):
    order: list[str] = []
    holding = threading.Event()

    def holder() -> None:
        with store.scope_lock(ALICE):
            order.append("holder in")
            holding.set()
            time.sleep(0.4)
            order.append("holder out")

    t = threading.Thread(target=holder)
    t.start()
    assert holding.wait(5)
    with pytest.raises(ConcurrencyError, match="alice"):
        with store.scope_lock(ALICE, timeout=0.1):
            pass
    with store.scope_lock(BOB, timeout=0.1):  # other scopes are not blocked
        order.append("bob")
    with store.scope_lock(ALICE, timeout=5):
        order.append("waiter in")
    t.join()
    assert order == ["holder in", "bob", "holder out", "waiter in"]


def test_lock_waiters_do_not_starve_the_holder(store):
    """More waiters than pooled connections: the holder must still be able to write and release."""
    got: list[int] = []
    errors: list[BaseException] = []

    def waiter(n: int) -> None:
        try:
            with store.scope_lock(ALICE, timeout=20):
                got.append(n)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with store.scope_lock(ALICE):
        threads = [threading.Thread(target=waiter, args=(n,)) for n in range(20)]
        for t in threads:
            t.start()
        time.sleep(0.3)  # every waiter is polling now
        started = time.monotonic()
        store.insert_memory(scope=ALICE, text="written while 20 threads wait")
        assert time.monotonic() - started < 5
        assert got == []
    for t in threads:
        t.join()
    assert errors == [] and sorted(got) == list(range(20))


def test_scope_lock_is_not_reentrant_and_is_released_on_error(store):
    with store.scope_lock(ALICE):
        with pytest.raises(ConcurrencyError, match="not reentrant"):
            with store.scope_lock(ALICE, timeout=5):
                pass
    with pytest.raises(RuntimeError):
        with store.scope_lock(ALICE):
            raise RuntimeError("body failed")
    with store.scope_lock(ALICE, timeout=0.5):  # released despite the error
        pass


def test_scope_lock_excludes_another_process(url, store):
    # The child holds the lock until we write a line to its stdin: no timing guesses.
    script = textwrap.dedent(f"""
        import sys
        from memoryx.core.scope import Scope
        from memoryx.stores.sql import SQLStore
        s = SQLStore({url!r})
        with s.scope_lock(Scope(user_id="alice"), timeout=10):
            print("locked", flush=True)
            sys.stdin.readline()
        print("released", flush=True)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(ConcurrencyError, match="user_id=alice"):
            with store.scope_lock(ALICE, timeout=0.2):
                pass
        with store.scope_lock(BOB, timeout=0.2):  # other scopes are free
            pass
        acquired = threading.Event()

        def wait_for_lock() -> None:
            with store.scope_lock(ALICE, timeout=20):
                acquired.set()

        waiter = threading.Thread(target=wait_for_lock)
        waiter.start()
        assert not acquired.wait(0.5)  # still held by the child
        child.stdin.write("go\n")
        child.stdin.flush()
        assert acquired.wait(20)
        waiter.join()
    finally:
        child.stdin.close()
        child.wait(timeout=20)
    assert child.returncode == 0


def test_same_fact_from_two_memories_survives_deleting_one(store):
    """Each memory owns its copy of a relation, so a DELETE cascade of one keeps the other's."""
    zhang = store.upsert_entity(scope=ALICE, name="张三", entity_type="person")
    beijing = store.upsert_entity(scope=ALICE, name="北京", entity_type="city")
    first = store.add_relation(scope=ALICE, source_id=zhang["id"], relation="工作于", target_id=beijing["id"],
                               memory_id="m1", trace_id="t1")
    second = store.add_relation(scope=ALICE, source_id=zhang["id"], relation="工作于", target_id=beijing["id"],
                                memory_id="m2", trace_id="t2")
    assert first["id"] != second["id"]
    store.invalidate_relations([r["id"] for r in store.relations_for_memory("m1")], trace_id="t3")
    still = store.relations_around(ALICE, [zhang["id"]])
    assert [r["memory_id"] for r in still] == ["m2"]
    assert store.orphan_entities([beijing["id"]]) == []


def test_sqlite_planner_statistics_follow_the_table(tmp_path):
    """Without statistics SQLite walks the deleted_at index (every live row) for get_memories' `id IN (...) AND
    deleted_at IS NULL`; once the table has grown the store refreshes them and the primary key is used, also
    after a reopen."""
    import sqlalchemy as sa

    from memoryx.stores.sql import base

    url = f"sqlite:///{tmp_path}/m.db"
    store = SQLStore(url)
    scope = Scope(user_id="stats")
    ids = [store.insert_memory(scope=scope, text=f"fact number {i}")["id"] for i in range(base.STATS_MIN_ROWS + 20)]

    def plan() -> str:
        q = f"EXPLAIN QUERY PLAN SELECT * FROM memories WHERE id IN ({','.join('?' * 30)}) AND deleted_at IS NULL"
        with store.engine.connect() as conn:
            return " ".join(str(r[-1]) for r in conn.exec_driver_sql(q, tuple(ids[:30])))

    # refreshed by itself: checked every STATS_CHECK_EVERY_WRITES writes, the table grew from 0 rows
    assert store._stats_rows >= base.STATS_CHECK_EVERY_WRITES
    assert "autoindex" in plan() and "deleted_at" not in plan()
    assert store.refresh_statistics_if_grown() is False  # not doubled since
    assert [m["id"] for m in store.get_memories(ids[:30])] == ids[:30]
    store.close()
    again = SQLStore(url)
    assert again._stats_rows >= base.STATS_MIN_ROWS  # read back from sqlite_stat1: no ANALYZE at every open
    with again.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'memories'")).scalar() > 0
    again.close()


def test_postgres_statistics_are_taken_after_growth(pg_url):
    """A PostgreSQL without autovacuum (this machine's) still gets planner statistics once the table grows."""
    store = SQLStore(pg_url)
    store.reset()
    try:
        for i in range(40):
            store.insert_memory(scope=Scope(user_id="pgstats"), text=f"fact number {i}")
        assert store.refresh_statistics_if_grown(force=True) is True
        assert store._analyzed_rows() >= 40  # pg_class.reltuples, written by ANALYZE
    finally:
        store.close()
