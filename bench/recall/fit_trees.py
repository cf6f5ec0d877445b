"""The fitted ranking's trees (memoryx.search.ranker_trees): fitted on the same dev rows and features as the linear
model, pointwise (scikit-learn's HistGradientBoostingClassifier, fixed seed), and written into the model file as
plain nodes the package walks without scikit-learn.

SHARE is the trees' part of the relevance, DEPTH their depth (the walk's cost is depth steps: 6 keeps 100
candidates within 1 ms); both were read off 5-fold cross-validation on dev (docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np

SHARE = 0.5
DEPTH = 6
PARAMS = {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15, "max_depth": DEPTH, "random_state": 0}


def fit_trees(rows: list[dict], mask: np.ndarray):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X = np.vstack([r["X"][:, mask] for r in rows])
    y = np.concatenate([r["y"] for r in rows])
    return HistGradientBoostingClassifier(**PARAMS).fit(X, y)


def probabilities(model, r: dict, mask: np.ndarray) -> np.ndarray:
    return model.predict_proba(r["X"][:, mask])[:, 1]


def as_data(model, names: list[str]) -> dict:
    """The model file's "trees": each node [feature name, threshold, left, right, value, is leaf] (`names`: the
    model's input columns, the learnable features in FEATURES' order)."""
    trees = []
    for (predictor,) in model._predictors:  # one tree per iteration (a binary classifier)
        trees.append([[names[int(n["feature_idx"])], float(n["num_threshold"]), int(n["left"]),
                       int(n["right"]), float(n["value"]), bool(n["is_leaf"])] for n in predictor.nodes])
    return {"share": SHARE, "baseline": float(np.ravel(model._baseline_prediction)[0]),
            "params": {k: v for k, v in PARAMS.items()}, "trees": trees}
