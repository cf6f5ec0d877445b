"""The search graph on real stores: SQLite, embedded Qdrant (qdrant-edge), embedded FalkorDB, MiniLM.

Covers each recall path alone, fusion and sources, filters (every operator, AND/OR/NOT, memory type,
category, time range), scope isolation through every path (graph included), Chinese and Japanese queries,
invalidated edges, the planner's depth, neighbouring-turn context, time-aware queries, bad input, access
recording and the get_context block.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, ScopeError
from memoryx.graphs.search import builder
from memoryx.graphs.search import graph as search_graph
from memoryx.nodes.fuse import fuse_hits
from memoryx.runtime.context import Context
from memoryx.search.access import flush_access
from memoryx.search.context_block import build_context, estimate_tokens
from memoryx.search.dates import time_window
from memoryx.search.query import entity_candidates
from memoryx.search.reads import relations_near_hits
from memoryx.stores.sql.schema import MemoryRow
from tests.support import make_services

UTC = timezone.utc


@pytest.fixture(scope="module")
def svc(graph_services):
    """The module's services (tests/conftest.py), under the short name these tests use."""
    return graph_services


def _user(prefix: str = "u") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def add(svc, user: str, text: str, *, metadata=None, memory_type="fact", category=None, created_at=None,
        importance=0.5, **scope) -> str:
    row = svc.sql.insert_memory(scope=Scope(user_id=user, **scope), text=text, metadata=metadata or {},
                                memory_type=memory_type, category=category, created_at=created_at,
                                importance=importance)
    svc.projector.sync_memories([row["id"]])
    return row["id"]


def relate(svc, user: str, source: str, relation: str, target: str, memory_id: str) -> dict:
    scope = Scope(user_id=user)
    a = svc.sql.upsert_entity(scope=scope, name=source, entity_type="person")
    b = svc.sql.upsert_entity(scope=scope, name=target, entity_type="entity")
    svc.projector.sync_entities([a["id"], b["id"]])
    rel = svc.sql.add_relation(scope=scope, source_id=a["id"], relation=relation, target_id=b["id"],
                               memory_id=memory_id, trace_id=None)
    svc.projector.sync_relations([rel])
    return rel


def search(svc, query, user=None, **kw) -> dict:
    inp = {"query": query, "limit": kw.pop("limit", 10), **kw}
    if user is not None:
        inp["user_id"] = user
    return search_graph.invoke(inp, context=Context(services=svc))["result"]


def hand_ranking(svc, monkeypatch) -> None:
    """Search with the hand-weighted ranking: the test checks one of its rules (kept beside the fitted one)."""
    monkeypatch.setattr(svc.settings, "search_tuning", {**svc.settings.search_tuning, "ranker": "hand"})


def ids(result) -> list[str]:
    return [r["id"] for r in result["results"]]


def by_id(result) -> dict:
    return {r["id"]: r for r in result["results"]}


# ------------------------------------------------------------------------------------------- the graph


def test_graph_shape():
    # three steps in a line: every LangGraph step and branch costs CPU in the caller's thread (graphs/search.py)
    assert list(builder.nodes) == ["analyze_query", "recall", "rank"]
    assert sorted(builder.edges) == sorted([("__start__", "analyze_query"), ("analyze_query", "recall"),
                                            ("recall", "rank"), ("rank", "__end__")])
    assert not builder.branches  # no conditional edge: an empty query passes recall and rank untouched
    assert search_graph.checkpointer is None


def test_empty_query_through_the_graph(svc, monkeypatch):
    """The graph invoked directly with a blank query (the fronts refuse one): an empty result, and no recall
    path runs (nothing embedded, no store searched)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a blank query was searched")

    monkeypatch.setattr(svc.embeddings, "embed_query", refuse)
    monkeypatch.setattr(svc.vectors, "search_memories", refuse)
    monkeypatch.setattr(svc.vectors, "keyword_search", refuse)
    out = search_graph.invoke({"query": "   ", "user_id": _user()}, context=Context(services=svc))
    assert out["result"] == {"results": [], "relations": [], "total_count": 0}


def test_reranker_is_the_last_stage_of_rank(svc, monkeypatch):
    """A configured reranker reorders what the rank node returns (no node of its own)."""
    from types import SimpleNamespace

    import memoryx.nodes.rerank as rerank_module
    from memoryx.search.rerankers import CrossEncoderReranker

    hand_ranking(svc, monkeypatch)

    user = _user()
    dog = add(svc, user, "I adore golden retrievers")
    rust = add(svc, user, "My favourite programming language is Rust")
    add(svc, user, "The quarterly tax form is due in April")  # the least relevant: Rust's relevance is not 0
    assert ids(search(svc, "which puppy breed do I love", user))[0] == dog
    monkeypatch.setattr(svc.settings, "reranker", "cross-encoder:stub")
    monkeypatch.setattr(rerank_module, "make_reranker", lambda spec, settings: CrossEncoderReranker(
        spec, model=SimpleNamespace(predict=lambda pairs: [50.0 if "Rust" in t else -50.0 for _, t in pairs])))
    res = search(svc, "which puppy breed do I love", user)
    assert ids(res)[0] == rust and "rerank" in res["results"][0]["sources"]


def test_link_reads_are_the_stores_one_hop_links(svc):
    """The links the graph path follows (SQLStore.memory_links, one hop, Core reads): both directions, links
    to a deleted memory left out, the ORM's link_dict shape."""
    user = _user()
    scope = Scope(user_id=user)
    a, b, c, d, e = (add(svc, user, f"linked memory {i}") for i in range(5))
    for src, dst, rel in ((a, b, "same_entity"), (c, b, "sequence"), (a, d, "related"), (e, c, "led to")):
        svc.sql.link_memories(scope, src, dst, rel)
    svc.sql.delete_memory(d)
    got = svc.sql.memory_links([a, c], depth=1, limit=200)
    assert {(x["source_id"], x["target_id"], x["relation"]) for x in got} == \
        {(a, b, "same_topic"), (c, b, "follows"), (e, c, "causes")}  # each word stored as its link type
    assert all(scope.contains(x) for x in got) and svc.sql.memory_links([], limit=200) == []


