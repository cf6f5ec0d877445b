"""add_many(infer=False) embeds chunk k+1 while chunk k is written (bulk.RawIngest.overlap): the same
results and stored memories as one chunk after the other, a duplicate split across two chunks still stored
once, and an embedding failure fails only its own chunk. Real SQLite, vector store and MiniLM."""

from __future__ import annotations

import threading

import pytest

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.ingest import bulk
from tests.support import make_services

ITEMS = [
    {"messages": "I live in Berlin", "user_id": "alice"},
    {"messages": "My dog is called Rex", "user_id": "bob"},
    {"messages": [{"role": "user", "content": "I work at a bakery"}, {"role": "assistant", "content": "Nice!"}],
     "user_id": "alice"},
    {"messages": "I live in Berlin", "user_id": "alice"},            # duplicate of item 0, in a later chunk
    {"messages": "x", "user_id": "carol", "not_a_field": 1},          # invalid: its own error, the rest goes on
    {"messages": "I live in Berlin", "user_id": "bob"},               # same text, another scope: stored
    {"messages": "I play chess on Sundays", "user_id": "carol"},
    {"messages": "My dog is called Rex", "user_id": "bob"},           # duplicate of item 1, in a later chunk
]


def _ingest(tmp_path, overlap: bool, monkeypatch, items=ITEMS, embed=None):
    services = make_services(tmp_path, bulk_chunk_size=2)  # several chunks, a duplicate across chunks
    memory = Memory(services.settings, services=services)
    try:
        with monkeypatch.context() as patch:  # undone on return: the embeddings object is the process's one
            patch.setattr(bulk.RawIngest, "overlap", overlap)
            if embed is not None:
                patch.setattr(services.embeddings, "embed_documents", embed(services.embeddings.embed_documents))
            results = memory.add_many(items, infer=False)
        stored = {u: sorted(m["memory"] for m in memory.get_all(user_id=u)["results"]) for u in ("alice", "bob", "carol")}
        vectors = {u: services.vectors.count_memories(Scope(user_id=u)) for u in ("alice", "bob", "carol")}
        return results, stored, vectors, services.sql.count_pending_projections()
    finally:
        memory.close()
        services.close()


def _outcome(results):
    return [(r.get("error", {}).get("type"), [(m["memory"], m["event"]) for m in r["results"]]) for r in results]


def test_overlapped_ingest_writes_what_sequential_ingest_writes(tmp_path, monkeypatch):
    threads = {False: set(), True: set()}

    def recording(overlap):
        def wrap(real):
            def embed_documents(texts):
                threads[overlap].add(threading.current_thread().name.rsplit("_", 1)[0])
                return real(texts)
            return embed_documents
        return wrap

    seq = _ingest(tmp_path / "seq", False, monkeypatch, embed=recording(False))
    over = _ingest(tmp_path / "over", True, monkeypatch, embed=recording(True))
    assert threads == {False: {"MainThread"}, True: {"memoryx-bulk-embed"}}
    assert _outcome(over[0]) == _outcome(seq[0])
    assert over[1:] == seq[1:]
    results, stored, vectors, pending = over
    assert [len(r["results"]) for r in results] == [1, 1, 2, 0, 0, 1, 1, 0]
    assert results[4]["error"]["type"] == "InvalidInputError"
    assert stored["alice"] == ["I live in Berlin", "I work at a bakery", "Nice!"]
    assert stored["bob"] == ["I live in Berlin", "My dog is called Rex"]
    assert vectors == {"alice": 3, "bob": 2, "carol": 1} and pending == 0


def test_a_failed_embedding_fails_only_its_chunk(tmp_path, monkeypatch):
    def failing_on_chess(real):
        def embed_documents(texts):
            if any("chess" in t for t in texts):
                raise RuntimeError("encoder failed")
            return real(texts)
        return embed_documents

    results, stored, vectors, pending = _ingest(tmp_path, True, monkeypatch, embed=failing_on_chess)
    errors = [r.get("error", {}).get("message") for r in results]
    # chunks of two memories: [0, 1] [2] [3, 5] (4 is invalid) [6, 7]; the last one's embedding failed
    assert errors[6] == errors[7] == "encoder failed"
    assert errors[:4] == [None] * 4 and errors[5] is None
    assert stored["carol"] == [] and vectors["carol"] == 0 and pending == 0
    assert stored["bob"] == ["I live in Berlin", "My dog is called Rex"]


@pytest.mark.parametrize("overlap", [False, True])
def test_empty_and_all_invalid_batches(tmp_path, monkeypatch, overlap):
    results, stored, _, _ = _ingest(tmp_path, overlap, monkeypatch, items=[{"messages": "  ", "user_id": "alice"},
                                                                           {"user_id": "bob"}])
    assert results[0]["results"] == [] and "error" not in results[0]
    assert results[1]["error"]["type"] == "InvalidInputError"
    assert stored == {"alice": [], "bob": [], "carol": []}
