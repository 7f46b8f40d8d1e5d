"""User-facing noise specifications that bind to the sample ``x`` they perturb.

A spec describes the perturbation *around* ``x`` without repeating ``x``, so the two cannot
disagree: :meth:`Gaussian.bind` / :meth:`Norta.bind` check every size against the model's
number of features and return a noise model of :mod:`reliquant.trees.box_mass` centred at
``x`` (what the exact engine and the samplers use).

* ``Gaussian(variance)``: x' ~ N(x, Sigma) with ``variance`` a scalar (Sigma = v I), a
  per-feature vector (diagonal Sigma) or a full covariance matrix. A zero variance holds that
  feature fixed at ``x_i`` (its row and column of a matrix must then be zero).
* ``Norta(marginals, correlation)``: paper 002 §3.2, x'_i = F_i^{-1}(Phi(z_i)) with
  z ~ N(0, correlation) (the *normal* correlation; map Spearman's rho with
  :func:`reliquant.trees.norta.spearman_to_normal_corr`). Each marginal is located at ``x_i``:
  an object with ``at(x_i)`` (e.g. :class:`reliquant.trees.reproduction.data.MarginalSpec`), a callable
  ``x_i -> distribution``, or a distribution already located (``cdf``/``sf``/``ppf``/``isf``).

:func:`normal_scores` and :func:`normal_correlation` give the samplers the common view of
all three: each feature maps monotonically to a standard normal score, and the scores are
jointly normal with a correlation matrix (identity for independent noise).

Public API: :class:`Gaussian`, :class:`Norta`, :class:`PartlyFixed`, :func:`normal_scores`,
:func:`normal_correlation`, :func:`fixed_features`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal, NortaNoise
from reliquant.trees.norta import to_normal_scores

__all__ = [
    "Gaussian",
    "Norta",
    "PartlyFixed",
    "fixed_features",
    "normal_cdf",
    "normal_correlation",
    "normal_scores",
]


def _check_x(x: np.ndarray, n_features: int | None) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be one sample (a 1-D array); got shape {x.shape}")
    if n_features is not None and x.shape[0] != n_features:
        raise ValueError(f"x has {x.shape[0]} features but the model has {n_features}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite")
    return x


class PartlyFixed:
    """A correlated noise model on the ``free`` features, the others held at ``mu``.

    Box mass = mass of the free coordinates (``inner``) times 1[lo_i < mu_i <= hi_i] over the
    fixed ones; the same interface as the models of :mod:`reliquant.trees.box_mass`.
    """

    independent = False
    mass_error_free = False

    def __init__(self, inner, free: np.ndarray, mu: np.ndarray) -> None:
        self.inner = inner
        self.free = np.asarray(free, dtype=np.int64)
        self.mu = np.asarray(mu, dtype=np.float64)
        self.d = self.mu.shape[0]
        self.fixed = np.setdiff1d(np.arange(self.d), self.free)

    def box_mass_with_error(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.atleast_2d(lo), np.atleast_2d(hi)
        m, e = self.inner.box_mass_with_error(lo[:, self.free], hi[:, self.free])
        f = self.fixed
        inside = np.all((lo[:, f] < self.mu[f]) & (self.mu[f] <= hi[:, f]), axis=1)
        return np.where(inside, m, 0.0), np.where(inside, e, 0.0)

    def box_mass(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return self.box_mass_with_error(lo, hi)[0]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.tile(self.mu, (n, 1))
        out[:, self.free] = self.inner.sample(n, rng)
        return out

    def bounding_box(self, level: float = 0.99, method: str = "ellipsoid"):
        lo = np.nextafter(self.mu, -np.inf)
        hi = self.mu.copy()
        ilo, ihi = self.inner.bounding_box(level, method)
        lo[self.free], hi[self.free] = ilo, ihi
        return lo, hi


@dataclass(frozen=True)
class Gaussian:
    """Normal noise N(x, Sigma) around the sample (module docstring).

    ``variance``: a scalar (Sigma = variance * I), a vector of per-feature variances, or a
    covariance matrix; zeros hold features fixed. :func:`reliquant.trees.robustness` also
    takes the variances by feature name (a pandas Series or a dict) and the covariance as a
    DataFrame, matched to the model's features (:mod:`reliquant.trees.inputs`); a plain
    vector is in the model's feature order. ``abseps``/``seed``: the QMC integrator's
    absolute error target and seed for box masses under a non-diagonal covariance.
    """

    variance: float | np.ndarray
    abseps: float = 1e-7
    seed: int = 0

    def bind(self, x: np.ndarray, n_features: int | None = None):
        """The noise model centred at ``x`` (checked against ``n_features``)."""
        x = _check_x(x, n_features)
        d = x.shape[0]
        v = np.asarray(self.variance, dtype=np.float64)
        if v.shape == (d, d) and not np.any(v - np.diag(np.diag(v))):
            v = np.diag(v).copy()  # a diagonal covariance is independent noise
        if v.ndim <= 1:
            if v.ndim == 1 and v.shape[0] != d:
                raise ValueError(
                    f"noise has {v.shape[0]} variances but x and the model have {d} features"
                )
            v = np.broadcast_to(v, (d,))
            if not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError("variances must be finite and >= 0 (0 holds a feature fixed)")
            return IndependentNormal(x, np.sqrt(v))
        if v.ndim != 2:
            raise ValueError(
                f"noise variance has shape {v.shape}: give a scalar, a vector of {d} "
                f"variances or a ({d}, {d}) covariance matrix"
            )
        if v.shape != (d, d):
            raise ValueError(
                f"noise covariance has shape {v.shape} but x and the model have {d} features"
            )
        return _correlated(x, v, self.seed, self.abseps)


def _correlated(x: np.ndarray, cov: np.ndarray, seed: int, abseps: float):
    """CorrelatedNormal, wrapped in :class:`PartlyFixed` when some variances are zero."""
    diag = np.diag(cov)
    if np.any(diag < 0) or not np.all(np.isfinite(cov)):
        raise ValueError("the covariance must be finite with a non-negative diagonal")
    free = np.nonzero(diag > 0)[0]
    if len(free) == len(x):
        return CorrelatedNormal(x, cov, seed=seed, abseps=abseps)
    fixed = diag == 0
    if np.any(cov[fixed] != 0) or np.any(cov[:, fixed] != 0):
        raise ValueError("a feature with zero variance needs a zero row and column")
    inner = CorrelatedNormal(x[free], cov[np.ix_(free, free)], seed=seed, abseps=abseps)
    return PartlyFixed(inner, free, x)


def _locate(marginal, x_i: float):
    """A marginal located at ``x_i`` (``at(x_i)``, a callable, or already located)."""
    if hasattr(marginal, "at"):
        return marginal.at(float(x_i))
    if all(hasattr(marginal, a) for a in ("cdf", "sf", "ppf", "isf")):
        return marginal
    if callable(marginal):
        return marginal(float(x_i))
    raise ValueError(f"marginal {marginal!r} has neither at(), cdf/sf/ppf/isf, nor is callable")


@dataclass(frozen=True)
class Norta:
    """NORTA noise around the sample (paper 002 §3.2; module docstring).

    ``marginals``: one per feature, located at ``x_i`` when bound; ``correlation``: the normal
    correlation matrix (identity = independent features). :func:`reliquant.trees.robustness`
    also takes the marginals by feature name (a dict) and the correlation as a DataFrame,
    matched to the model's features (:mod:`reliquant.trees.inputs`); plain lists and
    arrays are in the model's feature order. ``abseps``/``seed``: QMC settings
    for box masses under a non-identity correlation.
    """

    marginals: Sequence | Mapping
    correlation: np.ndarray
    abseps: float = 1e-7
    seed: int = 0

    def bind(self, x: np.ndarray, n_features: int | None = None) -> NortaNoise:
        """The NORTA noise model with its marginals located at ``x`` (sizes checked)."""
        x = _check_x(x, n_features)
        d = x.shape[0]
        if isinstance(self.marginals, Mapping):
            raise ValueError(
                "marginals given by name are matched to the model's features by "
                "robustness(); bind() takes them as a list in the model's order"
            )
        if len(self.marginals) != d:
            raise ValueError(
                f"noise has {len(self.marginals)} marginals but x and the model have {d} features"
            )
        corr = np.asarray(self.correlation, dtype=np.float64)
        if corr.shape != (d, d):
            raise ValueError(
                f"noise correlation has shape {corr.shape} but x and the model have {d} features"
            )
        located = [_locate(m, xi) for m, xi in zip(self.marginals, x, strict=True)]
        return NortaNoise(x, located, corr, seed=self.seed, abseps=self.abseps)


def normal_scores(noise, cols: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Standard normal scores ``z_i = Phi^{-1}(F_i(v))`` of ``values[:, j]`` for the features
    ``cols`` (``(v - mu_i) / sigma_i`` for normal noise; ``+-inf`` stay infinite)."""
    values = np.asarray(values, dtype=np.float64)
    cols = np.asarray(cols, dtype=np.int64)
    if isinstance(noise, IndependentNormal | CorrelatedNormal):
        sd = noise.sigma[cols]
        if np.any(sd == 0):
            raise ValueError("a fixed feature has no normal score")
        with np.errstate(invalid="ignore"):
            return (values - noise.mu[cols]) / sd
    if isinstance(noise, NortaNoise):
        out = np.empty_like(values)
        for j, c in enumerate(cols):
            out[..., j] = to_normal_scores(noise.marginals[int(c)], values[..., j])
        return out
    if isinstance(noise, PartlyFixed):
        pos = np.searchsorted(noise.free, cols)
        if np.any(noise.free[np.minimum(pos, len(noise.free) - 1)] != cols):
            raise ValueError("a fixed feature has no normal score")
        return normal_scores(noise.inner, pos, values)
    raise ValueError(f"unsupported noise model {type(noise).__name__}")


