"""Accuracy-rejection curves and their area (AU-ARC), invariant to the order of tied scores.

A reliability score gives every prediction a real number, **higher = more reliable**. Sort
the ``n`` predictions from most to least reliable and reject the ``k`` least reliable ones,
``k = 0, 1, ..., n - 1``: the curve is the accuracy of the ``m = n - k`` kept predictions as a
function of the rejected fraction ``t_k = k / n``,

    ARC(t_k) = E[C_m] / m,   m = n - k,

where ``C_m`` is the number of correct predictions among the ``m`` kept ones. AU-ARC is the
area under this step function over ``t in [0, 1)`` (left end-points), i.e. its mean:

    AU-ARC = (1 / n) sum_{k=0}^{n-1} ARC(k / n) = (1 / n) sum_{m=1}^{n} E[C_m] / m.

The end-point ``t = 1`` (nothing kept, accuracy undefined) is not part of the curve. This is
the accuracy-rejection curve of the robustness-vs-uncertainty comparisons of Detavernier & De
Bock (arXiv 2512.15492, 2603.22988). Paper 000's accuracy-acceptance curve (Section 7.4) is
the same curve read from the other end (keep ``N = m`` predictions, acceptance rate ``m / n``),
and the area of that curve equals the AU-ARC here: the NBC reproduction
(:mod:`reliquant.nbc.reproduction.acceptance`) builds it from :func:`expected_kept_correct`,
and the cross-paper comparison (:mod:`reliquant.compare`) re-exports this module.

**Ties.** Predictions with equal scores form a group whose internal order is arbitrary; the
curve is the *expected* curve over all orders inside every group (all orders equally likely),
computed in closed form, never by a random or stable order. If a group occupies the sorted
positions ``s + 1 .. s + b`` and holds ``c`` correct predictions, keeping ``m`` predictions
with ``s < m <= s + b`` keeps ``j = m - s`` of the group, a uniformly random ``j``-subset, whose
number of correct predictions is hypergeometric with mean ``j c / b``:

    E[C_m] = C_s + (m - s) (c / b),

``C_s`` the (tie-free) count of correct predictions ranked above the group. As ``m`` is fixed,
``E[C_m / m] = E[C_m] / m``: the averaged curve is exact. The result depends only on the
multiset of (score, correct) pairs, never on the row order. In floating point the group's
rate ``c / b`` is rounded first and then multiplied by ``m - s`` (the order of the NBC
reproduction's curves since they were first computed, kept so that they stay bit-identical;
dividing ``(m - s) c`` by ``b`` instead, one rounding, differs by about an ulp).

**Defined extremes.** All predictions correct: the curve is 1 everywhere and AU-ARC = 1 for
every score; all wrong: 0 and 0. A constant score (one tied group) gives the overall accuracy
at every ``t`` (the random-rejection baseline); an oracle that ranks every correct prediction
above every wrong one gives the largest AU-ARC for that accuracy.

Scores may be ``+inf`` / ``-inf`` (equal infinities tie); NaN is refused.

Public API: :func:`check_score`, :func:`check_correct`, :func:`check_score_inputs`,
:func:`expected_kept_correct`, :func:`accuracy_rejection_curve`, :func:`auarc`,
:func:`auarc_rows`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = [
    "accuracy_rejection_curve",
    "auarc",
    "auarc_rows",
    "check_correct",
    "check_score",
    "check_score_inputs",
    "expected_kept_correct",
]


def check_score(score: ArrayLike, name: str = "score") -> np.ndarray:
    """``score`` as a 1-D float64 array after checking it: real-valued, non-empty, no NaN.

    Raises ``ValueError`` naming ``name`` (the argument) and what is wrong.
    """
    s = np.asarray(score)
    if s.ndim != 1:
        raise ValueError(f"{name} must be 1-D, one value per prediction; got shape {s.shape}")
    if s.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real-valued; got dtype {s.dtype}")
    if s.size == 0:
        raise ValueError(f"{name} is empty: need at least one prediction")
    s = s.astype(np.float64)
    bad = np.flatnonzero(np.isnan(s))
    if bad.size:
        raise ValueError(f"{name} has {bad.size} NaN value(s), first at position {bad[0]}")
    return s


def check_correct(correct: ArrayLike, name: str = "correct") -> np.ndarray:
    """``correct`` as a 1-D bool array: booleans, or numbers that are all 0 or 1 (integers, or
    floats such as a CSV column with one empty cell reads: ``1.0`` is True).

    A missing value (NaN, None) raises ``ValueError`` naming its position; anything else
    (other numbers, strings) raises ``ValueError`` naming ``name``.
    """
    c = np.asarray(correct)
    if c.ndim != 1:
        raise ValueError(f"{name} must be 1-D, one bool per prediction; got shape {c.shape}")
    if c.size == 0:
        raise ValueError(f"{name} is empty: need at least one prediction")
    if c.dtype == np.bool_:
        return c
    if c.dtype.kind in "fO":
        missing = np.flatnonzero(pd.isna(c))
        if missing.size:
            raise ValueError(
                f"{name} has a missing value (NaN or None) at position {missing[0]}: every "
                "prediction is right or wrong"
            )
        if c.dtype.kind == "O" and all(isinstance(v, bool | int | float | np.number) for v in c):
            c = c.astype(np.float64)  # a pandas object column of True/False or 0/1
    if c.dtype.kind in "iuf" and np.all((c == 0) | (c == 1)):
        return c.astype(bool)
    raise ValueError(
        f"{name} must be boolean (True = the prediction is right), or numbers 0/1; "
        f"got dtype {c.dtype}"
        + (f" with values {np.unique(c)[:5].tolist()}" if c.dtype.kind in "iubf" else "")
    )


def check_score_inputs(
    score: ArrayLike,
    correct: ArrayLike,
    *,
    score_name: str = "score",
    correct_name: str = "correct",
) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs checked (:func:`check_score`, :func:`check_correct`) and of equal length."""
    s = check_score(score, score_name)
    c = check_correct(correct, correct_name)
    if s.shape != c.shape:
        raise ValueError(
            f"{score_name} and {correct_name} must have the same length; got {s.size} and {c.size}"
        )
    return s, c