# ---------------------------------------------------------------------------------------- recall paths


def test_dense_path_alone(svc, monkeypatch):
    hand_ranking(svc, monkeypatch)
    user = _user()
    dog = add(svc, user, "I adore golden retrievers")
    add(svc, user, "My favourite programming language is Rust")
    res = search(svc, "which puppy breed do I love", user)
    assert ids(res)[0] == dog
    top = res["results"][0]
    assert "dense" in top["sources"] and "keyword" not in top["sources"] and "graph" not in top["sources"]


def test_keyword_path_alone(svc):
    user = _user()
    target = add(svc, user, "The router serial number is XQ7731ZB")
    other = add(svc, user, "I went hiking in the Alps last summer")
    res = search(svc, "XQ7731ZB", user)
    found = by_id(res)
    assert ids(res)[0] == target
    assert "keyword" in found[target]["sources"]
    assert other not in found or "keyword" not in found[other]["sources"]


def test_graph_path_alone_and_relations(svc):
    user = _user()
    m = add(svc, user, "Started a new position last spring")  # no words shared with the query
    relate(svc, user, "Zorblat", "works_at", "Quintex", m)
    res = search(svc, "Zorblat", user)
    hit = by_id(res)[m]
    assert "graph" in hit["sources"]
    assert {"source": "zorblat", "relationship": "works_at", "destination": "quintex"} in [
        {k: v.lower() for k, v in r.items()} for r in res["relations"]]
    # the result says which relation made it relevant; a memory the walk did not reach has none
    assert [{k: v.lower() for k, v in r.items()} for r in hit["graph_context"]] == [
        {"source": "zorblat", "relationship": "works_at", "destination": "quintex"}]
    other = add(svc, user, "Zorblat likes tea")
    assert by_id(search(svc, "Zorblat tea", user))[other]["graph_context"] == []


def test_a_relation_the_question_names_is_found_from_its_best_hits(svc, monkeypatch):
    """"What's my dog's name?": the name fact shares the words, the memory stating the relation does not; the
    walk from the best hits' entities finds the relation that says "dog"."""
    hand_ranking(svc, monkeypatch)
    user = _user()
    name = add(svc, user, "User's name is Sam")
    rex = add(svc, user, "Adopted Rex from the shelter last spring")  # no word of the question
    add(svc, user, "The name of the street is Elm Road")
    relate(svc, user, "User", "is_named", "Sam", name)
    relate(svc, user, "User", "has_dog", "Rex", rex)
    res = search(svc, "What's my dog's name?", user)
    assert rex in ids(res)[:2] and "graph" in by_id(res)[rex]["sources"]
    assert by_id(res)[rex]["graph_context"] == [{"source": "User", "relationship": "has_dog", "destination": "Rex"}]
    # a question not about the user's own life does not walk from its hits
    other = search(svc, "What is the dog's name?", user)
    assert "graph" not in by_id(other).get(rex, {"sources": []})["sources"]


def test_the_walk_from_hits_is_the_graphs_one_hop_within_the_scope(svc):
    """relations_near_hits (one SQL statement) returns what the graph's one-hop neighbourhood of the hits'
    entities returns: the scope's valid relations at either end, none of another scope, none invalidated."""
    user, other = _user(), _user()
    seed = add(svc, user, "Adopted Rex from the shelter")
    near = add(svc, user, "Rex loves the park by the river")
    gone = add(svc, user, "Rex used to sleep in the garage")
    far = add(svc, user, "The park opened in 1990")
    r1 = relate(svc, user, "User", "has_dog", "Rex", seed)
    r2 = relate(svc, user, "Rex", "loves", "Park", near)
    r3 = relate(svc, user, "Rex", "sleeps_in", "Garage", gone)
    relate(svc, user, "Park", "opened_in", "1990", far)  # two hops from the seed
    theirs = add(svc, other, "Rex loves the beach")
    relate(svc, other, "Rex", "loves", "Beach", theirs)  # same names, another scope
    svc.projector.sync_relations(svc.sql.invalidate_relations([r3["id"]], trace_id=None))
    scope = Scope(user_id=user)
    got = relations_near_hits(svc.sql, scope, [seed])
    expected = {r["id"] for r in svc.graph.neighbourhood(scope, [r1["source_id"], r1["target_id"]], depth=1)}
    assert {r["id"] for r in got} == expected and {r1["id"], r2["id"]} <= expected
    assert all(r["hops"] == 1 and r["valid"] for r in got)
    assert {(r["source"], r["relation"], r["target"]) for r in got} >= {("User", "has_dog", "Rex"),
                                                                        ("Rex", "loves", "Park")}
    assert r3["id"] not in {r["id"] for r in got}
    assert r3["id"] in {r["id"] for r in relations_near_hits(svc.sql, scope, [seed], include_invalid=True)}
    assert relations_near_hits(svc.sql, Scope(user_id=other), [near]) == []
    assert relations_near_hits(svc.sql, scope, []) == []


