"""One contract suite for every vector backend: embedded Qdrant (qdrant-edge), the Qdrant client (local mode,
the same code path as a Qdrant server) and pgvector (a private PostgreSQL 16 from pgserver), plus
backend-specific checks and the real MiniLM."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import uuid

import pytest
from qdrant_client import QdrantClient

from memoryx.core.filters import matches, parse_filters
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, StoreUnavailableError
from memoryx.stores.vectors import (
    EdgeVectorStore,
    PgVectorStore,
    QdrantServerVectorStore,
    VectorHit,
    VectorStore,
    make_vector_store,
)

ALICE, BOB = Scope(user_id="alice"), Scope(user_id="bob")
DIMS = 4


def vec(*xs: float) -> list[float]:
    v = list(xs) + [0.0] * (DIMS - len(xs))
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def uid() -> str:
    return str(uuid.uuid4())


def mem(text, v, scope=ALICE, **kw) -> dict:
    item = {"id": kw.pop("id", None) or uid(), "vector": v, "text": text, **scope.as_dict(), **kw}
    item.setdefault("metadata", {})
    return item


@pytest.fixture(params=["edge", "qdrant-local", "pgvector"])
def opener(request, tmp_path):
    """A function opening (or re-opening) the backend on this test's directory (pgvector: this test's own
    tables in the session's PostgreSQL)."""
    pg_url = request.getfixturevalue("pgvector_url") if request.param == "pgvector" else None
    tables = f"t{uuid.uuid4().hex[:12]}"

    def open_store(dims: int = DIMS, prefix: str = "memoryx") -> VectorStore:
        if request.param == "edge":
            return EdgeVectorStore(tmp_path / "qdrant", dims, prefix=prefix)
        if request.param == "pgvector":
            return PgVectorStore(pg_url, dims, prefix=f"{prefix}_{tables}")
        return QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qlocal")), dims, prefix=prefix)

    open_store.backend = request.param
    return open_store


@pytest.fixture
def store(opener):
    s = opener()
    yield s
    s.close()


# ------------------------------------------------------------------------------------------- dense search

def test_upsert_search_order_threshold_limit(store):
    a, b, c = (mem("alpha", vec(1, 0)), mem("beta", vec(1, 1)), mem("gamma", vec(0, 1)))
    store.upsert_memories([a, b, c])
    hits = store.search_memories(vec(1, 0), ALICE, limit=5)
    assert [h.id for h in hits] == [a["id"], b["id"], c["id"]]
    assert isinstance(hits[0], VectorHit) and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[1].score == pytest.approx(0.7071, abs=1e-3)
    assert all(x.score >= y.score for x, y in zip(hits, hits[1:]))
    assert [h.id for h in store.search_memories(vec(1, 0), ALICE, limit=1)] == [a["id"]]
    assert [h.id for h in store.search_memories(vec(1, 0), ALICE, threshold=0.5)] == [a["id"], b["id"]]
    p = hits[0].payload
    assert p["text"] == "alpha" and p["user_id"] == "alice" and p["memory_type"] == "fact"
    assert p["metadata"] == {} and isinstance(p["created_ts"], float) and p["created_at"]


def test_wrong_dimensions_are_refused(store):
    with pytest.raises(InvalidInputError, match="dimensions"):
        store.upsert_memories([mem("x", [1.0, 0.0])])
    with pytest.raises(InvalidInputError, match="dimensions"):
        store.search_memories([1.0, 0.0], ALICE)
    with pytest.raises(InvalidInputError, match="scope"):
        store.upsert_memories([{"id": uid(), "vector": vec(1), "text": "no scope"}])


def test_scope_isolation(store):
    a = mem("I live in Paris", vec(1, 0), ALICE)
    b = mem("I live in Paris", vec(1, 0), BOB)
    ab = mem("agent note on Paris", vec(1, 0.1), Scope(user_id="alice", agent_id="planner"))
    store.upsert_memories([a, b, ab])
    for hits in (store.search_memories(vec(1, 0), ALICE, limit=10), store.keyword_search("Paris", ALICE)):
        assert {h.id for h in hits} == {a["id"], ab["id"]}
        assert all(h.payload["user_id"] == "alice" for h in hits)
    assert [h.id for h in store.search_memories(vec(1, 0), BOB, limit=10)] == [b["id"]]
    assert [h.id for h in store.keyword_search("Paris", BOB)] == [b["id"]]
    # a scope narrows on every field it sets, and only on those
    assert [h.id for h in store.search_memories(vec(1, 0), Scope(user_id="alice", agent_id="planner"))] == [ab["id"]]
    assert [h.id for h in store.search_memories(vec(1, 0), Scope(agent_id="planner"))] == [ab["id"]]
    assert store.search_memories(vec(1, 0), Scope(user_id="carol")) == []
    assert store.count_memories(ALICE) == 2 and store.count_memories(BOB) == 1 and store.count_memories() == 3


