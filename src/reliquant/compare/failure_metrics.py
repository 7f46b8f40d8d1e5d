"""Failure-detection metrics beside AU-ARC: AURC, E-AURC, AUGRC, AUROC_f and risk at coverage.

The metrics of the failure-detection benchmark FD-Shifts (Jaeger et al., "A call to reflect on
evaluation practices for failure detection in image classification", ICLR 2023; its
``analysis/rc_stats.py``) and of Traub et al. (AUGRC, NeurIPS 2024, arXiv 2407.01032), with
the same numbers as FD-Shifts' definitions. A score is oriented **higher = more reliable**
(FD-Shifts' "confidence"); ``correct`` says which predictions are right. All areas are on the
``[0, 1]`` scale; FD-Shifts prints AURC, E-AURC and AUGRC multiplied by 1000.

**The risk-coverage curve** (:func:`risk_coverage_curve`). Accepting the predictions with
``score >= t`` gives one operating point per **distinct** score value ``t`` (tied scores are
one threshold: a tied group is accepted or rejected as a whole). With ``n`` predictions,
``n_t`` accepted and ``e_t`` accepted errors, the point has coverage ``n_t / n`` and

* selective risk ``e_t / n_t`` (the error rate of the accepted predictions), or
* generalized risk ``e_t / n`` (Traub et al.: ``P(error and accepted)``).

The smallest ``t`` accepts everything (coverage 1); the largest accepts the top tied group. A
last point at coverage 0 closes the curve: the selective risk repeats the top group's, the
generalized risk is 0 (nothing accepted, nothing wrong accepted). Areas are trapezoids over
coverage between consecutive points:

    AURC  = sum_j (c_j - c_{j+1}) (r_j + r_{j+1}) / 2   (selective risk),
    AUGRC = the same sum over the generalized risk       (Traub et al., Section 3).

**E-AURC** (Geifman et al., "Bias-reduced uncertainty estimation for deep neural classifiers",
ICLR 2019) subtracts the AURC of a perfect ranking, which in the large-``n`` limit is

    AURC* = err + (1 - err) ln(1 - err),   err = the overall error rate

(FD-Shifts' ``aurc_optimal`` for binary residuals, the default ``optimal="analytic"``);
``optimal="empirical"`` uses instead the trapezoidal AURC of these ``n`` predictions ranked
perfectly (every correct prediction above every wrong one, no ties). Both can exceed a
score's own AURC, so E-AURC can be negative: the analytic one for small ``n`` (two
predictions, one wrong: a perfect ranking has AURC 0.125, ``AURC*`` = 0.153), either one
when a score's ties average its curve below the perfect one's.

**AUROC_f** (:func:`auroc_f`) is the ROC AUC of the score for telling correct from wrong
predictions: ``P(s_correct > s_wrong) + P(s_correct = s_wrong) / 2`` (FD-Shifts' ``failauc``,
scikit-learn's ``roc_auc_score(correct, score)``); undefined (NaN) when every prediction is
right or every one is wrong. With the trapezoidal AUGRC above, exactly (ties included),

    AUGRC = acc (1 - acc) (1 - AUROC_f) + (1 - acc)^2 / 2,   acc = 1 - err,

so on one model's predictions AUGRC ranks scores as AUROC_f does (Traub et al.); AURC, like
AU-ARC, weights the confident end more.

**Risk at coverage** (:func:`risk_at_coverage`): the selective risk at a target coverage. By
default (``point="best"``) the lowest selective risk of the operating points whose coverage
is at least the target (FD-Shifts' ``get_working_point(target_cov=...)``); ``point=
"threshold"`` takes the operating point of smallest coverage still at least the target (the
strictest threshold that accepts the target share).

**Ties, against AU-ARC's average over orderings.** Neither rule depends on the input order
or breaks a tie by position. AU-ARC (:func:`reliquant.compare.auarc`) keeps every ``m =
1..n`` and averages the accuracy of the ``m`` most reliable predictions over all orders of
each tied group, so it equals the mean, over those orders, of the tie-free AU-ARC. FD-Shifts
keeps one point per tied group and draws a straight line to the next. For the
**generalized** risk ``e_m / n`` that line *is* the average over orders (inside a group the
expected count of accepted errors grows linearly with ``m``), so AUGRC equals the mean over
orders of the tie-free AUGRC, as AUROC_f's half credit for a tie equals its mean over
orders. For the **selective** risk it is not: inside a group the expected risk ``E[e_m] / m``
is a hyperbola between the group's two points; the line lies below it when the group errs
more often than the predictions above it (a score that ranks well: AURC then comes out lower
than the mean over orders) and above it otherwise; at the top group both are flat and
agree. Without ties the two areas differ only by the trapezoid's end: ``AURC = (1 - AU-ARC)
- (err - r_1) / (2 n)``, ``r_1`` the error (0 or 1) of the most reliable prediction; with
ties the same identity holds between AU-ARC and the *mean over orders* of the tie-free AURC
(``r_1`` then the error rate of the top tied group), and FD-Shifts' AURC departs from that
mean by the line-versus-hyperbola gap of each tied group below the top. Large tied groups (a
probability that saturates at 1, a robustness score at its cap) are where AURC and ``1 -
AU-ARC`` part; the tests check each statement here.

Every function checks its inputs as :func:`reliquant.compare.rejection.check_score_inputs`
does (1-D, same length, no NaN in ``score``, ``correct`` boolean or 0/1; ``ValueError``
naming the argument); ``score`` may hold ``+inf`` / ``-inf`` (equal infinities tie).

Public API: :data:`COVERAGE_RISKS`, :func:`risk_coverage_curve`, :func:`aurc`, :func:`e_aurc`,
:func:`augrc`, :func:`auroc_f`, :func:`risk_at_coverage`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from reliquant.core.arguments import check_real
from reliquant.core.rejection import check_score_inputs

__all__ = [
    "COVERAGE_RISKS",
    "augrc",
    "aurc",
    "auroc_f",
    "e_aurc",
    "risk_at_coverage",
    "risk_coverage_curve",
]

#: The risks of :func:`risk_coverage_curve`: selective (errors / accepted, AURC) and
#: generalized (accepted errors / all, AUGRC).
COVERAGE_RISKS = ("selective", "generalized")
_OPTIMA = ("analytic", "empirical")
_POINTS = ("best", "threshold")


def _choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def _operating_points(s: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accepted predictions and accepted errors at ``score >= t`` for each distinct ``t``,
    ascending ``t`` (so descending coverage), as float64 arrays."""
    _, group = np.unique(s, return_inverse=True)
    n_groups = int(group.max()) + 1
    size = np.bincount(group, minlength=n_groups).astype(np.float64)
    wrong = np.bincount(group, weights=(~c).astype(np.float64), minlength=n_groups)
    accepted = np.cumsum(size[::-1])[::-1]
    errors = np.cumsum(wrong[::-1])[::-1]
    return accepted, errors