def test_the_walk_from_hits_matches_the_scope_as_the_graph_does(svc):
    """A user's search covers the user's memories kept under an agent (Scope.match: the fields a scope sets), so
    the walk from its hits reads their relations as the graph's neighbourhood does; a search of another agent,
    or of a group, does not see them."""
    user = _user()
    coach = Scope(user_id=user, agent_id="coach")
    seed = svc.sql.insert_memory(scope=coach, text="My running coach is Ilse", metadata={}, memory_type="fact",
                                 category=None, created_at=None, importance=0.5)["id"]
    near = svc.sql.insert_memory(scope=coach, text="Ilse lives in Utrecht", metadata={}, memory_type="fact",
                                 category=None, created_at=None, importance=0.5)["id"]
    svc.projector.sync_memories([seed, near])
    a = svc.sql.upsert_entity(scope=coach, name="User", entity_type="person")
    b = svc.sql.upsert_entity(scope=coach, name="Ilse", entity_type="person")
    c = svc.sql.upsert_entity(scope=coach, name="Utrecht", entity_type="location")
    svc.projector.sync_entities([a["id"], b["id"], c["id"]])
    r1 = svc.sql.add_relation(scope=coach, source_id=a["id"], relation="coached_by", target_id=b["id"],
                              memory_id=seed, trace_id=None)
    r2 = svc.sql.add_relation(scope=coach, source_id=b["id"], relation="lives_in", target_id=c["id"],
                              memory_id=near, trace_id=None)
    svc.projector.sync_relations([r1, r2])
    for scope in (Scope(user_id=user), coach):
        got = {r["id"] for r in relations_near_hits(svc.sql, scope, [seed])}
        walked = {r["id"] for r in svc.graph.neighbourhood(scope, [a["id"], b["id"]], depth=1)}
        assert got == walked == {r1["id"], r2["id"]}, scope
    for scope in (Scope(user_id=user, agent_id="tutor"), Scope(user_id=user, group_id="running-club"),
                  Scope(user_id=_user())):
        assert relations_near_hits(svc.sql, scope, [seed]) == [], scope
        assert svc.graph.neighbourhood(scope, [a["id"], b["id"]], depth=1) == [], scope


def test_graph_depth_and_relation_filter_and_fast_mode(svc):
    user = _user()
    m1 = add(svc, user, "first fact about friends")
    m2 = add(svc, user, "second fact about jobs")
    relate(svc, user, "Bryndis", "knows", "Calloway", m1)
    relate(svc, user, "Calloway", "works_at", "Dravenport", m2)

    def graph_ids(**kw):
        res = search(svc, "Tell me about Bryndis", user, **kw)
        return {r["id"] for r in res["results"] if "graph" in r["sources"]}, res["relations"]

    g0, rel0 = graph_ids(expand_depth=0)
    assert g0 == set() and rel0 == []
    g1, rel1 = graph_ids(expand_depth=1)
    assert g1 == {m1} and [r["relationship"] for r in rel1] == ["knows"]
    g2, rel2 = graph_ids(expand_depth=2)
    assert g2 == {m1, m2} and {r["relationship"] for r in rel2} == {"knows", "works_at"}
    assert graph_ids(mode="fast")[0] == set()
    assert graph_ids(mode="deep")[0] == {m1, m2}
    assert graph_ids(mode="auto")[0] == {m1}  # settings default: depth 1
    gr, relr = graph_ids(expand_depth=2, relation_types=["knows"])
    assert gr == {m1} and all(r["relationship"] == "knows" for r in relr)
    gr, relr = graph_ids(expand_depth=2, relation_types=["works_at"])
    assert gr == set() and relr == []  # only relations of the named types are walked


def test_invalidated_edges_hidden(svc):
    user = _user()
    m = add(svc, user, "an old address note")
    rel = relate(svc, user, "Yelverton", "lives_in", "Paris", m)
    assert "graph" in by_id(search(svc, "Yelverton", user))[m]["sources"]
    inv = svc.sql.invalidate_relations([rel["id"]], trace_id=None)
    svc.projector.sync_relations(inv)
    res = search(svc, "Yelverton", user)
    assert m not in {r["id"] for r in res["results"] if "graph" in r["sources"]}
    assert res["relations"] == []
    res = search(svc, "Yelverton", user, include_invalid=True)
    assert m in {r["id"] for r in res["results"] if "graph" in r["sources"]}
    assert res["relations"] and res["relations"][0]["valid"] is False


