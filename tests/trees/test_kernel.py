"""The compiled sampler/evaluator against the models' own predict (issue 16).

Statistical checks compare two independent estimates of the same probability and fail when
they differ by more than 4.5 standard deviations of the difference: each such check fails
by chance with probability below 1e-5 (normal approximation with 10^5 draws a side).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import make_classification
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees import kernel
from reliquant.trees.anytime import warm_up
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.engine import root_box
from reliquant.trees.monte_carlo import compiled_monte_carlo, monte_carlo_robustness
from reliquant.trees.noise import Gaussian, Norta
from reliquant.trees.norta import ExponentialMarginal, NormalMarginal
from reliquant.trees.plan import build_plan
from reliquant.trees.readers import extract_ensemble

CORR = np.array(
    [[1.0, 0.5, 0.2, 0.0], [0.5, 1.0, 0.3, 0.0], [0.2, 0.3, 1.0, -0.2], [0.0, 0.0, -0.2, 1.0]]
)


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel():
    """Compile the numba kernel first: timed tests must not spend their budget on it."""
    warm_up()


@pytest.fixture(scope="module")
def data():
    return make_classification(800, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=1)


MODELS = {
    "dt": lambda: DecisionTreeClassifier(max_depth=6, random_state=0),
    "rf": lambda: RandomForestClassifier(12, max_depth=5, random_state=0),
    "et": lambda: ExtraTreesClassifier(12, max_depth=5, random_state=0),
    "xgb-multi": lambda: xgb.XGBClassifier(n_estimators=8, max_depth=3, random_state=0),
}


def _noises():
    marg = [lambda v: NormalMarginal(v, 0.7), lambda v: ExponentialMarginal(v, 0.5)] * 2
    return {
        "diagonal": Gaussian(np.array([0.5, 0.3, 0.0, 0.8])),
        "correlated": Gaussian(CORR * 0.4),
        "norta": Norta(marg, CORR),
    }


@pytest.mark.parametrize("name", MODELS)
def test_evaluator_equals_predict_including_thresholds(name, data):
    X, y = data
    model = MODELS[name]().fit(X, y)
    ens = extract_ensemble(model)
    plan = build_plan(ens, IndependentNormal(X[0], 1.0), 0)
    rng = np.random.default_rng(0)
    Z = X[rng.integers(len(X), size=3000)] + rng.normal(size=(3000, 4))
    for f, cuts in enumerate(ens.thresholds()):  # inputs on, just above and below every cut
        for c in cuts:
            for v in (c, np.nextafter(c, np.inf), np.nextafter(c, -np.inf), float(np.float32(c))):
                row = X[rng.integers(len(X))].copy()
                row[f] = v
                Z = np.vstack([Z, row])
    labels = kernel.labels_of_bins(plan, kernel.bins_of(plan, Z))
    np.testing.assert_array_equal(ens.classes[labels], model.predict(Z))


@pytest.mark.parametrize("noise_name", ["diagonal", "correlated", "norta"])
def test_sampler_matches_predict_monte_carlo(noise_name, data):
    X, y = data
    model = RandomForestClassifier(10, max_depth=4, random_state=0).fit(X, y)
    ens = extract_ensemble(model)
    for x in X[:3]:
        noise = _noises()[noise_name].bind(x, 4)
        ours = compiled_monte_carlo(ens, noise, x, 100_000, 7)
        ref = monte_carlo_robustness(model.predict, noise, x, 100_000, np.random.default_rng(3))
        p = (ours.estimate + ref.estimate) / 2
        sd = np.sqrt(2 * p * (1 - p) / 100_000) + 1e-12
        assert abs(ours.estimate - ref.estimate) <= 4.5 * sd, (ours, ref)


def test_stratified_bins_follow_truncated_marginals():
    """Draws inside two boxes: bins stay in the boxes and follow the exact bin masses."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 2))
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, X[:, 0] + X[:, 1] > 0)
    ens = extract_ensemble(model)
    x = np.array([0.1, -0.2])
    noise = IndependentNormal(x, 0.8)
    t0, t1 = ens.thresholds()
    lo = np.array([[-np.inf, -np.inf], [t0[1], t1[0]]])
    hi = np.array([[t0[1], np.inf], [np.inf, np.inf]])
    mass = noise.box_mass(lo, hi)
    plan = build_plan(ens, noise, 0, strata=(lo, hi, mass, np.array([0, 1])))
    bins, _ = kernel.sample_bins(plan, 5, 60_000)  # every in-play feature drawn
    a0 = int(np.nonzero(plan.features == 0)[0][0])
    c0 = plan.xcut[plan.off[a0] : plan.off[a0 + 1]]
    b = bins[:, a0]
    b = b[b >= 0]
    edges = np.r_[-np.inf, c0, np.inf]
    # exact law of feature 0's bin under the mixture of the two truncated boxes
    exact = np.zeros(len(edges) - 1)
    for k in range(2):
        box_lo = np.r_[lo[k, 0]]
        box_hi = np.r_[hi[k, 0]]
        e_lo = np.maximum(edges[:-1], box_lo)
        e_hi = np.minimum(edges[1:], box_hi)
        m = noise.interval_mass(np.array([0]), e_lo[:, None], np.maximum(e_lo, e_hi)[:, None])[:, 0]
        exact += mass[k] / mass.sum() * m / m.sum()
    freq = np.bincount(b, minlength=len(exact)) / len(b)
    sd = np.sqrt(exact * (1 - exact) / len(b)) + 1e-12
    assert np.all(np.abs(freq - exact) <= 5 * sd + 1e-9)