def risk_coverage_curve(
    score: ArrayLike, correct: ArrayLike, *, risk: str = "selective"
) -> tuple[np.ndarray, np.ndarray]:
    """FD-Shifts' risk-coverage curve of ``score`` (higher = more reliable): ``(coverage,
    risk)``, float64 arrays of length ``J + 1`` for ``J`` distinct score values.

    Point ``j < J`` accepts the predictions with ``score >= np.unique(score)[j]``: coverage
    ``n_j / n`` (descending from 1), and the selective risk ``e_j / n_j`` (``risk=
    "selective"``) or the generalized risk ``e_j / n`` (``risk="generalized"``), ``e_j`` the
    accepted errors. The last point has coverage 0 and the selective risk of the top tied
    group, or generalized risk 0 (module docstring).
    """
    _choice(risk, "risk", COVERAGE_RISKS)
    s, c = check_score_inputs(score, correct)
    accepted, errors = _operating_points(s, c)
    n = float(s.size)
    coverage = np.append(accepted / n, 0.0)
    if risk == "selective":
        r = errors / accepted
        return coverage, np.append(r, r[-1])
    return coverage, np.append(errors / n, 0.0)


def _trapezoid(coverage: np.ndarray, risk: np.ndarray) -> float:
    """Area under ``risk`` over descending ``coverage`` by trapezoids."""
    return float(np.sum((coverage[:-1] - coverage[1:]) * (risk[:-1] + risk[1:]) / 2.0))


def aurc(score: ArrayLike, correct: ArrayLike) -> float:
    """Area under the selective risk-coverage curve (AURC; FD-Shifts' ``aurc``, divided by
    its display scale 1000), in ``[0, 1]``, lower = better:

        AURC = sum_j (c_j - c_{j+1}) (r_j + r_{j+1}) / 2,

    over the operating points of :func:`risk_coverage_curve` (one per distinct score value,
    tied scores one threshold). A constant score gives the error rate.
    """
    return _trapezoid(*risk_coverage_curve(score, correct, risk="selective"))


