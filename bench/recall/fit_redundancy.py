"""Would stepping over near-copies help the fitted ranking? A measurement on the traces, fitted and cross-validated
like the ranking itself (as fit_spread.py measures spreading a crowded day).

    python bench/recall/fit_redundancy.py [--stores DIR] [--folds 5] [--with-blind]

A chat repeats itself: "I've clocked 347 miles since the start of the year" comes back three times in one
conversation, and the copies take top places another memory of the answer needs. In the way of maximal marginal
relevance (Carbonell and Goldstein 1998), each of the best TOP candidates scores less by `penalty` x its largest
overlap with a better-scored one, counting an overlap only from `least` up (so only near-copies pay), and the
candidates are sorted again: the scores stay in order and the top hit never changes. The overlap is that of the
keyword tokens (memoryx.core.text.tokenize: any language), shared tokens over the smaller text's.

The scores re-ranked are the fitted ranking's held-out scores (fit_ranker.py's cross-validation); (least, penalty)
is chosen on GRID by the criterion, ties to no re-ranking; the choice is cross-validated in turn (each fold's
chosen on the other folds) and applied to LongMemEval validation scored by the model fitted on all dev. Nothing
in the package does this; it would, only if this showed it carries over (docs/benchmarks.md: it did not).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import reorders  # noqa: E402

TOP = 30
NONE = (1.0, 0.0)
GRID = (NONE, *((least, penalty) for least in (0.3, 0.5, 0.7) for penalty in (0.05, 0.1, 0.2, 0.4)))


def _overlap(a: frozenset, b: frozenset) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def redundancy_order(r: dict, scores: np.ndarray, least: float, penalty: float) -> list[int]:
    """The rank node's order (by score, ties by the pool's order), each of its best TOP scored less by `penalty` x
    its largest overlap (from `least`) with a better one among them, then sorted again (ties by that order)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    if penalty <= 0:
        return order
    if "tokens" not in r:
        from memoryx.core.text import tokenize

        r["tokens"] = [frozenset(tokenize(t)) for t in r["texts"]]
    tokens = r["tokens"]
    adjusted = {i: float(scores[i]) for i in order}
    head = order[:TOP]
    for k, i in enumerate(head[1:], start=1):
        worst = max((_overlap(tokens[i], tokens[j]) for j in head[:k]), default=0.0)
        if worst >= least:
            adjusted[i] -= penalty * worst
    place = {i: k for k, i in enumerate(order)}
    return sorted(order, key=lambda i: (-adjusted[i], place[i]))


def main() -> None:
    ap = reorders.parser(__doc__)
    ap.add_argument("--seed", type=int, help="score with bagged trees of this seed (compare_signals.py's)")
    a = ap.parse_args()
    if a.seed is not None:
        import compare_signals
        import fit_trees

        fit_trees.PARAMS = {**fit_trees.PARAMS, **compare_signals.BAGGED, "random_state": a.seed}
    dev, val = reorders.rows(a)
    m = reorders.measure(dev, val, a.folds, redundancy_order, GRID)
    least, penalty = m["params"]
    reorders.report(m, "step over near-copies", f"overlap from {least}, penalty {penalty}")


if __name__ == "__main__":
    main()
