"""The fitting script's conversion of LightGBM's trees into the plain nodes the package walks
(bench/recall/fit_trees.py `as_data` -> memoryx.search.ranker_trees): the walk gives LightGBM's own scores, values
lying exactly on a threshold included, a tree that never split too; a split that routes missing values is refused
rather than walked differently."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from memoryx.search.ranker_trees import trees_from

lightgbm = pytest.importorskip("lightgbm")

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "recall" / "fit_trees.py"
NAMES = ["dense", "keyword", "constant", "steps"]


@pytest.fixture(scope="module")
def fit_trees():
    spec = importlib.util.spec_from_file_location("fit_trees", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _questions(rng: np.random.Generator, n: int = 60, k: int = 12) -> tuple[np.ndarray, np.ndarray, list[int]]:
    X = np.column_stack([rng.random(n * k), rng.random(n * k), np.full(n * k, 0.5),
                         rng.integers(0, 4, n * k) / 4.0])  # a constant column and one of four values
    y = ((X[:, 0] + 0.5 * X[:, 3] + 0.2 * rng.random(n * k)) > 1.0).astype(int)
    return X, y, [k] * n


def _ranker(**params) -> "lightgbm.LGBMRanker":
    return lightgbm.LGBMRanker(**{"n_estimators": 20, "num_leaves": 7, "max_depth": 4, "min_child_samples": 5,
                                  "random_state": 0, "deterministic": True, "force_row_wise": True, "n_jobs": 1,
                                  "verbose": -1, **params})


def _walked(data: dict, X: np.ndarray) -> np.ndarray:
    return trees_from(data, {name: j for j, name in enumerate(NAMES)}).squashed(X)


def test_the_plain_nodes_score_as_lightgbm_does_on_and_off_the_thresholds(fit_trees):
    X, y, groups = _questions(np.random.default_rng(0))
    model = _ranker().fit(X, y, group=groups)
    data = fit_trees.as_data(model, NAMES, check=X)
    assert data["trees"] and all(node[0] != "constant" for tree in data["trees"] for node in tree)
    on = X[:40].copy()  # rows moved onto the thresholds the trees test: `<=` goes left, as in LightGBM
    for tree in data["trees"]:
        for k, node in enumerate(tree[:40]):
            if not node[5]:
                on[k % len(on), NAMES.index(node[0])] = node[1]
    for rows in (X, on):
        expected = 1.0 / (1.0 + np.exp(-np.clip(model.predict(rows), -30.0, 30.0)))
        assert _walked(data, rows) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_a_model_that_never_split_is_a_leaf_each_tree(fit_trees):
    X, y, groups = _questions(np.random.default_rng(1))
    model = _ranker(min_child_samples=10_000).fit(X, y, group=groups)  # no leaf can hold that many
    data = fit_trees.as_data(model, NAMES, check=X)
    assert all(len(tree) == 1 and tree[0][5] for tree in data["trees"])
    assert trees_from(data, {name: j for j, name in enumerate(NAMES)}).depth == 0
    expected = 1.0 / (1.0 + np.exp(-model.predict(X)))
    assert _walked(data, X) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_a_split_that_routes_missing_values_is_refused(fit_trees):
    X, y, groups = _questions(np.random.default_rng(2))
    X[::3, 0] = np.nan  # LightGBM then learns where a missing value goes, which the package does not walk
    model = _ranker().fit(X, y, group=groups)
    with pytest.raises(ValueError, match="cannot walk"):
        fit_trees.as_data(model, NAMES)
