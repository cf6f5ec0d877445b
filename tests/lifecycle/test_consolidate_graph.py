"""Graph upkeep of the consolidate graph: entity merge in two tiers with relations
re-pointed and entity vectors synced, memory links (same entity, sequence) written, recorded and followed
by graph recall, and the rollback of a pass (previous status, un-merge, links removed). SQLite + embedded
Qdrant edge + MiniLM; no model is asked."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.lifecycle.graph_upkeep import entity_decisions, memory_links
from memoryx.nodes.graph_recall import _follow_links
from tests.support import NoModel, shared_embeddings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
ALICE = Scope(user_id="alice")


def make_memory(tmp_path, **overrides) -> Memory:
    values = {"graph_backend": "none", **overrides}
    return Memory(data_dir=tmp_path / "data", checkpointer="sqlite", llm=NoModel(), embeddings=shared_embeddings(),
                  **values)


def put(m: Memory, text: str, *, days: float = 0, scope: Scope = ALICE, **kw) -> str:
    row = m.services.sql.insert_memory(scope=scope, text=text, created_at=T0 + timedelta(days=days), **kw)
    m.services.projector.sync_memories([row["id"]])
    return row["id"]


def entity(m: Memory, name: str, kind: str) -> str:
    e = m.services.sql.upsert_entity(scope=ALICE, name=name, entity_type=kind)
    m.services.projector.sync_entities([e["id"]])
    return e["id"]


def relate(m: Memory, src: str, rel: str, dst: str, memory_id: str) -> dict:
    return m.services.sql.add_relation(scope=ALICE, source_id=src, relation=rel, target_id=dst, memory_id=memory_id,
                                       trace_id=None)


def test_entity_tiers_rule_type_and_shared_neighbour():
    ents = {i: {"id": i, "name": n, "entity_type": t, "created_at": f"2025-01-0{k}"}
            for k, (i, n, t) in enumerate([("a", "the Eiffel Tower", "landmark"), ("b", "Eiffel Tower", "landmark"),
                                           ("c", "Paris", "city"), ("d", "Paris, France", "city"),
                                           ("e", "New York", "city"), ("f", "New York City", "organization"),
                                           ("g", "2023", "date"), ("h", "2024", "date"), ("u", "alice", "person")], 1)}
    near = {"c": {"u"}, "d": {"u"}, "e": {"u"}, "f": {"u"}}
    pairs = {("a", "b"): 0.98, ("c", "d"): 0.93, ("e", "f"): 0.95 - 0.002, ("g", "h"): 0.96}
    merges, decisions = entity_decisions(ents, pairs, near, 0.95, 0.85)
    assert {(m["survivor"], m["merged"]) for m in merges} == {("a", "b"), ("c", "d")}  # the older survives
    why = {(d["a"], d["b"]): d for d in decisions}
    assert "types differ" in why[("e", "f")]["reason"] and not why[("e", "f")]["merge"]
    assert "numbers" in why[("g", "h")]["reason"]
    merges, _ = entity_decisions(ents, {("c", "d"): 0.93}, {}, 0.95, 0.85)  # no shared neighbour: kept apart
    assert merges == []


def test_memory_links_skip_hub_entities_and_chain_runs():
    mems = [{"id": f"m{i}", "created_at": f"2025-01-0{i}", "run_id": "r1" if i >= 4 else None, "metadata": {}}
            for i in range(1, 7)]
    rels = [{"source_id": "u", "source": "alice", "target_id": "x", "target": "X", "memory_id": f"m{i}", "valid": True}
            for i in range(1, 7)]
    rels.append({"source_id": "y", "source": "Y", "target_id": "z", "target": "Z", "memory_id": "m1", "valid": True})
    rels.append({"source_id": "y2", "source": "Y", "target_id": "w", "target": "W", "memory_id": "m2", "valid": True})
    links = memory_links(mems, rels, {"y2": "y"}, max_group=3)  # y2 merged into y: m1 and m2 share it
    kinds = {(l["source_id"], l["target_id"], l["relation"]) for l in links}
    assert ("m1", "m2", "same_topic") in kinds
    assert not any(k[2] == "same_topic" and k != ("m1", "m2", "same_topic") for k in kinds)  # u, x: hubs
    assert {k for k in kinds if k[2] == "follows"} == {("m4", "m5", "follows"), ("m5", "m6", "follows")}


def test_pass_merges_entities_repoints_relations_and_links_memories(tmp_path):
    with make_memory(tmp_path) as m:
        sql = m.services.sql
        m1 = put(m, "I visited the Eiffel Tower", days=0)
        m2 = put(m, "The Eiffel Tower was crowded in the morning", days=1)
        m3 = put(m, "I live in Paris", days=2)
        m4 = put(m, "I grew up in Paris, France", days=3)
        m5 = put(m, "I lived in New York for two years", days=4)
        user, tower = entity(m, "alice", "person"), entity(m, "the Eiffel Tower", "landmark")
        tower2 = entity(m, "Eiffel Tower", "landmark")
        paris, paris2 = entity(m, "Paris", "city"), entity(m, "Paris, France", "city")
        ny, nyc = entity(m, "New York", "city"), entity(m, "New York City", "organization")
        relate(m, user, "visited", tower, m1)
        moved = relate(m, tower2, "located_in", paris, m2)
        relate(m, user, "lives_in", paris, m3)
        relate(m, user, "grew_up_in", paris2, m4)
        relate(m, user, "lived_in", ny, m5)
        relate(m, nyc, "employs", user, m5)
        before = m.services.vectors.count_entities(ALICE)
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=5))
        assert report["entities_merged"] == 2 and report["model_calls"] == 0
        assert {e["id"] for e in sql.list_entities(ALICE)} == {user, tower, paris, ny, nyc}
        assert m.services.vectors.count_entities(ALICE) == before - 2  # entity vectors synced
        assert sql.get_relations([moved["id"]])[0]["source_id"] == tower
        assert {r["target_id"] for r in sql.relations_around(ALICE, [user])} >= {tower, paris}
        ops = m.judgments(report["trace_id"])["parsed_operations"]
        kept = [d for d in ops["entity_decisions"] if not d["merge"]]
        assert any(set(d["names"]) == {"New York", "New York City"} and "types differ" in d["reason"] for d in kept)
        assert all(d["reason"] for d in ops["entity_decisions"])
        assert report["links_found"] >= 1
        links = sql.memory_links([m1], depth=1)
        assert any({l["source_id"], l["target_id"]} == {m1, m2} and l["relation"] == "same_topic" for l in links)
        again = m.consolidate(user_id="alice", now=T0 + timedelta(days=5))
        assert again["entities_merged"] == 0 and again["links_found"] == 0  # nothing left to do


def test_graph_recall_follows_links_one_hop_below_the_hit(tmp_path):
    with make_memory(tmp_path) as m:
        a, b, c = (put(m, t, days=i) for i, t in enumerate(["I adopted a cat", "The cat is named Luna", "Luna is grey"]))
        m.services.sql.link_memories(ALICE, a, b, "same_topic")
        m.services.sql.link_memories(ALICE, b, c, "follows")
        services = SimpleNamespace(sql=m.services.sql, settings=m.services.settings)
        out = _follow_links(services, ALICE, {a: 1.0})
        assert out[a] == 1.0 and 0 < out[b] < 1.0 and c not in out  # one hop only
        assert _follow_links(services, Scope(user_id="bob"), {a: 1.0}) == {a: 1.0}  # other scopes' links stay out


def test_rollback_of_a_pass_restores_staged_unmerges_and_drops_links(tmp_path):
    with make_memory(tmp_path) as m:
        run = Scope(user_id="alice", run_id="r1")
        old = put(m, "I have a golden retriever named Max", days=0)
        new = put(m, "I have a golden retriever named Max.", days=1)
        s1, s2 = put(m, "We talked about dogs", days=2, scope=run), put(m, "Then about cats", days=3, scope=run)
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=4))
        assert report["merged"] == 1 and report["links_found"] >= 1
        assert m.services.sql.get_memory(new)["merged_into"] == old
        assert m.services.sql.memory_links([s1])
        undone = m.rollback(report["trace_id"])
        row = m.services.sql.get_memory(new)
        assert row["status"] == "staged" and row["merged_into"] is None  # its status before the pass
        assert not m.services.sql.memory_links([s1, s2])
        assert any(r["id"] == new for r in undone["results"])


def test_a_group_participant_scope_is_consolidated(tmp_path):
    with make_memory(tmp_path) as m:
        g = Scope(user_id="caroline", group_id="club")
        old = put(m, "I have a golden retriever named Max", scope=g)
        new = put(m, "I have a golden retriever named Max.", days=1, scope=g)
        other = put(m, "I have a golden retriever named Max.", days=1)  # alice's, outside the group
        report = m.consolidate(user_id="caroline", group_id="club", now=T0 + timedelta(days=2))
        assert report["merged"] == 1 and m.services.sql.get_memory(new)["merged_into"] == old
        assert m.services.sql.get_memory(other)["status"] == "staged"


def test_the_graph_projection_follows_an_entity_merge(tmp_path):
    with make_memory(tmp_path, graph_backend="falkordb") as m:
        sql, graph = m.services.sql, m.services.graph
        m1 = put(m, "I visited the Eiffel Tower")
        m2 = put(m, "The Eiffel Tower is in Paris", days=1)
        user, tower = entity(m, "alice", "person"), entity(m, "the Eiffel Tower", "landmark")
        tower2, paris = entity(m, "Eiffel Tower", "landmark"), entity(m, "Paris", "city")
        for rel in (relate(m, user, "visited", tower, m1), relate(m, tower2, "located_in", paris, m2)):
            m.services.projector.sync_relations([rel])
        assert graph.counts(ALICE)["entities"] == 4
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=2))
        assert report["entities_merged"] == 1
        assert graph.counts(ALICE) == {**graph.counts(ALICE), "entities": 3, "valid_relations": 2}
        around = graph.neighbourhood(ALICE, [tower], depth=1)
        assert {(r["source_id"], r["target_id"]) for r in around} == {(user, tower), (tower, paris)}
        assert sql.graph_counts()["entities"] == 3


def test_rollback_of_a_pass_undoes_entity_merges_promotions_and_merge_folds(tmp_path):
    """Rollback restores what history rows cannot carry: the entity merged away (SQL row, graph node,
    entity vector) with the relations the merge re-pointed, a memory's layer, and what a memory merge folded
    into its survivor (metadata, access count, the merged memory's relations)."""
    with make_memory(tmp_path, graph_backend="falkordb") as m:
        sql, graph = m.services.sql, m.services.graph
        m1 = put(m, "I visited the Eiffel Tower")
        m2 = put(m, "The Eiffel Tower is in Paris", days=1)
        old = put(m, "I have a golden retriever named Max", days=2)
        new = put(m, "I have a golden retriever named Max.", days=3, metadata={"source": "chat"})
        vip = put(m, "I am allergic to peanuts", days=4, importance=0.9)
        sql.record_access([new])
        sql.record_access([new])
        user, tower = entity(m, "alice", "person"), entity(m, "the Eiffel Tower", "landmark")
        tower2, paris, max_ = entity(m, "Eiffel Tower", "landmark"), entity(m, "Paris", "city"), entity(m, "Max", "dog")
        rels = [relate(m, user, "visited", tower, m1), relate(m, tower2, "located_in", paris, m2),
                relate(m, user, "owns", max_, new)]
        m.services.projector.sync_relations(rels)
        before = {"graph": graph.counts(ALICE), "vectors": m.services.vectors.count_entities(ALICE),
                  "old": sql.get_memory(old), "vip": sql.get_memory(vip)}
        report = m.consolidate(user_id="alice", now=T0 + timedelta(days=5))
        assert report["entities_merged"] == 1 and report["merged"] == 1 and report["promoted"] >= 1
        assert sql.get_relations([rels[1]["id"]])[0]["source_id"] == tower
        assert sql.get_relations([rels[2]["id"]])[0]["memory_id"] == old
        folded = sql.get_memory(old)
        assert folded["metadata"]["source"] == "chat" and folded["access_count"] == 2
        assert sql.get_memory(vip)["metadata"]["layer"] == "long_term"

        undone = m.rollback(report["trace_id"])
        assert not [p for p in undone["not_undone"] if p["event"] in ("MERGE", "PROMOTE", "ENTITY_MERGE")], undone
        assert {e["id"] for e in sql.list_entities(ALICE)} == {user, tower, tower2, paris, max_}
        back = {r["id"]: r for r in sql.get_relations([r["id"] for r in rels])}
        assert (back[rels[1]["id"]]["source_id"], back[rels[1]["id"]]["valid"]) == (tower2, True)
        assert back[rels[2]["id"]]["memory_id"] == new
        assert graph.counts(ALICE) == before["graph"]  # the node back, each edge once, at its old ends
        around = graph.neighbourhood(ALICE, [tower2], depth=1)
        assert {(r["source_id"], r["target_id"]) for r in around} == {(tower2, paris)}
        assert m.services.vectors.count_entities(ALICE) == before["vectors"]
        restored = sql.get_memory(old)
        assert "source" not in restored["metadata"] and restored["access_count"] == before["old"]["access_count"]
        assert "layer" not in sql.get_memory(vip)["metadata"]
        assert sql.get_memory(new)["status"] == "staged"