def test_seeded_chunks_are_reproducible_and_independent_of_grouping(data):
    X, y = data
    ens = extract_ensemble(RandomForestClassifier(6, max_depth=4, random_state=0).fit(X, y))
    plan = build_plan(ens, IndependentNormal(X[5], 0.6), int(ens.predict_index(X[5])[0]))
    a = kernel.count_agree(plan, kernel.chunk_seeds(11, 0, 6), 1000, 6000)
    b1 = kernel.count_agree(plan, kernel.chunk_seeds(11, 0, 2), 1000, 2000)
    b2 = kernel.count_agree(plan, kernel.chunk_seeds(11, 2, 4), 1000, 4000)
    np.testing.assert_array_equal(a, np.r_[b1, b2])
    assert not np.array_equal(a, kernel.count_agree(plan, kernel.chunk_seeds(12, 0, 6), 1000, 6000))


def _edited_binary(leaf_left: float, leaf_right: float) -> xgb.XGBClassifier:
    """A one-stump binary XGBoost model (base_score 0.5, margin 0) with edited leaf values."""
    X = np.array([[0.0], [1.0]] * 20)
    clf = xgb.XGBClassifier(n_estimators=1, max_depth=1, base_score=0.5).fit(X, [0, 1] * 20)
    doc = json.loads(clf.get_booster().save_raw(raw_format="json"))
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][0]
    left = np.asarray(tree["left_children"])
    leaves = np.nonzero(left < 0)[0]
    tree["split_conditions"][int(leaves[0])] = leaf_left
    tree["split_conditions"][int(leaves[1])] = leaf_right
    tree["base_weights"][int(leaves[0])] = leaf_left
    tree["base_weights"][int(leaves[1])] = leaf_right
    out = xgb.XGBClassifier()
    out.load_model(bytearray(json.dumps(doc).encode()))
    return out


def test_xgboost_binary_near_tie_follows_float32_sigmoid():
    """Margins of 6e-8 and 1e-7 are positive yet XGBoost says 0 (float32 sigmoid is 0.5)."""
    Z = np.array([[0.0], [1.0]])
    for left, right in [(6e-8, -1.0), (1e-7, 2e-7), (1.3e-7, 1e-3)]:
        model = _edited_binary(left, right)
        ens = extract_ensemble(model)
        theirs = model.predict(Z)
        np.testing.assert_array_equal(ens.predict(Z), theirs)
        plan = build_plan(ens, IndependentNormal(np.zeros(1), 1.0), 0)
        labels = kernel.labels_of_bins(plan, kernel.bins_of(plan, Z))
        np.testing.assert_array_equal(ens.classes[labels], theirs)
    assert _edited_binary(6e-8, -1.0).predict(Z)[0] == 0  # the raw margin would say 1


