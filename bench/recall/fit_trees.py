"""The fitted ranking's trees (memoryx.search.ranker_trees): fitted on the same dev rows and features as the linear
model, as a ranking (LightGBM's LambdaRank: each question's candidates a group, the gain of its top ten), and
written into the model file as plain nodes the package walks without LightGBM.

LambdaRank's score orders a question's candidates; squashed by a sigmoid it is the trees' part of the relevance,
SHARE of it (the linear probability the rest). SHARE, the trees' number and size were read off 5-fold
cross-validation on dev (docs/benchmarks.md); DEPTH bounds the walk (100 candidates within 1 ms). Needs
`pip install -e ".[fit]"` (LightGBM), as the fitting does; the package does not.
"""

from __future__ import annotations

import numpy as np

from memoryx.search.ranker_trees import trees_from

SHARE = 0.7
DEPTH = 6
PARAMS = {"objective": "lambdarank", "lambdarank_truncation_level": 10, "n_estimators": 200, "learning_rate": 0.05,
          "num_leaves": 15, "max_depth": DEPTH, "min_child_samples": 20, "random_state": 0, "deterministic": True,
          "force_row_wise": True, "n_jobs": 2, "verbose": -1}


def fit_trees(rows: list[dict], mask: np.ndarray):
    """A LightGBM ranker over `rows` (each question a group; a question without candidates adds nothing)."""
    import lightgbm

    rows = [r for r in rows if len(r["y"])]
    X = np.vstack([r["X"][:, mask] for r in rows])
    y = np.concatenate([r["y"] for r in rows]).astype(int)
    return lightgbm.LGBMRanker(**PARAMS).fit(X, y, group=[len(r["y"]) for r in rows])


def probabilities(model, r: dict, mask: np.ndarray) -> np.ndarray:
    """The trees' score of a question's candidates, squashed to 0..1 as the package does."""
    return 1.0 / (1.0 + np.exp(-np.clip(model.predict(r["X"][:, mask]), -30.0, 30.0)))


def as_data(model, names: list[str], check: np.ndarray | None = None) -> dict:
    """The model file's "trees": each node [feature name, threshold, left, right, value, is leaf], children indexed
    within the tree, the root first (`names`: the model's input columns, the learnable features in FEATURES'
    order). Every split must be LightGBM's plain "value <= threshold goes left", without missing-value routing
    (the features are never missing; a split that routes them is refused rather than walked differently).
    `check`: rows the package's walk of the nodes must score as LightGBM does."""
    trees = []
    for info in model.booster_.dump_model()["tree_info"]:
        nodes: list[list] = []
        _flatten(info["tree_structure"], names, nodes)
        trees.append(nodes)
    data = {"share": SHARE, "baseline": 0.0, "learner": "LightGBM LambdaRank",
            "params": {k: v for k, v in PARAMS.items() if k not in ("n_jobs", "verbose")}, "trees": trees}
    if check is not None and len(check):
        walked = trees_from(data, {name: j for j, name in enumerate(names)}).squashed(check)
        expected = 1.0 / (1.0 + np.exp(-np.clip(model.predict(check), -30.0, 30.0)))
        drift = float(np.max(np.abs(walked - expected)))
        if drift > 1e-10:
            raise AssertionError(f"the package's walk scores {drift} away from LightGBM: the conversion is wrong")
    return data


def _flatten(node: dict, names: list[str], out: list[list]) -> int:
    """Appends `node` and its subtree to `out` (preorder); returns its index."""
    k = len(out)
    if "leaf_value" in node:
        out.append([None, 0.0, 0, 0, float(node["leaf_value"]), True])
        return k
    if node.get("decision_type") != "<=" or node.get("missing_type") != "None":
        raise ValueError(f"a split the package cannot walk: {node.get('decision_type')} {node.get('missing_type')}")
    out.append([names[int(node["split_feature"])], float(node["threshold"]), 0, 0, 0.0, False])
    out[k][2] = _flatten(node["left_child"], names, out)
    out[k][3] = _flatten(node["right_child"], names, out)
    return k

