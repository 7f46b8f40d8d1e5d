"""Data preparation for the tree-robustness experiments (papers 001/002, Section 5).

* MNIST resized from 28 x 28 to k x k by area interpolation on the [0, 1] scale
  (Sections 5.2 and 5.3: "We resized the images from 28 x 28 to 5 x 5 pixels, normalised
  them, flattened them into a vector").
* Pima Indians Diabetes filtered as in Section 5.4 of paper 002 (724 subjects, 7 features).
* The noise specifications: the Pima signal-to-noise scaling with the training data's
  correlations (:func:`pima_noise`, Figure 4 of 002) and the Iris mixed distortions with
  random correlations (:func:`iris_noise`, Figure 5 of 001).

Everything here is numpy/pandas in, numpy/pandas out; no file I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from reliquant.core.datasets import IRIS_FEATURES
from reliquant.trees import norta

__all__ = [
    "LocatedChiSquare",
    "LocatedExponential",
    "LocatedLognormal",
    "LocatedNormal",
    "MARGINAL_FAMILIES",
    "MarginalSpec",
    "PIMA_DROPPED",
    "PIMA_FEATURES",
    "PIMA_ROWS",
    "PIMA_TARGET",
    "PIMA_ZERO_INVALID",
    "RESIZE_CHUNK",
    "RESIZE_METHODS",
    "SNR_KINDS",
    "adaptive_weights",
    "area_weights",
    "filter_pima",
    "iris_marginals",
    "iris_noise",
    "marginals_at",
    "mnist_features",
    "ordered_weighted_sums",
    "pima_marginals",
    "pima_noise",
    "random_correlation",
    "resize_images",
    "snr_noise_std",
    "spearman_matrix",
]

#: Pima columns that may not be zero (a zero encodes a missing measurement), paper 002 §5.4.
PIMA_ZERO_INVALID: tuple[str, ...] = ("Glucose", "BloodPressure", "BMI")
#: Column the paper drops ("only had a minor influence on the performance"), paper 002 §5.4.
PIMA_DROPPED: tuple[str, ...] = ("SkinThickness",)
#: The 7 input features left after filtering, in CSV order.
PIMA_FEATURES: tuple[str, ...] = (
    "Pregnancies",
    "Glucose",
    "BloodPressure",
    "Insulin",
    "BMI",
    "DiabetesPedigreeFunction",
    "Age",
)
PIMA_TARGET = "Outcome"
#: Number of subjects left after filtering (paper 002 §5.4: "7 input features and 724 subjects").
PIMA_ROWS = 724

RESIZE_METHODS = ("area", "adaptive")
#: Images resized per step of :func:`resize_images` (memory only: each image's pixels are the
#: same bytes whatever the step, ``tests/trees/test_data.py``). The whole float64 copy of 60,000
#: images (376 MB) cost a second of fresh pages per job; a step's copies stay in the cache.
RESIZE_CHUNK = 2048


# --------------------------------------------------------------------------------------
# MNIST resizing
# --------------------------------------------------------------------------------------
def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """Exact area-interpolation weights of one axis, shape ``(n_out, n_in)``.

    Output cell ``i`` covers ``[i s, (i + 1) s)`` with ``s = n_in / n_out`` input pixels;
    input pixel ``j`` covers ``[j, j + 1)``. The weight is the overlap length divided by
    ``s``:  ``W[i, j] = |[j, j+1) ∩ [i s, (i+1) s)| / s``, so every row sums to 1. This is
    the classical box-filter ("area", as in OpenCV ``INTER_AREA``, TensorFlow ``area`` and
    Pillow ``BOX``) downsampling; for an integer ratio it is the plain block mean.
    Computed in integer arithmetic (edges scaled by ``n_out``) so block means are exact.
    """
    if n_in < 1 or n_out < 1:
        raise ValueError(f"axis lengths must be positive; got n_in={n_in}, n_out={n_out}")
    if n_out > n_in:
        raise ValueError(f"area interpolation only downsamples; got {n_in} -> {n_out}")
    # Work in units of 1/n_out pixel: pixel j = [j n_out, (j+1) n_out), cell i = [i n_in, (i+1) n_in).
    j = np.arange(n_in)[None, :]
    i = np.arange(n_out)[:, None]
    overlap = np.minimum((j + 1) * n_out, (i + 1) * n_in) - np.maximum(j * n_out, i * n_in)
    return np.clip(overlap, 0, None).astype(np.float64) / n_in


def adaptive_weights(n_in: int, n_out: int) -> np.ndarray:
    """Weights of PyTorch's ``interpolate(mode="area")`` (= ``adaptive_avg_pool``), ``(n_out, n_in)``.

    Cell ``i`` is the uniform mean over input pixels ``floor(i n_in / n_out)`` to
    ``ceil((i + 1) n_in / n_out) - 1``; for a non-integer ratio neighbouring cells share a
    pixel with full weight, so this is not the exact area average (see :func:`area_weights`).
    """
    if n_in < 1 or n_out < 1:
        raise ValueError(f"axis lengths must be positive; got n_in={n_in}, n_out={n_out}")
    weights = np.zeros((n_out, n_in))
    for i in range(n_out):
        start = (i * n_in) // n_out
        stop = -((-(i + 1) * n_in) // n_out)  # ceil
        weights[i, start:stop] = 1.0 / (stop - start)
    return weights


def ordered_weighted_sums(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``out[j] = sum_k weights[j, k] x[k]`` along the first axis of ``x``, in a fixed order.

    ``x`` has shape ``(K, ...)`` and ``weights`` ``(J, K)`` (non-negative, each row with at
    least one non-zero entry); the result has shape ``(J, ...)``. Each output is the sequential
    sum over ``k`` ascending of the non-zero terms, each product and each sum rounded to float64
    once::

        out[j] = ((w[j, k0] x[k0] + w[j, k1] x[k1]) + w[j, k2] x[k2]) + ...

    It is built from numpy's element-wise ``multiply`` and ``add`` only, one whole term at a
    time: each element of their results is one IEEE-754 operation, correctly rounded, so SIMD
    width and CPU dispatch change how many elements a step computes, never its value. No BLAS,
    no numpy reduction or ``matmul`` (both may sum in an order chosen by the CPU), no fused
    multiply-add. Skipping the zero weights changes nothing: with ``x >= 0`` a zero term adds
    ``+0.0``, which leaves a sum unchanged.
    """
    x = np.asarray(x, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[1] != x.shape[0]:
        raise ValueError(
            f"weights of shape {weights.shape} do not match {x.shape[0]} terms along axis 0"
        )
    out = np.zeros((weights.shape[0], *x.shape[1:]))
    term = np.empty(x.shape[1:])
    for j, row in enumerate(weights):
        terms = np.flatnonzero(row)
        if len(terms):
            np.multiply(x[terms[0]], row[terms[0]], out=out[j])
        for k in terms[1:]:
            np.multiply(x[k], row[k], out=term)
            np.add(out[j], term, out=out[j])
    return out


def resize_images(images: np.ndarray, size: int, method: str = "area") -> np.ndarray:
    """Resize ``(n, h, w)`` images to ``(n, size, size)`` float64 on the [0, 1] scale.

    ``out = W_h (x / 255) W_w^T`` per image, with ``W`` from :func:`area_weights`
    (``method="area"``) or :func:`adaptive_weights` (``method="adaptive"``, PyTorch's
    ``mode="area"``). uint8 input is divided by 255 first ("normalised", Section 5.2);
    float input must already lie in [0, 1]. Both maps are averages, so a constant image stays
    constant and the result stays in [0, 1].

    Order of summation (fixed, so that the resized bytes are the same on every machine and
    for any :data:`RESIZE_CHUNK`): along each image row first, then down the columns,

        r[h, j]   = sum_{w ascending} W_w[j, w] x[h, w]
        out[i, j] = sum_{h ascending} W_h[i, h] r[h, j]

    each sum sequential from its first non-zero term (:func:`ordered_weighted_sums`), every
    product and sum rounded to float64 once, then clipped to [0, 1]. A BLAS product
    (``np.einsum(..., optimize=True)``, ``@``) sums in an order that the BLAS library picks by
    CPU (OpenBLAS's kernels for SSE, AVX2 and AVX-512 round differently) and by batch size,
    so its last bits differ between machines; this order does not depend on BLAS, SIMD width
    or chunk size. For uint8 input every non-zero term is at least ``1 / (255 n_in)`` times a
    weight (no subnormal numbers), so flush-to-zero modes do not matter either. Computed
    :data:`RESIZE_CHUNK` images at a time, pixels-major (each element-wise step covers a
    chunk's images at once).
    """
    images = np.asarray(images)
    if images.ndim != 3:
        raise ValueError(f"images must have shape (n, h, w); got {images.shape}")
    if method not in RESIZE_METHODS:
        raise ValueError(f"resize method must be one of {RESIZE_METHODS}; got {method!r}")
    if images.dtype != np.uint8 and images.size:
        low, high = float(images.min()), float(images.max())
        if low < 0.0 or high > 1.0:
            raise ValueError(f"float images must lie in [0, 1]; got range [{low}, {high}]")
    weight_fn = area_weights if method == "area" else adaptive_weights
    w_h = weight_fn(images.shape[1], size)
    w_w = weight_fn(images.shape[2], size)
    out = np.empty((len(images), size, size))
    for lo in range(0, len(images), RESIZE_CHUNK):
        part = images[lo : lo + RESIZE_CHUNK]
        if part.dtype == np.uint8:
            part = np.divide(part, 255.0, dtype=np.float64)  # = astype(float64) / 255
        else:
            part = part.astype(np.float64)
        by_column = np.ascontiguousarray(part.transpose(2, 1, 0))  # x[w, h, n]
        rows = ordered_weighted_sums(by_column, w_w)  # r[j, h, n]
        cells = ordered_weighted_sums(rows.transpose(1, 0, 2), w_h)  # out[i, j, n]
        out[lo : lo + RESIZE_CHUNK] = cells.transpose(2, 0, 1)
    return np.clip(out, 0.0, 1.0, out=out)


def mnist_features(images: np.ndarray, size: int, method: str = "area") -> np.ndarray:
    """Flattened resized images, shape ``(n, size * size)`` (row-major), Section 5.2."""
    return resize_images(images, size, method).reshape(len(images), size * size)


# --------------------------------------------------------------------------------------
# Pima
# --------------------------------------------------------------------------------------
def filter_pima(frame: pd.DataFrame, expected_rows: int | None = PIMA_ROWS) -> pd.DataFrame:
    """Paper 002 §5.4: drop ``SkinThickness`` and every row with a zero in Glucose,
    BloodPressure or BMI. Returns the 7 features and ``Outcome`` with a fresh index.

    Raises if the result does not have ``expected_rows`` rows (724 for the UCI file).
    """
    needed = [*PIMA_FEATURES, *PIMA_DROPPED, PIMA_TARGET]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"Pima table lacks columns {missing}; has {list(frame.columns)}")
    keep = (frame[list(PIMA_ZERO_INVALID)] != 0).all(axis=1)
    out = frame.loc[keep, [*PIMA_FEATURES, PIMA_TARGET]].reset_index(drop=True)
    if expected_rows is not None and len(out) != expected_rows:
        raise ValueError(
            f"Pima filtering kept {len(out)} rows, expected {expected_rows} "
            "(paper 002 §5.4: 724 subjects); is the raw file the UCI diabetes.csv?"
        )
    return out


