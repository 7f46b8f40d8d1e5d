"""Exact binomial bounds and p-values of a selective risk (issue 43).

Among ``n`` accepted predictions with ``k`` errors, drawn i.i.d. (or exchangeably) from the
predictions a threshold accepts, ``k ~ Binomial(n, R)`` where ``R = P(error | accepted)`` is
the selective risk. Two exact statements follow, one the dual of the other:

* **upper bound** (Clopper-Pearson, one-sided): ``b(k, n, delta)`` solves
  ``Binom-CDF(k; n, b) = delta``, i.e. ``b = Beta^-1(1 - delta; k + 1, n - k)`` (``b = 1``
  at ``k = n`` or ``n = 0``); ``P(R > b) <= delta``. This is the bound ``B*(r_hat, delta,
  S_m)`` of Geifman & El-Yaniv's Lemma 3.1 (NeurIPS 2017), with ``k = m r_hat``.
* **p-value** of the null ``H: R > alpha``: ``p = Binom-CDF(k; n, alpha)`` (few errors are
  evidence against the null); ``P(p <= u | H) <= u`` for every ``u`` (Learn-then-Test's
  binomial p-value, Angelopoulos et al. 2021, Sec. 3). ``p <= delta`` exactly when
  ``b(k, n, delta) <= alpha``.

:func:`reliquant.core.binomial.clopper_pearson_bounds` (:func:`reliquant.compare.clopper_pearson_interval`)
gives the two-sided interval; the certificates need the one-sided bound at any ``delta`` in
(0, 1), hence this module. Both use scipy's beta and binomial distributions.

Public API: :func:`binomial_upper_bound`, :func:`binomial_p_value`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["binomial_p_value", "binomial_upper_bound"]


def _counts(k: ArrayLike, n: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 0) or np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)):
        raise ValueError(f"need integer counts 0 <= k <= n; got k={k}, n={n}")
    if np.any(n != np.round(n)):
        raise ValueError(f"n must be whole counts; got {n}")
    return k, n


def binomial_upper_bound(k: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray:
    """One-sided Clopper-Pearson upper bound on a binomial proportion, element-wise:
    ``b = Beta^-1(1 - delta; k + 1, n - k)``, the ``b`` with ``Binom-CDF(k; n, b) = delta``
    (Geifman & El-Yaniv 2017, Lemma 3.1), and ``b = 1`` where ``k = n`` (also ``n = 0``).

    With ``k ~ Binomial(n, R)``: ``P(R > b) <= delta``. ``delta`` may be an array
    (broadcast with ``k`` and ``n``).

    Raises ``ValueError`` unless every ``0 < delta < 1`` and ``0 <= k <= n`` are counts.
    """
    from scipy import stats  # imported on use: scipy is slow to import

    d = np.asarray(delta, dtype=np.float64)
    if not np.all((d > 0.0) & (d < 1.0)):
        raise ValueError(f"delta must be in (0, 1); got {delta!r}")
    k, n = _counts(k, n)
    inside = k < n
    with np.errstate(invalid="ignore", divide="ignore"):
        b = stats.beta.ppf(1.0 - d, k + 1.0, np.where(inside, n - k, 1.0))
    return np.where(inside, b, 1.0)


def binomial_p_value(k: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """p-value of the null ``R > alpha`` given ``k`` errors among ``n`` accepted predictions,
    element-wise: ``p = Binom-CDF(k; n, alpha) = P(Binomial(n, alpha) <= k)`` (Learn-then-Test,
    Angelopoulos et al. 2021, the exact binomial p-value); ``p = 1`` at ``n = 0`` (no
    evidence). Valid: under the null, ``P(p <= u) <= u``.

    Raises ``ValueError`` unless ``0 < alpha < 1`` and ``0 <= k <= n`` are counts.
    """
    from scipy import stats

    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    k, n = _counts(k, n)
    return np.where(n > 0, stats.binom.cdf(k, n, alpha), 1.0)
