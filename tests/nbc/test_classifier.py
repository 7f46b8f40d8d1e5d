"""Tests of reliquant.nbc.classifier against hand computations of eq. 18 and brute-force CV loops."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.nbc.classifier import (
    count_tables,
    cv_accuracies,
    cv_alpha,
    fit_nbc,
    fold_ids,
    log_factors,
    log_joint,
    predict,
)

# tiny data set: 2 classes, features with 2 and 3 values
X_TINY = np.array([[0, 0], [0, 1], [1, 2], [1, 2], [0, 0]])
Y_TINY = np.array([0, 0, 1, 1, 1])


def test_eq18_by_hand() -> None:
    alpha = Fraction(1, 2)
    m = fit_nbc(X_TINY, Y_TINY, 2, [2, 3], float(alpha))
    # n = 5, n(0) = 2, n(1) = 3; |C| = 2
    prior = [(2 + alpha) / (5 + 2 * alpha), (3 + alpha) / (5 + 2 * alpha)]
    # feature 0 (|F| = 2): class 0 -> counts (2, 0); class 1 -> (1, 2)
    f0 = [
        [(2 + alpha) / (2 + 2 * alpha), (0 + alpha) / (2 + 2 * alpha)],
        [(1 + alpha) / (3 + 2 * alpha), (2 + alpha) / (3 + 2 * alpha)],
    ]
    # feature 1 (|F| = 3): class 0 -> (1, 1, 0); class 1 -> (1, 0, 2)
    f1 = [
        [(1 + alpha) / (2 + 3 * alpha), (1 + alpha) / (2 + 3 * alpha), alpha / (2 + 3 * alpha)],
        [(1 + alpha) / (3 + 3 * alpha), alpha / (3 + 3 * alpha), (2 + alpha) / (3 + 3 * alpha)],
    ]
    np.testing.assert_allclose(np.exp(m.log_prior), [float(v) for v in prior], rtol=1e-14)
    np.testing.assert_allclose(
        np.exp(m.log_cond[0]), [[float(v) for v in r] for r in f0], rtol=1e-14
    )
    np.testing.assert_allclose(
        np.exp(m.log_cond[1]), [[float(v) for v in r] for r in f1], rtol=1e-14
    )
    # joint of eq. 17 for f = (1, 1)
    expect = [float(prior[c] * f0[c][1] * f1[c][1]) for c in range(2)]
    np.testing.assert_allclose(np.exp(log_joint(m, np.array([[1, 1]])))[0], expect, rtol=1e-13)


def test_prior_differs_from_sklearn_categoricalnb() -> None:
    """eq. 18 smooths the class prior; scikit-learn's CategoricalNB does not."""
    from sklearn.naive_bayes import CategoricalNB

    m = fit_nbc(X_TINY, Y_TINY, 2, [2, 3], 1.0)
    sk = CategoricalNB(alpha=1.0).fit(X_TINY, Y_TINY)
    np.testing.assert_allclose(np.exp(sk.class_log_prior_), [2 / 5, 3 / 5])
    np.testing.assert_allclose(np.exp(m.log_prior), [3 / 7, 4 / 7])
    # the feature conditionals agree
    for i in range(2):
        np.testing.assert_allclose(m.log_cond[i], sk.feature_log_prob_[i], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    alpha=st.floats(0.01, 10),
)
def test_fitted_tables_are_distributions_and_joint_sums_to_one(
    seed: int, n: int, alpha: float
) -> None:
    rng = np.random.default_rng(seed)
    n_values = [2, 3, 4]
    X = np.stack([rng.integers(0, v, n) for v in n_values], axis=1)
    y = rng.integers(0, 3, n)
    m = fit_nbc(X, y, 3, n_values, alpha)
    np.testing.assert_allclose(np.exp(m.log_prior).sum(), 1.0)
    for t in m.log_cond:
        np.testing.assert_allclose(np.exp(t).sum(axis=1), 1.0)
    grid = np.stack(np.meshgrid(*[np.arange(v) for v in n_values], indexing="ij"), -1).reshape(
        -1, 3
    )
    np.testing.assert_allclose(np.exp(log_joint(m, grid)).sum(), 1.0)
    np.testing.assert_allclose(log_factors(m, grid).sum(axis=2), log_joint(m, grid), atol=1e-13)


def test_unseen_feature_value_gets_smoothed_probability() -> None:
    X = np.array([[0], [0], [1]])
    y = np.array([0, 1, 1])
    m = fit_nbc(X, y, 2, [3], 2.0)  # value 2 never seen
    np.testing.assert_allclose(np.exp(m.log_cond[0][:, 2]), [2 / (1 + 6), 2 / (2 + 6)])
    assert np.all(np.isfinite(log_joint(m, np.array([[2]]))))
    with pytest.raises(ValueError, match="feature 0 takes values 0..2; got value 3"):
        log_joint(m, np.array([[3]]))


