"""Per-sample robustness tables on tiny models, against brute force and Monte Carlo computed here
independently of the library (scikit-learn's own predict, scipy CDFs, numpy sampling)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.reproduction.data import MarginalSpec, marginals_at
from reliquant.trees.reproduction.models import fit_decision_tree, fit_random_forest, fit_xgboost
from reliquant.trees.reproduction.per_sample import (
    RUNTIME_COLUMNS,
    TABLE1_SCHEMA,
    TABLE2_SCHEMA,
    box_comparison,
    grid_size,
    mc_comparison,
    norta_robustness,
    norta_schema,
    runtime_comparison,
)


# ----------------------------------------------------------------------------- helpers
def _data(n: int = 300, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, d))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.8).astype(int) + (x[:, -1] > 0.7).astype(int)
    return x, y


def _float32_switch(t: float) -> float:
    """Where sklearn's rule ``float32(x) <= t`` flips, for float64 x: half way between the
    largest float32 f <= t and the next float32 (round-to-nearest; the tie has no mass)."""
    f = np.float32(t)
    if float(f) > t:
        f = np.nextafter(f, np.float32(-np.inf))
    return (float(f) + float(np.nextafter(f, np.float32(np.inf)))) / 2.0


def _brute_force_grid(model, mu: np.ndarray, sigma: float) -> float:
    """The paper's eq. (4) from scratch: cuts from sklearn's tree_ thresholds, every box of
    the grid, label = model.predict at the centre, mass = product of normal CDF differences."""
    estimators = getattr(model, "estimators_", [model])
    d = len(mu)
    cuts = [set() for _ in range(d)]
    for est in estimators:
        t = est.tree_
        for f, thr in zip(t.feature, t.threshold, strict=True):
            if f >= 0:
                cuts[f].add(_float32_switch(thr))
    edges = [np.array([-np.inf, *sorted(c), np.inf]) for c in cuts]
    label = model.predict(mu[None, :])[0]
    total = 0.0
    for idx in itertools.product(*[range(len(e) - 1) for e in edges]):
        lo = np.array([edges[i][k] for i, k in enumerate(idx)])
        hi = np.array([edges[i][k + 1] for i, k in enumerate(idx)])
        centre = np.where(
            np.isfinite(lo) & np.isfinite(hi),
            (lo + hi) / 2,
            np.where(np.isfinite(lo), lo + 1.0, np.where(np.isfinite(hi), hi - 1.0, 0.0)),
        )
        if model.predict(centre[None, :])[0] == label:
            # tail-accurate interval masses: sf differences above the mean
            a, b = (lo - mu) / sigma, (hi - mu) / sigma
            p = np.where(
                a > 0, stats.norm.sf(a) - stats.norm.sf(b), stats.norm.cdf(b) - stats.norm.cdf(a)
            )
            total += float(np.prod(p))
    return total


# ----------------------------------------------------------------------------- Table 1
def test_box_comparison_equals_brute_force_grid():
    x, y = _data(d=2)
    model = fit_decision_tree(x, y, max_depth=3, seed=5)
    ens = extract_ensemble(model)
    mus = x[:6]
    variance = 0.01
    table = box_comparison(ens, x_test=mus, variance=variance, level=0.99, tol=1e-12)
    assert list(table.columns) == TABLE1_SCHEMA.names
    for j, mu in enumerate(mus):
        bf = _brute_force_grid(model, mu, np.sqrt(variance))
        assert table.loc[j, "robustness_all"] == pytest.approx(bf, abs=1e-12)
        assert table.loc[j, "robustness_exact"] == pytest.approx(bf, abs=1e-9)
    # the 99 % boxes drop at most the mass outside the bounding box (paper 002: 1 point)
    diff = table["robustness_all"] - table["robustness_pruned"]
    assert np.all(diff >= -1e-12) and np.all(diff <= 0.01)
    assert np.all(table["boxes_pruned"] <= table["boxes_all"])
    assert np.all(table["boxes_label_all"] <= table["boxes_all"])


# ----------------------------------------------------------------------------- Table 2
def test_runtime_comparison_agrees_across_methods_and_is_reproducible():
    x, y = _data(d=3)
    model = fit_random_forest(x, y, n_estimators=3, max_depth=3, seed=2)
    ens = extract_ensemble(model)
    mus = x[:3]
    kwargs = {
        "x_test": mus,
        "y_test": y[:3],
        "variance": 0.02,
        "level": 0.99,
        "tol": 1e-9,
        "n_draws": 20_000,
        "seed": 7,
        "key": ("table2",),
        "max_grid_boxes": 10**6,
    }
    table, times = runtime_comparison(ens, **kwargs)
    assert list(table.columns) == TABLE2_SCHEMA.names
    np.testing.assert_array_equal(table["true_label"], y[:3])
    np.testing.assert_array_equal(table["label"], model.predict(mus))
    for j, mu in enumerate(mus):
        bf = _brute_force_grid(model, mu, np.sqrt(0.02))
        assert table.loc[j, "robustness_all"] == pytest.approx(bf, abs=1e-12)
    np.testing.assert_allclose(table["robustness_exact"], table["robustness_all"], atol=1e-9)
    assert np.all(table["engine_upper"] - table["engine_lower"] <= 1e-9 + 1e-15)
    # Monte Carlo: within 5 binomial standard errors of the exact value
    se = np.sqrt(table["robustness_exact"] * (1 - table["robustness_exact"]) / 20_000)
    assert np.all(np.abs(table["mc_estimate"] - table["robustness_exact"]) <= 5 * se + 1e-4)
    assert list(times.columns) == list(RUNTIME_COLUMNS)
    assert (times.drop(columns="sample") >= 0).all().all()
    again, _ = runtime_comparison(ens, **kwargs)
    pd.testing.assert_frame_equal(table, again)
    other, _ = runtime_comparison(ens, **{**kwargs, "key": ("other",)})
    assert not np.array_equal(other["mc_estimate"], table["mc_estimate"])


def test_runtime_comparison_skips_oversized_grids():
    x, y = _data(d=3)
    ens = extract_ensemble(fit_random_forest(x, y, n_estimators=3, max_depth=3, seed=2))
    table, times = runtime_comparison(
        ens,
        x_test=x[:2],
        y_test=y[:2],
        variance=0.5,
        level=0.99,
        tol=1e-9,
        n_draws=1000,
        seed=7,
        key=("table2",),
        max_grid_boxes=1,
    )
    assert table["robustness_all"].isna().all() and times["all_boxes"].isna().all()
    assert table["robustness_pruned"].isna().all()
    assert np.all(table["boxes_pruned"] > 1)
    assert table["robustness_exact"].notna().all()


# ----------------------------------------------------------------------------- Table 3
def test_mc_comparison_exact_within_monte_carlo_and_seeded():
    x, y = _data(d=3)
    ens = extract_ensemble(fit_decision_tree(x, y, max_depth=4, seed=1))
    kwargs = {
        "x_test": x[:4],
        "variances": [0.001, 0.05],
        "level": 0.99,
        "tol": 1e-9,
        "n_draws": 20_000,
        "seed": 3,
        "key": ("t", 3, 4),
        "max_grid_boxes": 10**6,
    }
    frame = mc_comparison(ens, **kwargs)
    assert len(frame) == 8
    se = np.sqrt(frame["robustness_exact"] * (1 - frame["robustness_exact"]) / 20_000)
    assert np.all(np.abs(frame["mc_estimate"] - frame["robustness_exact"]) <= 5 * se + 1e-4)
    # the 99 % grid is within one point below the exact value
    diff = frame["robustness_exact"] - frame["robustness_pruned"]
    assert np.all((diff >= -1e-9) & (diff <= 0.01))
    pd.testing.assert_frame_equal(frame, mc_comparison(ens, **kwargs))
    other = mc_comparison(ens, **{**kwargs, "seed": 4})
    assert not np.array_equal(other["mc_estimate"], frame["mc_estimate"])


def test_grid_size_is_product_of_interval_counts():
    x, y = _data(d=3)
    ens = extract_ensemble(fit_random_forest(x, y, n_estimators=3, max_depth=3, seed=2))
    noise = IndependentNormal(x[0], 0.1)
    assert grid_size(ens, noise, x[0], None) == int(np.prod([len(t) + 1 for t in ens.thresholds()]))
    assert grid_size(ens, noise, x[0], 0.99) <= grid_size(ens, noise, x[0], None)


# ----------------------------------------------------------------------------- NORTA
def _norta_mc(model, mu, specs, corr, n, seed) -> float:
    """NORTA sampler built here from scipy: z ~ N(0, corr), x_i = F_i^-1(Phi(z_i))."""
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal(np.zeros(len(mu)), corr, size=n)
    cols = [m._frozen().ppf(special.ndtr(z[:, i])) for i, m in enumerate(marginals_at(specs, mu))]
    x = np.column_stack(cols)
    return float(np.mean(model.predict(x) == model.predict(mu[None, :])[0]))


@pytest.mark.parametrize("correlated", [False, True], ids=["independent", "correlated"])
def test_norta_robustness_matches_independent_monte_carlo(correlated):
    x, y = _data(n=400, d=3, seed=4)
    x = x * np.array([1.0, 2.0, 3.0])
    y = (x[:, 0] + x[:, 2] / 3 > 1.0).astype(int)
    model = fit_xgboost(x, y, n_estimators=4, max_depth=2, seed=9)
    ens = extract_ensemble(model)
    specs = [
        MarginalSpec("normal", 0.1),
        MarginalSpec("exponential", 0.2),
        MarginalSpec("chi-square", 0.05, 2.0),
    ]
    corr = np.eye(3)
    if correlated:
        corr = np.array([[1.0, 0.3, 0.2], [0.3, 1.0, 0.1], [0.2, 0.1, 1.0]])
    mus, n = x[:3], 40_000
    table = norta_robustness(
        ens,
        x_test=mus,
        y_test=y[:3],
        specs=specs,
        corr=corr,
        tol=1e-4,
        seed=0,
        key="t",
        n_draws=2000,
        abseps=1e-6,
    )
    assert list(table.columns) == norta_schema(with_mc=True).names
    assert list(table["sample"]) == [1, 2, 3]
    np.testing.assert_array_equal(table["label"], model.predict(mus))
    assert np.all(table["upper"] - table["lower"] <= 1e-4 + 1e-5)
    for j, mu in enumerate(mus):
        r = table.loc[j, "robustness"]
        mc = _norta_mc(model, mu, specs, corr, n, j)
        assert abs(mc - r) <= 5 * np.sqrt(max(r * (1 - r), 1e-4) / n) + 1e-3


def test_norta_monte_carlo_method_reports_estimate_and_interval():
    x, y = _data(n=300, d=2, seed=2)
    model = fit_decision_tree(x, y, max_depth=3, seed=0)
    ens = extract_ensemble(model)
    specs = [MarginalSpec("normal", 0.1), MarginalSpec("exponential", 0.1)]
    corr = np.array([[1.0, 0.25], [0.25, 1.0]])
    kwargs = {
        "x_test": x[:3],
        "y_test": y[:3],
        "specs": specs,
        "corr": corr,
        "tol": 1e-6,
        "seed": 5,
        "key": "k",
        "n_draws": 30_000,
    }
    mc = norta_robustness(ens, **kwargs, method="monte_carlo")
    ex = norta_robustness(ens, **{**kwargs, "n_draws": 0}, method="engine", abseps=1e-7)
    assert list(mc.columns) == list(ex.columns) == norta_schema(with_mc=False).names
    assert np.all(mc["boxes"] == -1)
    assert np.all((mc["lower"] <= mc["robustness"]) & (mc["robustness"] <= mc["upper"]))
    se = np.sqrt(np.maximum(ex["robustness"] * (1 - ex["robustness"]), 1e-4) / 30_000)
    assert np.all(np.abs(mc["robustness"] - ex["robustness"]) <= 5 * se + 1e-3)
    pd.testing.assert_frame_equal(mc, norta_robustness(ens, **kwargs, method="monte_carlo"))
    with pytest.raises(ValueError, match="method"):
        norta_robustness(ens, **kwargs, method="grid")


def test_bounded_noise_above_every_threshold_is_fully_robust():
    """001 §5.4: a sample above the largest threshold of every feature with noise bounded
    below at the sample cannot leave its box: robustness exactly 1."""
    x, y = _data(d=2)
    model = fit_decision_tree(x, y, max_depth=3, seed=0)
    ens = extract_ensemble(model)
    mu = np.array([[t.max() + 0.1 if len(t) else 0.5 for t in ens.thresholds()]])
    specs = [MarginalSpec("exponential", 0.3), MarginalSpec("lognormal", 0.2, 0.5)]
    table = norta_robustness(
        ens,
        x_test=mu,
        y_test=np.array([0]),
        specs=specs,
        corr=np.eye(2),
        tol=1e-9,
        seed=0,
        key="t",
        n_draws=0,
    )
    assert table.loc[0, "lower"] == pytest.approx(1.0, abs=1e-9)
    assert "mc_estimate" not in table


# ----------------------------------------------------------------------------- engine
def test_tables_refuse_engine_bounds_wider_than_tol(monkeypatch):
    """A table never stores the midpoint of an unconverged search as 'exact'."""
    import reliquant.trees.reproduction.sample_methods as sample_methods

    real = sample_methods.exact_robustness
    monkeypatch.setattr(
        sample_methods, "exact_robustness", lambda *a, **k: real(*a, **k, max_boxes=1, batch=1)
    )
    x, y = _data(d=2)
    ens = extract_ensemble(fit_decision_tree(x, y, max_depth=3, seed=5))
    with pytest.raises(RuntimeError, match="did not reach tol=1e-12"):
        box_comparison(ens, x_test=x[:6], variance=0.01, level=0.99, tol=1e-12)