# ----------------------------------------------------------------------------------------------- filters

FILTER_CASES = [
    {"city": "Paris"},
    {"city": {"in": ["Paris", "Rome"]}},
    {"city": {"nin": ["Paris"]}},
    {"city": {"ne": "Paris"}},
    {"city": {"contains": "ar"}},
    {"tags": "food"},
    {"tags": {"contains": "foo"}},
    {"n": {"gt": 2}},
    {"n": {"gte": 2, "lt": 5}},
    {"n": 3},
    {"n": {"in": [1, 5]}},
    {"score": {"lte": 0.5}},
    {"vip": True},
    {"vip": {"ne": True}},
    {"vip": {"in": [False, "x"]}},
    {"城市": "北京"},
    {"my key": {"gte": 1}},
    {"missing": None},
    {"city": None},
    {"memory_type": "episodic"},
    {"category": {"in": ["work", "home"]}},
    {"created_at": {"gte": "2024-03-01T00:00:00Z"}},
    {"created_at": {"gte": "2024-02-01", "lt": "2024-04-01"}},
    {"AND": [{"city": "Paris"}, {"n": {"gt": 2}}]},
    {"OR": [{"city": "Rome"}, {"memory_type": "episodic"}]},
    {"NOT": [{"city": "Paris"}]},
    {"NOT": [{"city": "Paris"}, {"vip": True}]},
    {"AND": [{"OR": [{"n": {"lt": 2}}, {"n": {"gt": 4}}]}, {"NOT": [{"category": "work"}]}]},
]


@pytest.fixture
def filter_corpus(store):
    rows = [
        ("Paris flat", {"city": "Paris", "n": 1, "tags": ["food", "art"], "score": 0.2, "城市": "北京", "my key": 2},
         "fact", "home", "2024-01-15"),
        ("Paris job", {"city": "Paris", "n": 3, "vip": True, "score": 0.9}, "fact", "work", "2024-02-15"),
        ("Rome trip", {"city": "Rome", "n": 5, "tags": ["travel"]}, "episodic", "travel", "2024-03-15"),
        ("Berlin", {"city": "Berlin", "n": 3.0, "vip": False, "score": 0.5}, "fact", "home", "2024-04-15"),
        ("no city", {"n": 7, "tags": ["foodie"]}, "episodic", None, "2024-05-15"),
    ]
    items = []
    for i, (text, md, mt, cat, day) in enumerate(rows):
        items.append(mem(text, vec(1, i * 0.1), ALICE, metadata=md, memory_type=mt, category=cat,
                         created_at=f"{day}T00:00:00+00:00"))
    items.append(mem("Bob in Paris", vec(1, 0), BOB, metadata={"city": "Paris", "n": 3}))
    store.upsert_memories(items)
    dicts = [{**it, "memory": it["text"]} for it in items]
    return store, dicts


def test_filters_agree_with_matches(filter_corpus):
    """The Qdrant translation of every filter selects exactly what `filters.matches` selects."""
    store, dicts = filter_corpus
    by_text = {d["id"]: d["text"] for d in dicts}
    wrong = []
    for flt in FILTER_CASES:
        node = parse_filters(flt)
        expected = {d["id"] for d in dicts if d["user_id"] == "alice" and matches(node, d)}
        got = {h.id for h in store.search_memories(vec(1, 0), ALICE, limit=50, filters=node)}
        kw = {h.id for h in store.keyword_search("Paris Rome Berlin city flat job trip", ALICE, limit=50, filters=node)}
        if got != expected or not kw <= expected:
            wrong.append((flt, sorted(by_text[i] for i in got), sorted(by_text[i] for i in expected)))
    assert not wrong, "filter (got, expected): " + "; ".join(map(str, wrong))