# --------------------------------------------------------------------------------------------- fusion


def test_fusion_sources_and_scores(svc):
    user = _user()
    both = add(svc, user, "I am allergic to peanuts")
    add(svc, user, "I play the violin on weekends")
    add(svc, user, "My sister lives in Toronto")
    res = search(svc, "peanuts allergy", user)
    assert ids(res)[0] == both
    top = res["results"][0]
    assert top["sources"][:2] == ["dense", "keyword"]
    scores = [r["score"] for r in res["results"]]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    for key in ("id", "memory", "score", "sources", "metadata", "created_at", "updated_at", "user_id",
                "agent_id", "run_id", "memory_type", "category"):
        assert key in top
    assert top["user_id"] == user


def test_fuse_hits_rrf_and_weighted():
    hits = {"dense": [{"id": "a", "score": 0.9}, {"id": "b", "score": 0.5}],
            "keyword": [{"id": "b", "score": 7.0}, {"id": "c", "score": 1.0}]}
    rrf = fuse_hits(hits, method="rrf", weights={"dense": 1, "keyword": 1}, rrf_k=60)
    assert rrf[0]["id"] == "b" and rrf[0]["sources"] == ["dense", "keyword"] and rrf[0]["relevance"] == 1.0
    weighted = fuse_hits(hits, method="weighted", weights={"dense": 0.5, "keyword": 0.5}, rrf_k=60)
    assert {x["id"] for x in weighted} == {"a", "b", "c"} and weighted[-1]["relevance"] == 0.0


def test_fuse_hits_short_match_list_scales_from_zero():
    """A keyword path that found two matches of the ten it was asked for: the second keeps its keyword credit
    (7/8 of the first's), where min-max over the list would give it none; a full list keeps min-max."""
    hits = {"dense": [{"id": "a", "score": 0.5}, {"id": "b", "score": 0.6}, {"id": "c", "score": 0.1}],
            "keyword": [{"id": "a", "score": 8.0}, {"id": "b", "score": 7.0}]}
    short = {x["id"]: x["relevance"] for x in fuse_hits(hits, method="weighted", weights={"dense": 0.5,
                                                                                          "keyword": 0.5},
                                                        rrf_k=60, asked=10)}
    assert short["b"] == 1.0 and short["a"] > 0.8 and short["c"] == 0.0
    full = {x["id"]: x["relevance"] for x in fuse_hits(hits, method="weighted", weights={"dense": 0.5,
                                                                                         "keyword": 0.5},
                                                       rrf_k=60, asked=2)}
    assert full["a"] == 1.0 and full["b"] < 0.6


