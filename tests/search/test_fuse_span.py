"""The similarity paths' min-max over a least span (MEMORYX_SEARCH_TUNING similarity_min_span): a few cosines
within the encoder's noise of each other are not stretched to 0..1."""

import pytest

from memoryx.errors import InvalidInputError
from memoryx.nodes.fuse import fuse_hits
from memoryx.search.tuning import tuning
from memoryx.settings import Settings


def _dense_norm(scores: list[float], min_span: float) -> dict[str, float]:
    hits = {"dense": [{"id": f"m{i}", "score": s} for i, s in enumerate(scores)]}
    fused = fuse_hits(hits, method="weighted", weights={"dense": 1.0}, rrf_k=60, asked=30, min_span=min_span)
    return {x["id"]: x["path_norm"]["dense"] for x in fused}


def test_three_near_ties_are_not_stretched():
    scores = [0.335, 0.317, 0.301]
    stretched = _dense_norm(scores, 0.0)
    assert stretched["m0"] == 1.0 and stretched["m2"] == 0.0 and stretched["m1"] == pytest.approx(0.47, abs=0.01)
    kept = _dense_norm(scores, 0.2)
    assert kept["m0"] == 1.0 and kept["m1"] == pytest.approx(1 - 0.018 / 0.2) and kept["m2"] == pytest.approx(0.83)


def test_a_list_wider_than_the_span_keeps_min_max():
    scores = [0.8, 0.5, 0.3]
    assert _dense_norm(scores, 0.2) == _dense_norm(scores, 0.0) == {"m0": 1.0, "m1": pytest.approx(0.4), "m2": 0.0}


def test_match_paths_are_not_spanned():
    hits = {"keyword": [{"id": "a", "score": 8.0}, {"id": "b", "score": 7.9}]}
    fused = fuse_hits(hits, method="weighted", weights={"keyword": 1.0}, rrf_k=60, asked=2, min_span=5.0)
    assert {x["id"]: x["path_norm"]["keyword"] for x in fused} == {"a": 1.0, "b": 0.0}


def test_the_span_is_a_tuning_knob():
    assert tuning(Settings(search_tuning={"similarity_min_span": 0.1})).similarity_min_span == 0.1
    with pytest.raises(InvalidInputError, match="similarity_min_span"):
        tuning(Settings(search_tuning={"similarity_min_span": -1}))