def test_xgboost_multiclass_near_tie_follows_float32_softmax():
    """Edited leaves that make two class margins differ by a few 1e-8: the label is the
    first argmax of XGBoost's float32 softmax, which the raw-margin argmax gets wrong."""
    X = np.array([[0.0], [1.0], [2.0]] * 20)
    clf = xgb.XGBClassifier(n_estimators=1, max_depth=1, base_score=0.0).fit(X, [0, 1, 2] * 20)
    doc = json.loads(clf.get_booster().save_raw(raw_format="json"))
    trees = doc["learner"]["gradient_booster"]["model"]["trees"]
    Z = np.array([[-5.0], [5.0]])
    disagreements = 0
    for delta in (1e-8, 2e-8, 3e-8, 4e-8, 6e-8, 1e-7):
        for k, tree in enumerate(trees):
            leaves = np.nonzero(np.asarray(tree["left_children"]) < 0)[0]
            v = 0.25 + (delta if k == 1 else 0.0)
            for leaf in leaves:
                tree["split_conditions"][int(leaf)] = v
                tree["base_weights"][int(leaf)] = v
        model = xgb.XGBClassifier()
        model.load_model(bytearray(json.dumps(doc).encode()))
        ens = extract_ensemble(model)
        theirs = model.predict(Z)
        np.testing.assert_array_equal(ens.predict(Z), theirs)
        plan = build_plan(ens, IndependentNormal(np.zeros(1), 1.0), 0)
        labels = kernel.labels_of_bins(plan, kernel.bins_of(plan, Z))
        np.testing.assert_array_equal(ens.classes[labels], theirs)
        disagreements += int(np.any(np.argmax(ens.scores(Z), axis=1) != theirs))
    assert disagreements > 0


def test_sampled_bins_follow_exact_bin_masses_and_predict_agrees():
    """Plain draws (guide tables, integer thresholds): every feature's bin frequencies match
    the exact bin masses (5 standard deviations per bin: a false failure below 1e-5 over
    all bins), and inputs rebuilt inside the drawn bins get the kernel's label from the
    model's own predict (exact, no false failure)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 3))
    y = (X[:, 0] + np.sin(3 * X[:, 1]) - X[:, 2] > 0).astype(int) + (X[:, 2] > 1)
    model = RandomForestClassifier(15, max_depth=6, random_state=0).fit(X, y)
    ens = extract_ensemble(model)
    x = np.array([0.2, -0.4, 0.9])
    noise = IndependentNormal(x, np.array([0.9, 0.05, 0.6]))
    plan = build_plan(ens, noise, int(ens.predict_index(x)[0]))
    bins, labels = kernel.sample_bins(plan, 9, 200_000)
    for a in range(plan.n_in_play):
        f = int(plan.features[a])
        c = plan.xcut[plan.off[a] : plan.off[a + 1]]
        edges = np.r_[-np.inf, c, np.inf]
        exact = noise.interval_mass(np.array([f]), edges[:-1, None], edges[1:, None])[:, 0]
        freq = np.bincount(bins[:, a], minlength=len(exact)) / len(bins)
        sd = np.sqrt(exact * (1 - exact) / len(bins)) + 1e-12
        assert np.all(np.abs(freq - exact) <= 5 * sd + 1e-9), (f, freq, exact)
    Z = np.tile(x, (20_000, 1))
    for a in range(plan.n_in_play):
        c = plan.xcut[plan.off[a] : plan.off[a + 1]]
        right = np.r_[c, c[-1] + 1.0]  # bin j is (c_{j-1}, c_j]: its upper edge lies in it
        Z[:, plan.features[a]] = right[bins[:20_000, a]]
    np.testing.assert_array_equal(ens.classes[labels[:20_000]], model.predict(Z))


def _splitmix(state: np.ndarray) -> np.ndarray:
    """SplitMix64's output mix (Steele, Lea & Flood 2014), written again in numpy."""
    with np.errstate(over="ignore"):
        z = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def test_both_bin_paths_equal_a_numpy_count_of_thresholds_below_the_draw():
    """Features with few thresholds count them, features with many use the guide table:
    both give #{j: t_j < r} for the stream's r, recomputed here in numpy from the seed."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(4000, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    model = RandomForestClassifier(40, max_depth=9, random_state=0).fit(X, y)
    ens = extract_ensemble(model)
    x = np.array([0.1, 0.3, -0.2])
    noise = IndependentNormal(x, np.array([1.5, 0.002, 0.4]))  # many / few cuts in play
    lo, hi = root_box(ens, noise, 1e-9)  # the region of the anytime method's plain draws
    plan = build_plan(ens, noise, int(ens.predict_index(x)[0]), lo, hi)
    n_cuts = np.diff(plan.off)
    assert n_cuts.min() <= kernel.LINEAR_MAX < n_cuts.max()  # both paths are exercised
    n = kernel.BLOCK
    bins, _ = kernel.sample_bins(plan, 3, n)
    start = kernel.chunk_seeds(3, 0, 1)[0]
    golden = np.uint64(0x9E3779B97F4A7C15)
    for a in range(plan.n_in_play):
        k = np.arange(a * n + 1, (a + 1) * n + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            r = (_splitmix(start + k * golden) >> np.uint64(11)).astype(np.int64)
        t = plan.thr[plan.off[a] + a : plan.off[a + 1] + a]
        np.testing.assert_array_equal(bins[:, a], np.searchsorted(t, r, side="left"))


def _correlated_plan(n_features: int, n_trees: int, seed: int, scale: float = 1.0):
    """The plan of an XGBoost model under NORTA noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1500, n_features))
    X[:, -1] = np.round(X[:, -1])  # a few values: a feature with few cuts
    y = (X.sum(axis=1) + np.sin(2 * X[:, 0]) > 0).astype(int)
    model = xgb.XGBClassifier(n_estimators=n_trees, max_depth=4, random_state=0).fit(X, y)
    ens = extract_ensemble(model)
    a = rng.uniform(-0.5, 0.5, size=(n_features, n_features))
    cov = a @ a.T + np.eye(n_features)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    marg = [
        (lambda v: NormalMarginal(v, 0.7 * scale))
        if i % 2
        else (lambda v: ExponentialMarginal(v, 0.5 * scale))
        for i in range(n_features)
    ]
    x = X[0]
    return build_plan(ens, Norta(marg, corr).bind(x, n_features), int(ens.predict_index(x)[0]))


