"""Accuracy-acceptance curves, paper 000, Section 7.4, with order-independent tie handling.

A reliability metric orders the n test instances from most to least reliable (increasing
uncertainty, or decreasing robustness). The curve gives, for every ``N = 1..n``, the accuracy of
the first N instances as a function of the acceptance rate ``r = N / n``; at ``r = 1`` it is
the overall accuracy.

This is the accuracy-rejection curve of :mod:`reliquant.core.rejection` read from the other
end (accept ``N`` = keep ``m``), built from its :func:`~reliquant.core.rejection.expected_kept_correct`
(the one implementation, shared with :mod:`reliquant.compare`): a metric ordered by decreasing
value (robustness) is the reliability score itself, one ordered by increasing value
(uncertainty) is negated. The area under the curve equals
:func:`reliquant.core.rejection.auarc` of that score.

Ties: instances with equal metric values form a block whose internal order is arbitrary. We
return the *expected* curve over all orders inside each block: if the block covers positions
``s+1 .. s+b`` and holds ``k`` correct predictions, the number of correct ones among the first
``N`` (``s < N <= s+b``) is ``correct_before + (N - s) k / b``, i.e. the cumulative count is
interpolated linearly across the block. The result depends only on the multiset of
(metric value, correct) pairs, never on the row order of the test set.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from reliquant.core.rejection import check_score, expected_kept_correct

__all__ = ["accuracy_acceptance_curve", "area_under_curve", "expected_correct"]


def expected_correct(score: ArrayLike, correct: ArrayLike, descending: bool) -> np.ndarray:
    """Expected number of correct predictions among the first N = 1..n (ties averaged), (n,).

    ``score`` orders the instances: ascending (uncertainty) when ``descending`` is False,
    descending (robustness) when True. Computed by
    :func:`reliquant.core.rejection.expected_kept_correct` on the reliability score (``score``
    when ``descending``, else ``-score``); its errors name the argument ``score`` or
    ``correct`` (NaN, different lengths, empty input, ``correct`` not boolean or 0/1).
    """
    s = check_score(score)
    return expected_kept_correct(s if descending else -s, correct)


def accuracy_acceptance_curve(
    score: ArrayLike, correct: ArrayLike, descending: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy-acceptance curve (Section 7.4): returns ``(r, accuracy)``, both of shape (n,).

    ``r[N-1] = N / n`` and ``accuracy[N-1] = E[#correct among first N] / N`` with ties averaged
    (:func:`expected_correct`). ``accuracy[-1]`` is the overall accuracy; ``accuracy`` is
    :func:`reliquant.core.rejection.accuracy_rejection_curve`'s accuracy reversed.
    """
    ec = expected_correct(score, correct, descending)
    n = ec.size
    pos = np.arange(1, n + 1)
    return pos / n, ec / pos


def area_under_curve(accuracy: ArrayLike) -> float | np.ndarray:
    """Area under an accuracy-acceptance curve sampled at ``r = 1/n, 2/n, ..., 1``.

    The curve is a step function of r (N is an integer), so the area over (0, 1] is the mean of
    its values: ``AUC = (1/n) sum_N acc(N / n)``, the AU-ARC of
    :func:`reliquant.core.rejection.auarc` computed from a stored curve. Works along the last
    axis.
    """
    a = np.asarray(accuracy, dtype=np.float64)
    return a.mean(axis=-1)
