"""An anytime-valid confidence sequence for a mean in [0, 1]: the beta-binomial mixture.

Observations ``X_1, X_2, ...`` in [0, 1] with conditional mean ``p`` (here: a draw keeps the
label). For every candidate ``p`` and a mixing law ``q ~ Beta(rho p, rho (1 - p))``,

    M_n(p) = int prod_i (q/p)^{X_i} ((1-q)/(1-p))^{1-X_i} dBeta(q)
           = B(rho p + S_n, rho (1-p) + n - S_n) / B(rho p, rho (1-p)) / (p^S_n (1-p)^(n-S_n)),

``S_n = X_1 + ... + X_n``. Each factor has conditional mean <= 1 (it is convex in X_i and
equals 1 in expectation for a Bernoulli(p); Hoeffding's convexity argument), so M_n(p) is a
non-negative supermartingale when p is the true mean, and by Ville's inequality
``P(exists n: M_n(p) >= 1/alpha) <= alpha``. Hence

    C_n = { p : log M_n(p) < log(1/alpha) }

holds the true mean at *every* n simultaneously with probability >= 1 - alpha: stopping at
a data-dependent time (a target half-width reached, a time budget spent) keeps the coverage.
This is the conjugate (beta-binomial) mixture boundary of Robbins (1970) and of Howard,
Ramdas, McAuliffe & Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Ann. Statist. 49(2), for sub-Bernoulli observations. The running intersection of
the C_n is again a confidence sequence.

``rho`` (the prior's strength) only moves where the boundary is tightest: by the
normal-mixture analogy (Howard et al. 2021, eq. (3.14)), width at a planned ``n*`` is close
to minimal for ``rho + 1 = n* / (2 log(1/alpha) + log(1 + 2 log(1/alpha)))``
(:func:`tuned_rho`); it must be fixed before the observations are seen.

Public API: :func:`log_mixture`, :func:`tuned_rho`, :func:`mixture_interval`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln, expit, logit

__all__ = [
    "log_mixture",
    "mixture_interval",
    "tuned_rho",
]


def log_mixture(p: np.ndarray, s: float, n: float, rho: float) -> np.ndarray:
    """``log M_n(p)`` (module docstring) for ``0 < p < 1``."""
    p = np.asarray(p, dtype=np.float64)
    a, b = rho * p, rho * (1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = betaln(a + s, b + n - s) - betaln(a, b) - s * np.log(p) - (n - s) * np.log1p(-p)
    return np.where(np.isnan(out), np.inf, out)  # p rounded to 0 or 1: outside


def tuned_rho(planned_n: float, alpha: float) -> float:
    """Prior strength that makes the boundary tight around ``planned_n`` observations."""
    la = math.log(1.0 / alpha)
    return max(1.0, planned_n / (2.0 * la + math.log(1.0 + 2.0 * la)) - 1.0)


_FAR_LO, _FAR_HI = -700.0, 36.0  # logit(p) for p ~ 1e-304 and 1 - 2.3e-16
# the logit grid of mixture_interval and the parts of log_mixture that depend on p only
_GRID = np.linspace(_FAR_LO, _FAR_HI, 1001)
_GRID_STEP = _GRID[1] - _GRID[0]
_GRID_P = expit(_GRID)
_GRID_Q = 1.0 - _GRID_P
with np.errstate(divide="ignore"):
    _GRID_LOG_P = np.log(_GRID_P)
    _GRID_LOG_Q = np.log1p(-_GRID_P)
for _a in (_GRID, _GRID_P, _GRID_Q, _GRID_LOG_P, _GRID_LOG_Q):
    _a.setflags(write=False)


def _grid_log_mixture(s: float, n: float, rho: float) -> np.ndarray:
    """:func:`log_mixture` on the logit grid (``p = expit(_GRID)``), the same operations on
    the same numbers, its p-only parts computed once (NaN where it has +inf: both compare
    False against the threshold)."""
    a, b = rho * _GRID_P, rho * _GRID_Q
    with np.errstate(divide="ignore", invalid="ignore"):
        return betaln(a + s, b + n - s) - betaln(a, b) - s * _GRID_LOG_P - (n - s) * _GRID_LOG_Q


def _edge(s: float, n: float, rho: float, thr: float, x_in: float, x_out: float) -> float:
    """Bisection in logit(p) between a point inside C_n and one outside.

    Each step evaluates :func:`log_mixture` at one midpoint: the same ufuncs on the same
    scalars, without its array handling (a NaN, ``p`` rounded to 0 or 1, is outside: it
    compares False)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(200):
            mid = 0.5 * (x_in + x_out)
            p = expit(mid)
            a, b = rho * p, rho * (1.0 - p)
            log_m = betaln(a + s, b + n - s) - betaln(a, b) - s * np.log(p) - (n - s) * np.log1p(-p)
            if log_m < thr:
                x_in = mid
            else:
                x_out = mid
            if abs(x_out - x_in) < 1e-12 * max(1.0, abs(x_in)):
                break
    return x_out


def mixture_interval(s: float, n: float, alpha: float, rho: float) -> tuple[float, float]:
    """The interval hull of C_n for ``S_n = s`` after ``n`` observations.

    The edges are found by bisection in ``logit(p)`` from ``p_hat = s/n`` (always inside,
    since the mixture never exceeds the maximum likelihood) and then widened, if needed, to
    cover every point of a logit grid that lies in C_n, so the result contains C_n.
    """
    if n <= 0:
        return 0.0, 1.0
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    thr = math.log(1.0 / alpha)
    phat = min(max(s / n, 1e-300), 1.0 - 1e-16)
    x_hat = float(logit(phat))
    far_lo, far_hi = _FAR_LO, _FAR_HI
    lo_x = far_lo if s <= 0 else _edge(s, n, rho, thr, x_hat, far_lo)
    hi_x = far_hi if s >= n else _edge(s, n, rho, thr, x_hat, far_hi)
    grid, step = _GRID, _GRID_STEP
    inside = grid[_grid_log_mixture(s, n, rho) < thr]
    if inside.size and inside[0] < lo_x:  # C_n is not an interval: take its hull
        lo_x = _edge(s, n, rho, thr, inside[0], max(far_lo, inside[0] - step))
    if inside.size and inside[-1] > hi_x:
        hi_x = _edge(s, n, rho, thr, inside[-1], min(far_hi, inside[-1] + step))
    lo_p = 0.0 if lo_x <= far_lo else float(expit(lo_x))
    hi_p = 1.0 if hi_x >= far_hi else float(expit(hi_x))
    return lo_p, hi_p