def test_a_second_keyword_match_of_a_small_store_keeps_its_credit(tmp_path):
    """Through the public API: "What shifts am I working?" matches "work" in the job statement and "shifts" in
    the longer shift statement (so the job statement is the keyword path's best). The shift statement keeps its
    keyword credit: both lead, far above the statements that match nothing. Which of the two comes first, and by
    how much, is the fitted ranking's to weigh (statements said minutes apart have the same place in time)."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    said = ["I work as a nurse at St Mary's hospital in Leeds", "my husband Arjun is a civil engineer",
            "User started night shifts this week (week of 2025-01-06), sleep schedule is a mess",
            "we have a cat named Mango, she's 6", "User is allergic to penicillin"]
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        for minute, text in enumerate(said):
            m.add([{"role": "user", "content": text, "timestamp": f"2025-01-08T19:0{minute}:00+00:00"}],
                  user_id="p", infer=False)
        found = m.search("What shifts am I working?", user_id="p", limit=3, now="2025-01-09T08:00:00+00:00")
    first, second, third = found["results"]
    assert {first["memory"][:6], second["memory"][:6]} == {"I work", "User s"}
    assert second["score"] - third["score"] > first["score"] - second["score"]  # the two lead as a pair


def test_recipes_keyword_vector_hybrid(svc):
    user = _user()
    serial = add(svc, user, "The router serial number is XQ7731ZB")
    add(svc, user, "I adore golden retrievers")
    keyword = search(svc, "XQ7731ZB puppy", user, mode="keyword")
    assert ids(keyword) == [serial] and keyword["results"][0]["sources"] == ["keyword"]
    vector = search(svc, "XQ7731ZB puppy", user, mode="vector")
    assert vector["results"] and all("keyword" not in r["sources"] for r in vector["results"])
    hybrid = search(svc, "XQ7731ZB puppy", user, mode="hybrid")
    assert {s for r in hybrid["results"] for s in r["sources"]} <= {"dense", "keyword", "context"}


def test_limit_threshold_and_rrf_setting(svc):
    user = _user()
    for i in range(6):
        add(svc, user, f"note number {i} about gardening tomatoes")
    assert len(search(svc, "gardening", user, limit=3)["results"]) == 3
    assert search(svc, "gardening", user, threshold=1.01)["results"] == []
    from dataclasses import replace

    rrf = replace(svc, settings=svc.settings.model_copy(update={"fusion": "rrf"}))
    out = search_graph.invoke({"query": "gardening", "user_id": user}, context=Context(services=rrf))["result"]
    assert len(out["results"]) == 6


# --------------------------------------------------------------------------------------------- filters


@pytest.fixture(scope="module")
def filtered(svc):
    user = _user("filters")
    base = datetime(2024, 1, 1, tzinfo=UTC)
    mids = {}
    specs = [
        ("pet", {"n": 1, "city": "Paris", "tags": ["a", "b"], "note": "likes cats"}, "fact", "preference", 0),
        ("pet", {"n": 2, "city": "Rome", "tags": ["b"], "note": "owns a dog"}, "episodic", "experience", 10),
        ("pet", {"n": 3, "city": "Oslo", "tags": ["c"], "note": "wants a parrot"}, "fact", "plan", 20),
        ("pet", {"n": 4, "city": "Paris", "note": "allergic to cats"}, "preference", "preference", 30),
    ]
    for i, (word, meta, mtype, cat, days) in enumerate(specs):
        mids[meta["n"]] = add(svc, user, f"{word} memory {meta['note']}", metadata=meta, memory_type=mtype,
                              category=cat, created_at=base + timedelta(days=days))
    return user, mids


@pytest.mark.parametrize("flt, expected", [
    ({"city": "Paris"}, {1, 4}),
    ({"city": {"eq": "Rome"}}, {2}),
    ({"city": {"ne": "Paris"}}, {2, 3}),
    ({"n": {"gt": 2}}, {3, 4}),
    ({"n": {"gte": 2}}, {2, 3, 4}),
    ({"n": {"lt": 2}}, {1}),
    ({"n": {"lte": 2}}, {1, 2}),
    ({"city": {"in": ["Rome", "Oslo"]}}, {2, 3}),
    ({"city": {"nin": ["Rome", "Oslo"]}}, {1, 4}),
    ({"note": {"contains": "cats"}}, {1, 4}),
    ({"tags": {"contains": "b"}}, {1, 2}),
    ({"AND": [{"city": "Paris"}, {"n": {"gt": 1}}]}, {4}),
    ({"OR": [{"city": "Rome"}, {"n": 3}]}, {2, 3}),
    ({"NOT": [{"city": "Paris"}]}, {2, 3}),
    ({"memory_type": "fact"}, {1, 3}),
    ({"memory_type": {"in": ["episodic", "preference"]}}, {2, 4}),
    ({"category": "preference"}, {1, 4}),
    ({"created_at": {"gte": "2024-01-05", "lt": "2024-01-25"}}, {2, 3}),
    ({"created_at": {"lt": "2024-01-05T00:00:00Z"}}, {1}),
])
def test_filters(svc, filtered, flt, expected):
    user, mids = filtered
    got = set(ids(search(svc, "pet memory", user, filters=flt)))
    assert got == {mids[n] for n in expected}


def test_filters_apply_to_graph_path(svc):
    user = _user()
    m = add(svc, user, "unrelated words here", metadata={"kind": "work"})
    relate(svc, user, "Quillon", "employs", "Ravensworth", m)
    assert m in ids(search(svc, "Quillon", user))
    assert m not in ids(search(svc, "Quillon", user, filters={"kind": "home"}))


def test_bad_operator_and_bad_input(svc):
    user = _user()
    add(svc, user, "something")
    with pytest.raises(InvalidInputError, match="regex"):
        search(svc, "something", user, filters={"name": {"regex": "x.*"}})
    with pytest.raises(InvalidInputError, match="limit"):
        search(svc, "something", user, limit=0)
    with pytest.raises(InvalidInputError, match="mode"):
        search(svc, "something", user, mode="turbo")
    with pytest.raises(InvalidInputError, match="expand_depth"):
        search(svc, "something", user, expand_depth=5)


def test_empty_query_and_no_scope(svc):
    user = _user()
    add(svc, user, "something")
    assert search(svc, "", user) == {"results": [], "relations": [], "total_count": 0}
    assert search(svc, "   ", user) == {"results": [], "relations": [], "total_count": 0}
    with pytest.raises(ScopeError):
        search(svc, "something")
    with pytest.raises(ScopeError):
        search(svc, "", None)


# ------------------------------------------------------------------------------------------------ scope


def test_scope_isolation_every_path(svc):
    a, b = _user("a"), _user("b")
    secret = add(svc, a, "Alice's bank PIN is 4417 and she banks with Norvik")
    relate(svc, a, "Alice", "banks_with", "Norvik", secret)
    mine = add(svc, b, "I like tea")
    for q in ("bank PIN 4417", "Alice", "Norvik", "what does Alice bank with?"):
        for mode in ("fast", "auto", "deep"):
            res = search(svc, q, b, mode=mode)
            assert secret not in ids(res)
            assert set(ids(res)) <= {mine}
            assert res["relations"] == []
    # b's own entity with the same name does not reach a's graph
    m_b = add(svc, b, "my colleague")
    relate(svc, b, "Alice", "colleague_of", "Bob", m_b)
    res = search(svc, "Alice", b, mode="deep")
    assert secret not in ids(res)
    assert all(r["relationship"] != "banks_with" for r in res["relations"])
    # agent/run scopes narrow further
    run_mem = add(svc, a, "run scoped note about kayaks", run_id="r1")
    assert run_mem in ids(search(svc, "kayaks", a))
    assert run_mem not in ids(search(svc, "kayaks", a, run_id="r2"))


# -------------------------------------------------------------------------------------------- languages


def test_chinese_and_japanese_queries(svc):
    user = _user()
    coffee = add(svc, user, "我每天早上都喝咖啡")
    tokyo = add(svc, user, "東京に住んでいます")
    add(svc, user, "I enjoy reading science fiction")
    res = search(svc, "我喜欢喝什么咖啡？", user)
    assert ids(res)[0] == coffee and "keyword" in res["results"][0]["sources"]
    res = search(svc, "東京はどこですか", user)
    assert ids(res)[0] == tokyo and "keyword" in res["results"][0]["sources"]
    # a Chinese entity name found in the query without spaces
    m = add(svc, user, "同事关系")
    relate(svc, user, "小明", "同事", "小红", m)
    res = search(svc, "小明是谁", user)
    assert "graph" in by_id(res)[m]["sources"]
    assert any(r["source"] == "小明" for r in res["relations"])


def test_entity_candidates_and_time_window():
    c = entity_candidates("Where does Melanie's friend in New York work? 小明在东京")
    assert "Melanie" in c and "New York" in c and "小明" in c and "东京" in c
    day = time_window("What did I eat on 9 November, 2022?")
    assert datetime(2022, 11, 9, 12, tzinfo=UTC).timestamp() in range_of(day)
    month = time_window("what happened in July 2023")
    assert datetime(2023, 7, 20, tzinfo=UTC).timestamp() in range_of(month)
    assert datetime(2023, 6, 20, tzinfo=UTC).timestamp() not in range_of(month)
    assert time_window("2023年5月7日我做了什么") is not None
    assert time_window("what is my name") is None


class range_of:
    def __init__(self, window):
        self.lo, self.hi = window

    def __contains__(self, ts):
        return self.lo <= ts < self.hi


# ---------------------------------------------------------------------------------- context and time


def test_neighbouring_turns_and_time_window(svc):
    user = _user()
    base = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = ["Caroline: Hey Mel, what did you do this weekend?",
             "Melanie: I went to a pottery class with my kids.",
             "Caroline: That sounds lovely! What did you make?",
             "Melanie: A blue bowl with little fish on it."]
    tids = [add(svc, user, t, memory_type="episodic", created_at=base + timedelta(seconds=30 * i))
            for i, t in enumerate(turns)]
    later = add(svc, user, "Melanie: I went to a pottery class again.", memory_type="episodic",
                created_at=base + timedelta(days=60))
    res = search(svc, "What did Melanie make at the pottery class?", user)
    assert tids[3] in ids(res)[:4]
    assert "context" in by_id(res)[tids[3]]["sources"]
    res = search(svc, "What did Melanie do in July 2023?", user)
    assert ids(res)[0] == later and "time" in res["results"][0]["sources"]
    # extracted facts (not conversation turns) are not each other's context
    facts = [add(svc, user, t) for t in ("Likes kayaking on lakes", "Owns a red bicycle")]
    res = search(svc, "kayaking", user)
    assert "context" not in by_id(res).get(facts[1], {"sources": []})["sources"]


# ------------------------------------------------------------------------------------------- access


def test_access_recorded_in_background(svc):
    user = _user()
    m = add(svc, user, "I keep bees in my garden")
    search(svc, "bees", user, record_access=False)
    flush_access()
    assert svc.sql.get_memory(m)["access_count"] == 0
    search(svc, "bees", user)
    flush_access()
    row = svc.sql.get_memory(m)
    assert row["access_count"] == 1 and row["last_accessed_at"]
    search(svc, "bees", user)
    search(svc, "garden bees", user)  # the same day: already counted
    flush_access()
    assert svc.sql.get_memory(m)["access_count"] == 1


def test_repeating_a_search_keeps_its_scores(svc):
    """Access counts once a day and the ranking reads the earlier days' accesses only: the same search run
    again gives the same scores, while a memory accessed on earlier days still ranks up."""
    user = _user()
    for text in ("I keep bees in my garden", "The garden has roses", "Bees make honey in summer",
                 "My neighbour keeps chickens"):
        add(svc, user, text)
    first = search(svc, "bees garden", user, limit=2)
    flush_access()
    for _ in range(3):
        again = search(svc, "bees garden", user, limit=2)
        flush_access()
        assert [(r["id"], r["score"]) for r in again["results"]] == [(r["id"], r["score"]) for r in first["results"]]
    # accesses of an earlier day do lift a memory (the access term still works)
    top = first["results"][0]["id"]
    with svc.sql._tx(write=True) as s:
        s.execute(sa.update(MemoryRow).where(MemoryRow.id == top)
                  .values(access_count=20, last_accessed_at=datetime(2020, 1, 1, tzinfo=timezone.utc)))
    lifted = search(svc, "bees garden", user, limit=2)
    assert by_id(lifted)[top]["score"] > by_id(first)[top]["score"]


# ----------------------------------------------------------------------------- reference time and types


def test_as_of_answers_as_the_memory_stood_then(svc):
    user = _user()
    paris = add(svc, user, "I live in Paris", created_at=datetime(2024, 1, 10, tzinfo=timezone.utc))
    rome = add(svc, user, "I moved to Rome and live there now", created_at=datetime(2024, 6, 1, tzinfo=timezone.utc))
    now = search(svc, "where do I live", user)
    assert {paris, rome} <= set(ids(now))
    then = search(svc, "where do I live", user, as_of="2024-03-01T00:00:00Z")
    assert paris in ids(then) and rome not in ids(then)
    with pytest.raises(InvalidInputError):
        search(svc, "where do I live", user, now="2024-03-01", as_of="2024-03-01")
    with pytest.raises(InvalidInputError):
        search(svc, "where do I live", user, now="the day before yesterday")


def test_now_reads_relative_periods_and_recency_from_the_question_date(svc):
    user = _user()
    hike = add(svc, user, "Went hiking in the Alps", created_at=datetime(2024, 5, 29, tzinfo=timezone.utc))
    add(svc, user, "Went hiking in the Rockies", created_at=datetime(2023, 2, 1, tzinfo=timezone.utc))
    res = search(svc, "where did I go hiking last week", user, now=datetime(2024, 6, 5, tzinfo=timezone.utc))
    assert res["time_filter"]["start"].startswith("2024-05") and ids(res)[0] == hike
    # recency from the question's date: a year later the two are closer in recency than seen from June 2024
    near = by_id(search(svc, "hiking", user, now="2024-06-05"))
    far = by_id(search(svc, "hiking", user, now="2034-06-05"))
    assert near[hike]["score"] > far[hike]["score"]


def test_memory_types_filter(svc):
    user = _user()
    fact = add(svc, user, "I play the cello", memory_type="semantic")
    turn = add(svc, user, "I played the cello at the concert", memory_type="episodic")
    assert {fact, turn} <= set(ids(search(svc, "cello", user)))
    assert ids(search(svc, "cello", user, memory_types=["semantic"])) == [fact]
    assert ids(search(svc, "cello", user, memory_types=["episodic", "procedural"])) == [turn]
    with pytest.raises(InvalidInputError):
        search(svc, "cello", user, memory_types=[3])


def test_recommendation_questions_read_stated_preferences(svc):
    user = _user()
    liked = add(svc, user, "I love Italian food, especially pasta")
    for text in ("We moved to a flat near the river", "The kitchen tap is leaking", "Booked a dentist visit"):
        add(svc, user, text)
    res = search(svc, "What should I cook tonight?", user, limit=3)
    assert ids(res)[0] == liked and "preference" in res["results"][0]["sources"]


# ------------------------------------------------------------------------------------------ get_context


def test_get_context_block(svc):
    user = _user()
    add(svc, user, "I am allergic to peanuts", created_at=datetime(2024, 3, 1, tzinfo=UTC))
    add(svc, user, "I am vegetarian")
    m = add(svc, user, "my partner")
    relate(svc, user, "Ingrid", "married_to", "Torsten", m)
    res = search(svc, "What food should I avoid? Ingrid", user)
    block = build_context(res, max_tokens=200)
    assert "peanuts" in block["context"] and "[2024-03-01]" in block["context"]
    assert "Ingrid" in block["context"] or "ingrid" in block["context"]
    assert block["tokens"] <= 200 and set(block["memories"]) <= set(ids(res))
    small = build_context(res["results"], max_tokens=12)
    assert small["tokens"] <= 12 and small["truncated"]
    assert build_context({"results": [], "relations": []}, max_tokens=50)["context"]
    with pytest.raises(InvalidInputError):
        build_context(res, max_tokens=0)


def test_token_estimate_cjk():
    assert estimate_tokens("我每天早上都喝咖啡") == 9
    assert estimate_tokens("東京に住んでいます") == 9
    assert 2 <= estimate_tokens("hello world") <= 4
    zh = build_context([{"id": "x", "memory": "我" * 100}], max_tokens=30)
    assert zh["tokens"] <= 30 and zh["truncated"]


def test_search_on_postgresql(pg_url, tmp_path):
    """The SQL parts of search (entity lookup, context rows, filters) on PostgreSQL."""
    with make_services(tmp_path / "pg", sql_url=pg_url) as svc:
        user = _user("pg")
        base = datetime(2024, 6, 1, 12, tzinfo=UTC)
        q = add(svc, user, "Ana: what instrument do you play?", memory_type="episodic", created_at=base,
                metadata={"k": 1})
        a = add(svc, user, "Ben: the cello, since I was nine.", memory_type="episodic",
                created_at=base + timedelta(seconds=30), metadata={"k": 1})
        add(svc, user, "Ana: nice weather today", memory_type="episodic", created_at=base + timedelta(days=3),
            metadata={"k": 2})
        res = search(svc, "what instrument do you play", user, filters={"k": 1})
        assert ids(res)[0] == q and a in ids(res) and "context" in by_id(res)[a]["sources"]
        assert all(r["metadata"]["k"] == 1 for r in res["results"])
        flush_access()
        assert svc.sql.get_memory(q)["access_count"] == 1  # the access write on PostgreSQL too


def test_search_tuning_overrides_and_refuses_unknown_knobs():
    from memoryx.errors import InvalidInputError
    from memoryx.search.tuning import DEFAULTS, tuning
    from memoryx.settings import Settings

    assert tuning(Settings(search_tuning={"context_window": 3}))["context_window"] == 3
    assert tuning(Settings())["context_window"] == DEFAULTS["context_window"]
    with pytest.raises(InvalidInputError, match="context_windw"):
        tuning(Settings(search_tuning={"context_windw": 3}))


def test_both_events_of_a_between_question_are_candidates(svc, monkeypatch):
    """"How many days passed between X and Y": memories that share many of the question's words ("days",
    "passed", "walk", "event") crowd its keyword list above X's own memory; each event's phrase is searched
    too, so both events' memories come first."""
    hand_ranking(svc, monkeypatch)
    from memoryx.nodes import keyword_recall

    user = _user()
    walk = add(svc, user, "Walked ten miles at the Walk for Hunger event downtown")
    for n in range(12):
        add(svc, user, f"The hunger walk event {n} passed through the park, many days of walking to plan")
    beach = add(svc, user, "Spent Saturday picking plastic off the beach at the Coastal Cleanup")
    question = "How many days passed between the Walk for Hunger event and the Coastal Cleanup event?"
    assert set(ids(search(svc, question, user, limit=2, mode="keyword"))) == {walk, beach}
    monkeypatch.setattr(keyword_recall, "event_phrases", lambda q: ())  # the whole question alone
    assert walk not in ids(search(svc, question, user, limit=5, mode="keyword"))


