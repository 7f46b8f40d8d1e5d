"""Plans with one live tree: the kernel labels a draw by its leaf (each leaf's label computed
once per kernel call, then looked up), against the general path that sums the scores draw
by draw and against the models' own ``predict``."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb
from lightgbm import LGBMClassifier
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees import kernel
from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal
from reliquant.trees.kernel import compiled
from reliquant.trees.plan import build_plan
from reliquant.trees.readers import extract_ensemble


@pytest.fixture(scope="module")
def datasets():
    """``{K: (X, y)}``: 6 features, float32 values (as the trees' thresholds)."""
    out = {}
    for K in (2, 3):
        X, y = make_classification(
            600, 6, n_informative=5, n_redundant=0, n_classes=K, n_clusters_per_class=1,
            random_state=K,
        )  # fmt: skip
        out[K] = (X.astype(np.float32).astype(np.float64), y)
    return out


def _summed(plan):
    """``plan`` with a second live tree of depth 0 (it adds nothing and is never read by the
    exact fallback, its tree having no ``live_pos``): the same labels by the general path,
    which sums every draw's scores, in a plan of the same numba type."""
    return plan._replace(
        tree_root=np.r_[plan.tree_root, plan.tree_root[:1]],
        tree_depth=np.r_[plan.tree_depth, 0],
        live_class=np.r_[plan.live_class, plan.live_class[:1]],
    )


def _plans(ens, X, region):
    """Plans of ``ens`` around rows 0-1 of ``X`` over ``region``: independent noise of two
    scales and correlated noise, each also with ``eps = inf`` (every leaf's label from the
    exact fallback)."""
    d = X.shape[1]
    plans = []
    for j in range(2):
        x = X[j]
        lo, hi = (x - 0.8, x + 0.8) if region == "box" else (None, None)
        y = int(ens.predict_index(x[None])[0])
        corr = np.full((d, d), 0.3) + 0.7 * np.eye(d)
        for noise in (IndependentNormal(x, 1.0), IndependentNormal(x, 0.1),
                      CorrelatedNormal(x, corr)):  # fmt: skip
            plan = build_plan(ens, noise, y, lo, hi)
            plans += [plan, plan._replace(eps=np.inf)]
    return plans


def _check_against_summed(plan, seed: int) -> None:
    """count_agree (chunks of several blocks, one ending mid-block), sample_bins and
    labels_of_bins equal the general path's."""
    summed = _summed(plan)
    seeds = kernel.chunk_seeds(seed, 0, 3)
    np.testing.assert_array_equal(
        kernel.count_agree(plan, seeds, 3000, 8003), kernel.count_agree(summed, seeds, 3000, 8003)
    )
    bins, labels = kernel.sample_bins(plan, seed, 1001)
    bins_s, labels_s = kernel.sample_bins(summed, seed, 1001)
    np.testing.assert_array_equal(bins, bins_s)
    np.testing.assert_array_equal(labels, labels_s)
    np.testing.assert_array_equal(kernel.labels_of_bins(plan, bins), labels)
    np.testing.assert_array_equal(kernel.labels_of_bins(summed, bins), labels)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("region", ["everything", "box"])
def test_decision_trees_of_every_depth_label_as_the_summed_path(K, region, datasets):
    X, y = datasets[K]
    for depth in range(1, 9):
        ens = extract_ensemble(
            DecisionTreeClassifier(max_depth=depth, random_state=depth).fit(X, y)
        )
        for plan in _plans(ens, X, region):
            assert plan.n_live <= 1
            _check_against_summed(plan, depth)


ONE_TREE = {
    "rf": lambda: RandomForestClassifier(1, max_depth=6, random_state=0),
    "xgb": lambda: xgb.XGBClassifier(n_estimators=1, max_depth=5, n_jobs=1, random_state=0),
    "lgbm": lambda: LGBMClassifier(n_estimators=1, num_leaves=20, verbose=-1, random_state=0),
    "gb": lambda: GradientBoostingClassifier(n_estimators=1, max_depth=4, random_state=0),
}


@pytest.mark.parametrize("name", ONE_TREE)
def test_one_tree_models_of_every_library_label_as_summed_and_predict(name, datasets):
    X, y = datasets[2]
    model = ONE_TREE[name]().fit(X, y)
    ens = extract_ensemble(model)
    for plan in _plans(ens, X, "everything"):
        assert plan.n_live == 1
        _check_against_summed(plan, 5)
    # representative points: random inputs, the threshold values themselves and their
    # neighbours (float32 thresholds); the label of their bins is the library's predict
    rng = np.random.default_rng(0)
    tree = ens.trees[0]
    rows = [X + rng.normal(size=X.shape)]
    for f, b in zip(tree.feature[tree.left >= 0], tree.boundary[tree.left >= 0], strict=True):
        for v in (np.nextafter(b, -np.inf), b, np.nextafter(b, np.inf)):
            z = X[:1].copy()
            z[0, f] = v
            rows.append(z)
    Z = np.vstack(rows)
    theirs = model.predict(Z)
    for eps in (None, np.inf):
        plan = build_plan(ens, IndependentNormal(X[0], 1.0), 0)
        plan = plan if eps is None else plan._replace(eps=eps)
        assert plan.n_live == 1
        np.testing.assert_array_equal(
            ens.classes[kernel.labels_of_bins(plan, kernel.bins_of(plan, Z))], theirs
        )


def test_summed_path_still_fills_the_scores(datasets):
    """``_labels`` (the general path, for tests reading the scores) fills them for a one-tree
    plan: the fixed trees' sum plus the leaf's scores, and labels as the kernel does."""
    X, y = datasets[3]
    ens = extract_ensemble(DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y))
    plan = build_plan(ens, IndependentNormal(X[0], 1.0), 0)
    bins, labels = kernel.sample_bins(plan, 1, 256)
    block = np.ascontiguousarray(bins.T, dtype=np.int16)
    scores = np.zeros((len(plan.const_scores), 256))
    out = np.zeros(256, dtype=np.int64)
    compiled._labels(plan, block, 256, scores, out)
    np.testing.assert_array_equal(out, labels)
    Xr = np.array([X[0]] * 256)  # inputs in each draw's bins: the cut just below is exceeded
    for a, f in enumerate(plan.features):
        cuts = plan.xcut[plan.off[a] : plan.off[a + 1]]
        lower = np.r_[-np.inf, cuts][bins[:, a]]
        upper = np.r_[cuts, np.inf][bins[:, a]]
        Xr[:, f] = np.where(np.isfinite(upper), upper, np.nextafter(lower, np.inf))
    leaves = ens.leaf_indices(Xr)[:, 0]
    expected = plan.const_scores[:, None] + ens.tree_scores(0).astype(np.float64)[leaves].T
    np.testing.assert_array_equal(scores, expected)