def _expected_kept_correct_rows(score: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """``E[C_m]`` for m = 1..n, row-wise on ``(B, n)`` arrays (module docstring), ``(B, n)``."""
    b, n = score.shape
    order = np.argsort(-score, axis=1, kind="stable")
    s = np.take_along_axis(score, order, axis=1)
    c = np.take_along_axis(correct, order, axis=1).astype(np.float64)
    cum = np.zeros((b, n + 1))
    np.cumsum(c, axis=1, out=cum[:, 1:])
    idx = np.arange(n)
    first = np.ones((b, n), dtype=bool)  # position starts a tied group
    first[:, 1:] = s[:, 1:] != s[:, :-1]
    last = np.ones((b, n), dtype=bool)  # position ends a tied group
    last[:, :-1] = first[:, 1:]
    start = np.maximum.accumulate(np.where(first, idx, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, idx + 1, n)[:, ::-1], axis=1)[:, ::-1]
    c_start = np.take_along_axis(cum, start, axis=1)
    c_end = np.take_along_axis(cum, end, axis=1)
    return c_start + (idx + 1 - start) * ((c_end - c_start) / (end - start))


def expected_kept_correct(score: ArrayLike, correct: ArrayLike) -> np.ndarray:
    """``E[C_m]``, the expected number of correct predictions among the ``m`` most reliable,
    for ``m = 1..n`` (ties averaged in closed form, module docstring): float64 ``(n,)``."""
    s, c = check_score_inputs(score, correct)
    return _expected_kept_correct_rows(s[None, :], c[None, :])[0]


def accuracy_rejection_curve(score: ArrayLike, correct: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The accuracy-rejection curve of ``score`` (higher = more reliable) on predictions whose
    correctness is ``correct``.

    Returns ``(rejected, accuracy)``, both float64 ``(n,)``: ``rejected[k] = k / n`` and
    ``accuracy[k] = E[C_{n-k}] / (n - k)`` for ``k = 0..n-1`` (module docstring; ties averaged
    over all orders). ``accuracy[0]`` is the overall accuracy; ``accuracy[-1]`` that of the
    single most reliable prediction (the expected one over a tied top group). The point
    ``t = 1`` (nothing kept) is left out.

    Raises ``ValueError`` naming the argument: NaN in ``score``, different lengths, empty
    input, ``correct`` not boolean (or 0/1 integers).
    """
    ec = expected_kept_correct(score, correct)
    n = ec.size
    kept = np.arange(n, 0, -1)
    return np.arange(n) / n, ec[::-1] / kept


def auarc_rows(score: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """AU-ARC of every row of ``(B, n)`` arrays ``score`` (float, no NaN) and ``correct``
    (bool), ``(B,)``: the bootstrap's batched form of :func:`auarc` (inputs not re-checked)."""
    s = np.asarray(score, dtype=np.float64)
    c = np.asarray(correct, dtype=bool)
    if s.ndim != 2 or s.shape != c.shape or s.shape[1] == 0:
        raise ValueError(f"score and correct must be (B, n) with n >= 1; got {s.shape}, {c.shape}")
    ec = _expected_kept_correct_rows(s, c)
    return (ec / np.arange(1, s.shape[1] + 1)).mean(axis=1)


def auarc(score: ArrayLike, correct: ArrayLike) -> float:
    """Area under the accuracy-rejection curve (AU-ARC), in [0, 1]:

        AU-ARC = (1 / n) sum_{m=1}^{n} E[C_m] / m,

    ``C_m`` the correct predictions among the ``m`` highest scores, ties averaged over all
    orders in closed form (module docstring). All predictions correct give 1, all wrong 0, a
    constant score the overall accuracy. Errors as :func:`accuracy_rejection_curve`.
    """
    s, c = check_score_inputs(score, correct)
    return float(auarc_rows(s[None, :], c[None, :])[0])
