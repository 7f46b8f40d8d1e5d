"""NORTA (NORmal To Anything) pieces: marginal distributions and rank-to-normal correlation.

Paper 002, Section 3.2 (001, Section 2.2): a noise distribution with marginal CDFs ``F_i``
and Spearman rank correlations ``rho`` is the image of a standard multivariate normal ``Z``
with correlation ``R_ij = 2 sin(pi rho_ij / 6)`` under ``x_i = F_i^{-1}(Phi(z_i))``.
Because every transform is monotone, a box ``lo < x <= hi`` maps to the box
``Phi^{-1}(F_i(lo_i)) < z_i <= Phi^{-1}(F_i(hi_i))`` with the same probability
(:meth:`Marginal.to_normal`); the noise model itself is :class:`reliquant.trees.box_mass.NortaNoise`.

Marginals here are distributions of the feature value ``x_i`` itself (already located at the
sample ``mu_i``): ``NormalMarginal(loc, scale)``, ``ExponentialMarginal(loc, scale)`` (support
``x >= loc``), ``ChiSquareMarginal(df, loc, scale)``, ``LognormalMarginal(s, loc, scale)``.
Any object with ``cdf``, ``sf``, ``ppf``, ``isf`` (e.g. a frozen ``scipy.stats`` distribution)
works as a marginal too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

__all__ = [
    "ChiSquareMarginal",
    "ExponentialMarginal",
    "LognormalMarginal",
    "Marginal",
    "NormalMarginal",
    "check_correlation",
    "from_normal_scores",
    "spearman_to_normal_corr",
    "to_normal_scores",
]


class Marginal:
    """Base class: a continuous 1-D distribution with cdf/sf/ppf/isf and a normal-score map."""

    def _frozen(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return self._frozen().cdf(x)

    def sf(self, x: np.ndarray) -> np.ndarray:
        return self._frozen().sf(x)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        return self._frozen().ppf(u)

    def isf(self, u: np.ndarray) -> np.ndarray:
        return self._frozen().isf(u)

    def to_normal(self, x: np.ndarray) -> np.ndarray:
        return to_normal_scores(self, x)


@dataclass(frozen=True)
class NormalMarginal(Marginal):
    """Normal N(loc, scale^2)."""

    loc: float
    scale: float

    def __post_init__(self) -> None:
        _check_positive("NormalMarginal.scale", self.scale)

    def _frozen(self):
        return stats.norm(loc=self.loc, scale=self.scale)


@dataclass(frozen=True)
class ExponentialMarginal(Marginal):
    """Exponential: ``loc + scale * Exp(1)`` (support ``x >= loc``)."""

    loc: float
    scale: float

    def __post_init__(self) -> None:
        _check_positive("ExponentialMarginal.scale", self.scale)

    def _frozen(self):
        return stats.expon(loc=self.loc, scale=self.scale)


@dataclass(frozen=True)
class ChiSquareMarginal(Marginal):
    """Chi-square: ``loc + scale * chi2(df)``."""

    df: float
    loc: float = 0.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        _check_positive("ChiSquareMarginal.df", self.df)
        _check_positive("ChiSquareMarginal.scale", self.scale)

    def _frozen(self):
        return stats.chi2(df=self.df, loc=self.loc, scale=self.scale)


@dataclass(frozen=True)
class LognormalMarginal(Marginal):
    """Lognormal: ``loc + scale * exp(s * N(0, 1))``."""

    s: float
    loc: float = 0.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        _check_positive("LognormalMarginal.s", self.s)
        _check_positive("LognormalMarginal.scale", self.scale)

    def _frozen(self):
        return stats.lognorm(s=self.s, loc=self.loc, scale=self.scale)


def _check_positive(name: str, v: float) -> None:
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive finite number; got {v}")


def to_normal_scores(marginal, x: np.ndarray) -> np.ndarray:
    """``Phi^{-1}(F(x))``, computed from the tail that keeps precision (``-Phi^{-1}(S(x))``
    above the median), with ``+-inf`` outside the support and at ``x = +-inf``."""
    x = np.asarray(x, dtype=np.float64)
    u = np.asarray(marginal.cdf(x), dtype=np.float64)
    upper = u > 0.5
    z = special.ndtri(np.where(upper, 0.5, u))
    if upper.any():
        s = np.asarray(marginal.sf(x), dtype=np.float64)
        z = np.where(upper, -special.ndtri(np.where(upper, s, 0.5)), z)
    return z


def from_normal_scores(marginal, z: np.ndarray) -> np.ndarray:
    """``F^{-1}(Phi(z))`` (the NORTA sampler's transform), via ``isf`` above zero."""
    z = np.asarray(z, dtype=np.float64)
    lower = z <= 0
    out = np.empty_like(z)
    n_lower = int(np.count_nonzero(lower))
    if n_lower:  # (a side without values costs no distribution call)
        out[lower] = marginal.ppf(special.ndtr(z[lower]))
    if n_lower < z.size:
        out[~lower] = marginal.isf(special.ndtr(-z[~lower]))
    return out


def spearman_to_normal_corr(rho: np.ndarray | float) -> np.ndarray:
    """Normal correlation from Spearman's rho: ``R = 2 sin(pi rho / 6)`` (Pearson 1907; paper
    002 Section 3.2). Works element-wise; a matrix keeps an exact unit diagonal."""
    rho = np.asarray(rho, dtype=np.float64)
    if np.any(np.abs(rho) > 1):
        raise ValueError(
            f"Spearman correlations must lie in [-1, 1]; got max |rho| {np.abs(rho).max()}"
        )
    r = 2.0 * np.sin(np.pi * rho / 6.0)
    if r.ndim == 2:
        np.fill_diagonal(r, 1.0)
    return r


def check_correlation(corr: np.ndarray, name: str = "correlation matrix") -> np.ndarray:
    """Validate a correlation matrix: square, symmetric, unit diagonal, positive definite.

    A matrix from rank correlations need not be positive definite; that is an error here
    (no silent repair).
    """
    c = np.asarray(corr, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ValueError(f"{name} must be square; got shape {c.shape}")
    if not np.allclose(c, c.T, atol=1e-12):
        raise ValueError(f"{name} is not symmetric")
    if not np.allclose(np.diag(c), 1.0, atol=1e-12):
        raise ValueError(f"{name} must have a unit diagonal; got {np.diag(c)}")
    eig = np.linalg.eigvalsh(c)
    if eig.min() <= 1e-12:
        raise ValueError(
            f"{name} is not positive definite (smallest eigenvalue {eig.min():.3g}); the "
            "transformed rank correlations do not form a valid normal correlation"
        )
    return c
