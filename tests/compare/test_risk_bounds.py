"""The exact binomial bound and p-value of a selective risk, against root finding on scipy's
binomial CDF and against a Monte Carlo coverage check."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from reliquant.compare import binomial_p_value, binomial_upper_bound


@pytest.mark.parametrize(("k", "n", "delta"), [(0, 10, 0.1), (3, 50, 0.05), (12, 400, 0.01),
                                               (49, 50, 0.2), (0, 1, 0.5), (7, 1000, 0.001)])  # fmt: skip
def test_upper_bound_solves_the_binomial_tail(k, n, delta):
    """b with Binom-CDF(k; n, b) = delta (Geifman & El-Yaniv's Lemma 3.1), by root finding."""
    want = optimize.brentq(lambda p: stats.binom.cdf(k, n, p) - delta, 1e-15, 1 - 1e-15,
                           xtol=1e-15, rtol=1e-13)  # fmt: skip
    assert binomial_upper_bound(k, n, delta) == pytest.approx(want, rel=1e-9)


def test_upper_bound_edges_and_broadcast():
    np.testing.assert_array_equal(binomial_upper_bound([5, 0], [5, 0], 0.1), [1.0, 1.0])
    b = binomial_upper_bound(
        np.array([[1], [2]]), np.array([10, 20, 30]), np.array([0.1, 0.05, 0.01])
    )
    assert b.shape == (2, 3) and (np.diff(b, axis=0) > 0).all()


def test_bound_and_p_value_are_dual():
    """p <= delta exactly when the bound at delta is <= alpha."""
    rng = np.random.default_rng(0)
    n = rng.integers(1, 500, 400)
    k = rng.integers(0, n + 1)
    alpha, delta = 0.07, 0.05
    p = binomial_p_value(k, n, alpha)
    b = binomial_upper_bound(k, n, delta)
    near = np.abs(b - alpha) < 1e-9
    np.testing.assert_array_equal((p <= delta)[~near], (b <= alpha)[~near])


def test_bound_covers_by_simulation():
    """P(R > b) <= delta at R = 0.05 over 20000 binomial draws (3 standard errors)."""
    rng = np.random.default_rng(1)
    k = rng.binomial(200, 0.05, 20_000)
    miss = (binomial_upper_bound(k, 200, 0.1) < 0.05).mean()
    assert miss <= 0.1 + 3 * np.sqrt(0.09 / 20_000)


def test_p_value_of_no_data_is_one():
    assert binomial_p_value(0, 0, 0.1) == 1.0


@pytest.mark.parametrize(("call", "match"), [
    (lambda: binomial_upper_bound(3, 2, 0.1), "k <= n"),
    (lambda: binomial_upper_bound(1.5, 4, 0.1), "integer"),
    (lambda: binomial_upper_bound(1, 4, 1.0), "delta"),
    (lambda: binomial_p_value(1, 4, 0.0), "alpha"),
])  # fmt: skip
def test_bad_counts_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
