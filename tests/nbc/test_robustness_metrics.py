"""eps_glob (eq. 13) and eps_loc (Theorem 6.1) against brute-force searches over the perturbation.

The brute force never uses eq. 13 or eq. 20: for every eps of a fine grid it enumerates the
extreme points of the eps-contamination sets (Definition 5.5), plus random interior points, and
checks Theorem 5.1's condition (min p'(c_hat, f) > 0 and max ratio < 1) on them. The
condition is linear (global) or multilinear (local) in the perturbed mass functions, so its
extremes over the (product of) polytopes are attained at vertices and the search is exact up
to the grid step.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.nbc.classifier import fit_nbc, log_factors, log_joint
from reliquant.nbc.robustness_metrics import (
    eps_glob,
    eps_loc,
    eps_loc_scalar,
    log_eps_glob,
    n_bisection_steps,
)

GRID = np.linspace(0.0, 0.5, 2001)  # step 2.5e-4
STEP = GRID[1] - GRID[0]


def _theorem51_robust(p_hat: np.ndarray, p_other: np.ndarray) -> bool:
    """Theorem 5.1 on a finite set of perturbed mass functions (rows): robust iff
    min p'(c_hat, f) > 0 and max_{c != c_hat} max_{p'} p'(c, f) / p'(c_hat, f) < 1."""
    if p_hat.min() <= 0:
        return False
    return bool((p_other / p_hat[:, None]).max() < 1)


def _first_not_robust(robust_at) -> float:
    """Smallest grid eps at which ``robust_at(eps)`` is False.

    Robustness can only be lost as eps grows (the perturbations are nested, Definition 5.3),
    so a binary search over the grid finds the first failure exactly.
    """
    lo, hi = 0, len(GRID)  # invariant: robust on GRID[:lo], not robust from GRID[hi] on
    while lo < hi:
        mid = (lo + hi) // 2
        if robust_at(GRID[mid]):
            lo = mid + 1
        else:
            hi = mid
    return float(GRID[lo]) if lo < len(GRID) else np.inf


def _bf_eps_glob(joint: np.ndarray, f: int, c_hat: int, rng: np.random.Generator) -> float:
    """Smallest grid eps at which c_hat is not robust w.r.t. M_{p, eps} (eqs. 11-12)."""
    k, nf = joint.shape
    others = [c for c in range(k) if c != c_hat]
    stars = np.concatenate([np.eye(k * nf), rng.dirichlet(np.ones(k * nf), size=50)])
    stars = stars.reshape(-1, k, nf)

    def robust_at(eps: float) -> bool:
        pert = (1 - eps) * joint[None] + eps * stars  # all p' considered, (S, K, F)
        return _theorem51_robust(pert[:, c_hat, f], pert[:, others, f])

    return _first_not_robust(robust_at)


def _bf_eps_loc(prior, conds, f, c_hat, rng) -> float:
    """Smallest grid eps at which c_hat is not robust w.r.t. P^loc_eps (eq. 19)."""
    k = len(prior)
    others = [c for c in range(k) if c != c_hat]
    # extreme points of each local contamination set (+ random interior points)
    prior_stars = np.concatenate([np.eye(k), rng.dirichlet(np.ones(k), size=2)])
    cond_stars = [
        np.concatenate([np.eye(t.shape[1]), rng.dirichlet(np.ones(t.shape[1]), 2)]) for t in conds
    ]

    def robust_at(eps: float) -> bool:
        pc = (1 - eps) * prior[None] + eps * prior_stars  # (A, K)
        # per class: product of the perturbed p'(f_i | c) over all choices of contaminating
        # mass functions (chosen separately for every (class, feature) pair)
        per_class = []
        for c in range(k):
            vals = [
                (1 - eps) * conds[i][c, f[i]] + eps * cond_stars[i][:, f[i]]
                for i in range(len(conds))
            ]
            per_class.append(np.array([np.prod(v) for v in itertools.product(*vals)]))
        # p'(c, f) on the whole product set, one row per (a, j_0, ..., j_{K-1})
        grids = np.meshgrid(
            np.arange(len(pc)), *[np.arange(len(v)) for v in per_class], indexing="ij"
        )
        a = grids[0].ravel()
        joint = np.stack([pc[a, c] * per_class[c][grids[c + 1].ravel()] for c in range(k)], axis=1)
        return _theorem51_robust(joint[:, c_hat], joint[:, others])

    return _first_not_robust(robust_at)


@pytest.mark.parametrize("seed", range(6))
def test_eps_glob_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, nf = 3, 4
    joint = rng.dirichlet(np.full(k * nf, 0.7)).reshape(k, nf)
    lj = np.log(joint.T)  # rows = feature vectors
    ours = eps_glob(lj)
    for f in range(nf):
        c_hat = int(np.argmax(joint[:, f]))
        bf = _bf_eps_glob(joint, f, c_hat, rng)
        assert bf - STEP - 1e-12 < ours[f] <= bf + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_eps_loc_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n_values = [2, 3]
    n = int(rng.integers(3, 12))
    X = np.stack([rng.integers(0, v, n) for v in n_values], axis=1)
    y = rng.integers(0, 3, n)
    m = fit_nbc(X, y, 3, n_values, float(rng.choice([0.1, 0.5, 1.0])))
    prior = np.exp(m.log_prior)
    conds = [np.exp(t) for t in m.log_cond]
    F = np.array(list(itertools.product(*[range(v) for v in n_values])))
    ours = eps_loc(log_factors(m, F))
    for j, f in enumerate(F):
        c_hat = int(np.argmax(log_joint(m, f[None])[0]))
        bf = _bf_eps_loc(prior, conds, f, c_hat, rng)
        assert bf - STEP - 1e-12 < ours[j] <= bf + 1e-12, (f, ours[j], bf)


def test_zero_when_not_unique_maximiser() -> None:
    with np.errstate(divide="ignore"):
        lj = np.log(np.array([[0.2, 0.2, 0.1], [0.0, 0.0, 0.0], [0.3, 0.1, 0.1]]))
    np.testing.assert_array_equal(eps_glob(lj)[:2], 0.0)
    np.testing.assert_allclose(eps_glob(lj)[2], 0.2 / 1.2)
    # c_hat that is not the maximiser: not robust at eps = 0
    assert eps_glob(lj[2:], c_hat=np.array([1]))[0] == 0.0
    lf = np.stack([np.log([[0.5, 0.4], [0.5, 0.4], [0.2, 0.5]])] * 2)
    with np.errstate(divide="ignore"):
        lf[1] = np.log([[0.0, 0.5], [0.0, 0.5], [0.0, 0.5]])
    out = eps_loc(lf)
    assert out[0] == 0.0 and out[1] == 0.0


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(2, 4),
    m=st.integers(1, 6),
    n=st.integers(1, 20),
)
def test_vectorised_eps_loc_equals_scalar_bisection(seed: int, k: int, m: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    lf = np.log(rng.uniform(0.01, 1.0, size=(n, k, m)))
    fast = eps_loc(lf)
    slow = [eps_loc_scalar(lf[j, :, 0], lf[j, :, 1:], tol=1e-12) for j in range(n)]
    np.testing.assert_allclose(fast, slow, atol=1e-10, rtol=0)
    assert np.all((fast >= 0) & (fast <= 0.5))
    # the root satisfies phi(eps) = p(c_hat, f) (Theorem 6.1)
    c_hat = np.argmax(lf.sum(2), 1)
    t = fast / (1 - fast)
    lin = np.exp(lf)
    phi = np.prod(lin + t[:, None, None], axis=2)
    phi[np.arange(n), c_hat] = -np.inf
    target = np.exp(lf.sum(2))[np.arange(n), c_hat]
    np.testing.assert_allclose(phi.max(1)[fast > 0], target[fast > 0], rtol=1e-9)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 5), n=st.integers(1, 30))
def test_eps_glob_closed_form_and_bounds(seed: int, k: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k * n)).reshape(n, k)
    out = eps_glob(np.log(p))
    s = np.sort(p, axis=1)
    d = s[:, -1] - s[:, -2]
    np.testing.assert_allclose(out, d / (1 + d), rtol=1e-9, atol=1e-15)
    assert np.all((out >= 0) & (out <= 0.5))


def test_many_features_do_not_underflow() -> None:
    """500 features: p(c, f) ~ 1e-400 and below; compare with 60-digit arithmetic."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    rng = np.random.default_rng(7)
    k, n_feat = 3, 500
    lf = np.log(rng.uniform(0.01, 0.3, size=(1, k, n_feat + 1)))
    lf[0, 0] = np.log(rng.uniform(0.05, 0.3, size=n_feat + 1))  # class 0 is the maximiser
    assert np.exp(lf.sum(2)).max() == 0.0  # the linear-domain joint underflows
    ours = eps_loc(lf)[0]
    assert 0 < ours < 0.5
    ps = [[mpmath.e ** mpmath.mpf(float(v)) for v in row] for row in lf[0]]
    target = mpmath.fprod(ps[0])

    def g(eps):
        t = eps / (1 - eps)
        return max(mpmath.fprod([p + t for p in ps[c]]) for c in (1, 2)) - target

    lo, hi = mpmath.mpf(0), mpmath.mpf("0.5")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if g(mid) >= 0 else (mid, hi)
    assert abs(ours - float(lo)) < 1e-12
    # eps_glob is tiny but its logarithm stays finite and exact
    lj = lf.sum(2)
    top = sorted(
        (mpmath.fsum([mpmath.mpf(float(v)) for v in lf[0, c]]) for c in range(k)), reverse=True
    )
    d = mpmath.e ** top[0] - mpmath.e ** top[1]
    np.testing.assert_allclose(log_eps_glob(lj)[0], float(mpmath.log(d / (1 + d))), rtol=1e-10)


