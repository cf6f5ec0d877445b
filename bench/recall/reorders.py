"""A step after the fitted ranking (spreading a crowded day, stepping over near-copies...), chosen on data: its
parameters tried on a grid over the ranking's held-out scores, the best criterion kept, and the choice
cross-validated in turn, as fit_spread.py and fit_redundancy.py measure theirs.

`order(row, scores, *params)` gives the step's order of a row's candidates; `grid[0]` must be the parameters that
leave the order alone, so ties go to doing nothing.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import fit_ranker as fr  # bench/recall/fit_ranker.py, beside this module

from stores import DEFAULT_STORES  # bench/recall/stores.py


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


def measure(dev: list[dict], val: list[dict], k: int, order: Callable, grid: Sequence[tuple]) -> dict:
    """The whole measurement: the ranking's k-fold held-out scores on `dev` (fit_ranker.py's cross-validation), the
    step cross-validated on them ("cv", "cv_step", each fold's "chosen"), its parameters chosen on all dev
    ("params"), and LongMemEval validation scored by the model fitted on all dev, without and with the step
    ("val", "val_step"; None without validation rows)."""
    mask = fr.learnable()
    held_out: dict = {}
    cv = fr.cross_validated(dev, mask, k, held_out)
    cv_step, chosen = cross_validated(dev, held_out, k, order, grid)
    params = choose(dev, held_out, order, grid)
    model = fr.fit_model(dev, mask)
    for r in val:
        held_out[id(r)] = fr.final(r, mask, *model)
    return {"cv": cv, "cv_step": cv_step, "chosen": chosen, "params": params,
            "val": fr.evaluate(val, lambda r: fr.replay(r, held_out[id(r)])) if val else None,
            "val_step": figures(val, held_out, order, params) if val else None}


def report(m: dict, step: str, params: str) -> None:
    """Print `measure`'s figures: `step` names the step ("spread"), `params` what was chosen on all dev."""
    print(f"chosen on all dev: {params}; each fold's choice {m['chosen']}")
    print(f"criterion (dev, k-fold CV): {fr.criterion(m['cv']):.4f} without the {step}, "
          f"{fr.criterion(m['cv_step']):.4f} with")
    columns = {"fitted, CV (dev)": m["cv"], f"+ {step}, CV (dev)": m["cv_step"]}
    if m["val"] is not None:
        columns["fitted (validation)"] = m["val"]
        columns[f"+ {step} (validation)"] = m["val_step"]
    fr.print_table(f"the fitted ranking with and without the {step}", columns)


def parser(doc: str) -> argparse.ArgumentParser:
    """The options every such script takes: where the kept stores are, the folds, the blind lives as in the fit."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stores", type=Path, default=Path(os.environ.get("MEMORYX_RECALL_STORES", DEFAULT_STORES)))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--with-blind", action="store_true", help="as fit_ranker.py fit --with-blind")
    return ap


def rows(a: argparse.Namespace) -> tuple[list[dict], list[dict]]:
    """(dev rows, validation rows) of the traces, as fit_ranker.py fit splits them."""
    dev, val = fr.split(a.stores, a.with_blind)
    if not dev:
        raise SystemExit("no dev traces: run `fit_ranker.py collect` first")
    return dev, val