def normal_correlation(noise, cols: np.ndarray) -> np.ndarray:
    """Correlation matrix of the normal scores of the features ``cols``."""
    cols = np.asarray(cols, dtype=np.int64)
    if isinstance(noise, IndependentNormal) or getattr(noise, "independent", False):
        return np.eye(len(cols))
    if isinstance(noise, CorrelatedNormal):
        s = noise.sigma[cols]
        return noise.cov[np.ix_(cols, cols)] / np.outer(s, s)
    if isinstance(noise, NortaNoise):
        return noise.corr[np.ix_(cols, cols)]
    if isinstance(noise, PartlyFixed):
        return normal_correlation(noise.inner, np.searchsorted(noise.free, cols))
    raise ValueError(f"unsupported noise model {type(noise).__name__}")


def fixed_features(noise) -> np.ndarray:
    """Boolean mask of the features the noise holds fixed (zero variance)."""
    if isinstance(noise, IndependentNormal):
        return noise.fixed.copy()
    mask = np.zeros(noise.mu.shape[0], dtype=bool)
    if isinstance(noise, PartlyFixed):
        mask[noise.fixed] = True
    return mask


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """Phi(z), with Phi(-inf) = 0 and Phi(inf) = 1."""
    return special.ndtr(np.asarray(z, dtype=np.float64))