def test_input_validation() -> None:
    with pytest.raises(ValueError, match=r"shape \(n, K, M\)"):
        eps_loc(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="log-probabilities"):
        eps_loc(np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match=r"shape \(n, K\)"):
        eps_glob(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="tol"):
        n_bisection_steps(0.0)
    assert n_bisection_steps(1e-12) == 39


def _mp_eps_loc(row: np.ndarray) -> float:
    """eps_loc of one instance (K, M) by 60-digit bisection (mpmath), c_hat = argmax."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    ps = [[mpmath.e ** mpmath.mpf(float(v)) for v in r] for r in row]
    joints = [mpmath.fprod(p) for p in ps]
    c_hat = max(range(len(ps)), key=lambda c: joints[c])

    def g(eps):
        t = eps / (1 - eps)
        return max(mpmath.fprod([p + t for p in ps[c]]) for c in range(len(ps)) if c != c_hat)

    lo, hi = mpmath.mpf(0), mpmath.mpf("0.5")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if g(mid) >= joints[c_hat] else (mid, hi)
    return float(lo)


@pytest.mark.parametrize("tiny", [-750.0, -5000.0])
def test_factors_below_float_range_use_exact_log_path(tiny: float) -> None:
    rng = np.random.default_rng(11)
    lf = np.log(rng.uniform(0.05, 0.9, size=(4, 3, 6)))
    lf[:, 1, 2] = tiny  # p(f_i | c) below exp(-745): exp() underflows to 0
    lf[:, 0, :] = np.log(rng.uniform(0.3, 0.9, size=(4, 6)))
    ours = eps_loc(lf)
    for j in range(lf.shape[0]):
        assert abs(ours[j] - _mp_eps_loc(lf[j])) < 1e-12


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 40), spread=st.floats(0.5, 60.0))
def test_eps_loc_certified_to_tolerance(seed: int, m: int, spread: float) -> None:
    """Against the scalar reference over wide ranges of factor magnitudes (chunked products).

    The scalar reference works in the linear domain, so joints stay above ~1e-260 here.
    """
    rng = np.random.default_rng(seed)
    lf = -rng.uniform(0, min(spread, 600.0 / m), size=(30, 3, m))
    fast = eps_loc(lf)
    slow = [eps_loc_scalar(lf[j, :, 0], lf[j, :, 1:]) for j in range(30)]
    np.testing.assert_allclose(fast, slow, atol=1e-12, rtol=0)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 12),
    spread=st.floats(0.1, 40.0),
    iters=st.integers(0, 8),
)
def test_newton_lower_bound_never_overshoots(seed: int, m: int, spread: float, iters: int) -> None:
    """The monotone Newton iterates of eps_loc's solver stay below the root at every step
    (the property the solver's bracket relies on) and reach it; roots by scipy's brentq."""
    from scipy.optimize import brentq

    from reliquant.nbc.robustness_metrics import _newton_lower_bound

    rng = np.random.default_rng(seed)
    n, k1 = 6, 3
    p = np.exp(-rng.uniform(0, spread, size=(m, n, k1)))
    h0 = np.log(p).sum(axis=0).max(axis=1)  # max_c h_c(0) < target <= 0 <= h_c(1)
    target = h0 * rng.uniform(0.0, 0.999, size=n)

    def h(t: float, i: int, c: int) -> float:
        return float(np.log(p[:, i, c] + t).sum() - target[i])

    truth = np.array(
        [min(brentq(h, 0.0, 1.0, args=(i, c), xtol=1e-15) for c in range(k1)) for i in range(n)]
    )
    low = _newton_lower_bound(p, target, max_iter=iters, tol=0.0)
    assert np.all(low <= truth + 4e-15 * (1 + truth))
    full = _newton_lower_bound(p, target, max_iter=200, tol=1e-16)
    np.testing.assert_allclose(full, truth, atol=1e-12, rtol=0)


# ------------------------------------------------------------------------- edge cases
def test_a_single_valued_feature_is_not_perturbed():
    """A feature with one possible value has factor 1 under any contamination: eps_loc equals
    that of the model without the column (0.0806 / 0.2019), not 0.0647 / 0.1682."""
    X = np.array([[0, 0], [0, 0], [1, 0], [1, 0], [0, 0]])
    y = np.array([0, 0, 1, 1, 1])
    with_col = fit_nbc(X, y, 2, [2, 1], 1.0)
    without = fit_nbc(X[:, :1], y, 2, [2], 1.0)
    inst = np.array([[0, 0], [1, 0]])
    ours = eps_loc(log_factors(with_col, inst))
    ref = eps_loc(log_factors(without, inst[:, :1]))
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    np.testing.assert_allclose(ours, [0.0806, 0.2019], atol=5e-5)
    scalar = [
        eps_loc_scalar(without.log_prior, [[without.log_cond[0][c, v]] for c in range(2)])
        for v in (0, 1)
    ]
    np.testing.assert_allclose(ours, scalar, atol=1e-11)
    np.testing.assert_allclose(log_factors(with_col, inst).sum(2), log_joint(with_col, inst))


@pytest.mark.parametrize("c_hat", [[5, 0], [-1, 0], [0.0, 1.0]])
def test_c_hat_out_of_range_raises(c_hat):
    lj = np.log(np.array([[0.3, 0.2], [0.1, 0.4]]))
    with pytest.raises(ValueError, match="c_hat"):
        eps_glob(lj, np.array(c_hat))
    with pytest.raises(ValueError, match="c_hat"):
        eps_loc(np.stack([lj, lj], axis=2) / 2, np.array(c_hat))


@pytest.mark.parametrize(("n_classes", "n_values"), [(0, [2]), (2, [0]), (2, [3, 0])])
def test_empty_classes_or_values_raise(n_classes, n_values):
    with pytest.raises(ValueError, match="n_classes|n_values"):
        fit_nbc(np.zeros((2, len(n_values)), int), np.zeros(2, int), n_classes, n_values, 1.0)


def test_eps_glob_refuses_rows_that_are_not_a_joint():
    with pytest.raises(ValueError, match=r"row 1 sums to p = 1.5 > 1"):
        eps_glob(np.log(np.array([[0.3, 0.2], [0.9, 0.6]])))
    eps_glob(np.log(np.array([[0.5, 0.5]])))  # a posterior sums to 1: allowed