def test_filter_expected_results(filter_corpus):
    store, dicts = filter_corpus
    by_text = {d["id"]: d["text"] for d in dicts}

    def texts(flt):
        return sorted(by_text[h.id] for h in store.search_memories(vec(1, 0), ALICE, limit=50, filters=parse_filters(flt)))

    assert texts({"city": "Paris"}) == ["Paris flat", "Paris job"]
    assert texts({"city": {"in": ["Rome", "Berlin"]}}) == ["Berlin", "Rome trip"]
    assert texts({"n": {"gt": 3}}) == ["Rome trip", "no city"]
    assert texts({"n": 3}) == ["Berlin", "Paris job"]  # 3 and 3.0
    assert texts({"memory_type": "episodic"}) == ["Rome trip", "no city"]
    assert texts({"created_at": {"gte": "2024-02-01", "lt": "2024-04-01"}}) == ["Paris job", "Rome trip"]
    assert texts({"NOT": [{"city": "Paris"}]}) == ["Berlin", "Rome trip", "no city"]
    assert texts({"OR": [{"city": "Rome"}, {"vip": True}]}) == ["Paris job", "Rome trip"]


# ----------------------------------------------------------------------------------------------- keywords

def test_keyword_search_english_and_chinese(store):
    items = [
        mem("Alice has two cats and a dog", vec(1, 0)),
        mem("Alice lives in Paris", vec(0, 1)),
        mem("我住在北京", vec(0, 0, 1)),
        mem("我喜欢上海的咖啡", vec(0, 0, 0, 1)),
        mem("私はコーヒーが好きです", vec(1, 1)),
    ]
    store.upsert_memories(items)
    ids = [i["id"] for i in items]
    assert [h.id for h in store.keyword_search("cat", ALICE)] == [ids[0]]          # plural stemmed
    assert store.keyword_search("Where does Alice live in Paris?", ALICE)[0].id == ids[1]
    hits = store.keyword_search("北京", ALICE)
    assert [h.id for h in hits] == [ids[2]] and hits[0].score > 0
    assert hits[0].payload["text"] == "我住在北京"
    assert store.keyword_search("上海咖啡", ALICE)[0].id == ids[3]
    assert store.keyword_search("コーヒー", ALICE)[0].id == ids[4]
    assert store.keyword_search("the of and", ALICE) == []                          # only stop words
    assert store.keyword_search("zebra", ALICE) == []


def test_keyword_rare_terms_rank_higher(store):
    common = [mem(f"coffee note {i}", vec(1, i)) for i in range(6)]
    rare = mem("coffee in Kyoto", vec(0, 1))
    store.upsert_memories(common + [rare])
    hits = store.keyword_search("coffee Kyoto", ALICE, limit=3)
    assert hits[0].id == rare["id"] and hits[0].score > hits[1].score


def test_keyword_search_batch_answers_each_text_as_alone(store):
    items = [mem("coffee in Kyoto", vec(1, 0)), mem("tea in Paris", vec(0, 1)), mem("coffee note", vec(1, 1))]
    store.upsert_memories(items)
    texts = ["coffee Kyoto", "the of and", "Paris tea", "zebra"]  # a stop-word-only text asks nothing
    batch = store.keyword_search_batch(texts, ALICE, limit=2)
    alone = [store.keyword_search(t, ALICE, limit=2) for t in texts]
    assert [[(h.id, round(h.score, 5)) for h in hits] for hits in batch] == \
        [[(h.id, round(h.score, 5)) for h in hits] for hits in alone]
    assert batch[0][0].id == items[0]["id"] and batch[1] == [] and batch[2][0].id == items[1]["id"]
    assert store.keyword_search_batch(texts, BOB) == [[], [], [], []]  # another tenant's text never comes back


# ------------------------------------------------------------------------------------------ idempotence

def test_idempotent_upsert_and_delete(store):
    m = mem("I like tea", vec(1, 0))
    store.upsert_memories([m])
    store.upsert_memories([m])
    assert store.count_memories(ALICE) == 1
    m2 = {**m, "text": "I like coffee", "vector": vec(0, 1)}
    store.upsert_memories([m2, m2])
    assert store.count_memories(ALICE) == 1
    assert store.keyword_search("tea", ALICE) == []
    assert [h.id for h in store.keyword_search("coffee", ALICE)] == [m["id"]]
    assert store.search_memories(vec(0, 1), ALICE)[0].score == pytest.approx(1.0, abs=1e-5)
    store.delete_memories([m["id"]])
    store.delete_memories([m["id"], uid()])
    store.delete_memories([])
    assert store.count_memories(ALICE) == 0 and store.search_memories(vec(0, 1), ALICE) == []


