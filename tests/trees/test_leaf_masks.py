"""The plan's leaf masks (QuickScorer) against the compact trees' walks: decoded in numpy, the
AND of a draw's mask rows keeps one bit per live tree, the leaf the walk reaches; the
kernel's scores from the masks equal, bit for bit, the scores of the walks (the same plan
without masks) for random ensembles of depth 1-3 and many draws; labels equal the models'
own predict. Also: where masks do not apply they are empty (same numba type), the
per-region tree tables are cached as fresh copies, and ``compile_for``'s type key tells
plans apart exactly as numba's type does."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from numba import typeof
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from reliquant.trees import kernel
from reliquant.trees.anytime import warm_up
from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal
from reliquant.trees.kernel import agreement, compiled
from reliquant.trees.plan import LEAF_CUT, MASK_LEAVES, MASK_MIN_TREES, build_plan
from reliquant.trees.readers import extract_ensemble


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel():
    warm_up()


@pytest.fixture(scope="module")
def data():
    return make_classification(600, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=3)


def _binary(y):
    return (y == 1).astype(int)


# (model, binary target?) of depth 1-3 (LightGBM: at most 8 leaves, any depth)
MODELS = {
    "xgb-d1": (lambda: xgb.XGBClassifier(n_estimators=9, max_depth=1, random_state=0), True),
    "xgb-d2": (lambda: xgb.XGBClassifier(n_estimators=30, max_depth=2, random_state=0), True),
    "xgb-d3": (lambda: xgb.XGBClassifier(n_estimators=100, max_depth=3, random_state=0), True),
    "xgb-multi": (lambda: xgb.XGBClassifier(n_estimators=12, max_depth=3, random_state=0), False),
    "gbc-binary": (
        lambda: GradientBoostingClassifier(n_estimators=40, max_depth=3, random_state=0),
        True,
    ),
    "gbc-multi": (
        lambda: GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0),
        False,
    ),
    "lgbm-8-leaves": (
        lambda: lgb.LGBMClassifier(
            n_estimators=70, num_leaves=8, min_child_samples=5, random_state=0, verbose=-1
        ),
        True,
    ),
}


def _fit(name, data):
    X, y = data
    make, binary = MODELS[name]
    model = make().fit(X, _binary(y) if binary else y)
    return model, extract_ensemble(model)


def _region(ens, X, kind):
    """The whole space, or a box around a training point (some trees fixed or pruned)."""
    if kind == "everything":
        return None, None
    lo, hi = X[7] - 0.6, X[7] + 0.6
    return lo, hi


def _without_masks(plan):
    empty = np.zeros((0, 0), dtype=np.uint64)
    return plan._replace(qmask=empty, qmask_t=empty.copy(), qval=np.zeros((0, MASK_LEAVES)))


def _random_bins(plan, n, rng):
    """``(A, n)`` bins, each feature's uniform over its ``m_a + 1`` bins (int16)."""
    m = np.diff(plan.off)
    return (rng.integers(0, m + 1, size=(n, len(m))).T).astype(np.int16).copy()


def _walk(plan, root, bins):
    node = root
    while plan.nodes[node, 1] != LEAF_CUT:
        feature, cut, left, _ = plan.nodes[node]
        node = int(left + (bins[feature] > cut))
    return node


def _kernel_scores(plan, bins):
    """``(scores (K, n), labels (n,))`` of the kernel's ``_labels`` on feature-major bins."""
    n = bins.shape[1]
    width = 1 << (n - 1).bit_length()
    block = np.zeros((bins.shape[0], width), dtype=np.int16)
    block[:, :n] = bins
    scores = np.zeros((len(plan.const_scores), width))
    out = np.zeros(width, dtype=np.int64)
    compiled._labels(plan, block, n, scores, out)
    return scores[:, :n], out[:n]


