"""The companion index (memoryx.stores.vectors.companion) and its encoder, through the public API on the embedded
stores and the real encoders: every memory gets a companion vector, a delete, a purge, a reset and a reindex reach
them like the main vectors, the ranking reads their cosine to the question, and a search answers without them when
they cannot be read."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.errors import StoreUnavailableError
from memoryx.models import embedding_use
from memoryx.models import embeddings as embeddings_module
from memoryx.models.embedding_use import USE_DIMS, UseMultilingualEmbeddings
from memoryx.models.embeddings import make_companion_embeddings
from memoryx.search.ranker import FEATURES, collect_traces
from memoryx.settings import Settings
from tests.lifecycle.test_purge import _files_with
from tests.support import shared_embeddings

pytest.importorskip("nanoranker")

SAID = ["ilse's husband joost is a marine biologist", "my brother plays football on sundays",
        "she's my 3-year-old kelpie cross", "I bought a new leash for the walk", "店長は松本さん"]
COSINE, GAP = FEATURES.index("companion_cosine"), FEATURES.index("companion_gap")


def _memory(data: Path, **settings) -> Memory:
    return Memory(data_dir=data, graph_backend="none", embeddings=shared_embeddings(), **settings)


def _said(m: Memory, user: str, texts: list[str]) -> list[str]:
    return [m.add(t, user_id=user, infer=False)["results"][0]["id"] for t in texts]


def _co_count(m: Memory, user: str | None = None) -> int:
    store = m.services.vectors.companion._opened(create=False)
    return 0 if store is None else store.count_memories(Scope(user_id=user) if user else None)


def test_the_encoder_reads_a_question_near_its_answer_in_any_language():
    emb = UseMultilingualEmbeddings()
    docs = np.array(emb.embed_documents(["she's my 3-year-old kelpie cross", "I bought a new leash for the walk",
                                         "店長は松本さん", "夫の名前は健太です", "我在柏林的一家医院当护士"]))
    assert docs.shape == (5, USE_DIMS) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-3)
    for question, answer in (("what breed is my dog", 0), ("我的狗是什么品种", 0), ("who is my manager", 2),
                             ("what is my husband called", 3), ("我丈夫叫什么名字", 3), ("私の仕事は何ですか", 4)):
        cos = docs @ np.array(emb.embed_query(question))
        assert int(np.argmax(cos)) == answer, (question, cos)


def test_every_memory_gets_a_companion_vector_and_every_removal_reaches_it(tmp_path):
    with _memory(tmp_path / "d") as m:
        ids = _said(m, "alice", SAID)
        _said(m, "bob", SAID[:2])
        assert _co_count(m, "alice") == 5 and _co_count(m, "bob") == 2
        stored = m.services.vectors.companion.vectors(ids[:2])
        assert set(stored) == set(ids[:2]) and len(stored[ids[0]]) == USE_DIMS
        m.delete(ids[0])
        assert _co_count(m, "alice") == 4
        m.delete_all(user_id="bob")
        assert _co_count(m, "bob") == 0 and _co_count(m, "alice") == 4
        m.reset()
        assert _co_count(m) == 0


def test_a_reindex_gives_the_memories_written_while_it_was_off_their_vector(tmp_path):
    with _memory(tmp_path / "d", companion_vectors=False) as m:
        assert m.services.vectors.companion is None
        _said(m, "alice", SAID)
        assert not (tmp_path / "d" / "qdrant" / "memoryx_co_memories").exists()
    with _memory(tmp_path / "d") as m:
        with collect_traces() as traces:
            m.search("what breed is my dog", user_id="alice")
        assert not np.array(traces[-1]["features"])[:, [COSINE, GAP]].any()  # nothing stored: the signal reads 0
        assert m.reindex(user_id="alice")["memories"] == 5 and _co_count(m, "alice") == 5


def test_the_ranking_reads_each_candidates_companion_cosine(tmp_path):
    with _memory(tmp_path / "d") as m:
        _said(m, "u", SAID)
        with collect_traces() as traces:
            m.search("what breed is my dog", user_id="u")
        rows = dict(zip(traces[-1]["texts"], np.array(traces[-1]["features"])))
        assert rows[SAID[2]][GAP] == 0.0 and rows[SAID[2]][COSINE] > rows[SAID[3]][COSINE] > 0
        assert all(r[GAP] < 0 for t, r in rows.items() if t != SAID[2])


def test_a_search_answers_without_the_signal_when_the_companion_store_is_down(tmp_path, caplog):
    with _memory(tmp_path / "d") as m:
        _said(m, "u", SAID)
        m.services.vectors.companion._opened(create=False).close()  # the store goes away under the search
        with caplog.at_level("WARNING"), collect_traces() as traces:
            found = m.search("what breed is my dog", user_id="u")["results"]
        assert found and not np.array(traces[-1]["features"])[:, [COSINE, GAP]].any()
        assert "companion vectors could not be read" in caplog.text


def test_purge_leaves_no_companion_vector_on_disk(tmp_path):
    data = tmp_path / "data"
    marker = f"Qz{uuid.uuid4().hex[:8]}mark"
    with _memory(data) as m:
        _said(m, "alice", [f"I work at {marker} in Berlin."])
        _said(m, "bob", SAID[:1])
        assert any(f.startswith("qdrant/memoryx_co_memories") for f in _files_with(data, marker))
        m.purge(user_id="alice")
        assert _co_count(m, "alice") == 0 and _co_count(m, "bob") == 1
    assert _files_with(data, marker) == []


def test_the_index_is_off_when_asked_or_without_its_packages(monkeypatch, caplog):
    assert make_companion_embeddings(Settings(companion_vectors=False)) is None
    assert isinstance(make_companion_embeddings(Settings()), UseMultilingualEmbeddings)
    monkeypatch.setitem(sys.modules, "nanoranker", None)  # as if not installed
    monkeypatch.setattr(embeddings_module, "_WARNED_NO_USE", False)
    with caplog.at_level("WARNING"):
        assert make_companion_embeddings(Settings()) is None
    assert "pip install nanoranker" in caplog.text
    monkeypatch.setattr(embedding_use, "_SESSION", None)
    with pytest.raises(StoreUnavailableError, match="MEMORYX_COMPANION_VECTORS=false"):
        UseMultilingualEmbeddings().embed_query("who is my manager")


def test_the_encoder_loads_without_importing_transformers_or_torch():
    """Both packages' __init__ import onnxruntime-extensions' converters, which import transformers and torch (~5 s
    and hundreds of MB, where a memory's first add paid them): the encoder finds its files without importing either."""
    import subprocess

    code = ("import sys; from memoryx.models.embedding_use import UseMultilingualEmbeddings as U; "
            "v = U().embed_query('who is my manager'); "
            "print(len(v), sorted(m for m in ('transformers', 'torch', 'nanoranker', 'onnxruntime_extensions') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == [str(USE_DIMS), "[]"]
