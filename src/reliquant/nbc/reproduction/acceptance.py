"""Accuracy-acceptance curves, paper 000, Section 7.4, with order-independent tie handling.

A reliability metric orders the n test instances from most to least reliable (increasing
uncertainty, or decreasing robustness). The curve gives, for every ``N = 1..n``, the accuracy of
the first N instances as a function of the acceptance rate ``r = N / n``; at ``r = 1`` it is
the overall accuracy.

Ties: instances with equal metric values form a block whose internal order is arbitrary. We
return the *expected* curve over all orders inside each block: if the block covers positions
``s+1 .. s+b`` and holds ``k`` correct predictions, the number of correct ones among the first
``N`` (``s < N <= s+b``) is ``correct_before + (N - s) k / b``, i.e. the cumulative count is
interpolated linearly across the block. The result depends only on the multiset of
(metric value, correct) pairs, never on the row order of the test set.
"""

from __future__ import annotations

import numpy as np

__all__ = ["accuracy_acceptance_curve", "area_under_curve", "expected_correct"]


def expected_correct(score: np.ndarray, correct: np.ndarray, descending: bool) -> np.ndarray:
    """Expected number of correct predictions among the first N = 1..n (ties averaged), (n,).

    ``score`` orders the instances: ascending (uncertainty) when ``descending`` is False,
    descending (robustness) when True.
    """
    s = np.asarray(score, dtype=np.float64)
    c = np.asarray(correct)
    if s.ndim != 1 or c.shape != s.shape:
        raise ValueError(f"score and correct must be 1-d of equal length; got {s.shape}, {c.shape}")
    if s.size == 0:
        raise ValueError("cannot build a curve from zero instances")
    if np.any(np.isnan(s)):
        raise ValueError("metric values must not be NaN")
    key = -s if descending else s
    order = np.argsort(key, kind="stable")
    ks = key[order]
    cs = c[order].astype(np.float64)
    # block boundaries: positions where the sorted key changes
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    ends = np.r_[starts[1:], ks.size]
    cum = np.r_[0.0, np.cumsum(cs)]
    block_of = np.repeat(np.arange(starts.size), ends - starts)
    before = cum[starts][block_of]
    rate = (cum[ends] - cum[starts]) / (ends - starts)
    pos = np.arange(1, ks.size + 1)
    return before + (pos - starts[block_of]) * rate[block_of]


def accuracy_acceptance_curve(
    score: np.ndarray, correct: np.ndarray, descending: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy-acceptance curve (Section 7.4): returns ``(r, accuracy)``, both of shape (n,).

    ``r[N-1] = N / n`` and ``accuracy[N-1] = E[#correct among first N] / N`` with ties averaged
    (:func:`expected_correct`). ``accuracy[-1]`` is the overall accuracy.
    """
    ec = expected_correct(score, correct, descending)
    n = ec.size
    pos = np.arange(1, n + 1)
    return pos / n, ec / pos


def area_under_curve(accuracy: np.ndarray) -> float | np.ndarray:
    """Area under an accuracy-acceptance curve sampled at ``r = 1/n, 2/n, ..., 1``.

    The curve is a step function of r (N is an integer), so the area over (0, 1] is the mean of
    its values: ``AUC = (1/n) sum_N acc(N / n)``. Works along the last axis.
    """
    a = np.asarray(accuracy, dtype=np.float64)
    return a.mean(axis=-1)
