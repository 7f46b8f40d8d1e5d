"""reliquant.nbc.scoring: a user's own Naive Bayes model and table, scored prediction by
prediction, checked against scikit-learn's own CategoricalNB and a hand encoding."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import CategoricalNB

from reliquant.nbc import CategoryEncoder, cv_alpha, fit_nbc, fit_table, from_sklearn, robustness
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


def test_inf_in_a_categorical_nb_table_names_the_column_row_and_value():
    """inf cast to int64 reads as -2**63: it was refused as "got value -9223372036854775808"."""
    X, y = _codes(60)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    sk = CategoricalNB().fit(frame, y)
    test = frame.iloc[:5].astype(float)
    test.loc[3, "c"] = -np.inf
    with pytest.raises(ValueError, match=r"column 'c' holds -inf at row 3") as err:
        robustness(sk, test[["d", "c", "b", "a"]])
    assert "9223372036854775808" not in str(err.value)
    codes = X[:5].astype(float)
    codes[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"got inf at row 1, column 2") as err:
        robustness(CategoricalNB().fit(X, y), codes)
    assert "9223372036854775808" not in str(err.value)
    with pytest.raises(ValueError, match=r"finite integer codes; got inf at row 1, column 2"):
        fit_nbc(codes, y[:5], 3, [3, 3, 3, 3], 1.0)


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


# ------------------------------------------------------- u_m .. u_e from a bootstrap ensemble
def test_bootstrap_uncertainty_equals_the_experiments_own_code_path():
    """robustness(..., bootstrap=M) on the experiment's model and generator gives the u_m ..
    u_e that evaluate_training_set (Section 7.3) computes for the same training set."""
    from reliquant.nbc.classifier import fold_ids
    from reliquant.nbc.reproduction.experiment import evaluate_training_set

    X, y = _codes(80, seed=1)
    X_test, y_test = _codes(50, seed=2)
    exp = evaluate_training_set(X, y, X_test, y_test, 3, [3] * 4, [0.3], 4, 6,
                                np.random.default_rng(11))  # fmt: skip
    rng = np.random.default_rng(11)
    fold_ids(len(y), 4, rng)  # the CV folds the experiment drew first from the same generator
    model = fit_nbc(X, y, 3, [3] * 4, 0.3)
    ours = robustness(model, X_test, bootstrap=6, seed=rng, train=(X, y))
    assert list(ours.columns) == ["prediction", "eps_glob", "eps_loc", "u_m", "u_H", "u_a",
                                  "u_t", "u_e"]  # fmt: skip
    np.testing.assert_array_equal(ours["prediction"], exp["y_pred"])
    for name in ("eps_glob", "eps_loc", "u_m", "u_H", "u_a", "u_t", "u_e"):
        np.testing.assert_allclose(ours[name], exp[name], rtol=1e-12, atol=1e-15, err_msg=name)
    assert exp["u_e"].max() > 1e-3  # the ensemble members differ: u_e is not trivially 0


def _eq18_conditional(X, y, x, alpha, k, n_values):
    """p(c | x) of an eq. 18 NBC by counting, one instance, plain Python."""
    n = len(y)
    joint = []
    for c in range(k):
        n_c = sum(1 for v in y if v == c)
        p = (n_c + alpha) / (n + alpha * k)
        for i, v in enumerate(x):
            n_cf = sum(1 for row, lab in zip(X, y, strict=True) if lab == c and row[i] == v)
            p *= (n_cf + alpha) / (n_c + alpha * n_values[i])
        joint.append(p)
    return np.array(joint) / sum(joint)


def test_bootstrap_uncertainty_of_a_table_by_brute_force():
    """u_m .. u_e of a model fitted on a table, recomputed by counting and scipy's entropy."""
    from scipy.stats import entropy

    from reliquant.core.seeding import block_rng

    X, y = _codes(40, seed=3)
    names = np.array(["low", "mid", "high"])
    frame = pd.DataFrame({f"f{i}": names[X[:, i]] for i in range(4)})
    frame["label"] = y
    fitted = fit_table(frame, "label", alpha=0.5)
    test = frame.drop(columns="label").iloc[:12]
    ours = robustness(fitted, test, bootstrap=5, seed=3)
    codes = fitted.encoder.transform(test)
    Xtr = fitted.encoder.transform(frame.drop(columns="label"))
    rng = block_rng(3, "bootstrap")
    resamples = [rng.integers(0, 40, size=40) for _ in range(5)]
    for j, x in enumerate(codes):
        p = _eq18_conditional(Xtr, y, x, 0.5, 3, [3] * 4)
        members = [_eq18_conditional(Xtr[b], y[b], x, 0.5, 3, [3] * 4) for b in resamples]
        u_a = np.mean([entropy(m, base=2) for m in members])
        u_t = entropy(np.mean(members, axis=0), base=2)
        expected = {"u_m": 1 - p.max(), "u_H": entropy(p, base=2), "u_a": u_a, "u_t": u_t,
                    "u_e": u_t - u_a}  # fmt: skip
        for name, value in expected.items():
            assert ours[name].iloc[j] == pytest.approx(value, rel=1e-10, abs=1e-12), (name, j)
    assert ((ours["u_m"] >= 0) & (ours["u_m"] <= 2 / 3)).all()
    assert (ours["u_e"] >= 0).all() and (ours["u_t"] <= np.log2(3) + 1e-12).all()
    # the same seed gives the same ensemble; another seed another one
    again = robustness(fitted, test, bootstrap=5, seed=3)
    pd.testing.assert_frame_equal(ours, again)
    other = robustness(fitted, test, bootstrap=5, seed=4)
    assert not np.array_equal(other["u_a"], ours["u_a"])
    np.testing.assert_array_equal(other["u_H"], ours["u_H"])  # the model's own metrics stay


