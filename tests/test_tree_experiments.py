"""The tree experiments on tiny models, against brute force and Monte Carlo computed here
independently of the library (scikit-learn's own predict, scipy CDFs, numpy sampling)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from reliquant.trees.data import MarginalSpec, marginals_at
from reliquant.trees.experiments import (
    box_comparison,
    fit_decision_tree,
    fit_random_forest,
    fit_xgboost,
    grid_size,
    mc_comparison,
    norta_robustness,
    paper_comparison,
    r2_by_group,
    r2_score,
    robustness_summary,
    runtime_comparison,
    split_train_test,
)
from reliquant.trees.structure import extract_ensemble


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


# ----------------------------------------------------------------------------- R^2
@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=30))
def test_r2_matches_direct_formula_and_sklearn(values):
    from sklearn.metrics import r2_score as sk_r2

    r = np.array([v[0] for v in values])
    e = np.array([v[1] for v in values])
    ss_tot = np.sum((r - r.mean()) ** 2)
    got = r2_score(r, e)
    if ss_tot > 1e-12:
        assert got == pytest.approx(1 - np.sum((r - e) ** 2) / ss_tot, rel=1e-9, abs=1e-9)
        assert got == pytest.approx(sk_r2(r, e), rel=1e-9, abs=1e-9)


def test_r2_edge_cases():
    assert r2_score([0.5, 0.5], [0.5, 0.5]) == 1.0
    assert np.isnan(r2_score([1.0, 1.0], [1.0, 0.9]))
    assert r2_score([0.0, 1.0], [0.0, 1.0]) == 1.0
    with pytest.raises(ValueError, match="equal-length"):
        r2_score([1.0], [1.0, 2.0])


def test_r2_by_group_matches_per_group_formula():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"g": np.repeat([1, 2], 6), "a": rng.uniform(size=12), "b": rng.uniform(size=12)}
    )
    frame.loc[3, "b"] = np.nan
    out = r2_by_group(frame, ["g"], "a", "b")
    for g, row in out.set_index("g").iterrows():
        sub = frame[(frame.g == g) & frame.b.notna()]
        assert row["n"] == len(sub)
        assert row["r2"] == pytest.approx(r2_score(sub.a, sub.b))
        assert row["max_abs_diff"] == pytest.approx(np.abs(sub.a - sub.b).max())


# ----------------------------------------------------------------------------- training
def test_split_sizes_match_the_papers():
    x150 = np.zeros((150, 4))
    x724 = np.zeros((724, 7))
    assert len(split_train_test(x150, np.zeros(150), 0.1, 3)[1]) == 15
    assert len(split_train_test(x724, np.zeros(724), 0.1, 3)[1]) == 73


def test_seeded_models_are_identical():
    x, y = _data()
    for fit in (
        lambda s: fit_decision_tree(x, y, 3, s),
        lambda s: fit_random_forest(x, y, 4, 3, s),
        lambda s: fit_xgboost(x, y, 3, 2, s),
    ):
        a, b = fit(11), fit(11)
        probe = np.random.default_rng(1).uniform(size=(500, 3))
        np.testing.assert_array_equal(a.predict_proba(probe), b.predict_proba(probe))


# ----------------------------------------------------------------------------- Table 1
def test_box_comparison_equals_brute_force_grid():
    x, y = _data(d=2)
    model = fit_decision_tree(x, y, 3, 5)
    ens = extract_ensemble(model)
    mus = x[:6]
    variance = 0.01
    table = box_comparison(ens, mus, variance, 0.99, 1e-12)
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
    model = fit_random_forest(x, y, 3, 3, 2)
    ens = extract_ensemble(model)
    mus = x[:3]
    args = (ens, mus, 0.02, 0.99, 1e-9, 20_000, 7, 10**6)
    table, times = runtime_comparison(*args)
    for j, mu in enumerate(mus):
        bf = _brute_force_grid(model, mu, np.sqrt(0.02))
        assert table.loc[j, "robustness_all"] == pytest.approx(bf, abs=1e-12)
    np.testing.assert_allclose(table["robustness_exact"], table["robustness_all"], atol=1e-9)
    assert np.all(table["engine_upper"] - table["engine_lower"] <= 1e-9 + 1e-15)
    # Monte Carlo: within 5 binomial standard errors of the exact value
    se = np.sqrt(table["robustness_exact"] * (1 - table["robustness_exact"]) / 20_000)
    assert np.all(np.abs(table["mc_estimate"] - table["robustness_exact"]) <= 5 * se + 1e-4)
    assert list(times.columns) == ["sample", "all_boxes", "pruned_boxes", "engine", "monte_carlo"]
    assert (times.drop(columns="sample") >= 0).all().all()
    again, _ = runtime_comparison(*args)
    pd.testing.assert_frame_equal(table, again)


def test_runtime_comparison_skips_oversized_grids():
    x, y = _data(d=3)
    ens = extract_ensemble(fit_random_forest(x, y, 3, 3, 2))
    table, times = runtime_comparison(ens, x[:2], 0.5, 0.99, 1e-9, 1000, 7, 1)
    assert table["robustness_all"].isna().all() and times["all_boxes"].isna().all()
    assert table["robustness_pruned"].isna().all()
    assert np.all(table["boxes_pruned"] > 1)
    assert table["robustness_exact"].notna().all()


# ----------------------------------------------------------------------------- Table 3
def test_mc_comparison_exact_within_monte_carlo_and_seeded():
    x, y = _data(d=3)
    ens = extract_ensemble(fit_decision_tree(x, y, 4, 1))
    args = (ens, x[:4], [0.001, 0.05], 0.99, 1e-9, 20_000, 3, ("t", 3, 4), 10**6)
    frame = mc_comparison(*args)
    assert len(frame) == 8
    se = np.sqrt(frame["robustness_exact"] * (1 - frame["robustness_exact"]) / 20_000)
    assert np.all(np.abs(frame["mc_estimate"] - frame["robustness_exact"]) <= 5 * se + 1e-4)
    # the 99 % grid is within one point below the exact value
    diff = frame["robustness_exact"] - frame["robustness_pruned"]
    assert np.all((diff >= -1e-9) & (diff <= 0.01))
    pd.testing.assert_frame_equal(frame, mc_comparison(*args))
    other = mc_comparison(ens, x[:4], [0.001, 0.05], 0.99, 1e-9, 20_000, 4, ("t", 3, 4), 10**6)
    assert not np.array_equal(other["mc_estimate"], frame["mc_estimate"])


def test_grid_size_is_product_of_interval_counts():
    x, y = _data(d=3)
    ens = extract_ensemble(fit_random_forest(x, y, 3, 3, 2))
    from reliquant.trees.box_mass import IndependentNormal

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
    model = fit_xgboost(x, y, 4, 2, 9)
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
    table = norta_robustness(ens, mus, y[:3], specs, corr, 1e-4, 0, "t", 2000, abseps=1e-6)
    assert list(table["sample"]) == [1, 2, 3]
    np.testing.assert_array_equal(table["label"], model.predict(mus))
    assert np.all(table["upper"] - table["lower"] <= 1e-4 + 1e-5)
    for j, mu in enumerate(mus):
        r = table.loc[j, "robustness"]
        mc = _norta_mc(model, mu, specs, corr, n, j)
        assert abs(mc - r) <= 5 * np.sqrt(max(r * (1 - r), 1e-4) / n) + 1e-3


def test_norta_monte_carlo_method_reports_estimate_and_interval():
    x, y = _data(n=300, d=2, seed=2)
    model = fit_decision_tree(x, y, 3, 0)
    ens = extract_ensemble(model)
    specs = [MarginalSpec("normal", 0.1), MarginalSpec("exponential", 0.1)]
    corr = np.array([[1.0, 0.25], [0.25, 1.0]])
    args = (ens, x[:3], y[:3], specs, corr, 1e-6, 5, "k", 30_000)
    mc = norta_robustness(*args, method="monte_carlo")
    ex = norta_robustness(*args[:-1], 0, method="engine", abseps=1e-7)
    assert np.all(mc["boxes"] == -1)
    assert np.all((mc["lower"] <= mc["robustness"]) & (mc["robustness"] <= mc["upper"]))
    se = np.sqrt(np.maximum(ex["robustness"] * (1 - ex["robustness"]), 1e-4) / 30_000)
    assert np.all(np.abs(mc["robustness"] - ex["robustness"]) <= 5 * se + 1e-3)
    pd.testing.assert_frame_equal(mc, norta_robustness(*args, method="monte_carlo"))
    with pytest.raises(ValueError, match="method"):
        norta_robustness(*args, method="grid")


def test_bounded_noise_above_every_threshold_is_fully_robust():
    """001 §5.4: a sample above the largest threshold of every feature with noise bounded
    below at the sample cannot leave its box: robustness exactly 1."""
    x, y = _data(d=2)
    model = fit_decision_tree(x, y, 3, 0)
    ens = extract_ensemble(model)
    mu = np.array([[t.max() + 0.1 if len(t) else 0.5 for t in ens.thresholds()]])
    specs = [MarginalSpec("exponential", 0.3), MarginalSpec("lognormal", 0.2, 0.5)]
    table = norta_robustness(ens, mu, np.array([0]), specs, np.eye(2), 1e-9, 0, "t", 0)
    assert table.loc[0, "lower"] == pytest.approx(1.0, abs=1e-9)
    assert "mc_estimate" not in table


# ----------------------------------------------------------------------------- summary
def test_robustness_summary_counts():
    s = robustness_summary(np.array([0.34, 0.995, 1.0, 0.5]), 0.99)
    assert s == {"n": 4, "min": 0.34, "max": 1.0, "n_above": 2}


def test_paper_comparison_reports_differences():
    t1 = pd.DataFrame(
        {"robustness_all": [0.5, 0.9], "robustness_pruned": [0.5, 0.89], "abs_diff": [0, 0.01]}
    )
    t2 = pd.DataFrame({"robustness_all": [0.7], "robustness_pruned": [0.7]})
    rt = pd.DataFrame(
        {
            "sample": [1],
            "all_boxes": [4.0],
            "pruned_boxes": [0.1],
            "engine": [0.01],
            "monte_carlo": [0.5],
        }
    )
    t3 = pd.DataFrame({"variance": [1e-4, 0.1], "r2": [0.99999, 0.99]})
    pima = pd.DataFrame({"robustness": [0.3, 1.0, 0.995], "correct": [True, False, True]})
    iris = pd.DataFrame({"lower": [1.0, 1.0 - 1e-5, 0.999, 0.5]})
    paper = {
        "table1_r2": 0.9999,
        "table1_max_abs_diff": 1e-5,
        "table2_all_boxes_median_s": 495.0,
        "table2_pruned_median_s": 9.0,
        "table2_mc_s": 3.0,
        "table3_r2_min": 0.9999,
        "pima_accuracy": 0.75,
        "pima_min": 0.34,
        "pima_max": 1.0,
        "pima_n_above": 55,
        "pima_n_test": 73,
    }
    comps, timing, claims, timing_claims = paper_comparison(
        t1, t2, rt, t3, pima, iris, paper, 0.99, 1e-4
    )
    by = {c.quantity: c for c in comps}
    assert all(c.unit not in ("s", "x") for c in comps)  # no wall-clock numbers
    by.update({c.quantity: c for c in timing})
    assert by["Figure 4: subjects above 0.99"].ours == 2
    assert by["Figure 4: Pima test accuracy"].ours == pytest.approx(2 / 3)
    assert by["Table 2: Monte Carlo / exact engine (median ratio)"].ours == pytest.approx(50.0)
    assert by["Table 3: min R^2 exact vs MC (variance 0.0001)"].ours == pytest.approx(0.99999)
    assert by["Figure 5: samples with robustness 1"].ours == 2
    holds = {c.claim: c.holds for c in claims + timing_claims}
    assert holds["the 99 % boxes are much faster than all boxes (Table 2)"]
    assert holds["the 99 % boxes change robustness by at most 1 percentage point"]


def test_tables_refuse_engine_bounds_wider_than_tol(monkeypatch):
    """A table never stores the midpoint of an unconverged search as 'exact'."""
    import reliquant.trees.engine as engine

    real = engine.exact_robustness
    monkeypatch.setattr(
        engine, "exact_robustness", lambda *a, **k: real(*a, **k, max_boxes=1, batch=1)
    )
    x, y = _data(d=2)
    ens = extract_ensemble(fit_decision_tree(x, y, 3, 5))
    with pytest.raises(RuntimeError, match="did not reach tol=1e-12"):
        box_comparison(ens, x[:6], 0.01, 0.99, 1e-12)
