"""A rejection threshold with a finite-sample guarantee, for any reliability score (issue 43).

The question: "act only on predictions whose error rate is at most ``risk`` (e.g. 5 %), with
confidence ``1 - delta`` (e.g. 90 %); which threshold, and how many predictions do I keep?"
On ``n`` calibration predictions with a score ``s`` (higher = more reliable) and whether each
is right, :func:`certify_threshold` returns the threshold ``t`` that keeps the most
calibration predictions (``s >= t``) while the **selective risk**

    ``R(t) = P(error | s >= t)``

of the population the calibration data come from is certified: ``P(R(t) > risk) <= delta``
over the draw of the calibration set. **Assumption**: calibration and future predictions are
exchangeable (i.i.d. from one population, the same fitted model); under a distribution shift
the guarantee is void (the compare workflow measures how far it still holds).

Ties: a threshold sits only between distinct score values, so the predictions of one value
are all kept or all rejected, whatever their order.

Two methods (``method=``); both use the exact binomial tail of
:mod:`reliquant.compare.risk_bounds` on the ``m_t`` accepted calibration predictions and
their ``k_t`` errors, ``b(k, m, d) = Beta^-1(1 - d; k + 1, m - k)``:

**SGR** (``"sgr"``; Geifman & El-Yaniv, "Selective classification for deep neural networks",
NeurIPS 2017, Algorithm 1). With ``v_1 < ... < v_u`` the distinct calibration scores,
``z_min = 1``, ``z_max = u``, ``delta' = delta / ceil(log2 u)``; for ``ceil(log2 u)`` steps:
``z = ceil((z_min + z_max) / 2)``, threshold ``v_z``, bound ``b* = b(k, m, delta')`` on the
predictions with ``s >= v_z``; ``z_max = z`` if ``b* < risk`` (keep more), else ``z_min =
z``. The paper outputs the last step; here the output is the last step whose ``b* < risk``
(the one of largest coverage among those, by the search's order), with its ``b*``, and "not
certified" when no step passed. The paper's guarantee (its Theorem 3.2) is a union bound
over the ``ceil(log2 u)`` thresholds visited; since the visited thresholds depend on the
labels, that argument is exact only for a fixed path: the simulation tests
(tests/compare/test_certified_selection.py) measure the violation rate. Fine resolution (the
search ends next to the best threshold) at a small split of ``delta``; pick it for most
coverage.

**Learn-then-Test** (``"ltt"``; Angelopoulos, Bates, Candes, Jordan, Lei, "Learn then Test",
2021): a grid of candidate thresholds fixed before the labels are seen, one null ``H_j:
R(t_j) > risk`` per candidate, the exact binomial p-value ``p_j = Binom-CDF(k_j; m_j,
risk)``, and Bonferroni over the grid (reject ``H_j`` when ``p_j <= delta / J``); the
threshold kept is the rejected one of largest coverage. Valid without any monotonicity of
``R``. The grid, and why it has power:

* it is a grid of *numbers accepted*, ``N_1 < ... < N_J`` (``J = n_grid`` values evenly
  spaced from ``N_min`` to ``n``; by default ``J = ceil(log2 n)``, as many tests as SGR's
  steps: in simulations the coverage changed by less than 4 points for ``J`` from 10 to 100
  at ``n`` from 500 to 20000), which depends on ``n``, ``risk`` and ``delta`` only. ``t_j`` is
  just above the ``(N_j + 1)``-th largest calibration score ``T_j`` (``-inf`` for ``N_j =
  n``): the kept predictions are those with ``s > T_j``, ``N_j`` of them without ties. Given
  ``T_j``, the predictions above it are i.i.d. from the population above it, so ``k_j`` is
  exactly ``Binomial(m_j, R(t_j))`` and the p-value is valid for the random threshold
  (the order statistic itself is left out, which is why ``t_j = nextafter(T_j, +inf)``).
* a fixed-sequence test that starts at the most confident threshold stops at once (a
  handful of accepted points certifies nothing), and one over random thresholds is not
  valid; Bonferroni over a coarse grid is, at the cost of a split of ``delta`` like SGR's.
* the grid starts at ``N_min = ceil(ln(delta / J) / ln(1 - risk))``, the fewest accepted
  predictions that could pass at all (zero errors: ``(1 - risk)^N <= delta / J``), so no
  share of ``delta`` is spent on thresholds that can never be certified.

Pick LTT for a guarantee that rests on no assumption but exchangeability; its coverage is
coarser (the grid's step, ``(n - N_min) / (J - 1)`` predictions).

:func:`reliquant.compare.certified_scores.certify_best_score` picks the best of several
scores and keeps the guarantee.

:func:`certify_rows` certifies many calibration sets of one size at once (every row of 2-D
arrays: simulations, resamples, splits), the same computation vectorised.

Public API: :data:`CERTIFY_METHODS`, :data:`CERTIFICATE_COLUMNS`,
:class:`ThresholdCertificate`, :func:`certify_threshold`, :func:`certify_rows`,
:func:`selective_risk_curve`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.rejection import check_correct, check_score, check_score_inputs
from reliquant.compare.risk_bounds import binomial_p_value, binomial_upper_bound
from reliquant.core.arguments import check_int, check_level

__all__ = [
    "CERTIFICATE_COLUMNS",
    "CERTIFY_METHODS",
    "ThresholdCertificate",
    "certify_rows",
    "certify_threshold",
    "selective_risk_curve",
]

#: The methods of :func:`certify_threshold`: selection with guaranteed risk, Learn-then-Test.
CERTIFY_METHODS = ("sgr", "ltt")
#: The columns of :func:`certify_rows`, one row per calibration set.
CERTIFICATE_COLUMNS = ("threshold", "coverage", "empirical_risk", "bound", "n_accepted",
                       "n_errors", "n_tests", "level", "certified")  # fmt: skip


@dataclass(frozen=True)
class ThresholdCertificate:
    """The result of :func:`certify_threshold`.

    Attributes
    ----------
    threshold
        Keep a prediction when ``score >= threshold`` (``+inf`` when nothing certifies; LTT's
        sits just above a calibration score, ``-inf`` keeps all).
    coverage, n_accepted, n_errors, n
        The share kept on the calibration set (``n_accepted / n``), its kept predictions and
        their errors, and the calibration size.
    empirical_risk
        ``n_errors / n_accepted`` (NaN when nothing is kept).
    bound
        The certified upper bound on the selective risk at ``threshold``: ``P(R > bound) <=
        delta`` (with ``bound < risk`` when certified; 1 when nothing certifies).
    risk, delta, method
        The target, the confidence parameter and the method (:data:`CERTIFY_METHODS`).
    n_tests, level
        The thresholds tested (SGR's steps, LTT's grid) and the ``delta`` share of each.
    certified
        Whether a threshold certifies ``risk``; ``message`` says what was found in words.
    """

    threshold: float
    coverage: float
    empirical_risk: float
    bound: float
    n: int
    n_accepted: int
    n_errors: int
    risk: float
    delta: float
    method: str
    n_tests: int
    level: float
    certified: bool
    message: str

    def accepts(self, score: ArrayLike) -> np.ndarray:
        """Bool per prediction: kept (``score >= threshold``); all False when not certified."""
        s = np.asarray(score, dtype=np.float64)
        if not self.certified:
            return np.zeros(s.shape, dtype=bool)
        return s >= self.threshold


def _check_args(risk: float, delta: float, method: str) -> tuple[float, float]:
    risk = check_level(risk, "risk")
    delta = check_level(delta, "delta")
    if method not in CERTIFY_METHODS:
        raise ValueError(f"method must be one of {CERTIFY_METHODS}; got {method!r}")
    return risk, delta


class _Rows:
    """``B`` calibration sets of ``n`` predictions, each row sorted most reliable first:
    ``desc`` the scores, ``err_cum[:, i]`` the errors among the first ``i`` (``(B, n + 1)``),
    ``start[:, i]`` the first position of position ``i``'s tie group (= the predictions
    scored strictly above it), ``ends[:, r]`` the end (exclusive) of the ``r``-th distinct
    value's group (``r = 0`` the highest; = the predictions scored at or above it), ``u``
    the distinct values per row."""

    def __init__(self, score: np.ndarray, correct: np.ndarray) -> None:
        order = np.argsort(-score, axis=1)  # order within a tie group is never used
        self.desc = np.take_along_axis(score, order, axis=1)
        errors = ~np.take_along_axis(correct, order, axis=1)
        self.b, self.n = score.shape
        self.err_cum = np.zeros((self.b, self.n + 1), dtype=np.int64)
        np.cumsum(errors, axis=1, out=self.err_cum[:, 1:])
        self.first = np.ones((self.b, self.n), dtype=bool)  # position starts a tie group
        self.first[:, 1:] = self.desc[:, 1:] != self.desc[:, :-1]
        self.u = self.first.sum(axis=1)

    @cached_property
    def start(self) -> np.ndarray:
        idx = np.arange(self.n)
        return np.maximum.accumulate(np.where(self.first, idx, 0), axis=1)

    @cached_property
    def ends(self) -> np.ndarray:
        last = np.ones_like(self.first)
        last[:, :-1] = self.first[:, 1:]
        rank = np.cumsum(self.first, axis=1) - 1
        ends = np.full((self.b, self.n), self.n, dtype=np.int64)
        rows, cols = np.nonzero(last)
        ends[rows, rank[rows, cols]] = cols + 1
        return ends

    def errors(self, m: np.ndarray) -> np.ndarray:
        """Errors among the ``m`` most reliable of each row (``m``: ``(B,)`` or ``(B, J)``)."""
        m2 = m.reshape(self.b, -1)
        return np.take_along_axis(self.err_cum, m2, axis=1).reshape(m.shape)


def _sgr_rows(rows: _Rows, risk: float, delta: float) -> dict[str, np.ndarray]:
    """Geifman & El-Yaniv's Algorithm 1 over each row's distinct scores (module docstring),
    every row at once: one bound per row and step."""
    u = rows.u
    steps = np.maximum(1, np.ceil(np.log2(u)).astype(np.int64))
    level = delta / steps
    z_min, z_max = np.ones_like(u), u.copy()
    best = np.full(rows.b, -1)
    best_b, min_b, min_m = np.ones(rows.b), np.full(rows.b, np.inf), np.zeros(rows.b, np.int64)
    at = np.arange(rows.b)
    for step in range(int(steps.max())):
        active = step < steps
        z = (z_min + z_max + 1) // 2  # ceil((z_min + z_max) / 2), 1 = the lowest value
        r = u - z  # the same value counted from the highest, 0-based
        m = rows.ends[at, r]
        b = binomial_upper_bound(rows.errors(m), m, level)
        ok = active & (b < risk)
        z_max = np.where(ok, z, z_max)
        z_min = np.where(active & ~ok, z, z_min)
        best, best_b = np.where(ok, r, best), np.where(ok, b, best_b)
        closer = active & (b < min_b)
        min_b, min_m = np.where(closer, b, min_b), np.where(closer, m, min_m)
    certified = best >= 0
    m = np.where(certified, rows.ends[at, np.maximum(best, 0)], 0)
    threshold = np.where(certified, rows.desc[at, np.maximum(m - 1, 0)], np.inf)
    return dict(threshold=threshold, m=m, bound=best_b, n_tests=steps, level=level,
                min_bound=min_b, min_m=min_m)  # fmt: skip


def _grid_size(n: int, n_grid: int | None) -> int:
    """LTT's number of candidate thresholds: ``n_grid``, by default ``max(1, ceil(log2 n))``."""
    if n_grid is None:
        return max(1, math.ceil(math.log2(n)))
    return check_int(n_grid, "n_grid", minimum=1)


