"""Inputs matched to the model's features (issue 22): column order, feature names, XGBoost
and LightGBM fitted on DataFrames, bare-number noise.

Each test holds the model and the sample the way a user does (a DataFrame-fitted model, a
pandas Series or one-row DataFrame with its columns in another order) and asserts the same
answer as with the correct order, or a clear error naming both lists.
"""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

from reliquant.trees import (
    Gaussian,
    Norta,
    extract_ensemble,
    load_model,
    robustness,
    robustness_batch,
)
from reliquant.trees.inputs import match_features, noise_in_model_order, noise_spec
from reliquant.trees.norta import NormalMarginal

NAMES = ["a", "b", "c", "d"]
SHUFFLED = ["d", "c", "a", "b"]
DET = {"max_boxes": 40, "max_draws": 8192, "seed": 1}  # deterministic mode: seed-only


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=NAMES)
    y = ((X["a"] > 0.2) & (X["d"] < 0.5)).astype(int)
    return X, y.to_numpy()


@pytest.fixture(scope="module")
def forest(table):
    X, y = table
    return RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)


def _flipping_row(model, X):
    """A row whose label changes when its columns are read in SHUFFLED order by position
    (what robustness did before issue 22)."""
    right = model.predict(X)
    wrong = model.predict(pd.DataFrame(X[SHUFFLED].to_numpy(), columns=NAMES))
    return int(np.flatnonzero(right != wrong)[0])


def test_reordered_series_and_row_give_the_same_r(forest, table):
    X, _ = table
    i = _flipping_row(forest, X)
    right = robustness(forest, X.iloc[i], Gaussian(0.05), **DET)
    assert right.label == forest.predict(X.iloc[[i]])[0]
    for x in (X.iloc[i][SHUFFLED], X.iloc[[i]][SHUFFLED]):  # Series, one-row DataFrame
        got = robustness(forest, x, Gaussian(0.05), **DET)
        assert got.label == right.label
        for f in ("lower", "upper", "estimate", "ci_low", "ci_high", "n_draws"):
            assert getattr(got, f) == getattr(right, f), f
    # read by position, the reordered values are another sample: the label flips
    positional = robustness(forest, X.iloc[i][SHUFFLED].to_numpy(), Gaussian(0.05), **DET)
    assert positional.label != right.label


def test_per_feature_noise_is_matched_by_name(forest, table):
    X, _ = table
    var = pd.Series([0.01, 0.02, 0.3, 0.04], index=NAMES)
    x = X.iloc[5]
    right = robustness(forest, x, Gaussian(var.to_numpy()), **DET)
    shuffled = x[SHUFFLED]
    # named noise (Series, dict, DataFrame covariance) is matched by name, whatever its order
    b = robustness(forest, shuffled, Gaussian(var), **DET)
    c = robustness(forest, x, Gaussian(var[SHUFFLED]), **DET)
    e = robustness(forest, shuffled, Gaussian(dict(var[SHUFFLED])), **DET)
    cov = pd.DataFrame(np.diag(var), index=NAMES, columns=NAMES)
    d = robustness(forest, shuffled, Gaussian(cov.loc[SHUFFLED, SHUFFLED]), **DET)
    for r in (b, c, d, e):
        assert (r.lower, r.upper, r.estimate) == (right.lower, right.upper, right.estimate)
    with pytest.raises(ValueError, match=r"noise variance.*\['a', 'b', 'c'\].*missing \['d'\]"):
        robustness(forest, x, Gaussian(var[["a", "b", "c"]]), **DET)
    # a plain vector or matrix next to a reordered named input is ambiguous: refused
    for plain in (var.to_numpy(), np.diag(var.to_numpy())):
        with pytest.raises(ValueError, match=r"x: \['d', 'c', 'a', 'b'\]; model: \['a', 'b'"):
            robustness(forest, shuffled, Gaussian(plain), **DET)
    # ... unless reordering leaves it unchanged (equal variances)
    same = robustness(forest, shuffled, Gaussian(np.full(4, 0.05)), **DET)
    iso = robustness(forest, x, Gaussian(0.05), **DET)
    assert (same.lower, same.upper, same.estimate) == (iso.lower, iso.upper, iso.estimate)


def test_norta_noise_is_matched_by_name(forest, table):
    X, _ = table
    corr = np.eye(4)
    corr[0, 3] = corr[3, 0] = 0.5
    marg = [NormalMarginal(0.0, s) for s in (0.1, 0.2, 0.3, 0.4)]
    x = X.iloc[7]
    right = robustness(forest, x, Norta(marg, corr), **DET)
    by_name = dict(zip(NAMES, marg, strict=True))
    named_corr = pd.DataFrame(corr, index=NAMES, columns=NAMES).loc[SHUFFLED, SHUFFLED]
    got = robustness(forest, x[SHUFFLED], Norta(by_name, named_corr), **DET)
    assert (got.lower, got.upper, got.estimate) == (right.lower, right.upper, right.estimate)
    with pytest.raises(ValueError, match=r"NORTA marginals \(a list\).*Norta\(\{name"):
        robustness(forest, x[SHUFFLED], Norta(marg, named_corr), **DET)
    with pytest.raises(ValueError, match=r"NORTA correlation \(a matrix\).*x: \['d'"):
        robustness(forest, x[SHUFFLED], Norta(by_name, corr), **DET)
    # an identity correlation reads the same in any order
    a = robustness(forest, x[SHUFFLED], Norta(by_name, np.eye(4)), **DET)
    b = robustness(forest, x, Norta(marg, np.eye(4)), **DET)
    assert (a.lower, a.upper, a.estimate) == (b.lower, b.upper, b.estimate)