def _plan(name, region, data):
    """``(plan, ens, lo, hi)``: the plan of model ``name`` around training row 7 under unit
    noise over ``region``, with the ensemble and the region."""
    X, _ = data
    _, ens = _fit(name, data)
    lo, hi = _region(ens, X, region)
    return build_plan(ens, IndependentNormal(X[7], 1.0), 0, lo, hi), ens, lo, hi


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("region", ["everything", "box"])
@pytest.mark.slow
def test_masks_keep_exactly_the_leaf_each_walk_reaches(name, region, data):
    plan = _plan(name, region, data)[0]
    T = plan.n_live
    if T < MASK_MIN_TREES:
        assert plan.qmask.shape == (0, 0)
        pytest.skip(f"{T} live trees in this region: no masks")
    G = -(-T // 8)
    assert plan.qmask.shape == (plan.off[-1] + plan.n_in_play, G)
    np.testing.assert_array_equal(plan.qmask_t, plan.qmask.T)
    rng = np.random.default_rng(5)
    bins = _random_bins(plan, 300, rng)
    rows = plan.off[:-1] + np.arange(plan.n_in_play)
    for i in range(bins.shape[1]):
        words = np.bitwise_and.reduce(plan.qmask[rows + bins[:, i]], axis=0)
        for t in range(T):
            byte = int(words[t // 8]) >> (8 * (t % 8)) & 0xFF
            assert bin(byte).count("1") == 1  # one leaf left
            leaf = _walk(plan, plan.tree_root[t], bins[:, i])
            assert plan.qval[t, byte.bit_length() - 1] == plan.node_val[leaf]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("region", ["everything", "box"])
@pytest.mark.slow
def test_scores_from_masks_equal_the_walks_bit_for_bit(name, region, data):
    X, _ = data
    plan, ens, lo, hi = _plan(name, region, data)
    if plan.qmask.shape[0] == 0:
        pytest.skip("no masks in this region")
    walked = _without_masks(plan)
    rng = np.random.default_rng(11)
    for n in (1, 7, 8, 255, 256, 5000):  # walks' remainders, one block, many blocks' width
        bins = _random_bins(plan, n, rng)
        s_mask, y_mask = _kernel_scores(plan, bins)
        s_walk, y_walk = _kernel_scores(walked, bins)
        np.testing.assert_array_equal(s_mask.view(np.int64), s_walk.view(np.int64))
        np.testing.assert_array_equal(y_mask, y_walk)
    # whole chunks of draws: the same agreement counts
    seeds = kernel.chunk_seeds(3, 0, 3)
    np.testing.assert_array_equal(
        kernel.count_agree(plan, seeds, 20_000, 50_000),
        kernel.count_agree(walked, seeds, 20_000, 50_000),
    )
    corr = np.full((X.shape[1], X.shape[1]), 0.3) + 0.7 * np.eye(X.shape[1])
    cplan = build_plan(ens, CorrelatedNormal(X[7], corr), 1, lo, hi)
    np.testing.assert_array_equal(
        kernel.count_agree(cplan, seeds, 20_000, 50_000),
        kernel.count_agree(_without_masks(cplan), seeds, 20_000, 50_000),
    )
    with kernel.shared_normal_scores():
        np.testing.assert_array_equal(
            kernel.count_agree(cplan, seeds, 20_000, 50_000),
            kernel.count_agree(_without_masks(cplan), seeds, 20_000, 50_000),
        )


@pytest.mark.parametrize("name", MODELS)
def test_masked_labels_equal_predict(name, data):
    X, _ = data
    model, ens = _fit(name, data)
    plan = build_plan(ens, IndependentNormal(X[0], 1.0), 0)
    assert plan.qmask.shape[0] > 0
    rng = np.random.default_rng(2)
    Z = X[rng.integers(len(X), size=4000)] + rng.normal(size=(4000, X.shape[1]))
    for f, cuts in enumerate(ens.thresholds()):  # on, just above and below every cut
        for c in cuts[:: max(1, len(cuts) // 25)]:
            for v in (c, np.nextafter(c, np.inf), np.nextafter(c, -np.inf)):
                row = X[rng.integers(len(X))].copy()
                row[f] = v
                Z = np.vstack([Z, row])
    labels = kernel.labels_of_bins(plan, kernel.bins_of(plan, Z))
    np.testing.assert_array_equal(ens.classes[labels], model.predict(Z))


def test_masks_are_empty_where_they_do_not_apply(data):
    X, y = data
    noise = IndependentNormal(X[0], 1.0)
    forest = extract_ensemble(RandomForestClassifier(20, max_depth=3, random_state=0).fit(X, y))
    deep = extract_ensemble(xgb.XGBClassifier(n_estimators=20, max_depth=4).fit(X, _binary(y)))
    few = extract_ensemble(xgb.XGBClassifier(n_estimators=7, max_depth=3).fit(X, _binary(y)))
    on = build_plan(_fit("xgb-d2", data)[1], noise, 0)
    assert on.qmask.shape[0] > 0
    for ens in (forest, deep, few):  # mean of probabilities; > 8 leaves; < 8 trees
        plan = build_plan(ens, noise, 0)
        assert plan.qmask.shape == plan.qmask_t.shape == (0, 0)
        assert plan.qval.shape == (0, MASK_LEAVES)
        assert typeof(plan) == typeof(on)  # one numba type: no second compilation


def test_tree_tables_are_cached_as_fresh_copies(data):
    X, _ = data
    _, ens = _fit("xgb-d3", data)
    noise = IndependentNormal(X[0], 1.0)
    a = build_plan(ens, noise, 0)
    b = build_plan(ens, noise, 1)
    for field in ("packed", "qmask", "qval", "node_val", "xcut", "off"):
        x, y = getattr(a, field), getattr(b, field)
        np.testing.assert_array_equal(x, y)
        assert not np.shares_memory(x, y)
    a.qmask[:] = 0  # writing one plan's table leaves later plans alone
    a.node_val[:] = np.nan
    c = build_plan(ens, noise, 0)
    np.testing.assert_array_equal(c.qmask, b.qmask)
    np.testing.assert_array_equal(c.node_val, b.node_val)
    lo, hi = X[7] - 0.6, X[7] + 0.6  # another region: its own tables
    boxed = build_plan(ens, IndependentNormal(X[7], 1.0), 0, lo, hi)
    assert boxed.n_live < b.n_live


def test_compile_for_type_key_separates_plans_as_numba_does(data):
    X, _ = data
    _, small = _fit("xgb-d1", data)
    _, big = _fit("xgb-d3", data)
    corr = np.full((X.shape[1], X.shape[1]), 0.2) + 0.8 * np.eye(X.shape[1])
    plans = [
        build_plan(small, IndependentNormal(X[0], 1.0), 0),
        build_plan(big, CorrelatedNormal(X[0], corr), 1),
        _without_masks(build_plan(big, IndependentNormal(X[0], 1.0), 0)),
    ]
    readonly = plans[0].packed.copy()
    readonly.flags.writeable = False
    plans.append(plans[0]._replace(packed=readonly))  # another numba type
    plans.append(plans[0]._replace(packed=np.asfortranarray(plans[0].nodes)[:, 0]))
    plans.append(plans[0]._replace(y=np.int32(0)))
    for p in plans:
        for q in plans:
            assert (agreement._type_key(p) == agreement._type_key(q)) == (typeof(p) == typeof(q))