def _ltt_min_accepted(risk: float, delta: float, n_grid: int) -> int:
    """The fewest kept predictions that can pass at ``delta / n_grid`` with no error:
    ``N_min = ceil(ln(delta / n_grid) / ln(1 - risk))``."""
    return math.ceil(math.log(delta / n_grid) / math.log1p(-risk))


def _ltt_grid(n: int, risk: float, delta: float, n_grid: int) -> np.ndarray:
    """The numbers accepted of LTT's grid (module docstring): ``n_grid`` counts evenly
    spaced from ``N_min`` to ``n``, distinct; empty when ``N_min > n``."""
    n_min = _ltt_min_accepted(risk, delta, n_grid)
    if n_min > n:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.round(np.linspace(n_min, n, n_grid)).astype(np.int64))


def _ltt_rows(rows: _Rows, risk: float, delta: float, n_grid: int) -> dict[str, np.ndarray]:
    """Learn-then-Test over the grid of numbers accepted, Bonferroni (module docstring),
    every row at once."""
    grid = _ltt_grid(rows.n, risk, delta, n_grid)
    j, b = grid.size, rows.b
    level = delta / (j or n_grid)
    if j == 0:
        return dict(threshold=np.full(b, np.inf), m=np.zeros(b, np.int64), bound=np.ones(b),
                    n_tests=np.zeros(b, np.int64), level=np.full(b, level),
                    min_bound=np.full(b, np.inf), min_m=np.zeros(b, np.int64))  # fmt: skip
    inner = np.minimum(grid, rows.n - 1)
    everything = grid == rows.n  # the last grid point keeps all (T = -inf)
    m = np.where(everything, rows.n, rows.start[:, inner])  # predictions above T_j, (B, J)
    k = rows.errors(m)
    p = binomial_p_value(k, m, risk)
    bounds = binomial_upper_bound(k, m, level)
    passed = (p <= level) & (m > 0)
    pick = np.argmax(np.where(passed, m, -1), axis=1)
    at = np.arange(b)
    certified = passed[at, pick]
    cut = rows.desc[:, inner][at, pick]
    threshold = np.where(everything[pick], -np.inf, np.nextafter(cut, np.inf))
    low = np.argmin(bounds, axis=1)
    return dict(
        threshold=np.where(certified, threshold, np.inf),
        m=np.where(certified, m[at, pick], 0),
        bound=np.where(certified, bounds[at, pick], 1.0),
        n_tests=np.full(b, j), level=np.full(b, level),
        min_bound=bounds[at, low], min_m=m[at, low],
    )  # fmt: skip


