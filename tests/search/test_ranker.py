"""The fitted ranking (memoryx.search.ranker): the shipped model and the code that feeds it agree, scores are
probabilities, and a search through the public API orders its results by the model."""

from __future__ import annotations

import json

import pytest

from memoryx.search import ranker
from memoryx.search.ranker import FEATURES, collect_traces, fitted_model, model_from


def test_a_model_naming_a_feature_the_code_does_not_compute_is_refused():
    with pytest.raises(ValueError, match="refit"):
        model_from({"features": {"dense_score": 1.0, "no_such_signal": 2.0}})


def test_the_shipped_model_is_read_and_names_only_computed_features():
    data = json.loads(ranker.MODEL_FILE.read_text(encoding="utf-8"))
    assert set(data["features"]) <= set(FEATURES)
    model = fitted_model()
    assert model is not None and len(model.weights) == len(FEATURES)
    assert any(w != 0 for w in model.weights)


def test_scores_are_probabilities_and_follow_the_weights():
    model = model_from({"features": {"keyword_score": 2.0, "superseded": -3.0}, "scale": 1.5, "bias": -1.0})
    row = [0.0] * len(FEATURES)
    strong, stale = list(row), list(row)
    strong[FEATURES.index("keyword_score")] = 1.0
    stale[FEATURES.index("keyword_score")] = 1.0
    stale[FEATURES.index("superseded")] = 1.0
    scores = model.scores([row, strong, stale, [1e6] * len(FEATURES)])
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[1] > scores[0] > scores[2]


@pytest.mark.integration
def test_a_search_is_ordered_by_the_fitted_model_and_traced(tmp_path, monkeypatch):
    from memoryx import Memory

    monkeypatch.setenv("MEMORYX_SEARCH_TUNING", json.dumps({"ranker": "fitted"}))
    with Memory(data_dir=tmp_path / "m") as m:
        m.add("I play the cello in a community orchestra", user_id="u", infer=False)
        m.add("My sister Ana lives in Lisbon", user_id="u", infer=False)
        m.add("The weather was lovely on the coast", user_id="u", infer=False)
        with collect_traces() as traces:
            found = m.search("which instrument do I play?", user_id="u", limit=3)["results"]
    assert len(traces) == 1
    trace = traces[0]
    assert len(trace["features"]) == len(trace["ids"]) and all(len(r) == len(FEATURES) for r in trace["features"])
    # the model's best (linear and trees) is first (same importance, stored together: the blend keeps the model's
    # order), scores fall
    model = fitted_model()
    by_id = dict(zip(trace["ids"], model.relevance(trace["features"])))
    assert found[0]["id"] == max(by_id, key=by_id.get)
    assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)
    assert "cello" in found[0]["memory"]


def test_a_memory_without_the_companion_index_ranks_by_the_model_fitted_without_its_signals():
    companion = [FEATURES.index(f) for f in ("companion_cosine", "companion_gap")]
    with_it, without = fitted_model(True), fitted_model(False)
    assert any(with_it.weights[j] for j in companion) and not any(without.weights[j] for j in companion)
    assert "--drop companion" in without.source
    trees = json.loads(ranker.MODEL_WITHOUT_COMPANION.read_text(encoding="utf-8"))["trees"]["trees"]
    assert not {node[0] for tree in trees for node in tree} & {"companion_cosine", "companion_gap"}


@pytest.mark.integration
def test_a_search_without_the_companion_index_is_ordered_by_that_model(tmp_path):
    from memoryx import Memory

    said = ["I play the cello in a community orchestra", "My sister Ana lives in Lisbon",
            "The weather was lovely on the coast", "I practise scales every morning before work"]
    with Memory(data_dir=tmp_path / "m", graph_backend="none", companion_vectors=False) as m:
        for text in said:
            m.add(text, user_id="u", infer=False)
        with collect_traces() as traces:
            found = m.search("which instrument do I play?", user_id="u", limit=4)["results"]
    scores = dict(zip(traces[0]["ids"], fitted_model(False).relevance(traces[0]["features"])))
    assert found[0]["id"] == max(scores, key=scores.get)


@pytest.mark.integration
def test_a_trace_records_what_replays_the_steps_after_the_model(tmp_path):
    """The fitting script replays superseded_last and by_period from a trace: which candidates had ended, and,
    for a question naming a period, which fall inside it."""
    from memoryx import Memory

    with Memory(data_dir=tmp_path / "m", graph_backend="none") as m:
        for day, text in [("2025-01-06", "I went hiking at Malham Cove"), ("2025-01-15", "I went hiking at Ilkley Moor")]:
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="u", infer=False)
        with collect_traces() as traces:
            m.search("Where did I go hiking last week?", user_id="u", limit=3, now="2025-01-20T12:00:00+00:00")
            m.search("Where did I go hiking?", user_id="u", limit=3, now="2025-01-20T12:00:00+00:00")
    named, plain = traces
    inside = dict(zip(named["texts"], named["in_window"]))
    assert named["period_filter"] is not None
    assert inside == {"I went hiking at Malham Cove": False, "I went hiking at Ilkley Moor": True}
    assert plain["period_filter"] is None and plain["in_window"] is None
    assert named["ended"] == [False, False]