def test_alpha_zero_with_zero_counts() -> None:
    # all classes present: zero counts give probability 0, log -inf (documented behaviour)
    X = np.array([[0], [1]])
    y = np.array([0, 1])
    m = fit_nbc(X, y, 2, [2], 0.0)
    lj = log_joint(m, np.array([[0], [1]]))
    assert lj[0, 1] == -np.inf and lj[1, 0] == -np.inf
    np.testing.assert_array_equal(predict(m, np.array([[0], [1]])), [0, 1])
    # an empty class makes eq. 18 0/0: clear error naming the class
    with pytest.raises(ValueError, match="class 1 has no training instance"):
        fit_nbc(np.array([[0], [1]]), np.array([0, 0]), 2, [2], 0.0)
    with pytest.raises(ValueError, match="alpha must be"):
        fit_nbc(X, y, 2, [2], -1.0)


def test_single_class_training_set() -> None:
    X = np.array([[0, 1], [1, 1], [0, 0]])
    y = np.array([2, 2, 2])
    m = fit_nbc(X, y, 3, [2, 2], 1.0)
    np.testing.assert_allclose(np.exp(m.log_prior), [1 / 6, 1 / 6, 4 / 6])
    np.testing.assert_allclose(np.exp(m.log_cond[0][:2]), 0.5)  # unseen classes: uniform
    assert np.all(predict(m, X) == 2)
    folds = fold_ids(3, 3, np.random.default_rng(0))
    acc = cv_accuracies(X, y, 3, [2, 2], [0.1, 1.0], folds)
    np.testing.assert_array_equal(acc, _brute_force_cv(X, y, 3, [2, 2], [0.1, 1.0], folds))


def test_bad_inputs_name_the_problem() -> None:
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        fit_nbc(np.zeros((3, 3), int), np.zeros(3, int), 2, [2, 2], 1.0)
    with pytest.raises(ValueError, match="labels take values 0..1"):
        fit_nbc(np.zeros((3, 2), int), np.array([0, 1, 2]), 2, [2, 2], 1.0)
    with pytest.raises(ValueError, match="integer codes"):
        fit_nbc(np.full((3, 2), 0.5), np.zeros(3, int), 2, [2, 2], 1.0)
    with pytest.raises(ValueError, match="alpha grid"):
        cv_accuracies(X_TINY, Y_TINY, 2, [2, 3], [0.0, 1.0], np.zeros(5, int))


def _brute_force_cv(X, y, n_classes, n_values, alphas, folds):
    acc = []
    for a in alphas:
        correct = 0
        for k in np.unique(folds):
            tr, te = folds != k, folds == k
            m = fit_nbc(X[tr], y[tr], n_classes, n_values, a)
            correct += int((predict(m, X[te]) == y[te]).sum())
        acc.append(correct / len(y))
    return np.array(acc)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 40))
def test_cv_matches_brute_force_loop(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    n_values = [2, 3, 3, 4]
    X = np.stack([rng.integers(0, v, n) for v in n_values], axis=1)
    y = rng.integers(0, 3, n)
    alphas = [0.01, 0.1, 0.5, 1.0, 3.0, 10.0]
    folds = fold_ids(n, 5, np.random.default_rng(seed + 1))
    fast = cv_accuracies(X, y, 3, n_values, alphas, folds)
    slow = _brute_force_cv(X, y, 3, n_values, alphas, folds)
    np.testing.assert_array_equal(fast, slow)
    chosen, _ = cv_alpha(X, y, 3, n_values, alphas, 5, np.random.default_rng(seed + 1))
    best = max(range(len(alphas)), key=lambda i: (slow[i], -i))  # first maximiser
    assert chosen == alphas[best]


def test_fold_ids_balanced_and_deterministic() -> None:
    f = fold_ids(23, 5, np.random.default_rng(3))
    assert sorted(np.bincount(f)) == [4, 4, 5, 5, 5]
    np.testing.assert_array_equal(f, fold_ids(23, 5, np.random.default_rng(3)))
    with pytest.raises(ValueError, match="cannot split 3 instances into 5 folds"):
        fold_ids(3, 5, np.random.default_rng(0))


def test_counts() -> None:
    nc, ncf = count_tables(X_TINY, Y_TINY, 2, [2, 3])
    np.testing.assert_array_equal(nc, [2, 3])
    np.testing.assert_array_equal(ncf[0], [[2, 0], [1, 2]])
    np.testing.assert_array_equal(ncf[1], [[1, 1, 0], [1, 0, 2]])