def _certify_rows(score: np.ndarray, correct: np.ndarray, risk: float, delta: float,
                  method: str, n_grid: int) -> dict[str, np.ndarray]:  # fmt: skip
    rows = _Rows(score, correct)
    out = _sgr_rows(rows, risk, delta) if method == "sgr" else _ltt_rows(rows, risk, delta, n_grid)
    out["k"] = rows.errors(out["m"])
    return out


def certify_rows(
    score: ArrayLike,
    correct: ArrayLike,
    *,
    risk: float,
    delta: float,
    method: str = "sgr",
    n_grid: int | None = None,
) -> pd.DataFrame:
    """:func:`certify_threshold` on every row of 2-D ``(B, n)`` arrays at once, each row one
    calibration set (simulations, resamples, splits of equal size): one row per set, columns
    :data:`CERTIFICATE_COLUMNS` (as the attributes of :class:`ThresholdCertificate`).

    Raises ``ValueError`` as :func:`certify_threshold` does, and for arrays that are not
    2-D of one shape."""
    risk, delta = _check_args(risk, delta, method)
    s, c = np.asarray(score), np.asarray(correct)
    if s.ndim != 2 or s.shape != c.shape or 0 in s.shape:
        raise ValueError(
            f"score and correct must be 2-D arrays (sets, predictions) of one shape; got "
            f"{s.shape} and {c.shape}"
        )
    s = np.stack([check_score(row, f"score[{i}]") for i, row in enumerate(s)])
    c = np.stack([check_correct(row, f"correct[{i}]") for i, row in enumerate(c)])
    out = _certify_rows(s, c, risk, delta, method, _grid_size(s.shape[1], n_grid))
    m, k = out["m"], out["k"]
    with np.errstate(invalid="ignore", divide="ignore"):
        emp = np.where(m > 0, k / np.maximum(m, 1), np.nan)
    return pd.DataFrame(
        {"threshold": out["threshold"].astype(np.float64), "coverage": m / s.shape[1],
         "empirical_risk": emp, "bound": out["bound"].astype(np.float64),
         "n_accepted": m, "n_errors": k, "n_tests": out["n_tests"],
         "level": out["level"].astype(np.float64), "certified": m > 0}
    )  # fmt: skip


