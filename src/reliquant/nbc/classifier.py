"""Categorical Naive Bayes classifier with the additive smoothing of paper 000, eq. 18.

The classifier factorises the joint mass function as (eq. 17)

    p(c, f) = p(c) * prod_i p(f_i | c)

with the smoothed relative frequencies (eq. 18)

    p(c)       = (n(c) + alpha) / (n + alpha |C|)
    p(f_i | c) = (n(c, f_i) + alpha) / (n(c) + alpha |F_i|).

This is *not* scikit-learn's ``CategoricalNB``: that estimator smooths only the feature
conditionals and takes the class prior as the unsmoothed relative frequency.

Everything is kept in log space (``log p``), so that many features do not underflow.
Features are integer codes ``0 .. |F_i| - 1``; classes are ``0 .. |C| - 1``.

Edge cases (documented behaviour):

* A feature value that never occurs in training (but lies inside ``0 .. |F_i| - 1``) gets
  ``p(f_i | c) = alpha / (n(c) + alpha |F_i|)``, positive for ``alpha > 0``.
  Codes outside the range raise ``ValueError``.
* ``alpha = 0`` is allowed as long as every denominator of eq. 18 is positive. Zero counts then
  give probability 0 (log-probability ``-inf``); a test instance whose joint is 0 for every class
  is predicted as the lowest class index and has robustness 0 (Theorems 5.2 and 6.1). If a
  class never occurs in training (``n(c) = 0``) or the training set is empty, eq. 18 reads
  0/0 and :func:`fit_nbc` raises ``ValueError`` naming the class.
* A single-class training set is fine for ``alpha > 0``: the unseen classes get prior
  ``alpha / (n + alpha |C|)`` and uniform feature conditionals ``1 / |F_i|``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "NBCModel",
    "check_data",
    "count_tables",
    "cv_alpha",
    "cv_accuracies",
    "fit_nbc",
    "fold_ids",
    "log_factors",
    "log_joint",
    "predict",
]


@dataclass(frozen=True)
class NBCModel:
    """A fitted categorical NBC (eq. 17), all probabilities in log space.

    Attributes
    ----------
    log_prior : (K,) array, ``log p(c)``.
    log_cond : tuple of N arrays, the i-th of shape ``(K, |F_i|)``, ``log p(f_i | c)``.
    alpha : the smoothing parameter used (eq. 18).
    """

    log_prior: np.ndarray
    log_cond: tuple[np.ndarray, ...]
    alpha: float

    @property
    def n_classes(self) -> int:
        return int(self.log_prior.shape[0])

    @property
    def n_values(self) -> tuple[int, ...]:
        return tuple(int(t.shape[1]) for t in self.log_cond)


def _integer_codes(a: np.ndarray, what: str) -> np.ndarray:
    """``a`` as int64 codes; integer-valued floats are accepted, NaN, inf and fractions raise
    (naming the first bad value and where it is)."""
    if a.size == 0 or np.issubdtype(a.dtype, np.integer):
        return a.astype(np.int64, copy=False)
    if np.issubdtype(a.dtype, np.floating):
        missing = np.isnan(a)
        if missing.any():
            where = tuple(int(k) for k in np.argwhere(missing)[0])
            raise ValueError(f"{what} hold a missing value (NaN) at index {where}")
        infinite = np.isinf(a)
        if infinite.any():  # checked before the cast: inf as int64 is -2**63
            where = tuple(int(k) for k in np.argwhere(infinite)[0])
            place = f"row {where[0]}" + (f", column {where[1]}" if len(where) > 1 else "")
            raise ValueError(
                f"{what} must be finite integer codes; got {float(a[where])!r} at {place} "
                f"(index {where})"
            )
        frac = a != np.round(a)
        if frac.any():
            where = tuple(int(k) for k in np.argwhere(frac)[0])
            raise ValueError(
                f"{what} must be integer codes; got {float(a[where])!r} at index {where}"
            )
        return a.astype(np.int64)
    raise ValueError(f"{what} must be integer codes; got dtype {a.dtype}")


def check_data(
    X: np.ndarray, y: np.ndarray | None, n_classes: int, n_values: Sequence[int]
) -> tuple[np.ndarray, np.ndarray | None]:
    """Validate integer-coded features ``X`` (n, N) and labels ``y`` (n,); return int64 copies."""
    if int(n_classes) < 1:
        raise ValueError(f"n_classes must be >= 1; got {n_classes}")
    bad_values = [(i, v) for i, v in enumerate(n_values) if int(v) < 1]
    if bad_values:
        i, v = bad_values[0]
        raise ValueError(f"n_values[{i}] = {v}: every feature needs at least one value")
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != len(n_values):
        raise ValueError(
            f"features must have shape (n, {len(n_values)}) for n_values={list(n_values)}; "
            f"got {X.shape}"
        )
    X = _integer_codes(X, "features")
    for i, v in enumerate(n_values):
        col = X[:, i]
        if col.size and (col.min() < 0 or col.max() >= v):
            bad = col[(col < 0) | (col >= v)][0]
            raise ValueError(f"feature {i} takes values 0..{v - 1}; got value {bad}")
    if y is None:
        return X, None
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"labels must have shape ({X.shape[0]},); got {y.shape}")
    y = _integer_codes(y, "labels")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(
            f"labels take values 0..{n_classes - 1}; got {y[(y < 0) | (y >= n_classes)][0]}"
        )
    return X, y


def count_tables(
    X: np.ndarray, y: np.ndarray, n_classes: int, n_values: Sequence[int]
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Count tables of eq. 18: ``n(c)`` (K,) and ``n(c, f_i)`` (K, |F_i|) for every feature."""
    X, y = check_data(X, y, n_classes, n_values)
    nc = np.bincount(y, minlength=n_classes).astype(np.float64)
    ncf = tuple(
        np.bincount(y * v + X[:, i], minlength=n_classes * v)
        .reshape(n_classes, v)
        .astype(np.float64)
        for i, v in enumerate(n_values)
    )
    return nc, ncf


