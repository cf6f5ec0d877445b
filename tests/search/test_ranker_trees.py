"""The fitted ranking's trees (memoryx.search.ranker_trees): the package walks the shipped trees, all at once a level
a step, to the leaf a plain walk of each tree's nodes reaches, and mixes their probability into the relevance by
their share; a trees entry naming a feature the code does not compute is refused."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from memoryx.search import ranker
from memoryx.search.ranker import COLUMN, FEATURES, MODEL_FILE, model_from
from memoryx.search.ranker_trees import trees_from
from memoryx.settings import Settings
from tests.search.test_ranker_features import NOW, PLANS, pool

SHIPPED = json.loads(MODEL_FILE.read_text())


def plain_probability(data: dict, row: list[float]) -> float:
    """Each tree walked node by node from its root, the leaves' values summed onto the baseline."""
    raw = data["baseline"]
    for tree in data["trees"]:
        k = 0
        while not tree[k][5]:
            name, threshold, left, right = tree[k][:4]
            k = left if row[FEATURES.index(name)] <= threshold else right
        raw += tree[k][4]
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, raw))))


def test_the_package_ships_trees_and_walks_them_as_a_plain_walk_does():
    assert SHIPPED.get("trees"), "the shipped model has trees"
    model = ranker.fitted_model()
    rng = random.Random(3)
    for n in (1, 2, 17, 100):
        rows = ranker.feature_matrix(pool(rng, n), PLANS[n % len(PLANS)], Settings(), NOW.timestamp())
        got = model.trees.squashed(rows)
        expected = [plain_probability(SHIPPED["trees"], row) for row in rows.tolist()]
        assert got.tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_the_relevance_mixes_the_two_probabilities_each_scaled_to_the_best():
    model = ranker.fitted_model()
    rows = ranker.feature_matrix(pool(random.Random(5), 40), PLANS[0], Settings(), NOW.timestamp())
    p = np.array(model.scores(rows))
    q = model.trees.squashed(rows)
    share = SHIPPED["trees"]["share"]
    assert 0 < share < 1
    expected = (1 - share) * p / p.max() + share * q / q.max()
    assert model.relevance(rows) == pytest.approx(expected.tolist(), rel=1e-12)
    assert max(model.relevance(rows)) <= 1.0 + 1e-12 and model.relevance(np.zeros((0, len(FEATURES)))) == []


def test_without_trees_the_relevance_is_the_linear_probability_scaled_to_the_best():
    linear = model_from({k: v for k, v in SHIPPED.items() if k != "trees"})
    assert linear.trees is None
    rows = ranker.feature_matrix(pool(random.Random(7), 25), PLANS[1], Settings(), NOW.timestamp())
    p = linear.scores(rows)
    assert linear.relevance(rows) == [v / max(p) for v in p]


def test_trees_testing_a_feature_the_code_does_not_compute_are_refused():
    data = json.loads(json.dumps(SHIPPED["trees"]))
    data["trees"][0][0][0] = "a_signal_since_removed"
    with pytest.raises(ValueError, match="a_signal_since_removed"):
        trees_from(data, COLUMN)
    data = json.loads(json.dumps(SHIPPED["trees"]))
    assert trees_from(data, COLUMN).depth == max(_depth(t) for t in data["trees"])


def _depth(tree: list, k: int = 0) -> int:
    return 0 if tree[k][5] else 1 + max(_depth(tree, tree[k][2]), _depth(tree, tree[k][3]))