# --------------------------------------------------------------------------------------
# Noise specifications
# --------------------------------------------------------------------------------------
#: The readings of paper 002's signal-to-noise ratio (see :func:`snr_noise_std`).
SNR_KINDS = ("variance", "amplitude")


def snr_noise_std(feature_std: np.ndarray, snr: float, kind: str = "variance") -> np.ndarray:
    """Noise standard deviation per feature from a signal-to-noise ratio.

    Paper 002 gives the ratio twice: §5.4 "a signal-noise ratio factor of 10 to downscale the
    variance of the variables" (a power ratio) and the caption of Figure 4 "signal-to-noise
    ratio of 10/1" (read as a ratio of amplitudes). The two readings (:data:`SNR_KINDS`):

        kind="variance":  sigma_i^2 = s_i^2 / SNR   ->  sigma_i = s_i / sqrt(SNR)
        kind="amplitude": sigma_i   = s_i / SNR     ->  sigma_i^2 = (s_i / SNR)^2

    with ``s_i`` the standard deviation of feature ``i`` in the data. The workflow computes
    both (``trees.pima.readings``); ``trees.pima.default.reading`` picks the one it reports.
    """
    if kind not in SNR_KINDS:
        raise ValueError(f"snr kind must be one of {SNR_KINDS}; got {kind!r}")
    if not snr > 0:
        raise ValueError(f"signal-to-noise ratio must be positive; got {snr}")
    feature_std = np.asarray(feature_std, dtype=np.float64)
    if np.any(feature_std < 0):
        raise ValueError(f"feature standard deviations must be >= 0; got {feature_std}")
    return feature_std / (np.sqrt(snr) if kind == "variance" else snr)


