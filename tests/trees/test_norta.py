"""NORTA: rank-correlation map, marginal transforms, box masses vs Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reliquant.trees.box_mass import NortaNoise
from reliquant.trees.norta import (
    ChiSquareMarginal,
    ExponentialMarginal,
    LognormalMarginal,
    NormalMarginal,
    check_correlation,
    from_normal_scores,
    spearman_to_normal_corr,
    to_normal_scores,
)

MARGINALS = [
    NormalMarginal(1.0, 0.3),
    ExponentialMarginal(0.5, 0.2),
    ChiSquareMarginal(3.0, loc=-1.0, scale=0.1),
    LognormalMarginal(0.5, loc=2.0, scale=0.4),
]


def test_spearman_map_matches_sampled_spearman():
    """Normal with correlation 2 sin(pi rho/6) has Spearman correlation rho."""
    rng = np.random.default_rng(0)
    rho = 0.6
    r = spearman_to_normal_corr(np.array([[1.0, rho], [rho, 1.0]]))
    assert r[0, 0] == 1.0
    z = rng.multivariate_normal(np.zeros(2), r, size=200_000)
    assert stats.spearmanr(z[:, 0], z[:, 1]).statistic == pytest.approx(rho, abs=5e-3)


def test_not_positive_definite_is_an_error():
    rho = np.array([[1, 0.9, -0.9], [0.9, 1, 0.9], [-0.9, 0.9, 1.0]])
    with pytest.raises(ValueError, match="not positive definite"):
        check_correlation(spearman_to_normal_corr(rho))
    with pytest.raises(ValueError, match="not positive definite"):
        NortaNoise(np.zeros(3), [NormalMarginal(0, 1)] * 3, spearman_to_normal_corr(rho))


@pytest.mark.parametrize("m", MARGINALS, ids=lambda m: type(m).__name__)
def test_normal_scores_roundtrip(m):
    z = np.array([-5.0, -2.0, -0.1, 0.0, 0.3, 2.5, 7.5])  # lower tail limited by loc + tiny
    x = from_normal_scores(m, z)
    np.testing.assert_allclose(to_normal_scores(m, x), z, atol=1e-6)


def test_norta_box_mass_matches_sampler():
    rng = np.random.default_rng(4)
    corr = spearman_to_normal_corr(
        np.array(
            [[1, 0.3, 0.2, 0.1], [0.3, 1, 0.25, 0.2], [0.2, 0.25, 1, 0.15], [0.1, 0.2, 0.15, 1.0]]
        )
    )
    noise = NortaNoise(np.array([1.0, 0.5, -1.0, 2.0]), MARGINALS, corr, seed=1, abseps=1e-5)
    x = noise.sample(300_000, rng)
    q = np.quantile(x, [0.2, 0.7], axis=0)
    lo = np.array(
        [q[0], [-np.inf, q[0, 1], -np.inf, q[0, 3]], [q[1, 0], -np.inf, q[0, 2], -np.inf]]
    )
    hi = np.array([q[1], [q[1, 0], np.inf, q[1, 2], np.inf], [np.inf, q[1, 1], np.inf, q[1, 3]]])
    m, _ = noise.box_mass_with_error(lo, hi)
    for i in range(len(lo)):
        frac = np.all((x > lo[i]) & (x <= hi[i]), axis=1).mean()
        assert abs(frac - m[i]) < 5 * np.sqrt(m[i] * (1 - m[i]) / len(x)) + 2e-4
    # marginals of the sampler follow the specs
    for i, marg in enumerate(MARGINALS):
        assert stats.kstest(x[:20000, i], marg.cdf).pvalue > 1e-3


def test_norta_identity_is_exact_product():
    noise = NortaNoise(np.zeros(4), MARGINALS, np.eye(4))
    assert noise.independent
    lo = np.array([[0.8, 0.6, -0.9, 2.3]])
    hi = np.array([[1.2, 0.9, -0.5, 2.6]])
    ref = np.prod([m.cdf(b) - m.cdf(a) for m, a, b in zip(MARGINALS, lo[0], hi[0], strict=True)])
    assert noise.box_mass(lo, hi)[0] == pytest.approx(ref, rel=1e-10)


def test_scipy_frozen_marginals_accepted():
    noise = NortaNoise(np.zeros(2), [stats.norm(0, 1), stats.expon(0, 1)], np.eye(2))
    assert noise.box_mass(np.array([[-1.0, -5.0]]), np.array([[1.0, 1.0]]))[0] == pytest.approx(
        (stats.norm.cdf(1) - stats.norm.cdf(-1)) * stats.expon.cdf(1), rel=1e-12
    )


@pytest.mark.parametrize("m", MARGINALS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("z", [[-1.5, -0.2, 0.0], [0.3, 2.0], [-0.7, 1.1, 0.0, 4.0], []])
def test_from_normal_scores_takes_each_side_from_its_tail(m, z):
    """F^{-1}(Phi(z)) by ppf at z <= 0 and isf(Phi(-z)) above, value by value: also when
    every value lies on one side (or none is given)."""
    z = np.array(z, dtype=np.float64)
    want = [float(m.ppf(stats.norm.cdf(v))) if v <= 0 else float(m.isf(stats.norm.cdf(-v)))
            for v in z]  # fmt: skip
    np.testing.assert_array_equal(from_normal_scores(m, z), np.array(want, dtype=np.float64))