def test_bootstrap_needs_our_nbc_and_its_training_data():
    X, y = _codes(30)
    model = fit_nbc(X, y, 3, [3] * 4, 1.0)
    assert list(robustness(model, X).columns) == ["prediction", "eps_glob", "eps_loc"]
    with pytest.raises(ValueError, match=r"needs the training data: pass train="):
        robustness(model, X, bootstrap=3)
    with pytest.raises(TypeError, match="needs our eq. 18 NBC.*got CategoricalNB"):
        robustness(CategoricalNB().fit(X, y), X, bootstrap=3, train=(X, y))
    with pytest.raises(ValueError, match="bootstrap must be >= 1 models; got 0"):
        robustness(model, X, bootstrap=0, train=(X, y))
    with pytest.raises(ValueError, match=r"features must have shape \(n, 4\)"):
        robustness(model, X, bootstrap=2, train=(X[:, :3], y))


# ------------------------------------------ issue 22: tables as people hold them (user API)
def _declared_train() -> pd.DataFrame:
    """Six rows; class p: a = x, x, y and b = 1, 2, 2; class q: a = y, y, x and b = 1, 1, 2."""
    return pd.DataFrame(
        {
            "a": ["x", "x", "y", "y", "x", "y"],
            "b": [1, 2, 1, 1, 2, 2],
            "t": ["p", "p", "q", "q", "q", "p"],
        }
    )


def _hand_factors(train: pd.DataFrame, row: dict, alpha: Fraction, n_values: dict) -> dict:
    """Per class, the exact eq. 18 factors ``[p(c), p(f_1 | c), ...]`` by counting, with
    ``n_values`` the declared ``|F_i|`` of each column: ``p(f_i | c) = (n(c, f_i) + alpha) /
    (n(c) + alpha |F_i|)``."""
    n, classes = len(train), sorted(set(train["t"]))
    out = {}
    for c in classes:
        rows = train[train["t"] == c]
        factors = [(len(rows) + alpha) / (n + alpha * len(classes))]
        for col, v in row.items():
            n_cf = int((rows[col].astype(str) == str(v)).sum())
            factors.append((n_cf + alpha) / (len(rows) + alpha * n_values[col]))
        out[c] = factors
    return out


@pytest.mark.parametrize("how", ["argument", "categorical"])
def test_a_declared_but_unseen_value_is_scored_with_eq18_smoothing(how):
    """'z' is declared (|F_a| = 3) but never in training: p(z | c) = alpha / (n(c) + 3 alpha).
    Prediction, eps_glob (eq. 13) and eps_loc (Theorem 6.1) against the hand computation."""
    train = _declared_train()
    test = pd.DataFrame({"a": ["z", "x"], "b": [1, 2]})
    if how == "argument":
        fitted = fit_table(train, "t", alpha=1.0, categories={"a": ["x", "y", "z"]})
    else:
        declared = pd.CategoricalDtype(["z", "y", "x"])
        fitted = fit_table(train.astype({"a": declared}), "t", alpha=1.0)
        test = test.astype({"a": declared})
    assert fitted.encoder.n_values == [3, 2]
    out = robustness(fitted, test)
    for j, row in enumerate(test.to_dict("records")):
        hand = _hand_factors(train, row, Fraction(1), {"a": 3, "b": 2})
        joint = {c: f[0] * f[1] * f[2] for c, f in hand.items()}
        first, second = sorted(joint, key=joint.get, reverse=True)
        d = joint[first] - joint[second]
        assert out["prediction"].iloc[j] == first
        assert out["eps_glob"].iloc[j] == pytest.approx(float(d / (1 + d)), rel=1e-12)
        lp = np.log([float(f[0]) for f in hand.values()])
        cond = [[np.log(float(v)) for v in f[1:]] for f in hand.values()]
        assert out["eps_loc"].iloc[j] == pytest.approx(eps_loc_scalar(lp, cond), abs=1e-10)
    # the closed form of row 0 (a = z, b = 1): p(p, f) = 4/8 * 1/6 * 2/5 = 1/30 and
    # p(q, f) = 4/8 * 1/6 * 3/5 = 1/20, so q is predicted with eps_glob = (1/60) / (61/60)
    assert out["prediction"].iloc[0] == "q"
    assert out["eps_glob"].iloc[0] == pytest.approx(1 / 61, rel=1e-12)


