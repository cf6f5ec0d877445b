"""Fit the search ranking on the dev sets and write the model the package ships (search/ranker_model.json).

    python bench/recall/fit_ranker.py collect [--stores DIR] [--sets locomo-dev,lme-dev,lme-val,lives]
        [--fold-adapters FILE] [--companion-fold-adapters FILE]
    python bench/recall/fit_ranker.py fit [--stores DIR] [--folds 5] [--write] [--drop GROUP ...] [--with-blind]
        [--with-val]
    python bench/recall/fit_ranker.py ablate [--stores DIR] [--with-blind] [--with-val]

collect: every question of the kept stores (bench/recall/run.py ingests them) is asked through the public API
with its defaults (`Memory.search(question, <scope>, limit=30, now=<question date>)`), while
memoryx.search.ranker.collect_traces records what the ranking saw: the candidate pool, each candidate's feature
vector, the hand-weighted order. Written to <stores>/traces/<set>.json (minutes; only the ranking is re-read
afterwards, so fitting takes seconds).

fit: a linear pairwise model (logistic loss on every (evidence, other) pair of a question, each question
weighing the same and each set the same, L2-regularised), then the scale and bias of the logistic score
calibrated pointwise; beside it, gradient-boosted trees ranking the same rows, mixed into the relevance by their
share (fit_trees.py); deterministic (L-BFGS from zero, folds by a hash of the question id). Prints, per set and
question type, the hand-weighted order against the fitted one: on dev by k-fold cross-validation (each
question scored by a model that did not see its fold; LoCoMo and the lives folded by conversation and life), and
on validation (LongMemEval validation, never fitted on) by the model fitted on all dev. The lives written blind
are validation too, or with --with-blind dev, their figure cross-validated by life (the shipped model: the own
lives hold too few questions answered in another language for the cross-lingual paths to be weighed without
them). LongMemEval validation likewise, with --with-val: fitted on, its figures cross-validated by question (the
data's README allows it: "fit a learned component on both with k-fold cross-validation and report the held-out
folds"). --write writes that model to search/ranker_model.json and the figures to bench/recall/cv_figures.json.

ablate: refits without each group of rule signals (the phrase-reading detectors of memoryx.search) and prints
what each group is worth on validation and in cross-validation, the table that decides which rules stay.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("PYTHONHASHSEED", "0")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_trees  # noqa: E402  (bench/recall/fit_trees.py, beside this script)

ROOT = HERE.parent.parent
MODEL_OUT = ROOT / "search" / "ranker_model.json"
WITHOUT_COMPANION_OUT = ROOT / "search" / "ranker_model_without_companion.json"  # `fit --drop companion --write`
CV_OUT = HERE / "cv_figures.json"
SEARCH_LIMIT = 30
DEV_SETS = tuple(s for s in os.environ.get("FIT_DEV_SETS", "locomo-dev,lme-dev,lives").split(","))
VAL_SETS = ("lme-val",)
# the lives written blind (by a tester who never saw the code) are scored apart ("lives-blind"): as validation, never
# fitted on, or (--with-blind) fitted on and scored by cross-validation by life, never by a model that saw the life
BLIND = "lives-blind"
L2 = 1e-3
# a set fitted on beside another of the same benchmark weighs as part of it (LongMemEval's validation questions
# with its dev ones, --with-val): one benchmark's share of the pairs does not grow with the files it comes in
WEIGHED_AS = {"lme-val": "lme-dev"}
# each set's headline figures: the ablation's columns; the criterion model choices are read on is the mean of the
# dev ones (cross-validated)
HEADLINE = (("locomo-dev", "frac@10"), ("lme-dev", "session_recall_all@5"), ("lme-dev", "turn_recall_all@5"),
            ("lives", "top1"), (BLIND, "top1"), ("lme-val", "session_recall_all@5"), ("lme-val", "turn_recall_all@5"))

# groups of rule signals for the ablation: each is one detector family of memoryx.search (the regular
# expressions and word tables that read a question and a memory); a group that earns nothing on validation goes
RULE_GROUPS = {
    "period": ("in_period",),
    "when": ("when_time",),
    "amount": ("amount",),
    "preference": ("preference",),
    "role": ("role", "other_side"),
    "relation": ("relation", "naming", "attribute", "someone_else", "own_not_theirs"),
    "current": ("current_x_later", "current_x_newer_similar", "current_x_ended"),
    "events": ("covers",),
}
DROPPABLE = {**RULE_GROUPS, "companion": ("companion_cosine", "companion_gap")}  # that one: the index off


# ------------------------------------------------------------------------------------------------ labels


def _says(text: str, expected) -> bool:
    """The everyday benches' rule: the text holds every expected word ("a|b": either), case-insensitive."""
    low = text.lower()
    words = expected if isinstance(expected, (list, tuple)) else str(expected).split()
    return all(any(alt.lower() in low for alt in str(w).split("|")) for w in words)