def test_each_event_of_a_two_event_question_reaches_the_top_two(svc, monkeypatch):
    """The first event's conversation (turns a minute apart, lending each other context, sharing the question's
    words) fills the top of the list and buries the second event's one turn; the second event's best keyword hit
    is moved up to just after the best hit, with the score of the hit it now precedes and "event" as a source."""
    from memoryx.nodes import rank

    hand_ranking(svc, monkeypatch)

    user = _user("ev")
    day = datetime(2024, 3, 1, 9, tzinfo=UTC)
    texts = ["I just did the Walk for Hunger event today, five kilometres for the food bank.",
             "How many days should I train before the next charity walk event?",
             "The days passed so fast during the walk, the event was great.",
             "Which event should I walk next? Days like that pass quickly.",
             "I passed the food bank on the way back from the event."]
    walk = [add(svc, user, t, memory_type="episodic", created_at=day + timedelta(minutes=i))
            for i, t in enumerate(texts)]
    beach = add(svc, user, "Spent Saturday morning picking plastic off the beach at the Coastal Cleanup.",
                memory_type="episodic", created_at=day + timedelta(days=20))
    question = "How many days passed between the Walk for Hunger event and the Coastal Cleanup event?"
    res = search(svc, question, user, limit=6)
    assert ids(res)[0] in walk and ids(res)[1] == beach
    moved = res["results"][1]
    assert "event" in moved["sources"] and moved["score"] == res["results"][2]["score"]
    assert [r["score"] for r in res["results"]] == sorted((r["score"] for r in res["results"]), reverse=True)
    monkeypatch.setattr(rank, "covering_first", lambda ranked: ranked)  # without the move
    assert beach not in ids(search(svc, question, user, limit=6))[:2]


