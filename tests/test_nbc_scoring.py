"""reliquant.nbc.scoring: a user's own Naive Bayes model and table, scored prediction by
prediction, checked against scikit-learn's own CategoricalNB and a hand encoding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import CategoricalNB

from reliquant.nbc import CategoryEncoder, cv_alpha, fit_nbc, fit_table, robustness
from reliquant.nbc.robustness_metrics import eps_loc_scalar


def _codes(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 4))
    y = (X[:, 0] + rng.integers(0, 2, size=n)) % 3
    return X, y


def test_categorical_nb_predictions_and_eps_glob_match_sklearn():
    X, y = _codes()
    sk = CategoricalNB(alpha=0.7).fit(X, y)
    out = robustness(sk, X)
    np.testing.assert_array_equal(out["prediction"], sk.predict(X))
    joint = np.exp(sk.predict_joint_log_proba(X))  # p(c, f) in the linear domain
    top = np.sort(joint, axis=1)
    d = top[:, -1] - top[:, -2]
    np.testing.assert_allclose(out["eps_glob"], d / (1 + d), rtol=1e-9, atol=1e-15)
    # eps_loc against the scalar reference on sklearn's own probabilities
    lp, lc = sk.class_log_prior_, sk.feature_log_prob_
    for j in range(5):
        ref = eps_loc_scalar(lp, [[lc[i][c, X[j, i]] for i in range(4)] for c in range(3)])
        assert out["eps_loc"].iloc[j] == pytest.approx(ref, abs=1e-10)


def test_a_string_table_equals_our_nbc_on_hand_made_codes():
    X, y = _codes()
    names = np.array(["low", "mid", "high"])
    frame = pd.DataFrame({f"f{i}": names[X[:, i]] for i in range(4)})
    frame["label"] = np.array(["a", "b", "c"])[y]
    fitted = fit_table(frame, "label", alpha=1.0)
    # sorted categories: high=0, low=1, mid=2
    remap = np.array([1, 2, 0])
    model = fit_nbc(remap[X], y, 3, [3, 3, 3, 3], 1.0)
    test = frame.drop(columns="label").iloc[::-1].iloc[:30]  # any order, any subset
    ours = robustness(fitted, test)
    ref = robustness(model, remap[X[::-1][:30]])
    np.testing.assert_allclose(ours["eps_loc"], ref["eps_loc"], atol=1e-13)
    np.testing.assert_allclose(ours["eps_glob"], ref["eps_glob"], atol=1e-15)
    assert list(ours["prediction"]) == list(np.array(["a", "b", "c"])[ref["prediction"]])
    assert list(ours.index) == list(test.index)


def test_test_categories_come_from_training_only():
    """A test table holding only some categories keeps the training codes."""
    train = pd.DataFrame({"f": ["x", "y", "z", "x", "z", "y"], "t": [0, 1, 1, 0, 1, 0]})
    fitted = fit_table(train, "t", alpha=1.0)
    one = robustness(fitted, pd.DataFrame({"f": ["z"]}))
    full = robustness(fitted, train[["f"]])
    assert one["eps_loc"].iloc[0] == full["eps_loc"].iloc[2]


@pytest.mark.parametrize(
    ("test", "message"),
    [
        (pd.DataFrame({"colour": ["red", "purple"]}), "column 'colour' holds 'purple'"),
        (pd.DataFrame({"colour": ["red", None]}), "column 'colour' has a missing value in row 1"),
        (pd.DataFrame({"hue": ["red"]}), r"lacks the training columns \['colour'\]"),
    ],
)
def test_unseen_or_missing_values_name_the_column(test, message):
    train = pd.DataFrame({"colour": ["red", "blue", "red"], "t": ["a", "b", "b"]})
    fitted = fit_table(train, "t", alpha=1.0)
    with pytest.raises(ValueError, match=message):
        robustness(fitted, test)


def test_integer_valued_floats_are_codes_and_fractions_are_not():
    X, y = _codes(60)
    model = fit_nbc(X.astype(float), y.astype(float), 3, [3, 3, 3, 3], 1.0)
    ref = fit_nbc(X, y, 3, [3, 3, 3, 3], 1.0)
    np.testing.assert_array_equal(model.log_prior, ref.log_prior)
    bad = X.astype(float)
    bad[2, 1] = 0.5
    with pytest.raises(ValueError, match=r"0.5 at index \(2, 1\)"):
        fit_nbc(bad, y, 3, [3, 3, 3, 3], 1.0)
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="missing value"):
        fit_nbc(bad, y, 3, [3, 3, 3, 3], 1.0)
    enc = CategoryEncoder.fit(pd.DataFrame({"a": [1.0, 2.0, 1.0]}))
    np.testing.assert_array_equal(enc.transform(pd.DataFrame({"a": [2, 1]}))[:, 0], [1, 0])


def test_cv_alpha_takes_a_seed_or_a_generator():
    X, y = _codes()
    grid = [0.1, 1.0, 10.0]
    a_seed = cv_alpha(X, y, 3, [3] * 4, grid, 5, 7)
    a_gen = cv_alpha(X, y, 3, [3] * 4, grid, 5, np.random.default_rng(7))
    assert a_seed[0] == a_gen[0]
    np.testing.assert_array_equal(a_seed[1], a_gen[1])


def test_non_categorical_nb_is_refused():
    from sklearn.naive_bayes import GaussianNB

    X, y = _codes(30)
    with pytest.raises(TypeError, match="CategoricalNB; got GaussianNB"):
        robustness(GaussianNB().fit(X, y), X)
