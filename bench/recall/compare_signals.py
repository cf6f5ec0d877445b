"""Is a signal worth its place? A paired comparison steadier than one fit.

    python bench/recall/compare_signals.py --without figure [other features ...] [--seeds 3] [--stores DIR]
    python bench/recall/compare_signals.py --probe asks [--seeds 3]      (a signal not built yet: probes.py)

The criterion (the mean of the five dev cross-validated headline figures) moves by about ±0.003 with the trees'
random draws alone, more than most single signals move it. So the ranking is refitted with and without the named
features on the same traces, once with the shipped deterministic trees and once per seed with bagged trees
(bagging and feature fraction 0.8), and each pair is compared: a signal that earns its place raises the criterion
under most fits, not in one. LongMemEval validation is scored beside (never fitted on), as the ablation rule reads
it. Beside each change, its standard error from the questions themselves: a paired bootstrap of the dev criterion's
change over the questions (resampled within each set by fold group: a LoCoMo conversation, a life, a LongMemEval
question), so a change is read against both noises, the trees' draws and the questions that happen to be in dev.
Fitted with --with-blind, as the shipped model (fit_ranker.py). With --probe, "without" is the shipped
signals and "with" adds the probe's columns (bench/recall/probes.py); with --probe and --replace, "with" also
drops the named shipped features (a probe that would take their place rather than stand beside them).
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
import fit_trees  # noqa: E402
import probes  # noqa: E402

BAGGED = {"bagging_fraction": 0.8, "bagging_freq": 1, "feature_fraction": 0.8}
VALIDATION = ("session_recall_all@5", "turn_recall_all@5")
BOOTSTRAP = 2000  # resamples of the dev questions for a change's standard error


def one_fit(dev: list[dict], val: list[dict], mask: np.ndarray, k: int) -> tuple[float, list[float], dict]:
    """(the dev criterion by k-fold CV, LongMemEval validation's figures by the model fitted on all dev, each dev
    headline figure's held-out value per question: {(set, metric): array in the order of `dev`'s rows of that set})."""
    held: dict = {}
    cv = fr.cross_validated(dev, mask, k, held)
    model = fr.fit_model(dev, mask)
    v = fr.evaluate(val, lambda r: fr.replay(r, fr.final(r, mask, *model)))
    per_question: dict = {}
    for r in dev:
        got = fr.metrics(r, fr.replay(r, held[id(r)]))
        for s, m in fr.HEADLINE:
            if s == r["set"] and m in got:
                per_question.setdefault((s, m), []).append(got[m])
    return (fr.criterion(cv), [v["lme-val"][m][0] if "lme-val" in v else float("nan") for m in VALIDATION],
            {key: np.array(values) for key, values in per_question.items()})


def change_se(dev: list[dict], without: dict, with_: dict, seed: int = 0) -> float:
    """The criterion change's standard error over the questions: a paired bootstrap, each set's fold groups drawn
    with replacement (questions of one conversation or life rise and fall together), each figure's mean change
    recomputed, the criterion's change their mean."""
    rng = np.random.default_rng(seed)
    draws = np.zeros(BOOTSTRAP)
    for s, m in without:
        keys = [fr.fold_key(r) for r in dev if r["set"] == s]
        groups = {g: i for i, g in enumerate(dict.fromkeys(keys))}
        index = np.array([groups[g] for g in keys])
        delta = with_[(s, m)] - without[(s, m)]
        sums, counts = np.bincount(index, delta), np.bincount(index).astype(float)
        picks = rng.integers(0, len(groups), size=(BOOTSTRAP, len(groups)))
        draws += sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    return float(np.std(draws / len(without)))


def main() -> None:
    from memoryx.search.ranker import FEATURES

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--without", nargs="+", choices=FEATURES, metavar="FEATURE")
    what.add_argument("--probe", choices=sorted(probes.PROBES), help="a signal not built yet (probes.py)")
    ap.add_argument("--replace", nargs="+", choices=FEATURES, metavar="FEATURE", default=[],
                    help="with --probe: shipped features the probe's columns take the place of")
    ap.add_argument("--seeds", type=int, default=3, help="bagged fits beside the deterministic one")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--stores", type=Path, default=Path(os.environ.get("MEMORYX_RECALL_STORES", HERE / ".stores")))
    a = ap.parse_args()
    dev, val = fr.split(a.stores, with_blind=True)
    if not dev:
        raise SystemExit("no dev traces: run `fit_ranker.py collect` first")
    if a.probe:
        names = probes.with_probe(dev + val, a.probe, a.stores)
        mask_with = np.concatenate([fr.learnable(set(a.replace)), np.ones(len(names), dtype=bool)])
        mask_without = np.concatenate([fr.learnable(), np.zeros(len(names), dtype=bool)])
    elif a.replace:
        raise SystemExit("--replace goes with --probe")
    else:
        names = a.without
        mask_with, mask_without = fr.learnable(), fr.learnable(set(a.without))
    shipped = dict(fit_trees.PARAMS)
    instead = f" in place of {', '.join(a.replace)}" if a.replace else ""
    print(f"| fit | criterion without {', '.join(names)} | with{instead} | change ± its standard error over "
          "the questions | validation session / turn, without -> with |")
    print("|---|---|---|---|---|")
    changes, val_changes, errors = [], [], []
    for seed in [None, *range(1, a.seeds + 1)]:
        fit_trees.PARAMS = shipped if seed is None else {**shipped, **BAGGED, "random_state": seed}
        c_without, v_without, q_without = one_fit(dev, val, mask_without, a.folds)
        c_with, v_with, q_with = one_fit(dev, val, mask_with, a.folds)
        changes.append(c_with - c_without)
        errors.append(change_se(dev, q_without, q_with))
        val_changes.append(np.subtract(v_with, v_without))
        name = "deterministic trees (shipped)" if seed is None else f"bagged trees, seed {seed}"
        print(f"| {name} | {c_without:.4f} | {c_with:.4f} | {c_with - c_without:+.4f} ± {errors[-1]:.4f} | "
              f"{v_without[0]:.3f} / {v_without[1]:.3f} -> {v_with[0]:.3f} / {v_with[1]:.3f} |", flush=True)
    fit_trees.PARAMS = shipped
    vm = np.mean(val_changes, axis=0)
    print(f"| mean | | | {np.mean(changes):+.4f} ({sum(c > 0 for c in changes)} of {len(changes)} higher; "
          f"spread between fits {np.std(changes):.4f}, over the questions ± {np.mean(errors):.4f}) | "
          f"{vm[0]:+.3f} / {vm[1]:+.3f} |")


if __name__ == "__main__":
    main()
