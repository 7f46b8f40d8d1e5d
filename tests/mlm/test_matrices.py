"""reliquant.mlm.matrices against direct loops and closed forms (eqs. 5-10)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.mlm import matrices as mlm
from reliquant.mlm.softmax import N_CLASSES as K


def random_softmax(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.dirichlet(np.full(K, 0.3), size=n).astype(np.float32)


def direct_min_distances(s, y, mu):
    """Eq. 5 by a direct loop over classes, centroids and examples (K from ``mu``)."""
    k = len(mu)
    out = np.full((k, k), np.nan)
    for cls in range(k):
        for c in range(k):
            if c == cls:
                continue
            best = np.inf
            for i in range(len(s)):
                if y[i] == cls:
                    d = np.sqrt(sum((float(s[i, j]) - mu[c, j]) ** 2 for j in range(k)))
                    best = min(best, d)
            out[cls, c] = best
    return out


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(10, 80), chunk=st.integers(1, 50))
def test_min_distance_matrix_matches_double_loop(seed, n, chunk):
    rng = np.random.default_rng(seed)
    s = random_softmax(rng, n)
    y = rng.integers(0, K, n)
    mu = rng.dirichlet(np.ones(K), size=K)
    got = mlm.min_distance_matrix(s, y, mu, chunk=chunk)
    want = direct_min_distances(s, y, mu)
    assert np.isnan(np.diag(got)).all()
    off = ~np.eye(K, dtype=bool)
    # classes with no example: +inf rows in both
    np.testing.assert_allclose(got[off], want[off], rtol=1e-12)


def test_combine_min_equals_matrix_of_union():
    rng = np.random.default_rng(1)
    s, y = random_softmax(rng, 300), rng.integers(0, K, 300)
    mu = rng.dirichlet(np.ones(K), size=K)
    parts = [mlm.min_distance_matrix(s[a:b], y[a:b], mu) for a, b in [(0, 7), (7, 150), (150, 300)]]
    whole = mlm.min_distance_matrix(s, y, mu)
    np.testing.assert_array_equal(mlm.combine_min(parts), whole)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.floats(1e-6, 10.0, allow_nan=False, allow_infinity=False),
        min_size=K * K,
        max_size=K * K,
    )
)
def test_likelihood_rows_sum_to_one_with_empty_diagonal(values):
    d = np.array(values).reshape(K, K)
    L = mlm.likelihood_matrix(d)
    assert np.isnan(np.diag(L)).all()
    off = ~np.eye(K, dtype=bool)
    assert np.all(L[off] > 0) and np.all(L[off] < 1)
    np.testing.assert_allclose(np.nansum(L, axis=1), 1.0, rtol=1e-12)
    # eq. 6 written out for one entry per row
    for y in range(K):
        c = (y + 1) % K
        denom = sum(1.0 / d[y, j] for j in range(K) if j != y)
        assert L[y, c] == pytest.approx((1.0 / d[y, c]) / denom, rel=1e-12)
    # smaller distance -> larger likelihood within a row
    for y in range(K):
        cols = [c for c in range(K) if c != y]
        order_d = np.argsort(d[y, cols], kind="stable")
        assert np.all(np.diff(L[y, cols][order_d]) <= 1e-15)


def test_zero_distance_gets_all_the_mass():
    rng = np.random.default_rng(2)
    d = rng.uniform(0.1, 1.0, (K, K))
    d[3, 5] = 0.0
    d[7, 1] = d[7, 2] = 0.0
    L = mlm.likelihood_matrix(d)
    assert np.isfinite(L[~np.eye(K, dtype=bool)]).all()
    assert L[3, 5] == 1.0 and np.nansum(L[3]) == 1.0
    assert L[7, 1] == L[7, 2] == 0.5 and np.nansum(L[7]) == 1.0
    # limit of eq. 6 as the distance shrinks: the tiny-distance entry takes (almost) all mass
    d2 = d.copy()
    d2[3, 5] = 1e-300
    assert mlm.likelihood_matrix(d2)[3, 5] == pytest.approx(1.0)
    # other rows are untouched by the zero rows
    np.testing.assert_allclose(L[0], mlm.likelihood_matrix(d2)[0])


def test_softmax_equal_to_a_centroid_gives_zero_distance_and_finite_L():
    rng = np.random.default_rng(3)
    mu = rng.dirichlet(np.ones(K), size=K)
    s = random_softmax(rng, 50).astype(np.float64)
    y = np.arange(50) % K
    s[0] = mu[4]  # example of class 0 sits exactly on centroid 4
    D = mlm.min_distance_matrix(s, y, mu)
    assert D[0, 4] == 0.0
    L = mlm.likelihood_matrix(D)
    assert L[0, 4] == 1.0


@pytest.mark.parametrize("bad", [np.nan, -0.1, np.inf])
def test_likelihood_rejects_nan_negative_inf(bad):
    d = np.ones((K, K))
    d[2, 6] = bad
    with pytest.raises(ValueError, match="rows \\[2\\]"):
        mlm.likelihood_matrix(d)


def test_missing_class_row_is_inf_and_refused():
    rng = np.random.default_rng(4)
    s, y = random_softmax(rng, 40), np.arange(40) % 9  # class 9 absent
    D = mlm.min_distance_matrix(s, y, rng.dirichlet(np.ones(K), size=K))
    assert np.isinf(D[9, :9]).all()
    with pytest.raises(ValueError, match="no example"):
        mlm.likelihood_matrix(D)


def test_level_mean_std_matches_numpy():
    rng = np.random.default_rng(5)
    stack = np.stack([mlm.likelihood_matrix(rng.uniform(0.1, 1, (K, K))) for _ in range(10)])
    mean, std = mlm.level_mean_std(stack)
    np.testing.assert_allclose(mean, np.mean(stack, axis=0))
    np.testing.assert_allclose(std, np.std(stack, axis=0, ddof=0))
    assert np.isnan(np.diag(mean)).all() and np.isnan(np.diag(std)).all()
    np.testing.assert_allclose(np.nansum(mean, axis=1), 1.0)


def test_matrices_long_scopes_match_direct_computation():
    rng = np.random.default_rng(12)
    names, levels = ["blur", "noise"], [1, 2, 3]
    rows = []
    for name in ["clean", *names]:
        for lev in [0] if name == "clean" else levels:
            rows += [(name, lev)] * 60
    corr = np.array([r[0] for r in rows])
    lev = np.array([r[1] for r in rows])
    n = len(rows)
    s, y = random_softmax(rng, n), np.arange(n) % K
    mu = rng.dirichlet(np.ones(K), size=K)
    cells = mlm.cell_distance_matrices(s, y, corr, lev, mu)
    assert set(cells) == {("clean", 0)} | {(c, v) for c in names for v in levels}
    long = mlm.matrices_long(cells, clean="clean")
    assert long.groupby("scope").size().to_dict() == {
        "overall": 90,
        "clean": 90,
        "level": 270,
        "corruption": 180,
        "mean": 90,
        "std": 90,
    }

    def scope(name, **kw):
        sub = long[long.scope == name]
        for k, v in kw.items():
            sub = sub[sub[k] == v]
        return sub

    corrupted = corr != "clean"
    want = mlm.min_distance_matrix(s[corrupted], y[corrupted], mu)
    np.testing.assert_allclose(mlm.long_to_matrix(scope("overall"), "distance"), want)
    np.testing.assert_allclose(mlm.long_to_matrix(scope("overall")), mlm.likelihood_matrix(want))
    per_level = []
    for v in levels:
        m = corrupted & (lev == v)
        want = mlm.likelihood_matrix(mlm.min_distance_matrix(s[m], y[m], mu))
        per_level.append(want)
        np.testing.assert_allclose(mlm.long_to_matrix(scope("level", level=v)), want)
    m = corr == "noise"
    want = mlm.likelihood_matrix(mlm.min_distance_matrix(s[m], y[m], mu))
    np.testing.assert_allclose(mlm.long_to_matrix(scope("corruption", corruption="noise")), want)
    np.testing.assert_allclose(mlm.long_to_matrix(scope("mean")), np.mean(per_level, axis=0))
    np.testing.assert_allclose(mlm.long_to_matrix(scope("std")), np.std(per_level, axis=0))
    assert scope("mean")["distance"].isna().all()
    with_clean = mlm.matrices_long(cells, clean="clean", overall_includes_clean=True)
    want = mlm.min_distance_matrix(s, y, mu)
    got = with_clean[with_clean.scope == "overall"]
    np.testing.assert_allclose(mlm.long_to_matrix(got, "distance"), want)


@pytest.mark.parametrize("k", [2, 3, 7])
def test_matrix_functions_take_k_from_their_inputs(k):
    rng = np.random.default_rng(30 + k)
    n = 25 * k
    s, y = rng.dirichlet(np.full(k, 0.3), size=n), np.arange(n) % k
    mu = rng.dirichlet(np.ones(k), size=k)
    D = mlm.min_distance_matrix(s, y, mu, chunk=17)
    assert D.shape == (k, k) and np.isnan(np.diag(D)).all()
    off = ~np.eye(k, dtype=bool)
    np.testing.assert_allclose(D[off], direct_min_distances(s, y, mu)[off], rtol=1e-12)
    parts = [mlm.min_distance_matrix(s[a:b], y[a:b], mu) for a, b in [(0, 5), (5, n)]]
    np.testing.assert_array_equal(mlm.combine_min(parts), D)
    L = mlm.likelihood_matrix(D)
    np.testing.assert_allclose(np.nansum(L, axis=1), 1.0, rtol=1e-12)
    for t in range(k):
        for c in range(k):
            if c != t:
                denom = sum(1.0 / D[t, j] for j in range(k) if j != t)
                assert L[t, c] == pytest.approx((1.0 / D[t, c]) / denom, rel=1e-12)
    if k == 2:
        np.testing.assert_array_equal(L[off], 1.0)
    stack = np.stack([mlm.likelihood_matrix(rng.uniform(0.1, 1, (k, k))) for _ in range(4)])
    mean, std = mlm.level_mean_std(stack)
    np.testing.assert_allclose(mean, np.mean(stack, axis=0))
    np.testing.assert_allclose(std, np.std(stack, axis=0))
    long = mlm.matrix_to_long(L, "likelihood")
    assert len(long) == k * (k - 1)
    np.testing.assert_array_equal(mlm.long_to_matrix(long), L)
    # labels of the (n, K) softmax must lie in 0..K-1; centroids must be (K, K)
    with pytest.raises(ValueError, match=rf"0\.\.{k - 1}"):
        mlm.min_distance_matrix(s, np.r_[y[:-1], k], mu)
    with pytest.raises(ValueError, match=rf"centroids must have shape \({k}, {k}\)"):
        mlm.min_distance_matrix(s[:0], y[:0], np.eye(k + 1))


def test_matrix_shape_errors_name_k():
    with pytest.raises(ValueError, match=r"square \(K, K\) matrix, K >= 2"):
        mlm.likelihood_matrix(np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"K >= 2"):
        mlm.likelihood_matrix(np.ones((1, 1)))
    with pytest.raises(ValueError, match=r"stack of \(K, K\) matrices"):
        mlm.combine_min([])
    with pytest.raises(ValueError, match=r"stack of \(K, K\) matrices"):
        mlm.level_mean_std(np.ones((2, 3, 4)))
    big = mlm.matrix_to_long(np.ones((300, 300)), "d")
    assert big["true"].dtype == np.int64 and big["predicted"].max() == 299
    assert mlm.long_to_matrix(big, "d").shape == (300, 300)


@pytest.mark.slow
def test_package_imports_without_torch():
    """reliquant.mlm's matrix functions work on any classifier's softmax: importing the package
    (and using a non-torch name) does not import torch; the torch names load on first use."""
    import subprocess
    import sys

    code = (
        "import sys, reliquant.mlm as m; m.likelihood_matrix; m.class_centroids; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "assert callable(m.predict_softmax) and 'torch' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