def test_missing_or_unknown_names_are_refused_with_both_lists(forest, table):
    X, _ = table
    x = X.iloc[0]
    msg = r"x has the features \['zz', 'b', 'c', 'd'\] but the model was fitted on \['a', 'b'"
    with pytest.raises(ValueError, match=msg + r".*missing \['a'\].*\['zz'\]"):
        robustness(forest, x.rename({"a": "zz"}), Gaussian(0.1))
    with pytest.raises(ValueError, match=r"missing \['d'\]"):
        robustness(forest, x[["a", "b", "c"]], Gaussian(0.1))
    extra = X.iloc[[0]].assign(e=1.0)
    with pytest.raises(ValueError, match=r"not features of the model \['e'\]"):
        robustness(forest, extra, Gaussian(0.1))
    with pytest.raises(ValueError, match="one sample; got a DataFrame of 2 rows"):
        robustness(forest, X.iloc[:2], Gaussian(0.1))
    with pytest.raises(ValueError, match=r"X has the features .*missing \['a'\]"):
        robustness_batch(forest, X.iloc[:2].drop(columns="a"), Gaussian(0.1))


def test_a_batch_dataframe_is_matched_by_name(forest, table):
    X, _ = table
    right = robustness_batch(forest, X.iloc[:4], Gaussian(0.05), **DET)
    got = robustness_batch(forest, X.iloc[:4][SHUFFLED], Gaussian(0.05), **DET)
    pd.testing.assert_frame_equal(
        got.drop(columns=["seconds", "certify_seconds"]),
        right.drop(columns=["seconds", "certify_seconds"]),
    )
    assert list(right["label"]) == list(forest.predict(X.iloc[:4]))


def test_a_model_without_names_reads_by_position(table):
    X, y = table
    plain = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X.to_numpy(), y)
    assert extract_ensemble(plain).feature_names is None
    a = robustness(plain, X.iloc[3], Gaussian(0.05), **DET)
    b = robustness(plain, X.iloc[3].to_numpy(), Gaussian(0.05), **DET)
    assert a == b or (a.estimate, a.lower) == (b.estimate, b.lower)


def test_xgboost_fitted_on_a_dataframe_in_memory_booster_and_files(table, tmp_path):
    X, y = table
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, random_state=0).fit(X, y)
    i = _flipping_row(model, X)
    right = robustness(model, X.iloc[i], Gaussian(0.05), **DET)
    assert right.label == model.predict(X.iloc[[i]])[0]
    model.save_model(tmp_path / "m.json")
    model.save_model(tmp_path / "m.ubj")
    for m in (model, model.get_booster(), load_model(tmp_path / "m.json"),
              load_model(tmp_path / "m.ubj")):  # fmt: skip
        ens = extract_ensemble(m)
        assert ens.feature_names == tuple(NAMES)
        got = robustness(m, X.iloc[i][SHUFFLED], Gaussian(0.05), **DET)
        assert (got.lower, got.upper, got.estimate) == (right.lower, right.upper, right.estimate)
        assert int(got.label) == int(right.label)


def test_lightgbm_and_hist_gradient_boosting_names(table, tmp_path):
    X, y = table
    lgbm = lgb.LGBMClassifier(n_estimators=6, num_leaves=4, verbose=-1).fit(X, y)
    hgb = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    lgbm.booster_.save_model(str(tmp_path / "m.txt"))
    for m in (lgbm, lgbm.booster_, load_model(tmp_path / "m.txt"), hgb):
        assert extract_ensemble(m).feature_names == tuple(NAMES)
        a = robustness(m, X.iloc[9], Gaussian(0.05), **DET)
        b = robustness(m, X.iloc[[9]][SHUFFLED], Gaussian(0.05), **DET)
        assert (a.lower, a.upper, a.estimate) == (b.lower, b.upper, b.estimate)
    unnamed = lgb.LGBMClassifier(n_estimators=3, verbose=-1).fit(X.to_numpy(), y)
    assert extract_ensemble(unnamed).feature_names is None  # Column_0, ... are no names


def test_a_bare_number_is_isotropic_gaussian_noise(forest, table):
    X, _ = table
    a = robustness(forest, X.iloc[2], 0.1, **DET)
    b = robustness(forest, X.iloc[2], Gaussian(0.1), **DET)
    assert (a.lower, a.upper, a.estimate) == (b.lower, b.upper, b.estimate)
    assert noise_spec(1) == Gaussian(1.0)
    for bad in ("0.1", True, [0.1] * 4, None):
        with pytest.raises(ValueError, match=r"pass Gaussian\(\.\.\.\) or Norta\(\.\.\.\)"):
            robustness(forest, X.iloc[2], bad)