def _log_eq18(
    nc: np.ndarray, ncf: Sequence[np.ndarray], alpha: np.ndarray
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Eq. 18 in log space for a batch of alphas (A,): returns (A, K) and (A, K, |F_i|) arrays."""
    a = alpha[:, None]
    k = nc.shape[-1]
    with np.errstate(divide="ignore"):
        log_prior = np.log(nc + a) - np.log(nc.sum() + a * k)
        log_cond = tuple(
            np.log(t + a[:, :, None]) - np.log(nc[None, :, None] + a[:, :, None] * t.shape[1])
            for t in ncf
        )
    return log_prior, log_cond


def fit_nbc(
    X: np.ndarray, y: np.ndarray, n_classes: int, n_values: Sequence[int], alpha: float
) -> NBCModel:
    """Fit a categorical NBC with additive smoothing ``alpha`` exactly as paper 000, eq. 18.

    ``p(c) = (n(c) + alpha) / (n + alpha |C|)`` and
    ``p(f_i | c) = (n(c, f_i) + alpha) / (n(c) + alpha |F_i|)``.

    Raises ``ValueError`` for ``alpha < 0`` and for ``alpha = 0`` with an empty class (0/0).
    """
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha must be a finite number >= 0; got {alpha}")
    nc, ncf = count_tables(X, y, n_classes, n_values)
    if alpha == 0:
        if nc.sum() == 0:
            raise ValueError("alpha = 0 with an empty training set: p(c) in eq. 18 is 0/0")
        empty = np.flatnonzero(nc == 0)
        if empty.size:
            raise ValueError(
                f"alpha = 0 but class {int(empty[0])} has no training instance: "
                "p(f_i | c) in eq. 18 is 0/0; use alpha > 0"
            )
    lp, lc = _log_eq18(nc, ncf, np.array([alpha]))
    return NBCModel(log_prior=lp[0], log_cond=tuple(t[0] for t in lc), alpha=alpha)


def log_factors(model: NBCModel, X: np.ndarray) -> np.ndarray:
    """The perturbable NBC factors of eq. 17 in log space, shape (n, K, 1 + N'), where N' is
    the number of features with more than one value.

    ``out[j, c, 0] = log p(c)`` and then ``log p(x_ji | c)`` for every feature i with
    ``|F_i| > 1``, in feature order; their sum over the last axis is ``log p(c, x_j)``. A
    feature with one possible value has ``p(f_i | c) = 1`` under any contamination (its local
    credal set holds one distribution), so it is left out: passing it would let eps_loc
    perturb a factor the definition keeps at 1. This is the input of
    :func:`reliquant.nbc.robustness_metrics.eps_loc`.
    """
    X, _ = check_data(X, None, model.n_classes, model.n_values)
    n, k = X.shape[0], model.n_classes
    free = [i for i, t in enumerate(model.log_cond) if t.shape[1] > 1]
    out = np.empty((n, k, len(free) + 1))
    out[:, :, 0] = model.log_prior
    for slot, i in enumerate(free, start=1):
        out[:, :, slot] = model.log_cond[i][:, X[:, i]].T
    return out


def log_joint(model: NBCModel, X: np.ndarray) -> np.ndarray:
    """``log p(c, f)`` for every instance and class, shape (n, K) (eq. 17 in log space)."""
    X, _ = check_data(X, None, model.n_classes, model.n_values)
    out = np.broadcast_to(model.log_prior, (X.shape[0], model.n_classes)).copy()
    for i, t in enumerate(model.log_cond):
        out += t[:, X[:, i]].T
    return out


def predict(model: NBCModel, X: np.ndarray) -> np.ndarray:
    """Prediction of eq. 2, ``argmax_c p(c, f)``; ties go to the lowest class index."""
    return np.argmax(log_joint(model, X), axis=1)


def fold_ids(n: int, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Random assignment of ``n`` instances to ``n_folds`` folds of sizes differing by at most 1.

    A random permutation is cut into consecutive blocks (``numpy.array_split`` sizes).
    """
    if n_folds < 2:
        raise ValueError(f"n_folds must be >= 2; got {n_folds}")
    if n < n_folds:
        raise ValueError(f"cannot split {n} instances into {n_folds} folds")
    sizes = [len(b) for b in np.array_split(np.arange(n), n_folds)]
    folds = np.repeat(np.arange(n_folds), sizes)
    out = np.empty(n, dtype=np.int64)
    out[rng.permutation(n)] = folds
    return out


def cv_accuracies(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    n_values: Sequence[int],
    alphas: Sequence[float],
    folds: np.ndarray,
) -> np.ndarray:
    """Cross-validated accuracy of eq. 18 NBCs for every alpha at once, shape (A,).

    For fold k the training counts are the full counts minus the fold's counts, so every
    (fold, alpha) model is one vectorised evaluation of eq. 18. Accuracy is the number of
    correct held-out predictions (eq. 2, ties to the lowest class) over all folds divided by n.
    """
    X, y = check_data(X, y, n_classes, n_values)
    alphas = np.asarray(alphas, dtype=np.float64)
    if (
        alphas.ndim != 1
        or alphas.size == 0
        or np.any(alphas <= 0)
        or not np.all(np.isfinite(alphas))
    ):
        raise ValueError(
            f"the alpha grid must be a non-empty list of finite values > 0; got {alphas}"
        )
    folds = np.asarray(folds)
    if folds.shape != y.shape:
        raise ValueError(f"folds must have shape {y.shape}; got {folds.shape}")
    nc_all, ncf_all = count_tables(X, y, n_classes, n_values)
    correct = np.zeros(alphas.size)
    for k in np.unique(folds):
        held = folds == k
        nc_h, ncf_h = count_tables(X[held], y[held], n_classes, n_values)
        lp, lc = _log_eq18(
            nc_all - nc_h, [a - b for a, b in zip(ncf_all, ncf_h, strict=True)], alphas
        )
        scores = np.broadcast_to(lp[:, :, None], (*lp.shape, int(held.sum()))).copy()
        for i, t in enumerate(lc):
            scores += t[:, :, X[held, i]]
        correct += (np.argmax(scores, axis=1) == y[held]).sum(axis=1)
    return correct / y.size


def cv_alpha(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    n_values: Sequence[int],
    alphas: Sequence[float],
    n_folds: int,
    rng: int | np.random.Generator,
) -> tuple[float, np.ndarray]:
    """Alpha with the highest ``n_folds``-fold CV accuracy (paper 000, Sections 6.1 and 7.3).

    Ties between alphas go to the first one in the grid's order. ``rng``: an int seed or a
    numpy Generator (the folds' random split). Returns the chosen alpha and the CV accuracy of
    every alpha.
    """
    folds = fold_ids(len(y), n_folds, np.random.default_rng(rng))
    acc = cv_accuracies(X, y, n_classes, n_values, alphas, folds)
    return float(np.asarray(alphas, dtype=np.float64)[int(np.argmax(acc))]), acc