def spearman_matrix(x: np.ndarray) -> np.ndarray:
    """Spearman rank correlation matrix of the columns of ``x`` (n, d), ties averaged."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 3:
        raise ValueError(f"need a 2-D array with at least 3 rows; got shape {x.shape}")
    ranks = np.apply_along_axis(stats.rankdata, 0, x)
    return np.corrcoef(ranks, rowvar=False)


MARGINAL_FAMILIES = ("normal", "exponential", "chi-square", "lognormal")


class _SharedDistribution:
    """Mixin for a :mod:`reliquant.trees.norta` marginal: ``cdf``/``sf``/``ppf``/``isf`` on
    scipy's shared distribution object (``_dist``) with the marginal's fields as keyword
    arguments, the very call its frozen distribution (``_frozen()``) makes, so the numbers are
    the same; but without building a frozen copy of the distribution per call (about 1 ms
    each: the NORTA engine and plan call these a few dozen times per sample)."""

    _dist: ClassVar = None

    def _kwds(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.cdf(x, **self._kwds())

    def sf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.sf(x, **self._kwds())

    def ppf(self, u: np.ndarray) -> np.ndarray:
        return self._dist.ppf(u, **self._kwds())

    def isf(self, u: np.ndarray) -> np.ndarray:
        return self._dist.isf(u, **self._kwds())


class LocatedNormal(_SharedDistribution, norta.NormalMarginal):
    """:class:`reliquant.trees.norta.NormalMarginal` evaluated without a frozen copy per call."""

    _dist = stats.norm


class LocatedExponential(_SharedDistribution, norta.ExponentialMarginal):
    """:class:`reliquant.trees.norta.ExponentialMarginal` evaluated without a frozen copy per
    call."""

    _dist = stats.expon


class LocatedChiSquare(_SharedDistribution, norta.ChiSquareMarginal):
    """:class:`reliquant.trees.norta.ChiSquareMarginal` evaluated without a frozen copy per call."""

    _dist = stats.chi2


class LocatedLognormal(_SharedDistribution, norta.LognormalMarginal):
    """:class:`reliquant.trees.norta.LognormalMarginal` evaluated without a frozen copy per call."""

    _dist = stats.lognorm


@dataclass(frozen=True)
class MarginalSpec:
    """One feature's noise distribution, relative to the sample value ``mu_i``.

    ``family``: normal, exponential, chi-square or lognormal; ``scale``: the distribution's
    scale; ``shape``: chi-square degrees of freedom or lognormal sigma (else None);
    ``centred``: shift a bounded family so its mean is ``mu_i`` (True) or let its support
    start at ``mu_i`` (False: paper 001 §5.4, "no smaller values could be sampled"). A normal
    is always centred at ``mu_i``. :meth:`at` turns the spec into a
    :mod:`reliquant.trees.norta` marginal located at a sample.
    """

    family: str
    scale: float
    shape: float | None = None
    centred: bool = False

    def __post_init__(self) -> None:
        if self.family not in MARGINAL_FAMILIES:
            raise ValueError(
                f"marginal family must be one of {MARGINAL_FAMILIES}; got {self.family!r}"
            )
        if not (np.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"{self.family} marginal needs a finite scale > 0; got {self.scale}")
        needs_shape = self.family in ("chi-square", "lognormal")
        if needs_shape and not (self.shape is not None and self.shape > 0):
            raise ValueError(f"{self.family} marginal needs shape > 0; got {self.shape}")

    def noise_mean(self) -> float:
        """Mean of the un-shifted noise: 0 (normal), scale (exponential), scale*df
        (chi-square), scale*exp(s^2/2) (lognormal)."""
        if self.family == "normal":
            return 0.0
        if self.family == "exponential":
            return self.scale
        if self.family == "chi-square":
            return self.scale * float(self.shape)
        return self.scale * float(np.exp(float(self.shape) ** 2 / 2.0))

    def at(self, mu_i: float):
        """The :mod:`reliquant.trees.norta` marginal of ``x_i = mu_i + noise``.

        normal: N(mu_i, scale^2); exponential: loc + scale Exp(1); chi-square:
        loc + scale chi2(df); lognormal: loc + scale exp(s N(0, 1)); with ``loc = mu_i``
        or, when ``centred``, ``loc = mu_i - noise_mean()``. The marginal is a subclass of
        the :mod:`reliquant.trees.norta` class (``Located*``) that gives the same numbers
        without freezing a scipy distribution per call.
        """
        loc = float(mu_i) - (self.noise_mean() if self.centred else 0.0)
        if self.family == "normal":
            return LocatedNormal(loc=float(mu_i), scale=self.scale)
        if self.family == "exponential":
            return LocatedExponential(loc=loc, scale=self.scale)
        if self.family == "chi-square":
            return LocatedChiSquare(df=float(self.shape), loc=loc, scale=self.scale)
        return LocatedLognormal(s=float(self.shape), loc=loc, scale=self.scale)


def marginals_at(specs: Sequence[MarginalSpec], mu: np.ndarray) -> list:
    """Library marginals for one sample ``mu`` (one spec per feature)."""
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    if len(specs) != len(mu):
        raise ValueError(f"{len(specs)} marginal specs for a sample with {len(mu)} features")
    return [spec.at(m) for spec, m in zip(specs, mu, strict=True)]


def pima_marginals(
    x_train: np.ndarray,
    families: Sequence[str],
    snr: float,
    snr_kind: str = "variance",
    centred: bool = False,
) -> list[MarginalSpec]:
    """Per-feature Pima noise marginals (paper 002 §5.4, Figure 4).

    Each feature's noise has the standard deviation
    ``snr_noise_std(std(x_train[:, i]), snr, snr_kind)`` (``ddof=1``):
    normal with that sigma, or exponential with scale = sigma (an exponential's standard
    deviation equals its scale). ``families`` lists one of normal/exponential per column.
    """
    x_train = np.asarray(x_train, dtype=np.float64)
    if x_train.ndim != 2 or x_train.shape[1] != len(families):
        raise ValueError(
            f"x_train has shape {x_train.shape} but {len(families)} families were given"
        )
    bad = [f for f in families if f not in ("normal", "exponential")]
    if bad:
        raise ValueError(f"Pima noise families must be normal or exponential; got {bad}")
    sigma = snr_noise_std(x_train.std(axis=0, ddof=1), snr, snr_kind)
    if np.any(sigma <= 0):
        raise ValueError(f"a Pima feature is constant in the training set (sigma={sigma})")
    return [MarginalSpec(f, float(v), None, centred) for f, v in zip(families, sigma, strict=True)]


def random_correlation(d: int, low: float, high: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric ``d x d`` correlation matrix with ones on the diagonal and off-diagonal
    entries drawn i.i.d. uniform on ``[low, high]`` (Figure 5 of 001: "values between 0.1 and
    0.3 on the off-diagonals"). Raises if the draw is not positive definite."""
    if not -1 < low <= high < 1:
        raise ValueError(f"need -1 < low <= high < 1; got low={low}, high={high}")
    corr = np.eye(d)
    iu = np.triu_indices(d, 1)
    corr[iu] = rng.uniform(low, high, size=len(iu[0]))
    corr[(iu[1], iu[0])] = corr[iu]
    eig = np.linalg.eigvalsh(corr)
    if eig.min() <= 0:
        raise ValueError(
            f"random correlation matrix is not positive definite (min eig {eig.min()})"
        )
    return corr


