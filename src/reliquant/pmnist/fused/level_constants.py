"""What the fused kernels take per level, computed in Python: a filter's symmetry as scipy
tests it (:func:`symmetry`) and the uniforms at which a Poisson count steps
(:func:`poisson_breaks`)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from reliquant.pmnist import corruptions as C

__all__ = [
    "poisson_breaks",
    "symmetry",
]


def symmetry(weights: np.ndarray) -> int:
    """scipy's test: odd length and ``|w[c+i] -/+ w[c-i]| <= DBL_EPSILON`` (1 / -1), else 0."""
    w = np.asarray(weights, dtype=np.float64)
    k, h = w.size, w.size // 2
    if k % 2 == 0:
        return 0
    eps = np.finfo(np.float64).eps
    if all(abs(w[h + i] - w[h - i]) <= eps for i in range(1, h + 1)):
        return 1
    if all(abs(w[h + i] + w[h - i]) <= eps for i in range(1, h + 1)):
        return -1
    return 0


def poisson_breaks(lam: float) -> np.ndarray | None:
    """The uniforms at which :func:`~reliquant.pmnist.corruptions.poisson_from_uniform` steps.

    That function returns ``#{j : F(j) <= u}`` for ``u < 1/2`` and
    ``#{j : -S(j) <= -(1 - u)}`` for ``u >= 1/2``. Uniforms are multiples of 2^-53 and
    ``1 - u`` is exact there, so the second count is ``#{j : u >= T_j}`` with ``T_j`` the
    first multiple of 2^-53 at or above ``1 - S(j)`` (exact rationals). Returns the sorted
    steps ``B`` with ``count(u) = #{m : B_m <= u}`` for every such ``u`` in [0, 1), or
    ``None`` when the two halves do not join monotonically at 1/2 (the caller then uses the
    batch code).
    """
    if lam == 0:
        return np.zeros(0)
    cdf, sf = C.poisson_tables(lam)
    lower = [float(v) for v in cdf if v < 0.5]
    if any(b < a for a, b in zip(lower, lower[1:], strict=False)):
        return None
    scale = 2**53
    steps = [Fraction(math.ceil((1 - Fraction(float(v))) * scale), scale) for v in sf]
    c0 = sum(1 for t in steps if t <= Fraction(1, 2))
    if c0 < len(lower):
        return None
    upper = sorted(float(t) for t in steps if t > Fraction(1, 2))
    return np.array(lower + [0.5] * (c0 - len(lower)) + upper, dtype=np.float64)