def test_the_declared_order_gives_the_codes_not_the_scores():
    train = _declared_train()
    test = pd.DataFrame({"a": ["z", "x", "y"], "b": [1, 2, 1]})
    one = robustness(fit_table(train, "t", alpha=0.5, categories={"a": ["x", "y", "z"]}), test)
    two = robustness(fit_table(train, "t", alpha=0.5, categories={"a": ["z", "x", "y"]}), test)
    pd.testing.assert_frame_equal(one, two)


def test_an_undeclared_unseen_value_is_still_refused():
    fitted = fit_table(_declared_train(), "t", alpha=1.0, categories={"a": ["x", "y", "z"]})
    with pytest.raises(ValueError, match=r"column 'a' holds 'w', a category neither seen"):
        robustness(fitted, pd.DataFrame({"a": ["w"], "b": [1]}))
    with pytest.raises(ValueError, match=r"column 'b' holds 3, a category neither seen"):
        robustness(fitted, pd.DataFrame({"a": ["z"], "b": [3]}))


@pytest.mark.parametrize(
    ("categories", "error", "message"),
    [
        ({"a": ["x"]}, ValueError, r"column 'a' holds 'y' in training row 2, not among its"),
        ({"nosuch": ["x"]}, ValueError, r"categories= names \['nosuch'\], not columns"),
        ({"a": []}, ValueError, "categories= for column 'a' is empty"),
        ({"a": ["x", "y", "x"]}, ValueError, "categories= for column 'a' repeats 'x'"),
        ({"a": ["x", "y", None]}, ValueError, "categories= for column 'a' holds a missing value"),
        ({"a": "xy"}, TypeError, "must be a list of categories; got 'xy'"),
    ],
)  # fmt: skip
def test_bad_declared_categories_are_refused_naming_the_column(categories, error, message):
    with pytest.raises(error, match=message):
        fit_table(_declared_train(), "t", alpha=1.0, categories=categories)


def test_a_declared_class_never_in_training_gets_the_smoothed_prior():
    train = _declared_train()
    fitted = fit_table(train, "t", alpha=1.0, categories={"t": ["p", "q", "r"]})
    assert fitted.classes == ("p", "q", "r")
    np.testing.assert_allclose(np.exp(fitted.model.log_prior), [4 / 9, 4 / 9, 1 / 9])


