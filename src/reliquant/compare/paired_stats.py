"""Paired comparisons of two scores over groups: the t-interval of the mean paired difference,
the verdict rule, whether two scores rank alike, and the share of tied predictions.

For per-group paired differences ``d_1..d_S`` (e.g. ``AU-ARC_s(robustness) - AU-ARC_s
(uncertainty)`` on split ``s``), :func:`paired_t` gives

    mean d = (1/S) sum_s d_s,   se = sd(d) / sqrt(S)   (sd with ddof = 1),
    interval: mean d -/+ t_{(1 + confidence)/2, S - 1} se,
    p: two-sided one-sample t-test of mean d = 0,

and :func:`family_verdict` calls the better family when ``p < 1 - confidence`` (the interval
excludes 0). The workflow's compare evaluation (its headline comparisons, docs/compare.md) and
:func:`reliquant.compare.which_score` read these functions, so that both draw one verdict by
one rule.

Public API: :func:`paired_t`, :func:`family_verdict`, :func:`identical_ranking`,
:func:`tied_share`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["family_verdict", "identical_ranking", "paired_t", "tied_share"]


def paired_t(diffs: Sequence[float] | np.ndarray, confidence: float) -> dict[str, float]:
    """Mean of the paired differences ``d_s`` over groups (splits), its standard error
    ``sd(d) / sqrt(S)``, the t-interval ``mean -/+ t_{(1+confidence)/2, S-1} se`` and the
    two-sided p-value of ``mean = 0``. One split: NaN interval and p. All ``d_s`` equal and
    non-zero: p = 0; all zero: p = 1. Keys: ``diff_mean, diff_se, ci_low, ci_high,
    p_value``."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1 or d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"diffs must be a non-empty 1-D array of finite values; got {d!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}")
    # imported on use: jobs that only read the tables need no scipy (tests/core/test_lazy_imports)
    from scipy import stats

    mean = float(d.mean())
    nan = float("nan")
    if d.size < 2:
        return {"diff_mean": mean, "diff_se": nan, "ci_low": nan, "ci_high": nan, "p_value": nan}
    se = float(d.std(ddof=1) / np.sqrt(d.size))
    half = float(stats.t.ppf((1 + confidence) / 2, d.size - 1)) * se
    if se == 0:
        p = 1.0 if mean == 0 else 0.0
    else:
        p = float(2 * stats.t.sf(abs(mean) / se, d.size - 1))
    return {"diff_mean": mean, "diff_se": se, "ci_low": mean - half, "ci_high": mean + half,
            "p_value": p}  # fmt: skip


def family_verdict(diff_mean: float, p_value: float, *, alpha: float) -> str:
    """The verdict of a comparison ``robustness score - uncertainty score``: ``"undecided"``
    when ``p_value`` is NaN or ``>= alpha``, else the family of the better one
    (``"robustness"`` if ``diff_mean > 0``, else ``"uncertainty"``). With the two-sided
    t-test of :func:`paired_t` and ``alpha = 1 - confidence``, ``p < alpha`` exactly when the
    t-interval excludes 0."""
    if not np.isfinite(p_value) or p_value >= alpha:
        return "undecided"
    return "robustness" if diff_mean > 0 else "uncertainty"


def identical_ranking(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two scores order the same predictions identically, ties included (their
    average ranks are equal: rank correlation exactly 1 with the same ties)."""
    from scipy import stats

    return bool(np.array_equal(stats.rankdata(a), stats.rankdata(b)))


def tied_share(score: np.ndarray) -> float:
    """The share of predictions whose score equals another prediction's (a resolution
    measure: tied predictions cannot be ordered by the score)."""
    s = np.sort(np.asarray(score, dtype=np.float64))
    if s.size < 2:
        return 0.0
    same = s[1:] == s[:-1]
    tied = np.zeros(s.size, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    return float(tied.mean())
