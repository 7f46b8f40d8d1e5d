"""The beta-binomial mixture confidence sequence (reliquant.trees.confidence): its interval
against a plain one-step-at-a-time bisection of log_mixture (bit for bit) and against a
brute-force scan of C_n."""

import math

import numpy as np
import pytest
from scipy.special import expit, logit

from reliquant.trees.confidence import log_mixture, mixture_interval, tuned_rho


def _reference_edge(s, n, rho, thr, x_in, x_out):
    """Bisection in logit(p), one log_mixture call per step (the plain algorithm)."""
    for _ in range(200):
        mid = 0.5 * (x_in + x_out)
        if float(log_mixture(expit(mid), s, n, rho)) < thr:
            x_in = mid
        else:
            x_out = mid
        if abs(x_out - x_in) < 1e-12 * max(1.0, abs(x_in)):
            break
    return x_out


def _reference_interval(s, n, alpha, rho):
    """mixture_interval written plainly: log_mixture on arrays and scalars throughout."""
    if n <= 0:
        return 0.0, 1.0
    thr = math.log(1.0 / alpha)
    phat = min(max(s / n, 1e-300), 1.0 - 1e-16)
    x_hat = float(logit(phat))
    far_lo, far_hi = -700.0, 36.0
    lo_x = far_lo if s <= 0 else _reference_edge(s, n, rho, thr, x_hat, far_lo)
    hi_x = far_hi if s >= n else _reference_edge(s, n, rho, thr, x_hat, far_hi)
    grid = np.linspace(far_lo, far_hi, 1001)
    inside = grid[log_mixture(expit(grid), s, n, rho) < thr]
    step = grid[1] - grid[0]
    if inside.size and inside[0] < lo_x:
        lo_x = _reference_edge(s, n, rho, thr, inside[0], max(far_lo, inside[0] - step))
    if inside.size and inside[-1] > hi_x:
        hi_x = _reference_edge(s, n, rho, thr, inside[-1], min(far_hi, inside[-1] + step))
    lo_p = 0.0 if lo_x <= far_lo else float(expit(lo_x))
    hi_p = 1.0 if hi_x >= far_hi else float(expit(hi_x))
    return lo_p, hi_p


def _cases():
    rng = np.random.default_rng(7)
    out = []
    for n in [1, 2, 3, 10, 57, 1000, 4096, 131_072, 393_216, 1_000_000]:
        ss = {0, 1, n // 2, n - 1, n, *rng.integers(0, n + 1, 6).tolist()}
        for s in sorted(x for x in ss if 0 <= x <= n):
            for alpha, rho in [(0.01, tuned_rho(1_000_000, 0.01)), (0.05, 1.0), (0.2, 300.0)]:
                out.append((int(s), int(n), alpha, rho))
    return out


def test_interval_is_the_plain_bisection_bit_for_bit():
    cases = _cases()
    assert len(cases) > 200
    for case in cases:
        assert mixture_interval(*case) == _reference_interval(*case), case


@pytest.mark.parametrize("s,n", [(0, 50), (17, 50), (50, 50), (9_990, 10_000), (123, 4_096)])
def test_interval_holds_every_point_of_the_sequence(s, n):
    """Brute force: every p of a fine grid with log M_n(p) < log(1/alpha) lies inside, and
    the edges are the boundary (just outside them, the sequence excludes p)."""
    alpha, rho = 0.05, tuned_rho(4 * n, 0.05)
    lo, hi = mixture_interval(s, n, alpha, rho)
    p = np.linspace(1e-9, 1 - 1e-9, 200_001)
    member = log_mixture(p, s, n, rho) < math.log(1 / alpha)
    assert member.any()
    assert lo <= p[member].min() and p[member].max() <= hi
    thr = math.log(1 / alpha)
    if lo > 0:
        assert log_mixture(np.array([lo * (1 - 1e-6)]), s, n, rho)[0] >= thr
    if hi < 1:
        assert log_mixture(np.array([1 - (1 - hi) * (1 - 1e-6)]), s, n, rho)[0] >= thr
