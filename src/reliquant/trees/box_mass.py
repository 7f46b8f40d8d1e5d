"""Noise models around a sample ``mu`` and the probability mass they put on boxes.

A box is ``lo < x <= hi`` (edges may be infinite); arrays of boxes are ``(m, d)``.
Papers 001/002, eq. (4): R(mu) = sum over boxes with mu's label of the box's mass.

* :class:`IndependentNormal` (diagonal covariance; every Iris and MNIST setting of the
  papers): mass = prod_i [Phi((hi_i - mu_i)/sigma_i) - Phi((lo_i - mu_i)/sigma_i)], exact.
  Each difference is taken on the tail side that keeps relative precision.
* :class:`CorrelatedNormal`: ``scipy.stats.multivariate_normal.cdf`` with ``lower_limit``
  (Genz's method; in scipy >= 1.16 a randomised lattice QMC with absolute error target
  ``abseps``), seeded for reproducibility, after dropping the dimensions whose interval is
  the whole line (exact). One- and zero-dimensional remainders are computed in closed form.
  ``box_mass`` returns the masses; ``box_mass_with_error`` also returns an error estimate.
* :class:`NortaNoise` (paper 002 Section 3.2): per-feature marginals + a normal correlation;
  edges are mapped by ``Phi^{-1}(F_i(.))`` and the box mass is taken under N(0, corr).

Every model offers ``box_mass(lo, hi)``, ``box_mass_with_error(lo, hi)``, ``sample(n, rng)``,
``bounding_box(level, method)`` and ``independent`` (True when the mass factorises, which
the exact engine uses through ``interval_mass(cols, lo, hi)``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import special, stats

from reliquant.trees.norta import check_correlation, from_normal_scores, to_normal_scores

__all__ = [
    "CorrelatedNormal",
    "IndependentNormal",
    "NortaNoise",
    "normal_interval",
]


def normal_interval(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``Phi(b) - Phi(a)`` for standardised edges ``a <= b``, accurate in both tails."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    upper = a > 0
    # above zero use Phi(-a) - Phi(-b), which does not cancel
    return np.where(upper, special.ndtr(-a) - special.ndtr(-b), special.ndtr(b) - special.ndtr(a))


def _as_boxes(lo: np.ndarray, hi: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    lo = np.atleast_2d(np.asarray(lo, dtype=np.float64))
    hi = np.atleast_2d(np.asarray(hi, dtype=np.float64))
    if lo.shape != hi.shape or lo.shape[1] != d:
        raise ValueError(
            f"boxes must be (m, {d}) arrays of equal shape; got {lo.shape}, {hi.shape}"
        )
    if np.any(lo > hi):
        raise ValueError("every box needs lo <= hi")
    return lo, hi


def _level_halfwidth(level: float, d: int, method: str) -> float:
    """Half-width in standard units of a bounding box with outside mass <= 1 - level.

    ``"ellipsoid"``: the axis-aligned bounding box of the ``level`` confidence ellipsoid,
    half-width ``sqrt(chi2_d^{-1}(level))`` (paper 001 Section 2.2.1).
    ``"union"``: per-axis two-sided tail ``(1 - level)/d`` (Bonferroni), much tighter in
    high dimension.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level}")
    if method == "ellipsoid":
        return float(np.sqrt(stats.chi2.isf(1.0 - level, d)))
    if method == "union":
        return float(-special.ndtri((1.0 - level) / (2.0 * d)))
    raise ValueError(f"bounding-box method must be 'ellipsoid' or 'union'; got {method!r}")


