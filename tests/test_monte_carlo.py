"""Monte Carlo baseline: CI coverage and agreement with a closed form."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.monte_carlo import clopper_pearson, monte_carlo_robustness


def test_threshold_classifier_closed_form():
    """f(x) = 1[x_0 > 0.3]; mu_0 = 0.5, sigma 0.2: R = P(x_0 > 0.3) = Phi(1)."""
    mu = np.array([0.5, 0.0])

    def predict(X):
        return (X[:, 0] > 0.3).astype(int)

    res = monte_carlo_robustness(
        predict, IndependentNormal(mu, 0.2), mu, 200_000, np.random.default_rng(0), chunk=30_000
    )
    truth = stats.norm.cdf(1.0)
    assert res.ci_low <= truth <= res.ci_high
    assert res.n_draws == 200_000
    assert res.estimate == res.n_agree / res.n_draws


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)
    with pytest.raises(ValueError):
        clopper_pearson(5, 3)


def test_reproducible_with_seed():
    mu = np.zeros(3)

    def predict(X):
        return (X.sum(axis=1) > 0.1).astype(int)

    a = monte_carlo_robustness(
        predict, IndependentNormal(mu, 1.0), mu, 5000, np.random.default_rng(7)
    )
    b = monte_carlo_robustness(
        predict, IndependentNormal(mu, 1.0), mu, 5000, np.random.default_rng(7)
    )
    assert a.n_agree == b.n_agree
