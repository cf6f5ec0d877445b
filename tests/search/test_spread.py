"""Aggregation questions spread their hits across sessions (memoryx.search.spread)."""

from __future__ import annotations

from memoryx.search.spread import asks_aggregate, spread


def _hit(mid: str, score: float, day: str) -> dict:
    return {"id": mid, "score": score, "memory": {"id": mid, "valid_at": f"{day}T10:00:00+00:00"}}


def test_aggregate_questions_are_recognised():
    for q in ("How many books did I read this year?", "How much did I spend in total on coffee?",
              "How many days passed between my trip and the concert?", "Which did I do first, the hike or the swim?",
              "我一共去了几次健身房?", "全部で何回行きましたか"):
        assert asks_aggregate(q), q
    for q in ("What is my dog's name?", "Where do I live?", "我住在哪里?"):
        assert not asks_aggregate(q), q


def test_a_crowded_session_yields_its_place():
    ranked = [_hit("a1", 0.90, "2024-05-01"), _hit("a2", 0.89, "2024-05-01"), _hit("a3", 0.88, "2024-05-01"),
              _hit("b1", 0.80, "2024-05-07"), _hit("c1", 0.70, "2024-06-02")]
    out = [c["id"] for c in spread(ranked)]
    assert out[:3] == ["a1", "b1", "a2"]  # the best of each session keeps its score
    assert out.index("c1") < out.index("a3")
    assert [c["score"] for c in spread(ranked)][0] == 0.90
