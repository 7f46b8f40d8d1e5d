"""Uncertainty metrics (paper 000, eqs. 3-7) against scipy and independent formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import softmax
from scipy.stats import entropy

from reliquant.nbc.uncertainty import (
    conditional,
    ensemble_uncertainty,
    entropy_bits,
    u_entropy,
    u_max_prob,
)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20), k=st.integers(2, 5))
def test_conditional_and_single_model_metrics(seed: int, n: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    lj = np.log(rng.dirichlet(np.ones(n * k)).reshape(n, k)) - rng.uniform(0, 50)
    cond = conditional(lj)
    np.testing.assert_allclose(cond, softmax(lj, axis=1), rtol=1e-12)
    np.testing.assert_allclose(u_max_prob(cond), 1 - cond.max(axis=1))
    np.testing.assert_allclose(u_entropy(cond), entropy(cond, base=2, axis=1), atol=1e-12)


def test_zero_probabilities_and_empty_evidence() -> None:
    with np.errstate(divide="ignore"):
        lj = np.log(np.array([[0.5, 0.0, 0.5], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]))
    cond = conditional(lj)
    np.testing.assert_allclose(cond[0], [0.5, 0, 0.5])
    np.testing.assert_allclose(cond[1], [1 / 3] * 3)  # p(f) = 0: uniform (documented)
    np.testing.assert_allclose(u_entropy(cond), [1.0, np.log2(3), 0.0])
    np.testing.assert_allclose(u_max_prob(cond), [0.5, 2 / 3, 0.0])


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), m=st.integers(1, 12), n=st.integers(1, 10), k=st.integers(2, 4)
)
def test_ensemble_metrics_match_loops_and_mutual_information(
    seed: int, m: int, n: int, k: int
) -> None:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.5), size=(m, n))
    out = ensemble_uncertainty(p)
    for j in range(n):
        u_a = np.mean([entropy(p[i, j], base=2) for i in range(m)])  # eq. 5
        p_av = p[:, j].mean(axis=0)
        u_t = entropy(p_av, base=2)  # eq. 6
        # epistemic = mutual information = mean KL(p_i || p_av), an independent formula
        mi = np.mean([entropy(p[i, j], p_av, base=2) for i in range(m)])
        np.testing.assert_allclose(out["u_a"][j], u_a, atol=1e-12)
        np.testing.assert_allclose(out["u_t"][j], u_t, atol=1e-12)
        np.testing.assert_allclose(out["u_e"][j], mi, atol=1e-10)
    assert np.all(out["u_e"] >= 0)


def test_identical_members_have_no_epistemic_uncertainty() -> None:
    p = np.tile(np.array([[0.2, 0.3, 0.5]]), (10, 4, 1))
    out = ensemble_uncertainty(p)
    np.testing.assert_allclose(out["u_a"], out["u_t"])
    np.testing.assert_array_equal(out["u_e"], 0.0)


def test_validation() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        u_max_prob(np.array([[0.5, 0.6]]))
    with pytest.raises(ValueError, match=r"\(M, n, K\)"):
        ensemble_uncertainty(np.array([[0.5, 0.5]]))
    assert entropy_bits(np.array([0.0, 1.0])) == 0.0
