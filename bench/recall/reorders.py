"""A step after the fitted ranking (spreading a crowded day, stepping over near-copies...), chosen on data: its
parameters tried on a grid over the ranking's held-out scores, the best criterion kept, and the choice
cross-validated in turn, as fit_spread.py and fit_redundancy.py measure theirs.

`order(row, scores, *params)` gives the step's order of a row's candidates; `grid[0]` must be the parameters that
leave the order alone, so ties go to doing nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import fit_ranker as fr  # bench/recall/fit_ranker.py, beside this module


def figures(rows: list[dict], scores: dict, order: Callable, params: Sequence) -> dict:
    """The figures of `rows` in the step's order (scores: id(row) -> the ranking's final scores), replayed as the
    rank node returns them."""
    return fr.evaluate(rows, lambda r: fr.replay(r, scores[id(r)], order(r, scores[id(r)], *params)))


def choose(rows: list[dict], scores: dict, order: Callable, grid: Sequence[tuple]) -> tuple:
    """The parameters of `grid` with the best criterion on `rows`; a later one only when strictly better."""
    best, best_at = -1.0, grid[0]
    for params in grid:
        c = fr.criterion(figures(rows, scores, order, params))
        if c > best + 1e-9:
            best, best_at = c, params
    return best_at


def cross_validated(rows: list[dict], scores: dict, k: int, order: Callable,
                    grid: Sequence[tuple]) -> tuple[dict, list]:
    """Figures with each fold's parameters chosen on the other folds, and the parameters each fold chose."""
    orders, chosen = {}, []
    for f in range(k):
        params = choose([r for r in rows if fr.fold_of(r, k) != f], scores, order, grid)
        chosen.append(params)
        for r in rows:
            if fr.fold_of(r, k) == f:
                orders[id(r)] = fr.replay(r, scores[id(r)], order(r, scores[id(r)], *params))
    return fr.evaluate(rows, lambda r: orders[id(r)]), chosen