def labels(row: dict) -> np.ndarray:
    q = row["question"]
    if q.get("expected") is not None:  # (the lives: what the figure counts, not one memory the harness named)
        return np.array([1.0 if _says(t, q["expected"]) else 0.0 for t in row["texts"]])
    if q.get("gold_ids"):
        gold = set(q["gold_ids"])
        return np.array([1.0 if i in gold else 0.0 for i in row["ids"]])
    return np.zeros(len(row["ids"]))


def _session(meta: dict):
    return meta.get("session") or meta.get("session_id")


def metrics(row: dict, order: list[int]) -> dict[str, float]:
    """The set's own figures for one question, the candidates taken in `order`."""
    q = row["question"]
    ids = [row["ids"][i] for i in order]
    if q["set"].startswith("lme"):
        gold = set(q.get("gold_ids") or ())
        sessions: list = []
        for i in order:
            s = _session(row["metadata"][i])
            if s is not None and s not in sessions:
                sessions.append(s)
        want = set(q.get("gold_sessions") or ())
        top5 = set(sessions[:5])
        return {"session_recall_all@5": float(bool(want) and want <= top5), "session_recall_any@5": float(bool(want & top5)),
                "turn_recall_all@5": float(bool(gold) and gold <= set(ids[:5]))}
    if q["set"].startswith("locomo"):
        gold = list(q.get("gold_ids") or ())
        top = set(ids[:10])
        return {"frac@10": sum(1 for g in gold if g in top) / len(gold) if gold else 0.0}
    texts = [row["texts"][i] for i in order]
    return {"top1": float(bool(texts) and _says(texts[0], q["expected"])),
            "top3": float(any(_says(t, q["expected"]) for t in texts[:3]))}


# ------------------------------------------------------------------------------------------------ fitting


def load(stores: Path, sets) -> list[dict]:
    rows = []
    for name in sets:
        path = stores / "traces" / f"{name}.json"
        if not path.exists():
            print(f"{name}: no traces ({path}); run `fit_ranker.py collect` first", file=sys.stderr)
            continue
        data = json.loads(path.read_text())
        from memoryx.search.ranker import FEATURES

        # traces name their columns: a feature since removed is dropped, one added since reads 0 until re-collected
        cols = [data["features"].index(f) if f in data["features"] else None for f in FEATURES]
        for r in data["rows"]:
            if not r["ids"]:
                continue
            X = np.array(r["features"], dtype=float)
            r["X"] = np.column_stack([X[:, c] if c is not None else np.zeros(len(X)) for c in cols])
            r["y"] = labels(r)
            r["set"] = BLIND if name == "lives" and r["question"].get("blind") else name
            rows.append(r)
    return rows


def split(stores: Path, with_blind: bool = False, with_val: bool = False) -> tuple[list[dict], list[dict]]:
    """(rows fitted on, validation rows): LongMemEval validation is never fitted on, or, `with_val`, fitted on and
    scored by cross-validation (folded by question, as LongMemEval dev: the data's README allows either); the blind
    lives are validation too, or, `with_blind`, rows scored by cross-validation (folded by life, as the other
    lives)."""
    rows = load(stores, DEV_SETS)
    val = load(stores, VAL_SETS)
    if with_val:
        rows, val = rows + val, []
    if with_blind:
        return rows, val
    return [r for r in rows if r["set"] != BLIND], [r for r in rows if r["set"] == BLIND] + val


def criterion(figures: dict) -> float:
    """What model choices are read on: the mean of the headline figures present (on dev rows, the five dev ones)."""
    vals = [figures[s][m][0] for s, m in HEADLINE if s in figures and m in figures[s]]
    return float(np.mean(vals)) if vals else 0.0


def fold_key(row: dict) -> str:
    """LoCoMo by conversation, the lives by life, LongMemEval by question: a fold never shares a history."""
    q = row["question"]
    return q.get("group") or q.get("life") or q.get("group_id") or q["qid"]


