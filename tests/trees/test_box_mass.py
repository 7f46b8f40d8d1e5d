"""Box masses against closed forms, scipy and Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal, normal_interval


@settings(max_examples=100, deadline=None)
@given(st.floats(-9, 9), st.floats(0, 5))
def test_normal_interval_matches_scipy(a, w):
    b = a + w
    ref = stats.norm.cdf(b) - stats.norm.cdf(a) if a <= 0 else stats.norm.sf(a) - stats.norm.sf(b)
    assert normal_interval(np.array(a), np.array(b)) == pytest.approx(ref, rel=1e-9, abs=1e-300)


def test_independent_product_and_partition():
    rng = np.random.default_rng(0)
    mu, sigma = rng.normal(size=3), rng.uniform(0.2, 2, 3)
    noise = IndependentNormal(mu, sigma)
    cuts = [np.sort(rng.normal(size=3)) for _ in range(3)]
    edges = [np.concatenate([[-np.inf], c, [np.inf]]) for c in cuts]
    lo = np.array(np.meshgrid(*[e[:-1] for e in edges], indexing="ij")).reshape(3, -1).T
    hi = np.array(np.meshgrid(*[e[1:] for e in edges], indexing="ij")).reshape(3, -1).T
    m = noise.box_mass(lo, hi)
    assert m.sum() == pytest.approx(1.0, abs=1e-14)
    ref = np.prod(stats.norm.cdf(hi, mu, sigma) - stats.norm.cdf(lo, mu, sigma), axis=1)
    np.testing.assert_allclose(m, ref, rtol=1e-10, atol=1e-15)


def test_outside_mass_and_bounding_box():
    noise = IndependentNormal(np.zeros(25), 0.1)
    lo, hi = noise.bounding_box(0.99, "ellipsoid")
    h = np.sqrt(stats.chi2.ppf(0.99, 25))
    np.testing.assert_allclose(hi, 0.1 * h)
    out = noise.outside_mass(lo, hi)
    assert out == pytest.approx(1 - (1 - 2 * stats.norm.sf(h)) ** 25, rel=1e-9)
    assert out <= 0.01
    lo_u, hi_u = noise.bounding_box(1 - 1e-9, "union")
    assert noise.outside_mass(lo_u, hi_u) <= 1e-9


def test_correlated_matches_independent_and_monte_carlo():
    rng = np.random.default_rng(1)
    mu = np.array([0.2, -0.1, 0.5])
    cov = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]]) * 0.25
    noise = CorrelatedNormal(mu, cov, seed=3, abseps=1e-5)
    lo = np.array([[-0.3, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf], [0.0, -0.5, -np.inf]])
    hi = np.array([[0.6, 0.2, np.inf], [np.inf, np.inf, 0.3], [0.4, 0.5, 1.0]])
    m, err = noise.box_mass_with_error(lo, hi)
    x = noise.sample(400_000, rng)
    for i in range(3):
        inside = np.all((x > lo[i]) & (x <= hi[i]), axis=1).mean()
        assert abs(inside - m[i]) < 5 * np.sqrt(m[i] * (1 - m[i]) / len(x)) + 1e-4
    # one finite dimension is closed form
    assert m[1] == pytest.approx(stats.norm.cdf(0.3, 0.5, 0.5), abs=1e-14)
    assert np.all(err >= 0)
    # diagonal covariance agrees with the exact product
    ind = IndependentNormal(mu, 0.5)
    cor = CorrelatedNormal(mu, np.eye(3) * 0.25, seed=0, abseps=1e-7)
    np.testing.assert_allclose(cor.box_mass(lo, hi), ind.box_mass(lo, hi), atol=1e-5)


def test_bad_inputs():
    with pytest.raises(ValueError, match="sigma"):
        IndependentNormal(np.zeros(2), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="positive definite"):
        CorrelatedNormal(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="lo <= hi"):
        IndependentNormal(np.zeros(2), 1.0).box_mass(np.ones((1, 2)), np.zeros((1, 2)))


def test_samples_are_mu_plus_scaled_normals_bit_for_bit():
    """``sample`` (in place) gives exactly ``mu + sigma * e`` / ``mu + e L^T``."""
    rng = np.random.default_rng(2)
    mu, sigma = rng.normal(size=5), np.r_[rng.uniform(0.1, 2, 4), 0.0]
    x = IndependentNormal(mu, sigma).sample(1000, np.random.default_rng(9))
    ref = mu + sigma * np.random.default_rng(9).standard_normal((1000, 5))
    assert np.array_equal(x.view(np.int64), ref.view(np.int64))
    cov = np.full((5, 5), 0.3) + 0.7 * np.eye(5)
    cn = CorrelatedNormal(mu, cov)
    x = cn.sample(1000, np.random.default_rng(9))
    ref = mu + np.random.default_rng(9).standard_normal((1000, 5)) @ np.linalg.cholesky(cov).T
    assert np.array_equal(x.view(np.int64), ref.view(np.int64))