def test_a_question_naming_a_period_prefers_the_memory_that_says_when():
    """"What did I bake a month ago?": every memory of that period gets the period's bonus; the one that tells
    the event in its own words ("today") is the event's account, so it also gains when_bonus, as it would for a
    "when" question. A question naming neither keeps both equal."""
    from memoryx.nodes.expand_context import _boost
    from memoryx.search.plan import SearchPlan

    day = datetime(2024, 3, 19, 15, tzinfo=UTC).timestamp()

    def boosted(plan: SearchPlan) -> dict[str, float]:
        cands = [{"id": i, "relevance": 0.5, "memory": {"memory": text, "valid_at": day, "metadata": {}}}
                 for i, text in (("told", "Baked a lemon tart today"), ("plain", "Baked a lemon tart"))]
        _boost(cands, plan, set())
        return {c["id"]: c["relevance"] for c in cands}

    scope = Scope(user_id="u")
    period = SearchPlan(scope=scope, query="What did I bake a month ago?", time_window=(day - 86400, day + 86400))
    got = boosted(period)
    assert got["told"] == pytest.approx(got["plain"] + period.tuning.when_bonus)
    assert got["plain"] == pytest.approx(0.5 + period.tuning.time_bonus)
    neither = boosted(SearchPlan(scope=scope, query="What did I bake?"))
    assert neither["told"] == neither["plain"] == 0.5
