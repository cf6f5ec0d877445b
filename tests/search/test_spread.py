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


def test_aggregation_questions_propagate_no_context(tmp_path):
    """"How many mugs did I buy in total?": each mug is its own event in its own conversation, so a hit lends
    nothing to the turns around it (which would crowd the other events out); `context_aggregate` turns it back on,
    and a question about one event keeps it."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    turns = ["I bought a red mug at the flea market.", "Yes, it was a great find.", "The stall also had old books."]

    def sources(path, query, **tuning):
        with Memory(data_dir=path, graph_backend="none", embeddings=shared_embeddings(),
                    search_tuning=tuning) as m:
            if not m.get_all(user_id="owner")["results"]:
                m.add_many([{"messages": [{"role": "user", "content": t,
                                           "timestamp": f"2024-03-02T10:00:0{i}+00:00"}], "user_id": "owner"}
                            for i, t in enumerate(turns)], infer=False)
            return {s for r in m.search(query, user_id="owner", limit=3)["results"] for s in r["sources"]}

    assert "context" not in sources(tmp_path / "d", "How many mugs did I buy in total?")
    assert "context" in sources(tmp_path / "d", "How many mugs did I buy in total?", context_aggregate=True)
    assert "context" in sources(tmp_path / "d", "Where did I buy the red mug?")


def test_the_fitting_script_replays_the_spread_the_rank_node_would_apply():
    """bench/recall/fit_spread.py measures the spread on traces: its order must be memoryx.search.spread's over the
    rank node's order (by score, ties by the pool's order), or its figures would be for another ranking."""
    import importlib.util
    from pathlib import Path

    import numpy as np

    from memoryx.search.scoring import ordered

    script = Path(__file__).resolve().parents[2] / "bench" / "recall" / "fit_spread.py"
    spec = importlib.util.spec_from_file_location("fit_spread", script)
    fit_spread = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit_spread)
    rng = np.random.default_rng(7)
    for trial in range(50):
        n = int(rng.integers(1, 25))
        scores = np.round(rng.random(n), 1)  # ties on purpose
        days = [None if rng.random() < 0.1 else f"2024-05-0{int(rng.integers(1, 5))}" for _ in range(n)]
        hits = [{"id": i, "score": float(s), "memory": {"id": i, "valid_at": f"{d}T10:00:00+00:00"} if d else {"id": i}}
                for i, (s, d) in enumerate(zip(scores, days))]
        for decay in (1.0, 0.85, 0.5):
            node = [c["id"] for c in spread(ordered(hits, None), decay)]
            row = {"days": days, "aggregate": trial % 2 == 0}
            factors = (1.0, decay) if row["aggregate"] else (decay, 1.0)
            assert fit_spread.spread_order(row, scores, *factors) == node, (trial, decay)


def test_a_trace_records_each_candidates_day_and_the_questions_kind(tmp_path):
    """What the fitting script spreads by, read off a search through the public API: each candidate's day (from
    its event time) and whether the question gathers across sessions."""
    from memoryx.api.memory import Memory
    from memoryx.search.ranker import collect_traces
    from tests.support import shared_embeddings

    said = [("2024-03-02T10:00:00+00:00", "I bought a red mug at the flea market."),
            ("2024-03-02T10:05:00+00:00", "I bought a blue mug there too."),
            ("2024-04-20T10:00:00+00:00", "At the museum shop I got a mug.")]
    with Memory(data_dir=tmp_path / "d", graph_backend="none", embeddings=shared_embeddings()) as m:
        m.add_many([{"messages": [{"role": "user", "content": t, "timestamp": ts}], "user_id": "owner"}
                    for ts, t in said], infer=False)
        with collect_traces() as traces:
            m.search("How many mugs did I buy in total?", user_id="owner", limit=3)
            m.search("Where did I buy the red mug?", user_id="owner", limit=3)
    counted, single = traces
    assert (counted["aggregate"], single["aggregate"]) == (True, False)
    days = dict(zip(counted["texts"], counted["days"]))
    assert days == {"I bought a red mug at the flea market.": "2024-03-02",
                    "I bought a blue mug there too.": "2024-03-02", "At the museum shop I got a mug.": "2024-04-20"}
