"""The exact engine against the grid method, brute force, Monte Carlo and Hypothesis forests."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris, make_classification
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal, NortaNoise
from reliquant.trees.boxes import grid_robustness
from reliquant.trees.engine import exact_robustness
from reliquant.trees.monte_carlo import monte_carlo_robustness
from reliquant.trees.norta import ExponentialMarginal, NormalMarginal
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.structure import Tree, TreeEnsemble


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(800, 4, n_informative=4, n_redundant=0, n_classes=3, random_state=0)
    return X, y


MODELS = {
    "dt": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    "rf": lambda: RandomForestClassifier(5, max_depth=3, random_state=0),
    "et": lambda: ExtraTreesClassifier(4, max_depth=3, random_state=0),
    "xgb": lambda: xgb.XGBClassifier(n_estimators=4, max_depth=2),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_engine_equals_grid_and_mc(name, data):
    X, y = data
    model = MODELS[name]().fit(X, y)
    ens = extract_ensemble(model)
    rng = np.random.default_rng(0)
    for mu in X[:3]:
        noise = IndependentNormal.from_variance(mu, 0.5)
        g = grid_robustness(ens, noise, mu)
        exact = exact_robustness(ens, noise, mu, tol=0.0)
        assert exact.exact and exact.gap <= 1e-12
        assert exact.lower == pytest.approx(g.robustness, abs=1e-12)
        assert exact.n_boxes < g.n_boxes or g.n_boxes < 50
        r = exact_robustness(ens, noise, mu, tol=1e-9)
        assert r.converged and r.gap <= 1e-9
        assert r.lower - 1e-12 <= g.robustness <= r.upper + 1e-12
        mc = monte_carlo_robustness(ens, noise, mu, 20_000, rng, confidence=0.999)
        assert mc.ci_low <= g.robustness <= mc.ci_high


def test_binary_xgboost(data):
    X, y = data
    ens = extract_ensemble(xgb.XGBClassifier(n_estimators=6, max_depth=3).fit(X, y == 0))
    for mu in X[3:6]:
        noise = IndependentNormal(mu, 0.6)
        g = grid_robustness(ens, noise, mu)
        assert exact_robustness(ens, noise, mu, tol=0).lower == pytest.approx(
            g.robustness, abs=1e-12
        )


def test_norta_and_correlated_noise(data):
    X, y = data
    ens = extract_ensemble(xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y))
    mu = X[1]
    marg = [
        NormalMarginal(mu[0], 0.5),
        ExponentialMarginal(mu[1], 0.5),
        NormalMarginal(mu[2], 0.4),
        ExponentialMarginal(mu[3], 0.3),
    ]
    ind = NortaNoise(mu, marg, np.eye(4))
    g = grid_robustness(ens, ind, mu)
    assert exact_robustness(ens, ind, mu, tol=0).lower == pytest.approx(g.robustness, abs=1e-12)
    corr = np.full((4, 4), 0.2) + 0.8 * np.eye(4)
    cor = NortaNoise(mu, marg, corr, seed=0, abseps=1e-5)
    r = exact_robustness(ens, cor, mu, tol=1e-6)
    mc = monte_carlo_robustness(ens, cor, mu, 50_000, np.random.default_rng(3), confidence=0.999)
    assert mc.ci_low - 1e-3 <= r.robustness <= mc.ci_high + 1e-3
    cn = CorrelatedNormal(mu, corr * 0.3, seed=0, abseps=1e-5)
    r2 = exact_robustness(ens, cn, mu, tol=1e-6)
    mc2 = monte_carlo_robustness(ens, cn, mu, 50_000, np.random.default_rng(4), confidence=0.999)
    assert mc2.ci_low - 1e-3 <= r2.robustness <= mc2.ci_high + 1e-3


def test_ties_follow_first_argmax():
    """Two stumps voting opposite classes tie on a positive-mass region: argmax picks 0."""

    def stump(t, left, right):
        return Tree(
            feature=np.array([0, -1, -1], dtype=np.int32),
            threshold=np.array([t, np.nan, np.nan]),
            left=np.array([1, -1, -1], dtype=np.int32),
            right=np.array([2, -1, -1], dtype=np.int32),
            value=np.array([[0.5, 0.5], left, right]),
        )

    ens = TreeEnsemble(
        trees=(stump(0.0, [1.0, 0.0], [0.0, 1.0]), stump(1.0, [0.0, 1.0], [1.0, 0.0])),
        n_features=1,
        n_classes=2,
        rule="le32",
        aggregation="mean_proba",
        classes=np.array([0, 1]),
        tree_class=np.array([-1, -1]),
        base_margin=np.zeros(2),
    )
    mu = np.array([0.5])  # tree 1 -> class 1, tree 2 -> class 1: label 1
    noise = IndependentNormal(mu, 1.0)
    r = exact_robustness(ens, noise, mu, tol=0)
    # label 1 only on (0, 1]; elsewhere the votes tie and argmax picks class 0
    from scipy import stats

    # the model switches at float32 rounding points: 1.0 -> 1 + 2**-24 (x <= b goes left)
    b0, b1 = ens.trees[0].boundary[0], ens.trees[1].boundary[0]
    assert b1 == 1.0 + 2.0**-24
    assert r.lower == pytest.approx(stats.norm.cdf(b1 - 0.5) - stats.norm.cdf(b0 - 0.5), abs=1e-15)
    assert r.lower == pytest.approx(grid_robustness(ens, noise, mu).robustness, abs=1e-15)


def _random_tree(draw, d: int, n_classes: int) -> Tree:
    depth = draw(st.integers(1, 3))
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[np.ndarray] = []
    stack = [(0, None, None)]  # (level, parent, is_left)
    while stack:
        level, parent, is_left = stack.pop()
        i = len(feature)
        if parent is not None:
            (left if is_left else right)[parent] = i
        feature.append(-1)
        threshold.append(np.nan)
        left.append(-1)
        right.append(-1)
        if level < depth and draw(st.booleans()):
            feature[i] = draw(st.integers(0, d - 1))
            threshold[i] = draw(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0]))
            value.append(np.full(n_classes, 1.0 / n_classes))
            stack += [(level + 1, i, False), (level + 1, i, True)]
        else:
            counts = draw(st.lists(st.integers(0, 3), min_size=n_classes, max_size=n_classes))
            w = np.array(counts, float) + 0.5
            value.append(w / w.sum())
    return Tree(
        np.array(feature, np.int32),
        np.array(threshold),
        np.array(left, np.int32),
        np.array(right, np.int32),
        np.array(value),
    )


@st.composite
def forests(draw):
    """Random small soft-voting forests with shared thresholds (ties included)."""
    d = draw(st.integers(1, 3))
    n_trees = draw(st.integers(1, 4))
    n_classes = draw(st.integers(2, 3))
    trees = tuple(_random_tree(draw, d, n_classes) for _ in range(n_trees))
    ens = TreeEnsemble(
        trees,
        d,
        n_classes,
        "le32",
        "mean_proba",
        np.arange(n_classes),
        np.full(n_trees, -1),
        np.zeros(n_classes),
    )
    mu = np.array(draw(st.lists(st.floats(-1.5, 1.5), min_size=d, max_size=d)))
    sigma = draw(st.floats(0.05, 2.0))
    return ens, mu, sigma


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests())
def test_hypothesis_engine_equals_grid(case):
    ens, mu, sigma = case
    noise = IndependentNormal(mu, sigma)
    g = grid_robustness(ens, noise, mu)
    r0 = exact_robustness(ens, noise, mu, tol=0)
    assert r0.lower == pytest.approx(g.robustness, abs=1e-12)
    r = exact_robustness(ens, noise, mu, tol=1e-9)
    assert r.gap <= 1e-9 and r.lower - 1e-12 <= g.robustness <= r.upper + 1e-12
    p = grid_robustness(ens, noise, mu, prune=0.99)
    # pruning drops boxes, so it can only lose mass; the two sums of box masses are taken
    # over different boxes and may round apart by an ulp or so
    assert -1e-12 <= g.robustness - p.robustness <= 0.01


def test_pruned_grid_rounds_within_an_ulp_of_the_full_grid_where_it_drops_nothing():
    # the example hypothesis found: the pruned grid's 2 boxes sum to 1 ulp above the full
    # grid's 8 (the 6 dropped boxes carry almost no mass)
    def stump(feature, threshold, values):
        return Tree(
            feature=np.array([feature, -1, -1], dtype=np.int32),
            threshold=np.array([threshold, np.nan, np.nan]),
            left=np.array([1, -1, -1], dtype=np.int32),
            right=np.array([2, -1, -1], dtype=np.int32),
            value=np.array(values),
        )

    skew, flat = [[1 / 3] * 3, [0.2, 0.2, 0.6], [1 / 3] * 3], [[1 / 3] * 3] * 3
    ens = TreeEnsemble(
        trees=(stump(1, 1.0, skew), stump(0, 0.25, flat), stump(2, 0.0, skew)),
        n_features=3, n_classes=3, rule="le32", aggregation="mean_proba",
        classes=np.arange(3), tree_class=np.full(3, -1), base_margin=np.zeros(3),
    )  # fmt: skip
    mu = np.array([0.0, 1.4375, 0.5])
    noise = IndependentNormal(mu, 0.09375)
    full = grid_robustness(ens, noise, mu)
    pruned = grid_robustness(ens, noise, mu, prune=0.99)
    assert pruned.n_boxes < full.n_boxes
    assert full.robustness - pruned.robustness == pytest.approx(0.0, abs=1e-12)
    assert full.robustness == pytest.approx(
        exact_robustness(ens, noise, mu, tol=0).lower, abs=1e-12
    )


def test_iris_dt_pruned_matches_paper_scale():
    X, y = load_iris(return_X_y=True)
    ens = extract_ensemble(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y))
    mu = X[60]
    noise = IndependentNormal.from_variance(mu, 0.1)
    r = exact_robustness(ens, noise, mu)
    g = grid_robustness(ens, noise, mu)
    assert r.gap <= 1e-9 and abs(r.robustness - g.robustness) <= 1e-9


@pytest.mark.parametrize("stop", ["max_boxes", "max_memory"])
def test_early_stop_gives_valid_bounds(data, stop):
    """Stopping on the box count or on the memory cap (room for a handful of pending boxes:
    two float64 corners per active feature) leaves wider but valid certified bounds."""
    X, y = data
    ens = extract_ensemble(RandomForestClassifier(8, max_depth=4, random_state=0).fit(X, y))
    mu = X[0]
    noise = IndependentNormal(mu, 0.5)
    full = exact_robustness(ens, noise, mu, tol=1e-9)
    assert full.converged
    limit = {"max_boxes": 10, "max_memory": 8 * 2 * 8 * full.n_active_features}[stop]
    early = exact_robustness(ens, noise, mu, tol=1e-9, batch=4, **{stop: limit})
    assert not early.converged and early.gap > 1e-9
    assert early.n_boxes < full.n_boxes
    assert early.lower - 1e-12 <= full.robustness <= early.upper + 1e-12


def test_search_dimension_counts_match_the_model(data):
    """With tol = 0 the root box is the whole space: every tree with a split is live and the
    active features are exactly the features the model splits on; a tight root box (small
    noise far from every boundary along mu's paths) leaves fewer."""
    X, y = data
    model = RandomForestClassifier(6, max_depth=3, random_state=1).fit(X, y)
    ens = extract_ensemble(model)
    mu = X[0]
    r = exact_robustness(ens, IndependentNormal(mu, 0.5), mu, tol=0.0)
    used = {int(f) for t in ens.trees for f in t.feature[t.left >= 0]}
    assert r.n_active_features == len(used)
    assert r.n_live_trees == sum(int((t.left >= 0).any()) for t in ens.trees)
    tiny = exact_robustness(ens, IndependentNormal(mu, 1e-6), mu, tol=1e-9)
    assert tiny.n_live_trees == 0 and tiny.n_active_features == 0
    assert tiny.lower == 1.0 - tiny.gap and tiny.upper == 1.0


def test_correlated_root_box_is_integrated_once_with_the_same_numbers(data, monkeypatch):
    """Under correlated noise the root box's mass is one QMC integral, used both for the
    outside mass and as the first pending box: with no box bounded, the result's masses are
    those of the noise model's own integral of the root box."""
    X, y = data
    ens = extract_ensemble(xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, y))
    mu = X[1]
    marg = [NormalMarginal(mu[0], 0.5), ExponentialMarginal(mu[1], 0.5),
            NormalMarginal(mu[2], 0.4), ExponentialMarginal(mu[3], 0.3)]  # fmt: skip
    corr = np.full((4, 4), 0.2) + 0.8 * np.eye(4)
    noise = NortaNoise(mu, marg, corr, seed=0, abseps=1e-5)
    calls = []
    real = NortaNoise.box_mass_with_error

    def counted(self, lo, hi):
        calls.append(lo.shape[0])
        return real(self, lo, hi)

    monkeypatch.setattr(NortaNoise, "box_mass_with_error", counted)
    r = exact_robustness(ens, noise, mu, tol=1e-3, max_boxes=0, keep_pending=True)
    assert calls == [1]
    monkeypatch.undo()
    m, e = noise.box_mass_with_error(r.pending.root_lo[None], r.pending.root_hi[None])
    assert r.outside_mass == max(0.0, 1.0 - float(m[0]))
    assert r.dropped_mass == float(m[0]) and r.pending.mass.tolist() == m.tolist()
    assert r.mass_error == float(e[0]) + float(e[0])
    assert (r.lower, r.upper, r.n_boxes) == (0.0, 1.0, 0)