def test_non_uuid_ids_round_trip(store):
    store.upsert_memories([mem("custom id", vec(1), id="mem-42")])
    assert store.search_memories(vec(1), ALICE)[0].id == "mem-42"
    store.delete_memories(["mem-42"])
    assert store.count_memories() == 0


# -------------------------------------------------------------------------------------------- entities

def test_entities_collection(store):
    e1 = {"id": uid(), "vector": vec(1, 0), "name": "Alice Smith", "entity_type": "person", "user_id": "alice"}
    e2 = {"id": uid(), "vector": vec(0, 1), "name": "北京", "entity_type": "city", "user_id": "alice"}
    e3 = {"id": uid(), "vector": vec(1, 0), "name": "Alice Smith", "entity_type": "person", "user_id": "bob"}
    store.upsert_entities([e1, e2, e3])
    store.upsert_entities([e1])
    assert store.count_memories() == 0  # separate collection
    hits = store.search_entities(vec(1, 0.1), ALICE, limit=5)
    assert [h.id for h in hits] == [e1["id"], e2["id"]]
    assert hits[0].payload["name"] == "Alice Smith" and hits[0].payload["entity_type"] == "person"
    assert hits[0].payload["normalized_name"] == "alice smith"
    assert [h.id for h in store.search_entities(vec(1, 0), ALICE, threshold=0.9)] == [e1["id"]]
    assert [h.id for h in store.search_entities(vec(1, 0), BOB)] == [e3["id"]]
    store.delete_entities([e1["id"], e1["id"]])
    assert [h.id for h in store.search_entities(vec(1, 0), ALICE)] == [e2["id"]]


def test_delete_scope_and_reset(store):
    store.upsert_memories([mem("a1", vec(1)), mem("a2", vec(1, 1)), mem("b1", vec(1), BOB),
                           mem("a-agent", vec(1), Scope(user_id="alice", agent_id="x"))])
    store.upsert_entities([{"id": uid(), "vector": vec(1), "name": "e", "user_id": "alice"},
                           {"id": uid(), "vector": vec(1), "name": "e", "user_id": "bob"}])
    store.delete_scope(Scope(user_id="alice", agent_id="x"))
    assert store.count_memories(ALICE) == 2
    store.delete_scope(ALICE)
    assert store.count_memories(ALICE) == 0 and store.count_memories(BOB) == 1
    assert store.search_entities(vec(1), ALICE) == [] and len(store.search_entities(vec(1), BOB)) == 1
    store.reset()
    assert store.count_memories() == 0 and store.search_entities(vec(1), BOB) == []
    store.upsert_memories([mem("after reset", vec(1))])  # still usable
    assert store.count_memories() == 1


def test_reopen_after_close_persists(opener):
    s = opener()
    m = mem("我住在北京", vec(1, 0), metadata={"city": "北京"}, created_at="2024-01-01T00:00:00Z")
    s.upsert_memories([m])
    s.upsert_entities([{"id": uid(), "vector": vec(1), "name": "北京", "user_id": "alice"}])
    s.close()
    s.close()  # idempotent
    s2 = opener()
    try:
        assert s2.count_memories(ALICE) == 1
        assert s2.search_memories(vec(1, 0), ALICE, filters=parse_filters({"city": "北京"}))[0].id == m["id"]
        assert s2.keyword_search("北京", ALICE)[0].id == m["id"]
        assert len(s2.search_entities(vec(1), ALICE)) == 1
        with pytest.raises(StoreUnavailableError):
            s2.close() or s2.search_memories(vec(1), ALICE)
    finally:
        s2.close()
    with pytest.raises(StoreUnavailableError, match="(?i)dimension|configuration|dims"):
        opener(dims=8).close()


def test_concurrent_search_and_upsert(store):
    store.upsert_memories([mem(f"seed {i}", vec(1, i)) for i in range(20)])
    errors: list[Exception] = []

    def reader():
        try:
            for _ in range(50):
                assert store.search_memories(vec(1, 0), ALICE, limit=3)
                store.keyword_search("seed", ALICE)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def writer():
        try:
            for i in range(20):
                store.upsert_memories([mem(f"more {i}", vec(0, 1, i))])
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and store.count_memories(ALICE) == 40


# -------------------------------------------------------------------------------------- backend-specific

def test_edge_same_process_shares_shard(tmp_path):
    s1 = EdgeVectorStore(tmp_path / "q", DIMS)
    s2 = EdgeVectorStore(tmp_path / "q", DIMS)
    s1.upsert_memories([mem("shared", vec(1))])
    assert s2.count_memories() == 1
    s1.close()
    assert s2.search_memories(vec(1), ALICE)[0].payload["text"] == "shared"
    s2.close()
    assert (tmp_path / "q" / "memoryx_memories").is_dir() and (tmp_path / "q" / "memoryx_entities").is_dir()


