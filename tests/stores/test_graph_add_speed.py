"""The graph steps' batched SQL reads and writes give what the one-at-a-time calls gave, on both
engines: relations_of_run = relations_for_memory + relations_around, upsert_entities = upsert_entity per
name, change_relations = invalidate_relations + add_relations, orphan_entities in one statement."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError
from memoryx.stores.sql import OutboxRow, SQLStore

ALICE = Scope(user_id="alice")
ALICE_BOT = Scope(user_id="alice", agent_id="bot")
BOB = Scope(user_id="bob")


@pytest.fixture(params=["sqlite", "postgres"])
def store(request):
    s = SQLStore(request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url"))
    s.reset()  # the PostgreSQL database is shared by the session: start every test empty
    yield s
    s.close()


def _statements(store: SQLStore) -> list[str]:
    seen: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *a: seen.append(a[2].split()[0].upper()))
    return seen


def _relation(store, scope, src, rel, dst, memory_id=None):
    return store.add_relation(scope=scope, source_id=src["id"], relation=rel, target_id=dst["id"],
                              memory_id=memory_id, trace_id="t0")


def test_relations_of_run_reads_what_the_two_reads_gave(store):
    alice = store.upsert_entity(scope=ALICE, name="alice", entity_type="person")
    berlin, paris, tea = (store.upsert_entity(scope=ALICE, name=n) for n in ("Berlin", "Paris", "tea"))
    bot_alice = store.upsert_entity(scope=ALICE_BOT, name="alice")  # same name, other scope: not "around"
    bot_jazz = store.upsert_entity(scope=ALICE_BOT, name="jazz")
    bob, bob_tea = store.upsert_entity(scope=BOB, name="bob"), store.upsert_entity(scope=BOB, name="tea")
    lives = _relation(store, ALICE, alice, "lives_in", berlin, "m1")
    likes = _relation(store, ALICE, alice, "likes", tea, "m2")
    old = _relation(store, ALICE, alice, "lived_in", paris, "m1")
    store.invalidate_relations([old["id"]], trace_id="t1")
    tea_paris = _relation(store, ALICE, tea, "from", paris, None)
    _relation(store, ALICE_BOT, bot_alice, "likes", bot_jazz, "m3")
    _relation(store, BOB, bob, "likes", bob_tea, "m1")  # m1 in another scope: a memory's relations are all its own

    for memory_ids, entity_ids, names in (
        (["m1"], [berlin["id"]], ["alice"]),
        (["m1", "m2", "m9"], [tea["id"], paris["id"]], []),
        ([], [paris["id"]], ["ALICE", " "]),
        (["m2"], [], []),
        ([], [], ["nobody"]),
    ):
        of_memories, around = store.relations_of_run(ALICE, memory_ids=memory_ids, entity_ids=entity_ids,
                                                     entity_names=names)
        named = [r["id"] for r in store.find_entities_by_names(ALICE, names)
                 if r["agent_id"] is None and r["run_id"] is None]
        one_by_one = [r for m in memory_ids for r in store.relations_for_memory(m, include_invalid=True)]
        assert sorted(of_memories, key=lambda r: r["id"]) == sorted(one_by_one, key=lambda r: r["id"])
        assert around == store.relations_around(ALICE, entity_ids + named)
    of_memories, around = store.relations_of_run(ALICE, memory_ids=["m1"], entity_ids=[], entity_names=["alice"])
    assert {r["id"] for r in around} == {lives["id"], likes["id"]}  # valid ones of alice's own entity only
    assert {r["id"] for r in of_memories} >= {lives["id"], old["id"]}  # invalid ones too: the DELETE cascade's ends
    assert tea_paris["id"] not in {r["id"] for r in around}
    assert store.relations_of_run(ALICE, memory_ids=[], entity_ids=[], entity_names=[]) == ([], [])


def test_relations_of_run_beyond_one_statement_reads_the_same(store, monkeypatch):
    import memoryx.stores.sql.graph_truth as graph_truth

    alice, tea, paris = (store.upsert_entity(scope=ALICE, name=n) for n in ("alice", "tea", "Paris"))
    _relation(store, ALICE, alice, "likes", tea, "m1")
    _relation(store, ALICE, tea, "from", paris, "m2")
    _relation(store, ALICE_BOT, store.upsert_entity(scope=ALICE_BOT, name="alice"),
              "likes", store.upsert_entity(scope=ALICE_BOT, name="jazz"), "m3")
    args = dict(memory_ids=["m1", "m3"], entity_ids=[paris["id"]], entity_names=["alice"])
    one = store.relations_of_run(ALICE, **args)
    monkeypatch.setattr(graph_truth, "_ONE_STATEMENT_IDS", 0)  # as with hundreds of ids: the chunked reads
    assert store.relations_of_run(ALICE, **args) == one and len(one[0]) == 2 and len(one[1]) == 2


def test_relations_of_run_is_one_statement(store):
    alice = store.upsert_entity(scope=ALICE, name="alice")
    _relation(store, ALICE, alice, "likes", store.upsert_entity(scope=ALICE, name="tea"), "m1")
    seen = _statements(store)
    store.relations_of_run(ALICE, memory_ids=["m1"], entity_ids=[alice["id"]], entity_names=["alice"])
    assert [s for s in seen if s == "SELECT"] == ["SELECT"]


def test_upsert_entities_matches_upsert_entity(store):
    first = store.upsert_entity(scope=ALICE, name="Berlin", entity_type="entity")
    typed = store.upsert_entity(scope=ALICE, name="Alice", entity_type="person")
    seen = _statements(store)
    rows = store.upsert_entities(scope=ALICE, items=[("berlin", "city"), ("ALICE", "entity"), ("Tea", "drink"),
                                                     ("tea ", "entity"), ("Jazz", "entity"), ("jazz", "music")])
    assert [r["id"] for r in rows[:2]] == [first["id"], typed["id"]]  # known names keep their id and first spelling
    assert rows[0]["name"] == "Berlin" and rows[0]["entity_type"] == "city"  # a specific type refines "entity"
    assert rows[1]["entity_type"] == "person"  # "entity" never overwrites a real type
    assert rows[2]["id"] == rows[3]["id"] and rows[2]["name"] == "Tea" and rows[3]["entity_type"] == "drink"
    assert rows[4]["id"] == rows[5]["id"] and (rows[4]["entity_type"], rows[5]["entity_type"]) == ("entity", "music")
    assert seen.count("INSERT") == 2  # the new entities in one statement, the projection intents in one
    for row in (rows[0], rows[1], rows[3], rows[5]):
        assert store.get_entities([row["id"]]) == [row]
    assert store.upsert_entities(scope=BOB, items=[("Berlin", "city")])[0]["id"] != first["id"]  # never across scopes
    with store._tx() as s:
        queued = {r.target_id for r in s.scalars(sa.select(OutboxRow).where(OutboxRow.kind == "entity"))}
    assert {first["id"], rows[2]["id"], rows[4]["id"]} <= queued
    assert store.upsert_entities(scope=ALICE, items=[]) == []


def test_change_relations_invalidates_then_adds_in_one_write(store):
    alice, berlin, paris = (store.upsert_entity(scope=ALICE, name=n) for n in ("alice", "Berlin", "Paris"))
    lives = _relation(store, ALICE, alice, "lives_in", berlin, "m1")
    gone = _relation(store, ALICE, alice, "visited", paris, "m1")
    store.delete_entities([paris["id"]])  # a concurrent run removed it with its relations
    seen = _statements(store)
    with store.transaction():
        invalidated, added = store.change_relations(
            scope=ALICE, invalidate=[lives["id"], gone["id"]],
            add=[{"source_id": alice["id"], "relation": "lives_in", "target_id": berlin["id"], "memory_id": "m2"},
                 {"source_id": alice["id"], "relation": "lives_in", "target_id": berlin["id"], "memory_id": "m2"}],
            trace_id="t2", ends={alice["id"]: alice, berlin["id"]: berlin})
    assert [r["id"] for r in invalidated] == [lives["id"]]  # the missing one is skipped
    assert invalidated[0]["valid"] is False and invalidated[0]["invalidated_by"] == "t2"
    assert invalidated[0] == store.get_relations([lives["id"]])[0]
    assert len(added) == 2 and added[0] is added[1] and added[0] == store.get_relations([added[0]["id"]])[0]
    assert seen.count("INSERT") == 2  # the relation, and one projection intent for both changes
    assert [k for k, _, _ in store.recorded_intents()] == ["relation", "relation"]
    with pytest.raises(NotFoundError):  # an end outside the scope is refused, handed over or not
        store.change_relations(scope=BOB, invalidate=[], add=[{"source_id": alice["id"], "relation": "r",
                                                                "target_id": berlin["id"], "memory_id": None}],
                               trace_id="t3", ends={alice["id"]: alice})
    with pytest.raises(NotFoundError):
        store.invalidate_relations([gone["id"]], trace_id="t3")
    assert store.invalidate_relations([gone["id"]], trace_id="t3", skip_missing=True) == []
    again = store.invalidate_relations([lives["id"]], trace_id="t4")  # the first invalidation stays
    assert again[0]["invalidated_by"] == "t2"


def test_orphan_entities_are_those_without_a_valid_relation(store):
    alice, berlin, paris, tea = (store.upsert_entity(scope=ALICE, name=n) for n in ("alice", "Berlin", "Paris", "tea"))
    _relation(store, ALICE, alice, "lives_in", berlin, "m1")
    old = _relation(store, ALICE, tea, "from", paris, "m2")
    store.invalidate_relations([old["id"]], trace_id="t1")
    ids = [paris["id"], berlin["id"], tea["id"], alice["id"], paris["id"], "unknown"]
    assert [e["id"] for e in store.orphan_entities(ids)] == [paris["id"], tea["id"]]
    store.delete_entities([paris["id"], tea["id"]])
    assert store.get_entities([paris["id"], tea["id"]]) == [] and store.get_relations([old["id"]]) == []