def certify_threshold(
    score: ArrayLike,
    correct: ArrayLike,
    *,
    risk: float,
    delta: float,
    method: str = "sgr",
    n_grid: int | None = None,
) -> ThresholdCertificate:
    """The threshold keeping the most calibration predictions while ``P(R(t) > risk) <=
    delta`` for the selective risk ``R(t) = P(error | score >= t)`` (module docstring: the
    two methods, what each guarantees, the exchangeability assumption).

    Parameters
    ----------
    score
        One reliability score per calibration prediction, higher = more reliable (no NaN).
    correct
        Whether each prediction is right (booleans, or 0/1).
    risk
        The target selective risk, in (0, 1).
    delta
        The probability, over the calibration set, that the guarantee may fail, in (0, 1).
    method
        ``"sgr"`` (Geifman & El-Yaniv 2017) or ``"ltt"`` (Learn-then-Test, Bonferroni).
    n_grid
        LTT's number of candidate thresholds, by default ``ceil(log2 n)`` (ignored by SGR).

    Returns
    -------
    ThresholdCertificate
        The threshold, coverage, empirical risk, certified bound and counts; ``certified``
        False (and ``message`` saying why) when no threshold certifies ``risk``.

    Raises ``ValueError`` naming the argument: ``risk`` or ``delta`` outside (0, 1), an
    unknown ``method``, ``score`` and ``correct`` of different lengths, NaN scores,
    ``correct`` not boolean.
    """
    risk, delta = _check_args(risk, delta, method)
    s, c = check_score_inputs(score, correct)
    n_grid = _grid_size(s.size, n_grid)
    out = {k: v[0] for k, v in _certify_rows(s[None], c[None], risk, delta, method, n_grid).items()}
    n, m, k = s.size, int(out["m"]), int(out["k"])
    level, n_tests = float(out["level"]), int(out["n_tests"])
    if m:
        message = (
            f"keep score >= {out['threshold']:.6g}: {m} of {n} calibration predictions "
            f"({m / n:.1%}), {k} errors ({k / m:.2%}); selective risk <= {out['bound']:.2%} "
            f"(target {risk:.2%}) with probability >= {100 * (1 - delta):.4g} % ({method}, {n_tests} "
            f"thresholds tested at delta {level:.3g} each)"
        )
    else:
        if n_tests == 0:
            closest = (f"even with no error, {_ltt_min_accepted(risk, delta, n_grid)} kept "
                       f"predictions are needed over a grid of {n_grid}")  # fmt: skip
        else:
            closest = (f"the smallest bound of the {n_tests} thresholds tested is "
                       f"{out['min_bound']:.2%} ({int(out['min_m'])} kept, delta {level:.3g} "
                       "each)")  # fmt: skip
        message = (
            f"no threshold certifies a selective risk <= {risk:.2%} at delta {delta:g} "
            f"({method}, {n} calibration predictions): {closest}; a larger risk, a larger "
            "delta or more calibration data may certify one"
        )
    return ThresholdCertificate(
        threshold=float(out["threshold"]), coverage=m / n,
        empirical_risk=k / m if m else math.nan, bound=float(out["bound"]), n=n,
        n_accepted=m, n_errors=k, risk=risk, delta=delta, method=method, n_tests=n_tests,
        level=level, certified=m > 0, message=message,
    )  # fmt: skip


def selective_risk_curve(
    score: ArrayLike, correct: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The empirical risk-coverage curve: one point per distinct score value ``v`` (highest
    first), keeping ``score >= v``. Returns ``(threshold, coverage, risk)``, each ``(u,)``:
    ``coverage = #{s >= v} / n`` and ``risk = #{errors, s >= v} / #{s >= v}``."""
    s, c = check_score_inputs(score, correct)
    rows = _Rows(s[None], c[None])
    m = rows.ends[0, : rows.u[0]]
    return rows.desc[0, m - 1], m / s.size, rows.err_cum[0, m] / m
