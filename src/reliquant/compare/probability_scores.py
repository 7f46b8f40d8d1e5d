"""Reliability scores from any classifier's class probabilities (``predict_proba`` or softmax).

Every exported score is oriented so that **higher = more reliable**; the prediction is the
class of largest probability (``argmax``, ties to the lowest column). With ``p`` a row of
``K >= 2`` probabilities and ``p_(1) >= p_(2)`` its two largest entries:

================== =============================================== ===========================
score              formula                                         source
================== =============================================== ===========================
max_probability    ``p_(1)``                                       standard UQ (``1 - u_m`` of
                                                                   paper 000, eq. 3)
negative_entropy   ``sum_k p_k ln p_k`` (``0 ln 0 = 0``), nats     standard UQ (``-u_H`` of
                                                                   paper 000, eq. 4, in nats)
margin             ``p_(1) - p_(2)``                               standard
log_ratio          ``ln p_(1) - ln max(p_(2), floor)``             Lassance & De Bock, arXiv
                                                                   2603.23318 (their code
                                                                   clamps p_(2) at 0.001)
centroid_proximity ``-|| p - mu_c ||_2``, ``c = argmax p``         Sikar et al., paper 004
                                                                   eqs. 3-4, arXiv 2502.00456
================== =============================================== ===========================

Entropy is an *uncertainty* (lower = more reliable): the exported score is its negative. The
centroid distance too: the exported score is the negative Euclidean distance to the centroid
of the predicted class. Centroids come from the training predictions that are **correct**, as
the MLM computes them (:func:`fit_centroids`, through :func:`reliquant.mlm.class_centroids`
and :func:`reliquant.mlm.refine_centroids`).

The log-ratio's authors also use ``sqrt(p_(1) / p_(2))``, which ranks the same. A ``p_(2)`` of
0 makes the log-ratio infinite: ``floor`` clamps it (default ``1e-3``, the authors' value;
it ties every prediction with ``p_(2) <= floor`` and the same ``p_(1)``), and
``floor=None`` refuses such rows instead.

Every function checks its probabilities (:func:`check_probabilities`): a 2-D finite array
with ``K >= 2`` columns and at least one row, entries ``>= 0``, rows summing to 1 within
``sum_tol``; a ``ValueError`` names the argument and the tolerance.

Public API: :data:`PROBABILITY_SCORES`, :func:`check_probabilities`, :func:`max_probability`,
:func:`negative_entropy`, :func:`margin`, :func:`log_ratio`, :func:`fit_centroids`,
:func:`centroid_proximity`, :func:`probability_scores`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.core.arguments import check_real, check_seed
from reliquant.mlm.centroids import class_centroids, distances_to_centroids, refine_centroids

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_SUM_TOL",
    "PROBABILITY_SCORES",
    "centroid_proximity",
    "check_probabilities",
    "fit_centroids",
    "log_ratio",
    "margin",
    "max_probability",
    "negative_entropy",
    "probability_scores",
]

#: Rows must sum to 1 within this (float32 softmax outputs of many classes pass).
DEFAULT_SUM_TOL = 1e-4
#: The log-ratio's clamp on the second-largest probability (Lassance & De Bock's code).
DEFAULT_FLOOR = 1e-3
#: The columns of :func:`probability_scores` (``centroid_proximity`` only with centroids).
PROBABILITY_SCORES = (
    "max_probability",
    "negative_entropy",
    "margin",
    "log_ratio",
    "centroid_proximity",
)


def check_probabilities(
    proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL, name: str = "proba"
) -> np.ndarray:
    """``proba`` as float64 ``(n, K)`` after checking it holds class probabilities.

    ``sum_tol`` must be a finite number ``>= 0`` (``TypeError`` / ``ValueError`` naming it:
    NaN would switch the check off). Raises ``ValueError`` naming ``name`` unless: 2-D, real-valued, ``n >= 1`` rows,
    ``K >= 2`` columns, every entry finite and ``>= 0``, every row summing to 1 within
    ``sum_tol`` (``|sum_k p_k - 1| <= sum_tol``; the message names the tolerance and the first
    bad row: logits or unnormalised scores passed by mistake).
    """
    check_real(sum_tol, "sum_tol", low=0.0)
    p = np.asarray(proba)
    if p.ndim != 2:
        raise ValueError(f"{name} must be 2-D, shape (n, K); got shape {p.shape}")
    if p.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real-valued; got dtype {p.dtype}")
    if p.shape[1] < 2:
        raise ValueError(f"{name} must have at least two classes (columns); got shape {p.shape}")
    if p.shape[0] == 0:
        raise ValueError(f"{name} is empty: need at least one row")
    p = p.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(p).all(axis=1))
    if bad.size:
        raise ValueError(f"{name} has NaN or inf in {bad.size} row(s), first row {bad[0]}")
    bad = np.flatnonzero((p < 0).any(axis=1))
    if bad.size:
        raise ValueError(f"{name} has negative entries in {bad.size} row(s), first row {bad[0]}")
    total = p.sum(axis=1)
    bad = np.flatnonzero(np.abs(total - 1.0) > sum_tol)
    if bad.size:
        raise ValueError(
            f"{name} rows must sum to 1 within sum_tol={sum_tol:g}; {bad.size} row(s) do not, "
            f"first row {bad[0]} sums to {total[bad[0]]:.6g} (logits? apply a softmax first)"
        )
    return p


def _top_two(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    two = np.partition(p, p.shape[1] - 2, axis=1)[:, -2:]
    return two[:, 1], two[:, 0]


def max_probability(proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL) -> np.ndarray:
    """``p_(1) = max_k p_k`` per row, ``(n,)``; higher = more reliable."""
    return check_probabilities(proba, sum_tol=sum_tol).max(axis=1)


def negative_entropy(proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL) -> np.ndarray:
    """``-H(p) = sum_k p_k ln p_k`` per row (nats, ``0 ln 0 = 0``), ``(n,)``, in
    ``[-ln K, 0]``; higher = more reliable (the entropy ``H`` itself is an uncertainty)."""
    p = check_probabilities(proba, sum_tol=sum_tol)
    logp = np.log(np.where(p > 0, p, 1.0))
    return (p * logp).sum(axis=1)


def margin(proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL) -> np.ndarray:
    """``p_(1) - p_(2)``, the gap between the two largest probabilities, ``(n,)`` in [0, 1]."""
    p1, p2 = _top_two(check_probabilities(proba, sum_tol=sum_tol))
    return p1 - p2


def log_ratio(
    proba: ArrayLike,
    *,
    floor: float | None = DEFAULT_FLOOR,
    zero_only: bool = False,
    sum_tol: float = DEFAULT_SUM_TOL,
) -> np.ndarray:
    """``r(x) = ln p_(1) - ln max(p_(2), floor)`` (Lassance & De Bock, arXiv 2603.23318), ``(n,)``.

    The robustness of a discriminative classifier's prediction: how far its two largest class
    probabilities are apart on a log scale (>= 0 when ``floor`` is below ``p_(1)``).
    ``floor`` (in ``(0, 1/K]``) clamps ``p_(2)`` (default ``1e-3``, the authors' value);
    ``zero_only=True`` replaces only a ``p_(2)`` of exactly 0 by ``floor``, as the authors'
    code does (the default clamp ties every prediction with ``p_(2) <= floor``);
    ``floor=None`` refuses rows with ``p_(2) = 0`` (``ValueError`` naming the first).
    """
    p = check_probabilities(proba, sum_tol=sum_tol)
    p1, p2 = _top_two(p)
    if floor is None:
        bad = np.flatnonzero(p2 <= 0)
        if bad.size:
            raise ValueError(
                f"proba: the second-largest probability is 0 in {bad.size} row(s), first row "
                f"{bad[0]}: the log-ratio is infinite; pass floor= (e.g. 1e-3) to clamp it"
            )
        return np.log(p1) - np.log(p2)
    check_real(floor, "floor", low=0.0, low_open=True, high=1.0 / p.shape[1])  # (0, 1/K]
    if zero_only:
        return np.log(p1) - np.log(np.where(p2 > 0, p2, floor))
    return np.log(p1) - np.log(np.maximum(p2, floor))


def fit_centroids(
    train_proba: ArrayLike,
    train_labels: ArrayLike,
    *,
    refine: bool = True,
    seed: int = 0,
    sum_tol: float = DEFAULT_SUM_TOL,
) -> np.ndarray:
    """Class centroids ``(K, K)`` from the **correct** training predictions, as the MLM
    computes them (paper 004, Section 3.3 a, eq. 3).

    ``mu_c`` is the mean probability vector of the training rows of class ``c`` predicted as
    ``c`` (``argmax == label``), :func:`reliquant.mlm.class_centroids`; with ``refine`` (the
    MLM's default) K-Means started at ``mu_0..mu_{K-1}`` on those same correct rows refines
    them (:func:`reliquant.mlm.refine_centroids`, ``seed`` its ``random_state``), and row
    ``c`` stays class ``c``'s centroid. ``refine=False`` returns the class means.

    ``train_labels`` are the true classes as column indices ``0..K-1`` of ``train_proba``
    (for scikit-learn: ``np.searchsorted(model.classes_, y)``). A class with no correct
    training prediction has no centroid: ``ValueError`` naming it.
    """
    check_seed(seed)
    p = check_probabilities(train_proba, sum_tol=sum_tol, name="train_proba")
    y = np.asarray(train_labels)
    if y.ndim != 1 or y.size != p.shape[0]:
        raise ValueError(
            f"train_labels must be 1-D with one label per row of train_proba ({p.shape[0]}); "
            f"got shape {y.shape}"
        )
    if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= p.shape[1]:
        raise ValueError(
            f"train_labels must be integer column indices 0..{p.shape[1] - 1} of train_proba"
        )
    mu = class_centroids(p, y)
    if not refine:
        return mu
    correct = p.argmax(axis=1) == y
    return refine_centroids(p[correct], mu, seed=seed).centroids


def centroid_proximity(
    proba: ArrayLike, centroids: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL
) -> np.ndarray:
    """``-||p - mu_c||_2`` with ``c = argmax p``: minus the Euclidean distance (paper 004,
    eq. 4) of each probability vector to the centroid of its predicted class, ``(n,)``;
    higher (closer) = more reliable. ``centroids``: ``(K, K)`` from :func:`fit_centroids`."""
    p = check_probabilities(proba, sum_tol=sum_tol)
    d = distances_to_centroids(p, centroids)
    return -d[np.arange(p.shape[0]), p.argmax(axis=1)]


def probability_scores(
    proba: ArrayLike,
    *,
    centroids: ArrayLike | None = None,
    floor: float | None = DEFAULT_FLOOR,
    sum_tol: float = DEFAULT_SUM_TOL,
) -> pd.DataFrame:
    """Every score of this module, one row per prediction, columns :data:`PROBABILITY_SCORES`
    (``centroid_proximity`` only when ``centroids`` are given) plus ``prediction`` (the
    column index ``argmax p``) first."""
    p = check_probabilities(proba, sum_tol=sum_tol)
    out = {
        "prediction": p.argmax(axis=1),
        "max_probability": max_probability(p, sum_tol=sum_tol),
        "negative_entropy": negative_entropy(p, sum_tol=sum_tol),
        "margin": margin(p, sum_tol=sum_tol),
        "log_ratio": log_ratio(p, floor=floor, sum_tol=sum_tol),
    }
    if centroids is not None:
        out["centroid_proximity"] = centroid_proximity(p, centroids, sum_tol=sum_tol)
    return pd.DataFrame(out)
