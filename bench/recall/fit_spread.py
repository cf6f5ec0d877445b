"""Would spreading a crowded day's hits help the fitted ranking? A measurement on the traces, fitted and
cross-validated like the ranking itself.

    python bench/recall/fit_spread.py [--stores DIR] [--folds 5] [--with-blind]

A question whose answer lies in several conversations can lose its top places to one conversation's turns: they
share the question's words and lend each other context. memoryx.search.spread (the hand-weighted order's step for
aggregation questions) lets each further hit of a day already in the list score x `decay` per hit before it, the
day read from the memory's event time. Here two factors are chosen on data: one for every question, one for the
questions the query analysis reads as gathering across sessions ("how many", "in total": the plan's `aggregate`).

The scores spread are the fitted ranking's held-out scores (each question scored by a model that did not see its
fold: fit_ranker.py's cross-validation), so the factors are chosen on what a new question meets; each pair on GRID
is tried and the best criterion (the mean of the dev headline figures) kept, ties to less spreading; the choice is
cross-validated in turn (each fold's factors chosen on the other folds), and applied to LongMemEval validation
scored by the model fitted on all dev. The fitted ranking would adopt the step only if this shows it carries over;
so far it has not (docs/benchmarks.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reorders  # noqa: E402

GRID = (1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5)


def spread_order(r: dict, scores: np.ndarray, decay: float, decay_aggregate: float) -> list[int]:
    """memoryx.search.spread over the rank node's order (by score, ties by the pool's order), each candidate's day
    and whether the question gathers across sessions read off the trace."""
    from memoryx.search.spread import spread

    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    days = r.get("days")
    if not days:
        return order
    hits = [{"i": i, "score": float(scores[i]), "day": days[i]} for i in order]
    d = decay_aggregate if r.get("aggregate") else decay
    return [h["i"] for h in spread(hits, d, session=lambda h: h["day"])]


PAIRS = tuple((d, da) for d in GRID for da in GRID)  # the first, (1.0, 1.0), spreads nothing


def main() -> None:
    ap = reorders.parser(__doc__)
    a = ap.parse_args()
    dev, val = reorders.rows(a)
    if not any("days" in r for r in dev):
        raise SystemExit("the traces hold no days: collect them again (fit_ranker.py collect)")
    m = reorders.measure(dev, val, a.folds, spread_order, PAIRS)
    d, da = m["params"]
    reorders.report(m, "spread", f"decay {d}, for aggregation questions {da}")


if __name__ == "__main__":
    main()
