"""Gradient-boosted trees over the fitted ranking's features: the linear model's blend partner.

The linear model weighs each signal alone; trees read them together (a keyword hit counts less when the dense path
disagrees, a cross-lingual rank only when the same-script paths found little). They are fitted as a ranking
(LambdaRank), so their sum orders a question's candidates; a sigmoid squashes it to 0..1. The fitted ranking mixes
the two: relevance = (1 - share) x the linear probability + share x the trees' squashed score, each scaled so the
best candidate is 1 (memoryx.search.ranker.FittedModel.relevance). The trees are data in the same model file
(`ranker_model.json`, "trees"), written by `bench/recall/fit_ranker.py` (`fit_trees.py`); this module only walks
them.

All trees are walked at once, one level per step over a (candidates x trees) array of node indices: a leaf points
at itself with an infinite threshold, so every walk takes the trees' depth in steps and needs no test for leaves
(100 candidates, 200 trees of depth 6: ~0.7 ms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Trees:
    share: float  # the trees' part of the relevance
    baseline: float  # the score before any tree
    depth: int  # the deepest tree's depth: the steps of a walk
    feature: np.ndarray  # per node (all trees, flat): the feature column it tests
    threshold: np.ndarray  # ... goes left when the value is <= this (+inf at a leaf)
    left: np.ndarray  # ... flat index of the left child (a leaf: itself)
    right: np.ndarray
    value: np.ndarray  # ... a leaf's contribution to the score (0 elsewhere)
    roots: np.ndarray  # each tree's root, flat

    def squashed(self, x: np.ndarray) -> np.ndarray:
        """Each row's score by the trees, squashed to 0..1 by a sigmoid (x: candidates x FEATURES)."""
        n = len(x)
        if not n:
            return np.zeros(0)
        node = np.broadcast_to(self.roots, (n, len(self.roots))).copy()
        flat = np.ascontiguousarray(x, dtype=float).ravel()
        row = (np.arange(n) * x.shape[1])[:, None]
        for _ in range(self.depth):
            node = np.where(flat[row + self.feature[node]] <= self.threshold[node], self.left[node], self.right[node])
        raw = self.baseline + self.value[node].sum(axis=1)
        return 1.0 / (1.0 + np.exp(-np.clip(raw, -30.0, 30.0)))


def trees_from(data: dict, columns: dict[str, int]) -> Trees:
    """The file's "trees": {"share", "baseline", "trees": [[node, ...], ...]}, a node [feature name, threshold, left,
    right, value, is leaf] with children indexed within its tree; `columns`: each feature's column. A feature the
    code does not compute is an error (the file and the code disagree)."""
    trees = data.get("trees") or []
    share = float(data.get("share", 0.0))
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"ranker trees' share must be within 0..1, not {share}; refit them with "
                         "bench/recall/fit_ranker.py")
    unknown = sorted({n[0] for t in trees for n in t if not n[5]} - set(columns))
    if unknown:
        raise ValueError(f"ranker trees test features this code does not compute: {unknown}; refit them with "
                         "bench/recall/fit_ranker.py")
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    depth = 0
    for t in trees:
        base = len(feature)
        roots.append(base)
        for k, (name, thr, lo, hi, val, leaf) in enumerate(t):
            feature.append(0 if leaf else columns[name])
            threshold.append(np.inf if leaf else float(thr))
            left.append(base + k if leaf else base + int(lo))
            right.append(base + k if leaf else base + int(hi))
            value.append(float(val) if leaf else 0.0)
        depth = max(depth, _depth(t))
    return Trees(share=share, baseline=float(data.get("baseline", 0.0)), depth=depth,
                 feature=np.array(feature, dtype=np.intp), threshold=np.array(threshold),
                 left=np.array(left, dtype=np.intp), right=np.array(right, dtype=np.intp), value=np.array(value),
                 roots=np.array(roots, dtype=np.intp))


def _depth(tree: list) -> int:
    """The number of splits on the longest path from the root (node 0) to a leaf."""
    deepest, stack = 0, [(0, 0)]
    while stack:
        k, d = stack.pop()
        if tree[k][5]:
            deepest = max(deepest, d)
        else:
            stack += [(int(tree[k][2]), d + 1), (int(tree[k][3]), d + 1)]
    return deepest