def test_edge_second_process_gets_clear_error(tmp_path):
    path = tmp_path / "q"
    code = textwrap.dedent(f"""
        import sys, time
        from memoryx.stores.vectors import EdgeVectorStore
        s = EdgeVectorStore({str(path)!r}, {DIMS})
        print("ready", flush=True)
        sys.stdin.read()
        s.close()
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(StoreUnavailableError) as ei:
            EdgeVectorStore(path, DIMS)
        msg = str(ei.value)
        assert str(path / "memoryx_memories") in msg and "MEMORYX_VECTOR_BACKEND=qdrant" in msg
        assert f"process {holder.pid}" in msg
    finally:
        holder.communicate("", timeout=30)
    s = EdgeVectorStore(path, DIMS)  # free again once the holder closed
    s.close()


def test_make_vector_store(tmp_path):
    from memoryx.settings import Settings

    s = make_vector_store(Settings(data_dir=tmp_path / "d", collection_prefix="px"), DIMS)
    try:
        assert isinstance(s, EdgeVectorStore) and (tmp_path / "d" / "qdrant" / "px_memories").is_dir()
    finally:
        s.close()
    q = make_vector_store(Settings(vector_backend="qdrant", qdrant_url=":memory:"), DIMS)
    try:
        assert isinstance(q, QdrantServerVectorStore)
        q.upsert_memories([mem("x", vec(1))])
        assert q.count_memories(ALICE) == 1
    finally:
        q.close()
    with pytest.raises(StoreUnavailableError, match="MEMORYX_QDRANT_URL"):
        make_vector_store(Settings(vector_backend="qdrant"), DIMS)


# --------------------------------------------------------------------------------- the real offline model

def test_minilm_embeddings_end_to_end(tmp_path):
    from memoryx.models.embeddings import embedding_dims, make_embeddings
    from memoryx.settings import Settings

    settings = Settings()
    emb = make_embeddings(settings)
    texts = ["I live in Berlin", "My favourite food is sushi", "我住在北京", "我喜欢吃寿司", "I work as a nurse"]
    vecs = emb.embed_documents(texts)
    assert len(vecs) == 5 and all(len(v) == 384 for v in vecs)
    assert embedding_dims(emb, settings) == 384
    assert abs(sum(x * x for x in vecs[2]) - 1.0) < 1e-4  # normalised
    assert make_embeddings(settings).model is emb.model  # loaded once per process
    store = EdgeVectorStore(tmp_path / "q", 384)
    try:
        items = [{"id": uid(), "vector": v, "text": t, "user_id": "alice"} for t, v in zip(texts, vecs)]
        store.upsert_memories(items)
        assert store.search_memories(emb.embed_query("Which city does she live in?"), ALICE, limit=1)[0].payload["text"] \
            in ("I live in Berlin", "我住在北京")
        assert store.search_memories(emb.embed_query("What does she like to eat?"), ALICE, limit=1)[0].payload["text"] \
            == "My favourite food is sushi"
        assert store.search_memories(emb.embed_query("北京"), ALICE, limit=1)[0].payload["text"] == "我住在北京"
    finally:
        store.close()


# ------------------------------------------------------------------------------------------ pgvector-only

def test_pgvector_large_scope_goes_through_hnsw_and_never_comes_back_short(pgvector_url, monkeypatch):
    """Above EXACT_SCOPE_ROWS a scope is searched through the HNSW index; a scope whose rows the index scan
    misses (a small tenant in a big table) is asked again exactly, so it never gets fewer hits than it has."""
    from memoryx.stores.vectors import pgvector

    monkeypatch.setattr(pgvector, "EXACT_SCOPE_ROWS", 50)
    monkeypatch.setattr(pgvector, "HNSW_EF_SEARCH", 10)
    s = PgVectorStore(pgvector_url, DIMS, prefix=f"hnsw_{uuid.uuid4().hex[:8]}")
    scans: list[bool] = []
    real = s._dense_hnsw
    monkeypatch.setattr(s, "_dense_hnsw", lambda *a: scans.append(True) or real(*a))
    try:
        many = [mem(f"alice {i}", vec(1, i / 300, (i % 7) / 7)) for i in range(300)]
        far = [mem(f"bob {i}", vec(0, 0, 1, i / 60), BOB) for i in range(60)]  # far from the query below
        s.upsert_memories(many + far)
        exact = sorted(many, key=lambda m: -sum(a * b for a, b in zip(m["vector"], vec(1, 0))))[:5]
        assert [h.id for h in s.search_memories(vec(1, 0), ALICE, limit=5)] == [m["id"] for m in exact]
        # the 10 candidates of the scan are alice's: bob's answer comes from the exact search
        by_score = sorted(far, key=lambda m: -sum(a * b for a, b in zip(m["vector"], vec(1, 0, 0.01))))
        assert {h.id for h in s.search_memories(vec(1, 0, 0.01), BOB, limit=5)} == {m["id"] for m in by_score[:5]}
        assert len(scans) == 2
        hits = s.search_memories(vec(1, 0), Scope(user_id="alice"), limit=5, threshold=0.9999)
        assert all(h.score >= 0.9999 for h in hits)
    finally:
        s.close()


def test_pgvector_filter_values_are_data_not_sql(pgvector_url):
    s = PgVectorStore(pgvector_url, DIMS, prefix=f"inj_{uuid.uuid4().hex[:8]}")
    try:
        nasty = "x\") || (@ == @) || (\"' OR 1=1; DROP TABLE memories; --"
        a = mem("nasty", vec(1), metadata={"k": nasty, "other": "y"})
        b = mem("plain", vec(1, 1), metadata={"k": "plain", "other": "y"})
        s.upsert_memories([a, b])
        for flt in ({"k": nasty}, {"k": {"contains": "@ == @"}}, {"k": {"in": [nasty]}}):
            assert [h.id for h in s.search_memories(vec(1), ALICE, filters=parse_filters(flt))] == [a["id"]]
        assert s.search_memories(vec(1), ALICE, filters=parse_filters({"k": {"contains": ".*"}})) == []
        assert s.count_memories() == 2
    finally:
        s.close()


def test_pgvector_is_shared_by_processes(pgvector_url):
    """Two processes write and read the same tables (the reason the backend exists)."""
    prefix = f"share_{uuid.uuid4().hex[:8]}"
    code = textwrap.dedent(f"""
        from memoryx.stores.vectors import PgVectorStore
        s = PgVectorStore({pgvector_url!r}, {DIMS}, prefix={prefix!r})
        s.upsert_memories([{{"id": "from-child", "vector": [1.0, 0, 0, 0], "text": "written by the child",
                            "user_id": "alice"}}])
        s.close()
    """)
    s = PgVectorStore(pgvector_url, DIMS, prefix=prefix)
    try:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
        assert s.search_memories(vec(1), ALICE)[0].payload["text"] == "written by the child"
    finally:
        s.close()


def test_make_vector_store_pgvector_needs_postgres(pgvector_url, tmp_path):
    from memoryx.settings import Settings

    with pytest.raises(InvalidInputError, match="MEMORYX_SQL_URL"):
        make_vector_store(Settings(vector_backend="pgvector", data_dir=tmp_path), DIMS)
    s = make_vector_store(Settings(vector_backend="pgvector", sql_url=pgvector_url,
                                   collection_prefix=f"mk_{uuid.uuid4().hex[:8]}"), DIMS)
    try:
        assert isinstance(s, PgVectorStore)
        s.upsert_memories([mem("x", vec(1))])
        assert s.count_memories(ALICE) == 1
    finally:
        s.close()


def test_pgvector_without_hnsw_answers_the_same(pgvector_url, monkeypatch):
    import sqlalchemy as sa

    from memoryx.stores.vectors import pgvector

    monkeypatch.setattr(pgvector, "EXACT_SCOPE_ROWS", 20)
    prefix = f"nohnsw_{uuid.uuid4().hex[:8]}"
    s = PgVectorStore(pgvector_url, DIMS, prefix=prefix, hnsw=False)
    try:
        with s.engine.connect() as conn:
            indexes = conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE tablename = :t"),
                                   {"t": f"{prefix}_vec_memories"}).scalars().all()
        assert indexes and not any(i.endswith("_hnsw") for i in indexes)
        items = [mem(f"m {i}", vec(1, i / 40, (i % 5) / 5)) for i in range(40)]
        s.upsert_memories(items)
        best = sorted(items, key=lambda m: -sum(a * b for a, b in zip(m["vector"], vec(1, 0))))[:3]
        assert [h.id for h in s.search_memories(vec(1, 0), ALICE, limit=3)] == [m["id"] for m in best]
    finally:
        s.close()