@pytest.mark.parametrize("n_features", [3, 4])
def test_correlated_bins_equal_the_stream_recomputed_draw_by_draw(n_features):
    """NORTA bins: for each draw, Box-Muller normals from the stream's uniforms (a pair per
    two features, the last pair's second normal unused for an odd count), scores L e summed
    in order, and the number of each feature's normal-score cuts below its score, written
    again here in plain Python from the seed. Many cuts (binary search) and few (counted)."""
    plan = _correlated_plan(n_features, 200, 4)
    n_cuts = np.diff(plan.off)
    assert n_cuts.min() <= kernel.ZLINEAR_MAX < n_cuts.max()  # both paths are exercised
    n = 700  # more than one block
    bins, _ = kernel.sample_bins(plan, 8, n)
    state = int(kernel.chunk_seeds(8, 0, 1)[0])
    golden, mask = 0x9E3779B97F4A7C15, 2**64 - 1
    A = plan.n_in_play
    for i in range(n):
        u = []
        for _ in range(2 * ((A + 1) // 2)):
            state = (state + golden) & mask
            u.append(float(int(_splitmix(np.uint64(state))) >> 11) * 2.0**-53)
        e = []
        for k in range(0, A, 2):
            r = math.sqrt(-2.0 * math.log(1.0 - u[k]))
            t = 2.0 * math.pi * u[k + 1]
            e += [r * math.cos(t), r * math.sin(t)]
        for a in range(A):
            z = 0.0
            for j in range(a + 1):
                z += float(plan.chol[a, j]) * e[j]
            cuts = plan.zcut[plan.off[a] : plan.off[a + 1]]
            assert bins[i, a] == np.searchsorted(cuts, z, side="left"), (i, a)


def test_shared_normal_scores_leave_every_count_unchanged():
    """Inside shared_normal_scores, count_agree gives the counts it gives outside: for plans
    that share the normal scores (one model, two noise scales; the same seed), for a plan
    with other in-play features in between, for chunks asked again with more draws than
    before, when the store is too small for all and starts over, and when it is too small
    for one call (which then draws its scores itself)."""
    p1, p2 = _correlated_plan(4, 30, 6), _correlated_plan(4, 30, 6, scale=2.0)
    p3 = _correlated_plan(3, 10, 2)
    assert np.array_equal(p1.chol, p2.chol) and not np.array_equal(p1.zcut, p2.zcut)
    calls = [(p, seed, first, total) for seed in (1, 2) for p in (p1, p3, p2)
             for first, total in ((0, 5 * 4096), (5, 1), (5, 3 * 4096 + 7), (5, 4 * 4096))]  # fmt: skip
    expected = [kernel.count_agree(p, kernel.chunk_seeds(s, f, -(-t // 4096)), 4096, t)
                for p, s, f, t in calls]  # fmt: skip
    for max_bytes in (2**27, 8 * 4 * 4096 * 6, 8 * 4 * 4096 * 4):
        with kernel.shared_normal_scores(max_bytes):
            got = [kernel.count_agree(p, kernel.chunk_seeds(s, f, -(-t // 4096)), 4096, t)
                   for p, s, f, t in calls]  # fmt: skip
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a, b)