def augrc(score: ArrayLike, correct: ArrayLike) -> float:
    """Area under the generalized risk-coverage curve (AUGRC; Traub et al., NeurIPS 2024,
    Section 3; FD-Shifts' ``augrc`` divided by 1000), in ``[0, 1]``, lower = better: the
    trapezoidal area of ``P(error and accepted)`` over coverage, "the average risk of
    undetected failures". A perfect ranking gives ``err^2 / 2``, a constant score ``err / 2``;
    exactly ``acc (1 - acc) (1 - AUROC_f) + (1 - acc)^2 / 2`` (module docstring).
    """
    return _trapezoid(*risk_coverage_curve(score, correct, risk="generalized"))


def _perfect_aurc(correct: np.ndarray) -> float:
    """Trapezoidal AURC of these predictions ranked perfectly: correct ones first, no ties."""
    n = correct.size
    ranked = np.sort(correct)[::-1]  # True first
    return aurc(np.arange(n, 0, -1, dtype=np.float64), ranked)


def e_aurc(score: ArrayLike, correct: ArrayLike, *, optimal: str = "analytic") -> float:
    """Excess AURC (Geifman et al., ICLR 2019): :func:`aurc` minus the AURC of a perfect
    ranking of the same predictions; 0 = ranks errors last as well as possible.

    ``optimal="analytic"`` (FD-Shifts' ``eaurc``): ``AURC* = err + (1 - err) ln(1 - err)``, the
    large-``n`` limit, with ``err`` the overall error rate (``0 ln 0 = 0``). ``optimal=
    "empirical"``: the trapezoidal AURC of these ``n`` predictions with every correct one
    ranked above every wrong one and no ties. Either can make E-AURC negative (module
    docstring).
    """
    _choice(optimal, "optimal", _OPTIMA)
    s, c = check_score_inputs(score, correct)
    if optimal == "analytic":
        err = float(np.mean(~c))
        from scipy.special import xlogy  # here: the package loads no scipy

        best = err + float(xlogy(1.0 - err, 1.0 - err))
    else:
        best = _perfect_aurc(c)
    return aurc(s, c) - best


def auroc_f(score: ArrayLike, correct: ArrayLike) -> float:
    """Failure AUROC (FD-Shifts' ``failauc``): the ROC AUC of ``score`` for separating correct
    (positive) from wrong predictions, in ``[0, 1]``, higher = better,

        AUROC_f = P(s_correct > s_wrong) + P(s_correct = s_wrong) / 2,

    over all (correct, wrong) pairs (Mann-Whitney U over ``C W`` pairs, from average ranks).
    NaN when every prediction is correct or every one is wrong (no pair: undefined).
    """
    s, c = check_score_inputs(score, correct)
    n_correct = int(c.sum())
    n_wrong = c.size - n_correct
    if n_correct == 0 or n_wrong == 0:
        return float("nan")
    from scipy.stats import rankdata  # here: the package loads no scipy

    ranks = rankdata(s)  # average ranks: a tie counts one half
    u = ranks[c].sum() - n_correct * (n_correct + 1) / 2.0
    return float(u / (n_correct * n_wrong))


def risk_at_coverage(
    score: ArrayLike, correct: ArrayLike, coverage: float, *, point: str = "best"
) -> float:
    """The selective risk (error rate of the accepted predictions) at a target ``coverage``
    in ``(0, 1]``, from the operating points of :func:`risk_coverage_curve` (the coverage-0
    end point excluded).

    ``point="best"`` (FD-Shifts' ``get_working_point(risk="selective-risk",
    target_cov=coverage)``): the lowest selective risk among the operating points with
    coverage ``>= coverage``. ``point="threshold"``: the risk at the operating point of the
    smallest coverage ``>= coverage``, i.e. the strictest threshold that still accepts the
    target share (ties accepted as a whole, so the coverage reached can be higher).
    """
    target = check_real(coverage, "coverage", low=0.0, low_open=True, high=1.0)
    _choice(point, "point", _POINTS)
    s, c = check_score_inputs(score, correct)
    accepted, errors = _operating_points(s, c)
    cov = accepted / s.size
    risk = errors / accepted
    ok = cov >= target  # coverage 1 always qualifies
    if point == "best":
        return float(risk[ok].min())
    return float(risk[np.flatnonzero(ok)[-1]])
