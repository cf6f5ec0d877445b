"""The keyword tokenizer as the index sees it: documents and queries tokenised alike in every script, mixed
text split at script boundaries, the version a store's keyword vectors were made with recorded on each point,
and a search over points of another version saying so (real embedded Qdrant stores)."""

from __future__ import annotations

import logging
import uuid
import zlib

import pytest
from qdrant_client import QdrantClient

import memoryx.stores.vectors.base as vector_base
from memoryx.core.scope import Scope
from memoryx.core.text import (
    KEYWORD_TOKENIZER, KEYWORD_TOKENIZER_FIELD, query_sparse_vector, sparse_vector, tokenize, warn_stale_keywords,
)
from memoryx.stores.vectors import EdgeVectorStore, QdrantServerVectorStore

TEXTS = [
    "My daughter Maya started school; she loves running and baked cookies.",
    "我妹妹下个月结婚，我最喜欢的茶是乌龙茶。",
    "私はどこに住んでいますか？週末は山登りをしています。",
    "Daiki の飲み会 at an izakaya in 梅田, 3,500円",
    "저는 서울에 살아요",
]
# crc32 of repr([tokenize(t) for t in TEXTS]) under KEYWORD_TOKENIZER 1
PINNED = {1: 4130560219}


def test_tokens_are_pinned_to_the_version():
    """A change to the tokens of any text must come with a new KEYWORD_TOKENIZER: the stores written before
    keep the old tokens, and only the version tells a search (and the operator) that they need a reindex."""
    got = zlib.crc32(repr([tokenize(t) for t in TEXTS]).encode("utf-8"))
    assert PINNED.get(KEYWORD_TOKENIZER) == got, (
        "tokenize() gives other tokens than KEYWORD_TOKENIZER %d did: raise KEYWORD_TOKENIZER in core/text.py, pin "
        "the new checksum %d here, and say in docs/operating.md that stores written before need `memoryx reindex`"
        % (KEYWORD_TOKENIZER, got))


@pytest.mark.parametrize("text", TEXTS + ["", "the and of", "。！？"])
def test_documents_and_queries_share_their_tokens(text):
    """The document side (sparse_vector) and the query side (query_sparse_vector) hash the same tokens of a
    text, whatever its script: a memory's own words always find it."""
    doc_ids, doc_weights = sparse_vector(text)
    query_ids, query_weights = query_sparse_vector(text)
    assert doc_ids == query_ids
    assert all(w > 0 for w in doc_weights) and set(query_weights) <= {1.0}
    assert bool(doc_ids) == bool(tokenize(text))


def test_mixed_language_text_is_split_at_script_boundaries():
    """Each run of one script is tokenised as it would be alone: an English word inside Japanese is stemmed
    as English, the Japanese runs keep their character pairs, the figure loses its thousands separator."""
    mixed = "Daiki の飲み会 at an izakaya in 梅田, 3,500円"
    toks = tokenize(mixed)
    assert set(toks) == set(tokenize("Daiki")) | set(tokenize("の飲み会")) | set(tokenize("izakaya")) | set(
        tokenize("梅田")) | set(tokenize("3,500円"))
    assert {"daiki", "izakaya", "飲み", "梅田", "3500"} <= set(toks)
    assert "at" not in toks and "an" not in toks  # English stop words stay out inside other scripts' text
    assert tokenize("iPhone手机") == tokenize("iPhone") + tokenize("手机")


def test_missing_version_counts_as_the_first(caplog):
    """Points written before the version was recorded hold the first tokenizer's tokens."""
    with caplog.at_level(logging.WARNING, logger="memoryx.core.text"):
        assert warn_stale_keywords([{}, {"text": "x"}, None]) is (KEYWORD_TOKENIZER != 1)
        assert warn_stale_keywords([{KEYWORD_TOKENIZER_FIELD: KEYWORD_TOKENIZER}]) is False
        assert warn_stale_keywords([{KEYWORD_TOKENIZER_FIELD: KEYWORD_TOKENIZER + 1}]) is True
    assert "memoryx reindex" in caplog.text


@pytest.fixture(params=["edge", "qdrant-local"])
def store(request, tmp_path):
    if request.param == "edge":
        s = EdgeVectorStore(tmp_path / "qdrant", 4)
    else:
        s = QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "qlocal")), 4)
    yield s
    s.close()


def _memory(text: str) -> dict:
    return {"id": str(uuid.uuid4()), "vector": [1.0, 0.0, 0.0, 0.0], "text": text, "user_id": "alice",
            "metadata": {}}


def test_store_records_the_version_and_says_when_points_are_of_another(store, monkeypatch, caplog):
    alice = Scope(user_id="alice")
    store.upsert_memories([_memory("我最喜欢的茶是乌龙茶")])
    with caplog.at_level(logging.WARNING):
        hits = store.keyword_search("乌龙茶", alice)
    assert hits and hits[0].payload[KEYWORD_TOKENIZER_FIELD] == KEYWORD_TOKENIZER
    assert "memoryx reindex" not in caplog.text  # a store of today's version searches quietly

    # a point written by an older tokenizer (its version recorded as such)
    monkeypatch.setattr(vector_base, "KEYWORD_TOKENIZER", KEYWORD_TOKENIZER - 1)
    store.upsert_memories([_memory("I love oolong tea")])
    monkeypatch.undo()
    with caplog.at_level(logging.WARNING):
        found = store.keyword_search("oolong tea", alice)
        store.keyword_search("oolong tea", alice)
    assert [h.payload["text"] for h in found] == ["I love oolong tea"]  # still answered, and said once:
    assert caplog.text.count("memoryx reindex") == 1
    assert f"keyword tokenizer [{KEYWORD_TOKENIZER - 1}]" in caplog.text