def test_match_features_and_noise_in_model_order(forest, table):
    X, _ = table
    ens = extract_ensemble(forest)
    values, perm, names = match_features(X.iloc[0][SHUFFLED], ens, one=True)
    np.testing.assert_array_equal(values, X.iloc[0].to_numpy())
    assert names == SHUFFLED and list(perm) == [2, 3, 1, 0]
    values, perm, names = match_features(X.iloc[0].to_numpy(), ens, one=True)
    assert perm is None and names is None
    spec = noise_in_model_order(
        Gaussian(pd.Series(np.arange(4.0), index=SHUFFLED)), ens, np.array([2, 3, 1, 0]), SHUFFLED
    )
    np.testing.assert_array_equal(spec.variance, [2.0, 3.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="not clear which feature each entry belongs to"):
        noise_in_model_order(Gaussian(np.arange(4.0)), ens, np.array([2, 3, 1, 0]), SHUFFLED)
    plain = extract_ensemble(
        RandomForestClassifier(n_estimators=2, max_depth=2).fit(X.to_numpy(), np.arange(400) % 2)
    )
    with pytest.raises(ValueError, match="neither the model nor x has feature names"):
        noise_in_model_order(Gaussian({"a": 1.0}), plain, None, None)


def test_training_order_noise_next_to_a_reordered_row_as_a_user_hits_it(forest, table):
    """The user's case: a DataFrame-fitted forest, a test row as a DataFrame with its columns
    in another order, per-feature variances in the training order. A plain vector is
    refused (it used to be read in the row's order: another noise, no warning); given by
    name it gives R, checked against 200,000 draws through the model's own predict."""
    X, _ = table
    row = X.iloc[[0]][SHUFFLED]
    variances = [0.3, 0.001, 0.001, 0.001]  # training order: a, b, c, d
    with pytest.raises(ValueError, match=r"x: \['d', 'c', 'a', 'b'\]; model: \['a', 'b', 'c', "
                       r"'d'\].*pd\.Series\(variances, index=model_features\)"):  # fmt: skip
        robustness(forest, row, Gaussian(np.array(variances)))
    det = {"max_boxes": 200, "max_draws": 200_000}
    right = robustness(forest, row, Gaussian(pd.Series(variances, index=NAMES)), **det)
    as_dict = robustness(forest, row, Gaussian(dict(zip(NAMES, variances, strict=True))), **det)
    misread = robustness(forest, row, Gaussian(pd.Series(variances, index=SHUFFLED)), **det)
    rng = np.random.default_rng(20240532)
    draws = X.iloc[0].to_numpy() + rng.normal(size=(200_000, 4)) * np.sqrt(variances)
    label = forest.predict(X.iloc[[0]])[0]
    mc = float(np.mean(forest.predict(pd.DataFrame(draws, columns=NAMES)) == label))
    se = np.sqrt(mc * (1 - mc) / 200_000)
    assert right.label == label and as_dict.estimate == right.estimate
    assert abs(right.estimate - mc) < 5 * se + (right.ci_high - right.ci_low)
    assert abs(misread.estimate - mc) > 0.1  # the old reading is far off: the test can fail


def test_lightgbm_column_names_with_spaces_as_a_user_hits_it():
    """LightGBM stores "blood pressure" as "blood_pressure" and its predict accepts the
    original columns: so does robustness (it refused the row, with a long message), and
    its answer agrees with 100,000 draws through the model's own predict."""
    cols = ["blood pressure", "age (years)", "bmi"]
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(400, 3)), columns=cols)
    y = ((X["blood pressure"] + 0.5 * X["bmi"]) > 0).astype(int)
    model = lgb.LGBMClassifier(n_estimators=8, num_leaves=4, verbose=-1).fit(X, y)
    row = X.iloc[[4]][["bmi", "blood pressure", "age (years)"]]  # another order, too
    det = {"max_boxes": 200, "max_draws": 100_000}
    variances = pd.Series([0.2, 0.05, 0.3], index=cols)
    r = robustness(model, row, Gaussian(variances), **det)
    assert r.label == model.predict(X.iloc[[4]])[0]
    draws = X.iloc[4].to_numpy() + rng.normal(size=(100_000, 3)) * np.sqrt(variances.to_numpy())
    mc = float(np.mean(model.predict(pd.DataFrame(draws, columns=cols)) == r.label))
    se = np.sqrt(max(mc * (1 - mc), 1e-6) / 100_000)
    assert r.ci_low - 4.5 * se <= mc <= r.ci_high + 4.5 * se, (r, mc)
    with pytest.raises(ValueError, match=r"missing \['bmi'\].*give them the model's names"):
        robustness(model, row.rename(columns={"bmi": "BMI"}), Gaussian(0.1), **det)