class IndependentNormal:
    """x ~ N(mu, diag(sigma^2)).

    box mass = prod_i [Phi((hi_i - mu_i)/sigma_i) - Phi((lo_i - mu_i)/sigma_i)] (exact).
    ``sigma_i = 0`` holds feature i fixed at ``mu_i``: its factor is 1 if
    ``lo_i < mu_i <= hi_i`` and 0 otherwise (a point mass).
    """

    independent = True

    def __init__(self, mu: np.ndarray, sigma: np.ndarray | float) -> None:
        self.mu = np.asarray(mu, dtype=np.float64).reshape(-1)
        self.d = self.mu.shape[0]
        sigma = np.asarray(sigma, dtype=np.float64)
        if sigma.ndim > 1 or (sigma.ndim == 1 and sigma.shape[0] != self.d):
            raise ValueError(
                f"sigma has shape {sigma.shape} but mu has {self.d} features: give one "
                "standard deviation per feature (or one for all)"
            )
        self.sigma = np.broadcast_to(sigma, (self.d,)).copy()
        if not np.all(np.isfinite(self.mu)):
            raise ValueError("mu must be finite")
        if np.any(~(self.sigma >= 0)) or not np.all(np.isfinite(self.sigma)):
            raise ValueError(f"sigma must be non-negative and finite; got {self.sigma}")
        self.fixed = self.sigma == 0
        self._sd = np.where(self.fixed, 1.0, self.sigma)  # safe divisor
        self.mass_error_free = True

    @classmethod
    def from_variance(cls, mu: np.ndarray, variance: np.ndarray | float) -> IndependentNormal:
        """From the diagonal of the covariance (the papers give ``cov = v I``)."""
        return cls(mu, np.sqrt(np.asarray(variance, dtype=np.float64)))

    def interval_mass(self, cols: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per-feature interval probabilities ``(m, len(cols))`` for the features ``cols``."""
        mu, s, fixed = self.mu[cols], self._sd[cols], self.fixed[cols]
        spread = normal_interval((lo - mu) / s, (hi - mu) / s)
        if not fixed.any():
            return spread
        return np.where(fixed, ((lo < mu) & (mu <= hi)).astype(np.float64), spread)

    def box_mass(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        lo, hi = _as_boxes(lo, hi, self.d)
        return np.prod(self.interval_mass(np.arange(self.d), lo, hi), axis=1)

    def box_mass_with_error(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = self.box_mass(lo, hi)
        return m, np.zeros_like(m)

    def outside_mass(self, lo: np.ndarray, hi: np.ndarray) -> float:
        """``1 - mass(box)`` for one box, without cancellation."""
        lo = np.asarray(lo, dtype=np.float64)
        hi = np.asarray(hi, dtype=np.float64)
        lo_t = special.ndtr((lo - self.mu) / self._sd)
        hi_t = special.ndtr(-(hi - self.mu) / self._sd)
        lo_t = np.where(self.fixed, (self.mu <= lo).astype(np.float64), lo_t)
        hi_t = np.where(self.fixed, (self.mu > hi).astype(np.float64), hi_t)
        tail = lo_t + hi_t
        return float(-np.expm1(np.sum(np.log1p(-np.minimum(tail, 1.0)))))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``mu + sigma * e``, ``e`` standard normal ``(n, d)`` (in place: no temporaries)."""
        x = rng.standard_normal((n, self.d))
        x *= self.sigma
        x += self.mu
        return x

    def bounding_box(
        self, level: float = 0.99, method: str = "ellipsoid"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned box holding at least ``level`` of the mass (see :func:`_level_halfwidth`);
        a fixed feature gets the interval ``(mu_i - 1 ulp, mu_i]``, which holds its point."""
        h = _level_halfwidth(level, self.d, method)
        lo = np.where(self.fixed, np.nextafter(self.mu, -np.inf), self.mu - h * self.sigma)
        return lo, self.mu + h * self.sigma


class CorrelatedNormal:
    """x ~ N(mu, cov) with a full covariance; box masses by Genz/QMC (scipy)."""

    independent = False

    def __init__(
        self,
        mu: np.ndarray,
        cov: np.ndarray,
        seed: int = 0,
        abseps: float = 1e-6,
        maxpts: int | None = None,
    ) -> None:
        self.mu = np.asarray(mu, dtype=np.float64).reshape(-1)
        self.d = self.mu.shape[0]
        cov = np.asarray(cov, dtype=np.float64)
        if cov.shape != (self.d, self.d):
            raise ValueError(f"cov must be ({self.d}, {self.d}); got {cov.shape}")
        if not np.allclose(cov, cov.T):
            raise ValueError("cov is not symmetric")
        try:
            self._chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError as err:
            raise ValueError("cov is not positive definite") from err
        self.cov = cov
        self.sigma = np.sqrt(np.diag(cov))
        self.seed = int(seed)
        self.abseps = float(abseps)
        self.maxpts = maxpts
        self.mass_error_free = False

    def _one(self, lo: np.ndarray, hi: np.ndarray, idx: int) -> tuple[float, float]:
        keep = ~(np.isneginf(lo) & np.isposinf(hi))
        if np.any(lo >= hi):
            return 0.0, 0.0
        k = int(keep.sum())
        if k == 0:
            return 1.0, 0.0
        mu, s = self.mu[keep], self.sigma[keep]
        if k == 1:
            return float(normal_interval((lo[keep] - mu) / s, (hi[keep] - mu) / s)[0]), 0.0
        cov = self.cov[np.ix_(keep, keep)]
        kw = {"abseps": self.abseps, "releps": 0.0}
        if self.maxpts is not None:
            kw["maxpts"] = self.maxpts
        rng = np.random.default_rng([self.seed, idx])
        dist = stats.multivariate_normal(mean=mu, cov=cov, seed=rng, **kw)
        val = dist.cdf(hi[keep], lower_limit=lo[keep])
        val = float(np.clip(val, 0.0, 1.0))
        # scipy reports no error estimate through .cdf; its QMC targets abseps
        return val, self.abseps

    def box_mass_with_error(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masses and error estimates (the absolute error target of the integrator)."""
        lo, hi = _as_boxes(lo, hi, self.d)
        out = np.empty(lo.shape[0])
        err = np.empty(lo.shape[0])
        for i in range(lo.shape[0]):
            out[i], err[i] = self._one(lo[i], hi[i], i)
        return out, err

    def box_mass(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return self.box_mass_with_error(lo, hi)[0]

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``mu + L e``, ``e`` standard normal ``(n, d)``, ``L`` the Cholesky factor."""
        x = rng.standard_normal((n, self.d)) @ self._chol.T
        x += self.mu
        return x

    def bounding_box(
        self, level: float = 0.99, method: str = "ellipsoid"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bounding box of the ``level`` ellipsoid: half-widths ``sqrt(chi2) sqrt(cov_ii)``
        (``"ellipsoid"``), or the per-axis Bonferroni box (``"union"``)."""
        h = _level_halfwidth(level, self.d, method)
        return self.mu - h * self.sigma, self.mu + h * self.sigma


class NortaNoise:
    """NORTA noise: ``x_i = F_i^{-1}(Phi(z_i))`` with ``z ~ N(0, corr)`` (paper 002 §3.2).

    ``marginals`` are distributions of ``x_i`` (see :mod:`reliquant.trees.norta`), ``corr`` the
    *normal* correlation (use :func:`reliquant.trees.norta.spearman_to_normal_corr` on Spearman's
    rho). Box mass = mass under N(0, corr) of the box with edges ``Phi^{-1}(F_i(edge))``:
    exact product when ``corr`` is the identity, Genz/QMC otherwise.
    """

    def __init__(
        self,
        mu: np.ndarray,
        marginals: Sequence,
        corr: np.ndarray,
        seed: int = 0,
        abseps: float = 1e-6,
    ) -> None:
        self.mu = np.asarray(mu, dtype=np.float64).reshape(-1)
        self.d = self.mu.shape[0]
        if len(marginals) != self.d:
            raise ValueError(f"need {self.d} marginals; got {len(marginals)}")
        for i, m in enumerate(marginals):
            for attr in ("cdf", "sf", "ppf", "isf"):
                if not hasattr(m, attr):
                    raise ValueError(f"marginal {i} ({m!r}) has no {attr}()")
        self.marginals = list(marginals)
        self.corr = check_correlation(corr, "NORTA normal correlation")
        self.independent = bool(np.allclose(self.corr, np.eye(self.d), atol=0.0))
        if self.independent:
            self._z = IndependentNormal(np.zeros(self.d), 1.0)
        else:
            self._z = CorrelatedNormal(np.zeros(self.d), self.corr, seed=seed, abseps=abseps)
        self.mass_error_free = self._z.mass_error_free

    def to_normal(self, x: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
        """Map edges ``(m, k)`` of the features ``cols`` to normal scores."""
        x = np.asarray(x, dtype=np.float64)
        cols = np.arange(self.d) if cols is None else np.asarray(cols)
        out = np.empty_like(x)
        for j, c in enumerate(cols):
            out[..., j] = to_normal_scores(self.marginals[int(c)], x[..., j])
        return out

    def interval_mass(self, cols: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        if not self.independent:
            raise ValueError("interval_mass needs an identity correlation")
        return normal_interval(self.to_normal(lo, cols), self.to_normal(hi, cols))

    def box_mass_with_error(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = _as_boxes(lo, hi, self.d)
        return self._z.box_mass_with_error(self.to_normal(lo), self.to_normal(hi))

    def box_mass(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return self.box_mass_with_error(lo, hi)[0]

    def outside_mass(self, lo: np.ndarray, hi: np.ndarray) -> float:
        if not self.independent:
            raise ValueError("outside_mass needs an identity correlation")
        zl = self.to_normal(np.asarray(lo)[None])[0]
        zh = self.to_normal(np.asarray(hi)[None])[0]
        tail = special.ndtr(zl) + special.ndtr(-zh)
        return float(-np.expm1(np.sum(np.log1p(-np.minimum(tail, 1.0)))))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        z = self._z.sample(n, rng)
        return np.column_stack(
            [from_normal_scores(m, z[:, i]) for i, m in enumerate(self.marginals)]
        )

    def bounding_box(
        self, level: float = 0.99, method: str = "ellipsoid"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Image of the standard-normal bounding box under the marginal transforms."""
        h = _level_halfwidth(level, self.d, method)
        lo = np.array([from_normal_scores(m, np.array([-h]))[0] for m in self.marginals])
        hi = np.array([from_normal_scores(m, np.array([h]))[0] for m in self.marginals])
        return lo, hi