def test_a_column_of_raw_floats_is_refused_at_fit_saying_to_bin_it():
    rng = np.random.default_rng(0)
    x = rng.normal(170.0, 10.0, 300).round(1)
    table = pd.DataFrame({"height": x, "colour": rng.choice(["r", "g"], 300)})
    table["label"] = np.where(x > 170, "tall", "short")
    assert table["height"].nunique() > 200  # raw measurements, as held
    with pytest.raises(
        ValueError, match=r"column 'height' holds non-integer numbers \(2\d\d distinct"
    ) as err:
        fit_table(table, "label")  # fmt: skip
    assert "pandas.cut" in str(err.value) and "pandas.qcut" in str(err.value)
    # the same numbers as Python floats in an object column are refused too
    with pytest.raises(ValueError, match="column 'height' holds non-integer numbers"):
        fit_table(table.astype({"height": object}), "label")
    # binned, they are accepted (pandas.cut gives a Categorical with every bin declared)
    binned = table.assign(height=pd.cut(table["height"], bins=5))
    fitted = fit_table(binned, "label", seed=0)
    assert fitted.encoder.n_values == [5, 2]
    # integer-valued floats are codes, not raw numbers (2.0 and 2 are one category)
    ints = table.assign(height=(x // 10).astype(float))
    assert fit_table(ints, "label", alpha=1.0).encoder.categories[0][0] == int(x.min() // 10)


def test_an_empty_table_is_refused_at_fit():
    with pytest.raises(ValueError, match=r"the training table is empty \(0 rows"):
        fit_table(_declared_train().iloc[:0], "t")


def test_a_single_class_table_is_refused_at_fit_naming_target_and_class():
    table = _declared_train().assign(t="yes")
    with pytest.raises(
        ValueError, match=r"target column 't' holds one class only \('yes' in all 6 rows\)"
    ):
        fit_table(table, "t", alpha=1.0)  # fmt: skip


def test_too_few_rows_for_the_cv_folds_name_cv_folds():
    with pytest.raises(ValueError, match=r"6 training rows cannot be split into cv_folds=10"):
        fit_table(_declared_train(), "t", cv_folds=10)


def test_categorical_nb_predictions_are_its_class_labels():
    """String labels: robustness's prediction is sklearn's own predict, row for row."""
    X, y = _codes(200, seed=5)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    sk = CategoricalNB(alpha=0.5).fit(X, labels)
    out = robustness(sk, X)
    assert (out["prediction"].to_numpy() == sk.predict(X)).mean() == 1.0
    assert set(out["prediction"]) <= set(sk.classes_)


def test_categorical_nb_fitted_on_a_dataframe_matches_columns_by_name():
    X, y = _codes(150, seed=6)
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    sk = CategoricalNB().fit(frame, np.array(["no", "yes", "maybe"])[y])
    ref = robustness(sk, frame)
    shuffled = robustness(sk, frame[["z", "x", "w", "y"]])
    pd.testing.assert_frame_equal(ref, shuffled)
    np.testing.assert_array_equal(ref["prediction"].to_numpy(), sk.predict(frame))
    with pytest.raises(ValueError, match=r"missing \['z'\], extra \['v'\]"):
        robustness(sk, frame.rename(columns={"z": "v"}))


def test_test_columns_in_another_order_are_matched_by_name():
    X, y = _codes(100, seed=7)
    names = np.array(["lo", "mid", "hi"])
    frame = pd.DataFrame({f"f{i}": names[X[:, i]] for i in range(4)})
    frame["label"] = np.array(["a", "b", "c"])[y]
    fitted = fit_table(frame, "label", alpha=1.0)
    test = frame.drop(columns="label")
    ref = robustness(fitted, test)
    pd.testing.assert_frame_equal(robustness(fitted, test[["f3", "f1", "f0", "f2"]]), ref)
    pd.testing.assert_frame_equal(robustness(fitted, frame), ref)  # the target is left out
    one = robustness(fitted, test.iloc[4][["f2", "f0", "f3", "f1"]])  # a Series: one row
    pd.testing.assert_frame_equal(one, ref.iloc[[4]])
    lists = r"training columns: \['f0', 'f1', 'f2', 'f3'\]; given: \['f0', 'f1', 'f2'\]"
    with pytest.raises(ValueError, match=rf"lacks the training columns \['f3'\] .*{lists}"):
        robustness(fitted, test.drop(columns="f3"))
    with pytest.raises(ValueError, match=r"has columns not seen in training \['id'\]"):
        robustness(fitted, test.assign(id=1))


def test_non_string_column_names_work():
    X, y = _codes(60, seed=8)
    frame = pd.DataFrame(X)
    frame["label"] = y
    fitted = fit_table(frame, "label", alpha=1.0)
    pd.testing.assert_frame_equal(
        robustness(fitted, frame.drop(columns="label")),
        robustness(fit_nbc(X, y, 3, [3] * 4, 1.0), X),
    )


def test_a_pipeline_ending_in_categorical_nb_as_a_user_writes_it():
    """``Pipeline([OrdinalEncoder, CategoricalNB])`` on a table of strings used to fail with
    "TypeError ... got Pipeline": it is scored through its last step on the transformed
    table, as its own predict does (the predictions are the pipeline's); eps_glob and eps_loc
    equal the manual route (its last step on the transformed table); another last step says
    so."""
    from sklearn.naive_bayes import CategoricalNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(5)
    table = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 200),
                          "size": rng.choice(["S", "M", "L", "XL"], 200)})  # fmt: skip
    y = np.where((table["colour"] == "red") | (table["size"] == "XL"), "keep", "drop")
    pipe = make_pipeline(OrdinalEncoder(), CategoricalNB()).fit(table, y)
    test = table.iloc[150:160].set_axis(range(10, 20))
    got = robustness(pipe, test)
    assert list(got["prediction"]) == list(pipe.predict(test))
    assert list(got.index) == list(range(10, 20))
    by_hand = robustness(pipe[-1], pipe[:-1].transform(test))  # the manual route
    np.testing.assert_array_equal(got[["eps_glob", "eps_loc"]], by_hand[["eps_glob", "eps_loc"]])
    with pytest.raises(TypeError, match=r"from_sklearn\(pipeline\[-1\]\).*pipeline\[:-1\]"):
        from_sklearn(pipe)
    from sklearn.linear_model import LogisticRegression

    other = make_pipeline(OrdinalEncoder(), LogisticRegression()).fit(table, y)
    with pytest.raises(TypeError, match="last step is LogisticRegression"):
        robustness(other, test)
