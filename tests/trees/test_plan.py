"""The sampling plan's tree tables against the trees themselves: walking a live tree's
compact nodes on the bins of an input reaches the leaf the tree reaches on the input, and
the per-node value of a one-class tree is its leaf's score."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb
from sklearn.ensemble import RandomForestClassifier

from reliquant.trees import kernel
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.engine import root_box
from reliquant.trees.plan import LEAF_CUT, build_plan
from reliquant.trees.readers import extract_ensemble


def _leaf(tree, x: np.ndarray) -> int:
    """The leaf ``tree`` reaches on ``x`` (``x <= boundary`` goes left)."""
    node = 0
    while tree.left[node] >= 0:
        go_left = x[tree.feature[node]] <= tree.boundary[node]
        node = int(tree.left[node] if go_left else tree.right[node])
    return node


def _compact_leaf(plan, root: int, bins: np.ndarray) -> int:
    """The compact node a walk from ``root`` ends on (left child, or right = left + 1 when
    the bin is above the cut; leaves loop to themselves)."""
    node = root
    while plan.nodes[node, 1] != LEAF_CUT:
        feature, cut, left, _ = plan.nodes[node]
        node = int(left + (bins[feature] > cut))
    return node


@pytest.mark.parametrize("kind", ["xgb-binary", "xgb-multi", "forest"])
@pytest.mark.parametrize("region", ["everything", "root box"])
def test_compact_trees_reach_the_trees_leaves(kind, region):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1200, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (kind == "xgb-multi") * (X[:, 3] > 0.8)
    model = {
        "xgb-binary": lambda: xgb.XGBClassifier(n_estimators=15, max_depth=3, random_state=0),
        "xgb-multi": lambda: xgb.XGBClassifier(n_estimators=5, max_depth=3, random_state=0),
        "forest": lambda: RandomForestClassifier(8, max_depth=5, random_state=0),
    }[kind]().fit(X, y)
    ens = extract_ensemble(model)
    x = X[3]
    noise = IndependentNormal(x, np.array([0.6, 0.3, 0.05, 0.4]))
    lo, hi = root_box(ens, noise, 1e-2) if region == "root box" else (None, None)
    plan = build_plan(ens, noise, int(ens.predict_index(x)[0]), lo, hi)
    Z = x + noise.sigma * rng.normal(size=(300, 4))
    if lo is not None:  # inputs inside the region
        Z = np.clip(Z, np.nextafter(lo, np.inf), hi)
    bins = kernel.bins_of(plan, Z).astype(np.int64)
    one_class = ens.aggregation != "mean_proba"
    for k, tree in enumerate(ens.trees):
        pos = plan.live_pos[k]
        for z, b in zip(Z, bins, strict=True):
            want = ens.tree_scores(k)[_leaf(tree, z)].astype(np.float64)
            if pos < 0:  # a fixed tree: one leaf in the region
                np.testing.assert_array_equal(plan.fixed_vals[k], want)
                continue
            node = _compact_leaf(plan, int(plan.tree_root[pos]), b)
            np.testing.assert_array_equal(plan.leaf_vals[plan.node_leaf[node]], want)
            if one_class:
                assert plan.node_val[node] == want[int(ens.tree_class[k])]
    assert np.all(plan.node_val[plan.node_leaf < 0] == 0.0)
