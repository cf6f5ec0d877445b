"""How deep a memory search asks the embedded Qdrant engine. A memory with windows has several points, so
`limit` points can hold fewer than `limit` memories: the first query asks as deep as the store's recent lists
needed, and a list still short is asked again. Either way the answer is what reading every point gives: each
memory once, at the best score of its points."""

from __future__ import annotations

import random

import pytest

from memoryx.stores.vectors import EdgeVectorStore
from memoryx.stores.vectors.base import AGAIN
from memoryx.stores.vectors.chunks import MAX_CHUNKS
from tests.stores.test_vectors import ALICE, BOB, mem

DIMS = 16
LIMIT = 5


def unit(v: list[float]) -> list[float]:
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def near(v: list[float], rng: random.Random, spread: float = 0.001) -> list[float]:
    return unit([x + rng.gauss(0, spread) for x in v])


def memories(rng: random.Random, n: int, windows: int) -> list[dict]:
    """`n` memories at random directions, each with `windows` window vectors close to its own vector: a query
    meets a memory's points one after the other, so `LIMIT` memories take about (1 + windows) x LIMIT points."""
    out = []
    for i in range(n):
        own = unit([rng.gauss(0, 1) for _ in range(DIMS)])
        out.append(mem(f"memory {i}", own, chunk_vectors=[near(own, rng) for _ in range(windows)]))
    return out


def exhaustive(items: list[dict], query: list[float], limit: int) -> list[tuple[str, float]]:
    """(id, score) of the best `limit` memories, each scored by the best of all its vectors, computed here."""
    best = {m["id"]: max(sum(a * b for a, b in zip(query, v)) for v in [m["vector"], *m.get("chunk_vectors", [])])
            for m in items}
    return sorted(best.items(), key=lambda kv: -kv[1])[:limit]


def assert_exhaustive(hits, items: list[dict], query: list[float]) -> None:
    """The same memories in the same order as `exhaustive`, at its scores (the engine scores in float32)."""
    want = exhaustive(items, query, LIMIT)
    assert [h.id for h in hits] == [i for i, _ in want]
    assert [h.score for h in hits] == pytest.approx([s for _, s in want], abs=1e-5)


class EngineQueries:
    """The depth of every dense query the store runs on its memories, noted as it passes to the engine."""

    def __init__(self, store: EdgeVectorStore):
        self.asked: list[int] = []
        dense, batch = store._dense, store._dense_batch

        def noted(collection, vector, flt, limit, threshold):
            self.asked.append(limit)
            return dense(collection, vector, flt, limit, threshold)

        def noted_batch(collection, vectors, flt, limit, threshold):
            self.asked += [limit] * len(vectors)
            return batch(collection, vectors, flt, limit, threshold)

        store._dense, store._dense_batch = noted, noted_batch

    def take(self) -> list[int]:
        out, self.asked = self.asked, []
        return out


@pytest.fixture
def store(tmp_path):
    s = EdgeVectorStore(tmp_path / "qdrant", DIMS, chunk_chars=800)
    yield s
    s.close()


def test_memories_with_windows_are_found_in_one_query_once_the_depth_is_known(store):
    rng = random.Random(11)
    items = memories(rng, 40, windows=3)
    store.upsert_memories(items)
    queries = EngineQueries(store)

    first = unit([rng.gauss(0, 1) for _ in range(DIMS)])
    assert_exhaustive(store.search_memories(first, ALICE, limit=LIMIT), items, first)
    # nothing known yet: LIMIT points (two memories' worth), then AGAIN times deeper, which holds LIMIT memories
    # of 4 points (17 points), not the bound for memories of MAX_CHUNKS + 1 points
    assert queries.take() == [LIMIT, LIMIT * AGAIN]

    for _ in range(6):  # other questions: one query each, as deep as LIMIT memories of 4 points need
        q = unit([rng.gauss(0, 1) for _ in range(DIMS)])
        hits = store.search_memories(q, ALICE, limit=LIMIT)
        assert_exhaustive(hits, items, q)
        assert queries.take() == [4 * (LIMIT - 1) + 1]
        assert all("chunk" not in h.payload for h in hits)

    batch = [unit([rng.gauss(0, 1) for _ in range(DIMS)]) for _ in range(3)]
    found = store.search_memories_batch(batch, ALICE, limit=LIMIT)
    for hits, q in zip(found, batch):
        assert_exhaustive(hits, items, q)
    assert queries.take() == [4 * (LIMIT - 1) + 1] * 3


def test_a_list_deeper_than_the_recent_ones_is_asked_again_and_stays_exact(store):
    rng = random.Random(12)
    items = memories(rng, 40, windows=3)
    store.upsert_memories(items)
    store.search_memories(unit([rng.gauss(0, 1) for _ in range(DIMS)]), ALICE, limit=LIMIT)  # 17 points needed
    queries = EngineQueries(store)
    # a memory with many windows right where the next question points: its points crowd the first 17
    q = unit([rng.gauss(0, 1) for _ in range(DIMS)])
    crowd = mem("a long chat turn", near(q, rng, 0.05), chunk_vectors=[near(q, rng, 0.05) for _ in range(12)])
    store.upsert_memories([crowd])
    hits = store.search_memories(q, ALICE, limit=LIMIT)
    assert_exhaustive(hits, [*items, crowd], q)
    assert [h.id for h in hits].count(crowd["id"]) == 1
    assert queries.take() == [4 * (LIMIT - 1) + 1, (4 * (LIMIT - 1) + 1) * AGAIN]
    # the deeper list (its 13 points, then 4 memories of 4) is now the one followed
    again = unit([rng.gauss(0, 1) for _ in range(DIMS)])
    assert_exhaustive(store.search_memories(again, ALICE, limit=LIMIT), [*items, crowd], again)
    assert queries.take() == [13 + 4 * (LIMIT - 2) + 1]


def test_a_list_short_again_is_asked_deeper_again_up_to_the_bound(store):
    rng = random.Random(14)
    items = memories(rng, 30, windows=MAX_CHUNKS)  # 17 points a memory: LIMIT memories take 4 x 17 + 1 points
    store.upsert_memories(items)
    queries = EngineQueries(store)
    q = unit([rng.gauss(0, 1) for _ in range(DIMS)])
    assert_exhaustive(store.search_memories(q, ALICE, limit=LIMIT), items, q)
    # 5 points, then 20 (still short), then 80, which holds them; never past the bound (85)
    asked = queries.take()
    assert asked == [LIMIT, LIMIT * AGAIN, LIMIT * AGAIN * AGAIN]
    assert max(asked) <= LIMIT * (MAX_CHUNKS + 1)
    few = memories(rng, 3, windows=MAX_CHUNKS)  # fewer memories than LIMIT in another scope: the points run out
    store.upsert_memories([{**m, "user_id": "bob"} for m in few])
    hits = store.search_memories(q, BOB, limit=LIMIT)
    assert sorted(h.id for h in hits) == sorted(m["id"] for m in few)
    # as deep as alice's list needed (69 points); 51 came back, so there is nothing deeper to ask for
    assert queries.take() == [(LIMIT - 1) * (MAX_CHUNKS + 1) + 1]


def test_a_store_without_windows_reads_only_limit_points(store):
    rng = random.Random(13)
    items = memories(rng, 40, windows=0)
    store.upsert_memories(items)
    queries = EngineQueries(store)
    for _ in range(3):
        q = unit([rng.gauss(0, 1) for _ in range(DIMS)])
        assert_exhaustive(store.search_memories(q, ALICE, limit=LIMIT), items, q)
        assert queries.take() == [LIMIT]