def iris_marginals(spec: Sequence[dict]) -> list[MarginalSpec]:
    """Iris mixed-distortion marginals from config (Figure 5 of 001): one dict per feature
    with keys ``family``, ``scale`` and (chi-square, lognormal) ``shape``."""
    if len(spec) != len(IRIS_FEATURES):
        raise ValueError(f"need {len(IRIS_FEATURES)} Iris marginals; got {len(spec)}")
    return [
        MarginalSpec(s["family"], float(s["scale"]), s.get("shape"), bool(s.get("centred", False)))
        for s in spec
    ]


def pima_noise(
    x_train: np.ndarray,
    *,
    families: Mapping[str, str],
    snr: float,
    snr_kind: str,
    centred: bool,
) -> tuple[list[MarginalSpec], np.ndarray]:
    """The NORTA noise of Figure 4 of 002: per-feature marginals of :func:`pima_marginals`
    (``families``: feature -> normal/exponential, in :data:`PIMA_FEATURES` order; ``snr_kind``:
    the reading of the ratio, variance or amplitude, :func:`snr_noise_std`) and the
    normal correlation ``2 sin(pi rho / 6)`` of the training set's Spearman ``rho``
    (:func:`reliquant.trees.norta.spearman_to_normal_corr`)."""
    specs = pima_marginals(x_train, [families[f] for f in PIMA_FEATURES], snr, snr_kind, centred)
    return specs, norta.spearman_to_normal_corr(spearman_matrix(x_train))


def iris_noise(
    *,
    marginals: Sequence[dict],
    centred: bool,
    corr_low: float,
    corr_high: float,
    rng: np.random.Generator,
) -> tuple[list[MarginalSpec], np.ndarray]:
    """The mixed NORTA noise of Figure 5 of 001: one config marginal per Iris feature
    (:func:`iris_marginals`, each ``centred`` or not) and a :func:`random_correlation` with
    off-diagonal entries uniform on ``[corr_low, corr_high]`` drawn from ``rng``."""
    specs = iris_marginals([{**m, "centred": centred} for m in marginals])
    try:
        corr = random_correlation(len(IRIS_FEATURES), corr_low, corr_high, rng)
    except ValueError as err:
        raise ValueError(
            f"config keys trees.iris_mixed.corr_low = {corr_low}, corr_high = {corr_high} "
            f"(with trees.seed): {err}; narrow the range or change the seed"
        ) from err
    return specs, corr
