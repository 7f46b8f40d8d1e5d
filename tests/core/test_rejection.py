"""reliquant.core.rejection: AU-ARC and accuracy-rejection curves against a brute force over
every ordering of ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.core.rejection import (
    accuracy_rejection_curve,
    auarc,
    auarc_rows,
    expected_kept_correct,
)


def brute_force_curve(score: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Mean over every permutation of the rows of the curve of a stable descending sort:
    every ordering of tied scores, each equally often."""
    n = score.size
    curves = []
    for perm in itertools.permutations(range(n)):
        p = np.array(perm)
        s, c = score[p], correct[p]
        order = np.argsort(-s, kind="stable")
        kept_correct = np.cumsum(c[order])  # C_m for m = 1..n
        acc_by_kept = kept_correct / np.arange(1, n + 1)
        curves.append(acc_by_kept[::-1])  # k = 0..n-1 rejected
    return np.mean(curves, axis=0)


def test_brute_force_on_random_inputs_with_ties() -> None:
    rng = np.random.default_rng(7)
    for _ in range(25):
        n = int(rng.integers(1, 7))
        score = rng.integers(0, 3, size=n).astype(float)  # few values: many ties
        correct = rng.random(n) < 0.6
        ref = brute_force_curve(score, correct)
        t, acc = accuracy_rejection_curve(score, correct)
        np.testing.assert_allclose(t, np.arange(n) / n)
        np.testing.assert_allclose(acc, ref, rtol=0, atol=1e-12)
        assert auarc(score, correct) == pytest.approx(ref.mean(), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 2.0, np.inf]), st.booleans()),
        min_size=1,
        max_size=6,
    )
)
def test_brute_force_hypothesis(pairs: list[tuple[float, bool]]) -> None:
    score = np.array([p[0] for p in pairs])
    correct = np.array([p[1] for p in pairs])
    ref = brute_force_curve(score, correct)
    np.testing.assert_allclose(accuracy_rejection_curve(score, correct)[1], ref, atol=1e-12)


def test_invariant_to_row_order_and_batched_form() -> None:
    rng = np.random.default_rng(1)
    score = rng.integers(0, 20, size=500).astype(float)
    correct = rng.random(500) < 0.7
    a = auarc(score, correct)
    p = rng.permutation(500)
    assert auarc(score[p], correct[p]) == pytest.approx(a, abs=1e-13)
    rows = auarc_rows(np.stack([score, score[p]]), np.stack([correct, correct[p]]))
    np.testing.assert_allclose(rows, [a, a], atol=1e-13)


def test_known_values_and_extremes() -> None:
    # distinct scores: reject the wrong one first
    assert auarc([3.0, 2.0, 1.0], [True, True, False]) == pytest.approx((2 / 3 + 1 + 1) / 3)
    # one tied group: the overall accuracy everywhere
    t, acc = accuracy_rejection_curve(np.zeros(4), [True, False, False, True])
    np.testing.assert_allclose(acc, 0.5)
    # all correct -> 1, all wrong -> 0, for any score
    s = np.array([0.3, 0.1, 0.3, 0.9])
    assert auarc(s, np.ones(4, bool)) == 1.0
    assert auarc(s, np.zeros(4, bool)) == 0.0
    assert auarc([1.0], [True]) == 1.0
    # integer 0/1 correctness accepted
    assert auarc([1.0, 0.0], [1, 0]) == pytest.approx((0.5 + 1.0) / 2)
    np.testing.assert_allclose(expected_kept_correct([1.0, 1.0], [True, False]), [0.5, 1.0])


@pytest.mark.parametrize(
    ("score", "correct", "match"),
    [
        ([1.0, np.nan], [True, False], "score has 1 NaN"),
        ([1.0, 2.0, 3.0], [True, False], "score and correct must have the same length"),
        ([], [], "score is empty"),
        ([1.0, 2.0], [0.5, 1.0], "correct must be boolean"),
        ([1.0, 2.0], [0, 2], "correct must be boolean"),
        ([1.0, 2.0], ["a", "b"], "correct must be boolean"),
        (["a", "b"], [True, False], "score must be real-valued"),
        ([[1.0, 2.0]], [True, False], "score must be 1-D"),
    ],
)
def test_bad_input_names_the_argument(score, correct, match) -> None:
    with pytest.raises(ValueError, match=match):
        auarc(score, correct)


def test_rounding_order_of_a_tied_group() -> None:
    """Inside a tied group ``E[C_m] = C_s + (m - s) * (c / b)``, the rate rounded first (the
    order the NBC curves have always used, so that they stay bit-identical)."""
    correct = np.array([True, True, True, False, False, False, False])  # one group: c=3, b=7
    got = expected_kept_correct(np.zeros(7), correct)
    want = 0.0 + np.arange(1, 8) * (3.0 / 7.0)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(want, np.arange(1, 8) * 3.0 / 7.0)  # the other order differs


def test_correct_read_as_floats_is_taken_by_value_and_a_missing_one_is_named() -> None:
    """A correctness column read as floats (1.0 / 0.0, as a CSV column with an empty cell
    reads) is the bools it says; a NaN or None is refused naming its position."""
    from reliquant.core.rejection import check_correct

    want = np.array([True, False, True])
    np.testing.assert_array_equal(check_correct(np.array([1.0, 0.0, 1.0])), want)
    np.testing.assert_array_equal(check_correct(np.array([1, 0, 1], dtype=object)), want)
    for values in (np.array([1.0, np.nan, 0.0]), np.array([True, None, False], dtype=object)):
        with pytest.raises(ValueError, match="correct has a missing value .* at position 1"):
            check_correct(values)