def fold_of(row: dict, k: int) -> int:
    return int(hashlib.sha256(f"{row['set']}:{fold_key(row)}".encode()).hexdigest(), 16) % k


def _pairs(rows: list[dict], mask: np.ndarray, beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Differences (evidence - other) of every pair of each question, and each pair's weight: questions of a set
    alike, a set by the square root of its size, and, given a model (`beta`), within a question by how much swapping the two moves a top-heavy
    gain (LambdaRank's |delta DCG| under that model's order): the pairs at the top of the list count most."""
    per_set = defaultdict(int)
    for r in rows:
        if r["y"].any() and not r["y"].all():
            per_set[WEIGHED_AS.get(r["set"], r["set"])] += 1
    diffs, weights = [], []
    for r in rows:
        y = r["y"]
        if not y.any() or y.all():
            continue
        X = r["X"][:, mask]
        pos, neg = X[y > 0], X[y == 0]
        d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, X.shape[1])
        if beta is None:
            pw = np.ones(len(d))
        else:
            rank = np.empty(len(y))
            rank[np.argsort(-(X @ beta), kind="stable")] = np.arange(len(y))
            gain = 1.0 / np.log2(2.0 + rank)
            pw = np.abs(gain[y > 0][:, None] - gain[y == 0][None, :]).reshape(-1)
        diffs.append(d)
        # each set weighs as the square root of its questions: a large set counts more, a small one still counts
        weighed = WEIGHED_AS.get(r["set"], r["set"])
        share = np.sqrt(per_set[weighed]) / sum(np.sqrt(n) for n in per_set.values())
        weights.append(pw / pw.sum() * share / per_set[weighed])
    return np.vstack(diffs), np.concatenate(weights)


def fit(rows: list[dict], mask: np.ndarray, rounds: int = 3) -> np.ndarray:
    from scipy.optimize import minimize

    beta = None
    for _ in range(rounds):
        D, w = _pairs(rows, mask, beta)

        def loss(b):
            z = D @ b
            lz = np.logaddexp(0.0, -z)
            grad = -(D * (w * (1.0 / (1.0 + np.exp(z))))[:, None]).sum(axis=0)
            return float((w * lz).sum() + L2 * b @ b), grad + 2 * L2 * b

        start = np.zeros(D.shape[1]) if beta is None else beta
        beta = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 500}).x
    return beta


def fit_model(rows: list[dict], mask: np.ndarray) -> tuple:
    """The shipped model's parts fitted on `rows`: (beta, scale, bias, trees or None), as `final` takes them."""
    beta = fit(rows, mask)
    scale, bias = calibrate(rows, beta, mask)
    return beta, scale, bias, fit_trees.fit_trees(rows, mask) if fit_trees.SHARE > 0 else None


def calibrate(rows: list[dict], beta: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """Scale and bias of sigmoid(scale * s + bias) for s = beta . x, fitted pointwise (so a score is a
    probability of being evidence)."""
    from scipy.optimize import minimize

    s = np.concatenate([r["X"][:, mask] @ beta for r in rows])
    y = np.concatenate([r["y"] for r in rows])

    def loss(p):
        z = p[0] * s + p[1]
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    a, b = minimize(loss, np.array([1.0, 0.0]), method="Nelder-Mead").x
    return float(a), float(b)


def _order(scores: np.ndarray) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def replay(r: dict, scores: np.ndarray, order: list[int] | None = None) -> list[int]:
    """The order the rank node returns for these final scores (or for `order`, say their spread: fit_spread.py):
    best first (ties by the pool's order), the memories that had ended after every valid one (superseded_last),
    then, when the query names a period that filters, those inside it first, or only those when it is strict and
    some are (by_period). Traces collected before these steps were recorded replay the model's order alone."""
    order = _order(scores) if order is None else order
    ended = r.get("ended")
    if ended:
        order = [i for i in order if not ended[i]] + [i for i in order if ended[i]]
    inside = r.get("in_window")
    if r.get("period_filter") and inside:
        ins = [i for i in order if inside[i]]
        outs = [i for i in order if not inside[i]]
        order = (ins or outs) if r["period_filter"] == "strict" else ins + outs
    return order


def hand_order(row: dict) -> list[int]:
    pos = {mid: i for i, mid in enumerate(row["ids"])}
    return [pos[m] for m in row["hand"] if m in pos]


def evaluate(rows: list[dict], scorer) -> dict:
    """Mean figures per set and per (set, question type)."""
    acc: dict = defaultdict(lambda: defaultdict(list))
    for r in rows:
        m = metrics(r, scorer(r))
        for key in (r["set"], f"{r['set']} / {r['question'].get('qtype') or '-'}"):
            for name, v in m.items():
                acc[key][name].append(v)
    return {k: {n: (float(np.mean(v)), len(v)) for n, v in d.items()} for k, d in acc.items()}


def final(r: dict, mask: np.ndarray, beta: np.ndarray, scale: float, bias: float, trees=None) -> np.ndarray:
    """What the rank node computes: the model's probability scaled so the best is 1 (mixed with the trees', scaled
    alike, by their share: fit_trees.py), blended with importance, recency and access by the default settings'
    weights (memoryx.search.scoring.final_scores)."""
    from memoryx.search.ranker import BLEND, FEATURES
    from memoryx.settings import Settings

    s = Settings()
    p = 1.0 / (1.0 + np.exp(-np.clip(scale * (r["X"][:, mask] @ beta) + bias, -30, 30)))
    rel = p / p.max() if p.max() > 0 else p
    if trees is not None:
        q = fit_trees.probabilities(trees, r, mask)
        rel = (1 - fit_trees.SHARE) * rel + fit_trees.SHARE * (q / q.max() if q.max() > 0 else q)
    cols = {b: r["X"][:, FEATURES.index(b)] for b in BLEND}
    w = (s.weight_relevance, s.weight_importance, s.weight_recency, s.weight_access)
    return (w[0] * rel + w[1] * cols["importance"] + w[2] * cols["recency"] + w[3] * cols["access"]) / sum(w)


def cross_validated(rows: list[dict], mask: np.ndarray, k: int, held_out: dict | None = None) -> dict:
    """Figures of each question scored by a model that did not see its fold (its scores kept in `held_out`)."""
    scores: dict[int, np.ndarray] = {} if held_out is None else held_out
    for f in range(k):
        model = fit_model([r for r in rows if fold_of(r, k) != f], mask)
        for r in rows:
            if fold_of(r, k) == f:
                scores[id(r)] = final(r, mask, *model)
    return evaluate(rows, lambda r: replay(r, scores[id(r)]))


def learnable(drop: set[str] = frozenset()) -> np.ndarray:
    """The features a model may weigh: all but the blended factors and the dropped ones."""
    from memoryx.search.ranker import BLEND, FEATURES

    return np.array([f not in drop and f not in BLEND for f in FEATURES])


def print_table(title: str, columns: dict[str, dict]) -> None:
    print(f"\n## {title}\n")
    names = list(columns)
    keys = sorted({k for c in columns.values() for k in c})
    print("| set / type | n | metric | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for key in keys:
        metrics_ = sorted({m for c in columns.values() for m in c.get(key, {})})
        for m in metrics_:
            n = next(c[key][m][1] for c in columns.values() if m in c.get(key, {}))
            cells = [f"{c[key][m][0]:.3f}" if m in c.get(key, {}) else "" for c in columns.values()]
            print(f"| {key} | {n} | {m} | " + " | ".join(cells) + " |")


def main_fit(stores: Path, k: int, write: bool, drop: list[str], with_blind: bool, with_val: bool) -> None:
    from memoryx.search.ranker import FEATURES

    dev, val = split(stores, with_blind, with_val)
    if not dev:
        raise SystemExit("no dev traces: run `fit_ranker.py collect` first")
    mask = learnable({f for g in drop for f in DROPPABLE[g]})
    t0 = time.perf_counter()
    beta, scale, bias, trees = fit_model(dev, mask)
    cv = cross_validated(dev, mask, k)
    print(f"fitted on {len(dev)} dev questions in {time.perf_counter() - t0:.1f} s (with {k}-fold CV)", file=sys.stderr)
    fitted = lambda r: replay(r, final(r, mask, beta, scale, bias, trees))  # noqa: E731
    columns = {"hand (dev)": evaluate(dev, hand_order), "fitted, k-fold CV (dev)": cv,
               "fitted on dev (dev)": evaluate(dev, fitted)}
    if val:
        columns["hand (validation)"] = evaluate(val, hand_order)
        columns["fitted on dev (validation)"] = evaluate(val, fitted)
    print_table("hand-weighted vs fitted", columns)
    weights = {f: round(float(b), 5) for f, b in zip([f for f, keep in zip(FEATURES, mask) if keep], beta)}
    print("\nweights (features scaled 0..1):")
    for f, b in sorted(weights.items(), key=lambda x: -abs(x[1])):
        print(f"  {f:28s} {b:+.4f}")
    if write:
        out = WITHOUT_COMPANION_OUT if drop == ["companion"] else MODEL_OUT
        out.write_text(_model_json({
            "fitted_on": f"{', '.join(DEV_SETS + (VAL_SETS if with_val else ()))}"
                         f"{' (the blind lives too)' if with_blind else ''} (shared data); "
                         f"bench/recall/fit_ranker.py fit --write{' --with-blind' if with_blind else ''}"
                         f"{' --with-val' if with_val else ''}{' --drop ' + ' '.join(drop) if drop else ''}",
            "learner": "linear, pairwise logistic loss, L2 %g; score calibrated pointwise" % L2,
            "scale": round(scale, 6), "bias": round(bias, 6), "features": weights,
            }, fit_trees.as_data(trees, list(weights), np.vstack([r["X"][:, mask] for r in dev[:300]]))
            if trees is not None else None))
        if out == MODEL_OUT:  # the figures the harness reports beside the shipped model's
            CV_OUT.write_text(json.dumps(_by_set(cv), indent=1) + "\n")
        print(f"wrote {out}", file=sys.stderr)


def _model_json(linear: dict, trees: dict | None) -> str:
    """The model file: the linear part one entry a line, the trees (thousands of numbers) compact on their own."""
    text = json.dumps(linear, indent=1)
    return (text if trees is None else text[:-2] + ',\n "trees": ' + json.dumps(trees) + "\n}") + "\n"


def _by_set(figures: dict) -> dict:
    """{set: {"all" or question type: {metric: value}}}, as bench/recall/run.py prints them beside its own."""
    out: dict = defaultdict(dict)
    for key, ms in figures.items():
        name, _, qtype = key.partition(" / ")
        out[name][qtype or "all"] = {m: round(v, 4) for m, (v, _n) in ms.items()}
    return dict(out)


def main_ablate(stores: Path, k: int, with_blind: bool = False, with_val: bool = False) -> None:
    dev, val = split(stores, with_blind, with_val)
    results = {}
    for group, feats in [("all signals", ()), *((f"without {g}", f) for g, f in RULE_GROUPS.items())]:
        mask = learnable(set(feats))
        model = fit_model(dev, mask)  # validation scored by the model as shipped, trees and all
        results[group] = (cross_validated(dev, mask, k),
                          evaluate(val, lambda r, m=mask, fitted=model: replay(r, final(r, m, *fitted))))
    print("\n| signals | " + " | ".join(f"{s} {m}" for s, m in HEADLINE) + " |")
    print("|---|" + "---|" * len(HEADLINE))
    for name, (cv, v) in results.items():
        cells = []
        for s, m in HEADLINE:
            src = v if (s in VAL_SETS and not with_val) or (s == BLIND and not with_blind) else cv
            cells.append(f"{src[s][m][0]:.3f}" if s in src and m in src[s] else "")
        print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("collect", "fit", "ablate"))
    ap.add_argument("--stores", type=Path, default=Path(os.environ.get("MEMORYX_RECALL_STORES", HERE / ".stores")))
    ap.add_argument("--sets", default=",".join(DEV_SETS + VAL_SETS))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--fold-adapters", type=Path, help="collect: fit_query_adapter.py's --out file; dev "
                    "questions get the adapter of the folds that never saw them")
    ap.add_argument("--companion-fold-adapters", type=Path, help="collect: the same for the companion encoder")
    ap.add_argument("--drop", nargs="*", default=[], choices=sorted(DROPPABLE))
    ap.add_argument("--with-blind", action="store_true", help="fit on the lives written blind too, their figures "
                    "cross-validated by life (default: they are validation, never fitted on)")
    ap.add_argument("--with-val", action="store_true", help="fit on LongMemEval validation too, its figures "
                    "cross-validated by question (default: it is validation, never fitted on)")
    a = ap.parse_args()
    if a.command == "collect":
        from traces import collect  # bench/recall/traces.py

        collect(a.stores, [s for s in a.sets.split(",") if s], a.fold_adapters, SEARCH_LIMIT,
                a.companion_fold_adapters)
    elif a.command == "fit":
        main_fit(a.stores, a.folds, a.write, a.drop, a.with_blind, a.with_val)
    else:
        main_ablate(a.stores, a.folds, a.with_blind, a.with_val)


if __name__ == "__main__":
    main()
