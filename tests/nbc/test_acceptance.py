"""Accuracy-acceptance curves (paper 000, Section 7.4) against brute force over tie orders, and
bit for bit against the NBC reproduction's former implementation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.nbc.reproduction.acceptance import (
    accuracy_acceptance_curve,
    area_under_curve,
    expected_correct,
)


def _brute_force_curve(score: np.ndarray, correct: np.ndarray, descending: bool) -> np.ndarray:
    """Average of the plain curves over every ordering consistent with the metric."""
    key = -score if descending else score
    curves = []
    for perm in itertools.permutations(range(len(score))):
        k = key[list(perm)]
        if np.all(k[1:] >= k[:-1]):
            c = correct[list(perm)].astype(float)
            curves.append(np.cumsum(c) / np.arange(1, len(c) + 1))
    return np.mean(curves, axis=0)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=7),
    descending=st.booleans(),
)
def test_ties_equal_average_over_all_orders(data, descending: bool) -> None:
    score = np.array([d[0] for d in data], dtype=float) / 4
    correct = np.array([d[1] for d in data])
    r, acc = accuracy_acceptance_curve(score, correct, descending)
    np.testing.assert_allclose(acc, _brute_force_curve(score, correct, descending), atol=1e-12)
    np.testing.assert_allclose(r, np.arange(1, len(data) + 1) / len(data))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), n_levels=st.integers(1, 20))
def test_end_point_and_shuffle_invariance(seed: int, n: int, n_levels: int) -> None:
    rng = np.random.default_rng(seed)
    score = rng.integers(0, n_levels, n) / 7.0  # many ties
    correct = rng.random(n) < 0.7
    for desc in (False, True):
        _, acc = accuracy_acceptance_curve(score, correct, desc)
        assert acc[-1] == pytest.approx(correct.mean(), abs=1e-12)  # r = 1: overall accuracy
        perm = rng.permutation(n)
        _, acc_p = accuracy_acceptance_curve(score[perm], correct[perm], desc)
        np.testing.assert_array_equal(acc, acc_p)
    # decreasing robustness == increasing negated robustness
    np.testing.assert_array_equal(
        accuracy_acceptance_curve(score, correct, True)[1],
        accuracy_acceptance_curve(-score, correct, False)[1],
    )


def test_distinct_scores_give_the_plain_cumulative_curve() -> None:
    score = np.array([0.3, 0.1, 0.2, 0.4])
    correct = np.array([0, 1, 1, 0])
    _, acc = accuracy_acceptance_curve(score, correct, descending=False)
    np.testing.assert_allclose(acc, [1, 1, 2 / 3, 1 / 2])
    np.testing.assert_allclose(expected_correct(score, correct, True), [0, 0, 1, 2])
    # one tie block covering everything: flat at the overall accuracy
    _, flat = accuracy_acceptance_curve(np.zeros(4), correct, descending=False)
    np.testing.assert_allclose(flat, 0.5)


def test_area_under_curve() -> None:
    acc = np.array([1.0, 0.5, 0.5, 0.25])
    assert area_under_curve(acc) == pytest.approx(2.25 / 4)
    np.testing.assert_allclose(area_under_curve(np.stack([acc, 2 * acc])), [2.25 / 4, 4.5 / 4])


def test_validation() -> None:
    with pytest.raises(ValueError, match="score and correct must have the same length"):
        accuracy_acceptance_curve(np.zeros(3), np.zeros(2, bool), False)
    with pytest.raises(ValueError, match="score has 1 NaN"):
        accuracy_acceptance_curve(np.array([np.nan]), np.array([True]), False)
    with pytest.raises(ValueError, match="score is empty"):
        accuracy_acceptance_curve(np.zeros(0), np.zeros(0, bool), False)
    with pytest.raises(ValueError, match="correct must be boolean"):
        accuracy_acceptance_curve(np.zeros(2), np.array([0.5, 1.0]), True)


def _former_expected_correct(score: np.ndarray, correct: np.ndarray, descending: bool):
    """The NBC reproduction's own implementation before it used reliquant.core.rejection
    (the curves of the workflow were computed with it): the reference for bit-identity."""
    s = np.asarray(score, dtype=np.float64)
    key = -s if descending else s
    order = np.argsort(key, kind="stable")
    ks = key[order]
    cs = np.asarray(correct)[order].astype(np.float64)
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    ends = np.r_[starts[1:], ks.size]
    cum = np.r_[0.0, np.cumsum(cs)]
    block_of = np.repeat(np.arange(starts.size), ends - starts)
    before = cum[starts][block_of]
    rate = (cum[ends] - cum[starts]) / (ends - starts)
    pos = np.arange(1, ks.size + 1)
    return before + (pos - starts[block_of]) * rate[block_of]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), n_levels=st.integers(1, 30))
def test_bit_identical_to_the_former_implementation(seed: int, n: int, n_levels: int) -> None:
    rng = np.random.default_rng(seed)
    score = rng.integers(0, n_levels, n) / 7.0  # many ties, large blocks
    correct = rng.random(n) < 0.6
    for desc in (False, True):
        np.testing.assert_array_equal(
            expected_correct(score, correct, desc), _former_expected_correct(score, correct, desc)
        )
