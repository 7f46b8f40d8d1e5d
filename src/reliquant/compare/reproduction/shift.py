"""Shifted conditions of a tabular data set: a covariate shift along one feature's quantile, and
additive Gaussian noise on held-out rows. Numpy in, numpy out; every random step draws from
``reliquant.core.seeding.block_rng(seed, <what>, *key)``, ``seed`` from config.

**Covariate shift by a quantile** (:func:`quantile_shift_split`). Within each class ``c``
(``n_c`` rows), the ``m_c = round(q n_c)`` rows with the smallest value of feature ``f`` form
the *source* (ties at the cut broken at random), the other ``n_c - m_c`` the *shifted test*:
every class keeps its share in both parts (no label shift; ``P(y)`` unchanged up to rounding),
while ``P(x_f | y)`` moves from below to above the class's ``q``-quantile of ``f``. The source
is split, stratified by class, into training, validation and a clean (in-distribution) test
part: ``round(fraction n_c^source)`` rows of each class for validation and for the clean test,
the rest for training.

**Which feature** (:func:`principal_feature`), unless config names one: the feature most
correlated with the first principal component of the standardised features, i.e. the largest
``|v_j|`` of the leading eigenvector ``v`` of their correlation matrix (``corr(x_j, PC1) =
v_j sqrt(lambda_1)``); constant features never; ties to the lowest index. Labels are not used.

**Gaussian noise** (:func:`gaussian_noise_shift`). ``x'_ij = x_ij + e_ij``, ``e_ij ~ N(0,
(scale s_j)^2)`` independent, ``s_j`` the training standard deviation of feature ``j``
(``ddof = 1``, as the Pima shift of :mod:`reliquant.compare.reproduction.tabular`); the rows
are a held-out part (e.g. the clean test rows above, or any test split).

Public API: :class:`QuantileShift`, :func:`principal_feature`, :func:`quantile_shift_split`,
:func:`gaussian_noise_shift`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from reliquant.core.seeding import block_rng

__all__ = [
    "QuantileShift",
    "gaussian_noise_shift",
    "principal_feature",
    "quantile_shift_split",
]


@dataclass(frozen=True)
class QuantileShift:
    """Row indices (sorted, disjoint, together every row) of one covariate-shift split."""

    train: np.ndarray
    validation: np.ndarray
    clean_test: np.ndarray
    shifted_test: np.ndarray
    feature: int  #: the column ``f`` split on
    quantile: float  #: ``q``


def _features(x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] < 2 or a.shape[1] < 1:
        raise ValueError(f"x must be (n, d) with n >= 2, d >= 1; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("x holds NaN or inf")
    return a


def _labels(y: ArrayLike, n: int) -> np.ndarray:
    labels = np.asarray(y)
    if labels.shape != (n,):
        raise ValueError(f"y must be (n,) = ({n},); got shape {labels.shape}")
    return labels


def principal_feature(x: ArrayLike) -> int:
    """The column most correlated with the first principal component of the standardised
    columns: ``argmax_j |v_j|``, ``v`` the leading eigenvector of the correlation matrix
    (constant columns excluded; ties to the lowest index). ValueError if every column is
    constant."""
    a = _features(x)
    sd = a.std(axis=0)
    varying = sd > 0
    if not varying.any():
        raise ValueError("x: every column is constant; no principal direction")
    z = (a[:, varying] - a[:, varying].mean(axis=0)) / sd[varying]
    _, vectors = np.linalg.eigh(np.cov(z, rowvar=False, ddof=0).reshape(z.shape[1], z.shape[1]))
    loading = np.abs(vectors[:, -1])
    best = np.flatnonzero(loading >= loading.max() * (1 - 1e-12))[0]
    return int(np.flatnonzero(varying)[best])


def _stratified_parts(
    rows: np.ndarray, labels: np.ndarray, fractions: Sequence[float], rng: np.random.Generator
) -> list[np.ndarray]:
    """``rows`` split per class: ``round(f n_c)`` random rows of class ``c`` for each
    fraction ``f``, the rest last."""
    parts: list[list[np.ndarray]] = [[] for _ in range(len(fractions) + 1)]
    for c in np.unique(labels[rows]):
        members = rng.permutation(rows[labels[rows] == c])
        start = 0
        for k, fraction in enumerate(fractions):
            take = int(round(fraction * members.size))
            parts[k].append(members[start : start + take])
            start += take
        parts[-1].append(members[start:])
    return [np.sort(np.concatenate(p)) for p in parts]


def quantile_shift_split(
    x: ArrayLike,
    y: ArrayLike,
    *,
    quantile: float,
    validation_fraction: float,
    test_fraction: float,
    seed: int,
    key: Sequence[int | str] = (),
    feature: int | None = None,
) -> QuantileShift:
    """Covariate shift along feature ``feature`` (default :func:`principal_feature`) at its
    within-class ``quantile`` ``q`` (module docstring): the lowest ``round(q n_c)`` rows of
    each class are the source, split per class into validation (``validation_fraction``),
    clean test (``test_fraction``) and training (the rest); the other rows are the shifted
    test. Random tie breaks and splits from ``block_rng(seed, "quantile_shift", *key)``."""
    a = _features(x)
    labels = _labels(y, a.shape[0])
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1); got {quantile!r}")
    if min(validation_fraction, test_fraction) < 0 or validation_fraction + test_fraction >= 1:
        raise ValueError(
            "validation_fraction and test_fraction must be >= 0 with a sum below 1; got "
            f"{validation_fraction!r} and {test_fraction!r}"
        )
    f = principal_feature(a) if feature is None else int(feature)
    if not 0 <= f < a.shape[1]:
        raise ValueError(f"feature {feature!r} is not a column of x (0..{a.shape[1] - 1})")
    rng = block_rng(seed, "quantile_shift", *key)
    source = []
    for c in np.unique(labels):
        members = np.flatnonzero(labels == c)
        tie_break = rng.permutation(members.size)
        ranked = members[np.lexsort((tie_break, a[members, f]))]
        source.append(ranked[: int(round(quantile * members.size))])
    source_rows = np.sort(np.concatenate(source))
    shifted = np.setdiff1d(np.arange(a.shape[0]), source_rows)
    if source_rows.size == 0 or shifted.size == 0:
        raise ValueError(f"quantile {quantile} leaves the source or the shifted test empty")
    validation, clean, train = _stratified_parts(
        source_rows, labels, (validation_fraction, test_fraction), rng
    )
    return QuantileShift(train, validation, clean, shifted, f, float(quantile))


def gaussian_noise_shift(
    x_test: ArrayLike,
    x_train: ArrayLike,
    *,
    scale: float,
    seed: int,
    key: Sequence[int | str] = (),
) -> np.ndarray:
    """``x_test + e``, ``e_ij ~ N(0, (scale s_j)^2)``, ``s_j`` the sample standard deviation
    (``ddof = 1``) of column ``j`` of ``x_train``; noise from
    ``block_rng(seed, "gaussian_noise_shift", *key)``. A new float64 array."""
    test = np.asarray(x_test, dtype=np.float64)
    train = _features(x_train)
    if test.ndim != 2 or test.shape[1] != train.shape[1]:
        raise ValueError(
            f"x_test must be (m, {train.shape[1]}) like x_train's columns; got {test.shape}"
        )
    if not np.isfinite(test).all():
        raise ValueError("x_test holds NaN or inf")
    if not (np.isfinite(scale) and scale >= 0):
        raise ValueError(f"scale must be finite and >= 0; got {scale!r}")
    sd = train.std(axis=0, ddof=1)
    rng = block_rng(seed, "gaussian_noise_shift", *key)
    return test + rng.normal(size=test.shape) * (scale * sd)
