"""The exact (Clopper-Pearson) interval of a binomial proportion, shared by the tree
ensembles' Monte Carlo baseline (``reliquant.trees.monte_carlo``) and the black-box Monte Carlo
robustness of ``reliquant.compare``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from reliquant.core.arguments import check_level

__all__ = ["clopper_pearson_bounds"]


def clopper_pearson_bounds(
    k: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial interval for ``k`` successes of ``n`` (element-wise): the beta quantiles
    ``B^-1(a/2; k, n - k + 1)`` and ``B^-1(1 - a/2; k + 1, n - k)``, ``a = 1 - confidence``,
    with 0 below at ``k = 0`` and 1 above at ``k = n`` (the formula of scipy's
    ``binomtest(...).proportion_ci(method="exact")``, without its per-call overhead).

    Raises ``ValueError`` (``TypeError`` for a non-number) unless ``0 < confidence < 1``, ``n >= 1`` and ``0 <= k <= n``.
    """
    from scipy import special  # imported on use: scipy is slow to import, few jobs call this

    check_level(confidence)
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k}, n={n}")
    a = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1), n - k + 1, a / 2), 0.0)
        hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1), 1 - a / 2), 1.0)
    return lo, hi
