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

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_ranker as fr  # noqa: E402  (bench/recall/fit_ranker.py, beside this script)
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stores", type=Path, default=Path(os.environ.get("MEMORYX_RECALL_STORES", HERE / ".stores")))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--with-blind", action="store_true", help="as fit_ranker.py fit --with-blind")
    a = ap.parse_args()
    dev, val = fr.split(a.stores, a.with_blind)
    if not any("days" in r for r in dev):
        raise SystemExit("the traces hold no days: collect them again (fit_ranker.py collect)")
    mask = fr.learnable()
    held_out: dict = {}
    cv = fr.cross_validated(dev, mask, a.folds, held_out)
    cv_spread, chosen = reorders.cross_validated(dev, held_out, a.folds, spread_order, PAIRS)
    d, da = reorders.choose(dev, held_out, spread_order, PAIRS)
    model = fr.fit_model(dev, mask)
    for r in val:
        held_out[id(r)] = fr.final(r, mask, *model)
    print(f"factors chosen on all dev: decay {d}, for aggregation questions {da}; each fold's choice {chosen}")
    print(f"criterion (dev, k-fold CV): {fr.criterion(cv):.4f} without spreading, "
          f"{fr.criterion(cv_spread):.4f} with")
    columns = {"fitted, CV (dev)": cv, "+ spread, CV (dev)": cv_spread}
    if val:
        columns["fitted (validation)"] = fr.evaluate(val, lambda r: fr.replay(r, held_out[id(r)]))
        columns["+ spread (validation)"] = reorders.figures(val, held_out, spread_order, (d, da))
    fr.print_table("the fitted ranking with and without the spread", columns)


if __name__ == "__main__":
    main()
