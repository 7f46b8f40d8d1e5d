"""The per-ensemble views (reliquant.trees.ensemble_views) give the numbers of the code they
replaced, bit for bit: the one-row walk on lists against the vectorised walk of many rows,
the gathered scores against the tree-by-tree sum, and the cached views against the arrays."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

from reliquant.trees import ensemble_views as views_module
from reliquant.trees.ensemble_views import GATHER_MAX, ensemble_views, gathered_scores
from reliquant.trees.readers import extract_ensemble

MODELS = {
    "rf": lambda: RandomForestClassifier(20, max_depth=6, random_state=0),
    "xgb-binary": lambda: xgb.XGBClassifier(n_estimators=25, max_depth=4, random_state=0),
    "xgb-multi": lambda: xgb.XGBClassifier(n_estimators=15, max_depth=4, random_state=0),
    "hgb": lambda: HistGradientBoostingClassifier(max_iter=20, random_state=0),
    "gb": lambda: GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0),
    "lgbm": lambda: lgb.LGBMClassifier(n_estimators=20, num_leaves=15, verbose=-1, random_state=0),
}


def _fitted(name: str):
    classes = 2 if name == "xgb-binary" else 3
    X, y = make_classification(
        500, 6, n_informative=4, n_redundant=0, n_classes=classes, random_state=1
    )
    return extract_ensemble(MODELS[name]().fit(X, y)), X


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("name", list(MODELS))
def test_one_row_walk_equals_the_vectorised_walk(name):
    ens, X = _fitted(name)
    rng = np.random.default_rng(0)
    # rows on, just above and just below split thresholds, where a wrong comparison shows
    rows = X[rng.integers(len(X), size=60)].copy()
    thresholds = np.concatenate([t.threshold[t.left >= 0] for t in ens.trees])
    for i, r in enumerate(rows):
        f = i % X.shape[1]
        t = thresholds[rng.integers(len(thresholds))]
        r[f] = [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf), float(np.float32(t))][i % 4]
    many = ens.leaf_indices(rows)  # the array walk of all rows at once
    one = np.vstack([ens.leaf_indices(r) for r in rows])  # the list walk, row by row
    np.testing.assert_array_equal(one, many)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("n", [1, 40])
def test_gathered_scores_equal_the_tree_by_tree_sum_bit_for_bit(name, n):
    ens, X = _fitted(name)
    leaves = ens.leaf_indices(X[:n])
    gathered = gathered_scores(ens, leaves)
    if ens.aggregation == "mean_proba" and n > 1:
        assert gathered is None  # only one row is gathered for a forest
        return
    loop = ens._scores_tree_by_tree(leaves)
    assert gathered.dtype == loop.dtype
    assert _bits(gathered) == _bits(loop)


def test_gathered_scores_keep_a_signed_zero_as_the_loop_does():
    # a forest whose every leaf gives -0.0 for class 0: the loop starts from +0.0
    ens, X = _fitted("rf")
    for k in range(ens.n_trees):
        vals = ens.tree_scores(k)
        vals.setflags(write=True)
        vals[:, 0] = -0.0
    views_module._VIEWS.clear()  # views of the edited values
    leaves = ens.leaf_indices(X[:1])
    gathered = gathered_scores(ens, leaves)
    assert _bits(gathered) == _bits(ens._scores_tree_by_tree(leaves))
    assert not np.signbit(gathered[0, 0])
    views_module._VIEWS.clear()


def test_too_many_leaf_ids_fall_back_to_the_loop(monkeypatch):
    ens, X = _fitted("xgb-multi")
    leaves = ens.leaf_indices(X[:30])
    assert leaves.size <= GATHER_MAX
    gathered = ens.scores_from_leaves(leaves)
    monkeypatch.setattr("reliquant.trees.ensemble_views.GATHER_MAX", leaves.size - 1)
    assert gathered_scores(ens, leaves) is None
    assert _bits(ens.scores_from_leaves(leaves)) == _bits(gathered)


@pytest.mark.parametrize("name", ["rf", "xgb-binary", "lgbm"])
def test_views_hold_the_arrays_values_and_are_read_only(name):
    ens, _ = _fitted(name)
    views = ensemble_views(ens)
    assert ensemble_views(ens) is views  # built once
    total = 0.0
    for k, tree in enumerate(ens.trees):
        feature, boundary, left, right = views.lists[k]
        np.testing.assert_array_equal(np.array(feature), tree.feature)
        np.testing.assert_array_equal(np.array(boundary), tree.boundary)
        np.testing.assert_array_equal(np.array(left), tree.left)
        np.testing.assert_array_equal(np.array(right), tree.right)
        np.testing.assert_array_equal(views.scores64[k], ens.tree_scores(k).astype(np.float64))
        assert not views.scores64[k].flags.writeable
        m = float(np.abs(ens.tree_scores(k)[tree.left < 0]).max())
        assert views.leaf_max_abs[k] == m
        total += m
    assert views.max_abs_sum == total
