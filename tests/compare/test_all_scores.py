"""score_predictions: every score that applies to a fitted model, in one call.

Each column must equal the individual public function's output on the same inputs, so that
the dispatcher cannot silently pick the wrong score, the wrong input order or the wrong noise;
the set of columns follows the model's kind, and every score left out says why.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.naive_bayes import CategoricalNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler
from sklearn.svm import SVC

from reliquant.compare import (
    MODEL_SCORES,
    black_box_robustness,
    centroid_proximity,
    fit_centroids,
    nbc_robustness,
    probability_scores,
    score_predictions,
    tree_robustness,
)
from reliquant.nbc import fit_table
from reliquant.nbc import robustness as nbc_table_robustness
from reliquant.trees import Gaussian

PROBA = ["max_probability", "negative_entropy", "margin", "log_ratio"]
DOCTOR = ["doctor_alpha", "doctor_beta"]
LOGIT = ["max_logit", "energy_score"]
FEATURE = ["trust_score", "negative_mahalanobis", "negative_knn_distance"]
DETERMINISTIC = {"max_boxes": 200, "max_draws": 8192}  # results depend on the seed only
svc_deprecation = pytest.mark.filterwarnings("ignore:The `probability` parameter:FutureWarning")
# black_box_robustness called directly passes numpy batches to a model fitted on a DataFrame
no_names = pytest.mark.filterwarnings("ignore:X does not have valid feature names:UserWarning")


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = ["sepal length", "sepal width", "petal length", "petal width"]
    return X, y


@pytest.fixture(scope="module")
def forest(iris):
    X, y = iris
    return RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def svc(iris):
    import warnings

    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return SVC(probability=True, random_state=0).fit(X, y)


def _every_score_accounted_for(scores: pd.DataFrame, present: list[str]) -> None:
    """The score columns are exactly ``present`` (in MODEL_SCORES order) and every other score
    is in attrs["skipped"] with a reason."""
    assert list(scores.columns) == ["prediction"] + [s for s in MODEL_SCORES if s in present]
    skipped = scores.attrs["skipped"]
    assert sorted(skipped) == sorted(set(MODEL_SCORES) - set(present))
    assert all(isinstance(r, str) and len(r) > 10 for r in skipped.values()), skipped


def test_random_forest_with_noise_gets_probability_centroid_and_tree_scores(iris, forest):
    X, y = iris
    rows = X.iloc[::9]
    variance = pd.Series(0.05 * X.var().to_numpy(), index=X.columns)
    scores = score_predictions(forest, rows, noise=variance, X_train=X, y_train=y, seed=3,
                               tree_options=DETERMINISTIC)  # fmt: skip
    _every_score_accounted_for(
        scores, [*PROBA, *DOCTOR, "centroid_proximity", "tree_robustness", *FEATURE]
    )
    assert list(scores.index) == list(rows.index)
    assert (scores["prediction"].to_numpy() == forest.predict(rows)).all()
    direct = probability_scores(forest.predict_proba(rows))
    for col in PROBA:
        np.testing.assert_array_equal(scores[col], direct[col], err_msg=col)
    centroids = fit_centroids(forest.predict_proba(X), y.to_numpy(), seed=3)
    np.testing.assert_array_equal(
        scores["centroid_proximity"], centroid_proximity(forest.predict_proba(rows), centroids)
    )
    trees = tree_robustness(forest, rows, Gaussian(variance), seed=3, **DETERMINISTIC)
    np.testing.assert_array_equal(scores["tree_robustness"], trees)
    assert "mc_robustness" in scores.attrs["skipped"]


def test_a_reordered_dataframe_gives_the_same_scores(iris, forest, svc):
    X, y = iris
    rows = X.iloc[::7]
    shuffled = rows[list(reversed(X.columns))]
    variance = pd.Series([0.02, 0.05, 0.1, 0.01], index=X.columns)
    for model in (forest, svc):
        a = score_predictions(model, rows, noise=variance, X_train=X, y_train=y, n_draws=300,
                              tree_options=DETERMINISTIC)  # fmt: skip
        b = score_predictions(model, shuffled, noise=variance[::-1], X_train=X[shuffled.columns],
                              y_train=y, n_draws=300, tree_options=DETERMINISTIC)  # fmt: skip
        pd.testing.assert_frame_equal(a, b)
    # by position the reversed columns are other flowers: some predictions would differ
    by_position = pd.DataFrame(shuffled.to_numpy(), columns=X.columns)
    assert (forest.predict(by_position) != forest.predict(rows)).any()


@svc_deprecation
@no_names
def test_any_other_model_with_noise_gets_the_monte_carlo_robustness(iris, svc):
    X, _ = iris
    rows = X.iloc[::10]
    variance = 0.05 * X.var().to_numpy()  # plain vector, X in the model's order: accepted
    scores = score_predictions(svc, rows, noise=variance, n_draws=400, seed=5)
    _every_score_accounted_for(scores, [*PROBA, *DOCTOR, "mc_robustness"])
    direct = black_box_robustness(svc.predict, rows, variance, n_draws=400, seed=5)
    np.testing.assert_array_equal(scores["mc_robustness"], direct.estimate)
    assert 0 < scores["mc_robustness"].min() < 1  # some rows are not robust: a real test
    assert "not a tree ensemble" in scores.attrs["skipped"]["tree_robustness"]
    assert "eps_glob" in scores.attrs["skipped"]


@svc_deprecation
def test_predict_disagreeing_with_predict_proba_is_said(iris, svc):
    X, _ = iris
    labels = svc.classes_[svc.predict_proba(X).argmax(axis=1)]
    differ = int((labels != svc.predict(X)).sum())
    if differ:
        with pytest.warns(UserWarning, match=f"on {differ} of {len(X)} rows"):
            score_predictions(svc, X)
    else:  # pragma: no cover - depends on the Platt fit
        score_predictions(svc, X)


def test_without_noise_only_probability_scores_and_reasons(iris, forest):
    X, _ = iris
    scores = score_predictions(forest, X.iloc[:5])
    _every_score_accounted_for(scores, [*PROBA, *DOCTOR])
    for score in ("tree_robustness", "mc_robustness"):
        assert "needs noise" in scores.attrs["skipped"][score]
    assert "X_train and y_train" in scores.attrs["skipped"]["centroid_proximity"]


def test_categorical_nb_gets_eps_glob_and_eps_loc(iris):
    X, y = iris
    codes = X.apply(pd.qcut, q=4, labels=False)
    nb = CategoricalNB().fit(codes.iloc[::2], y.iloc[::2])
    rows = codes.iloc[1::2]
    scores = score_predictions(nb, rows, noise=0.1)  # noise has no meaning here: skipped
    _every_score_accounted_for(scores, [*PROBA, *DOCTOR, "eps_glob", "eps_loc"])
    direct = nbc_robustness(nb, rows)
    for col in ("prediction", "eps_glob", "eps_loc"):
        np.testing.assert_array_equal(scores[col], direct[col], err_msg=col)
    np.testing.assert_array_equal(
        scores["margin"], probability_scores(nb.predict_proba(rows))["margin"]
    )
    assert "eps_glob and eps_loc" in scores.attrs["skipped"]["mc_robustness"]


def test_fit_table_model_on_strings_and_a_pipeline_of_categorical_nb():
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], 200)
    size = rng.choice(["S", "M", "L"], 200)
    label = np.where((colour == "red") ^ (rng.random(200) < 0.2), "yes", "no")
    table = pd.DataFrame({"colour": colour, "size": size})
    fitted = fit_table(table.assign(label=label), "label", alpha=1.0)
    rows = table.iloc[:15][["size", "colour"]]  # another order: matched by name
    scores = score_predictions(fitted, rows, X_train=table, y_train=label)
    _every_score_accounted_for(
        scores, [*PROBA, *DOCTOR, "centroid_proximity", "eps_glob", "eps_loc"]
    )
    direct = nbc_table_robustness(fitted, rows, bootstrap=1)  # u_m = 1 - max_c p(c | f)
    np.testing.assert_allclose(scores["max_probability"], 1 - direct["u_m"], rtol=0, atol=1e-12)
    for col in ("prediction", "eps_glob", "eps_loc"):
        np.testing.assert_array_equal(scores[col], direct[col], err_msg=col)
    # scikit-learn's CategoricalNB behind an OrdinalEncoder takes the strings too
    pipe = make_pipeline(OrdinalEncoder(), CategoricalNB()).fit(table, label)
    scores = score_predictions(pipe, table.iloc[:15])
    direct = nbc_robustness(pipe, table.iloc[:15])
    for col in ("prediction", "eps_glob", "eps_loc"):
        np.testing.assert_array_equal(scores[col], direct[col], err_msg=col)
    assert list(scores["prediction"]) == list(pipe.predict(table.iloc[:15]))


@no_names
def test_a_tree_pipeline_gets_monte_carlo_and_the_readers_fix(iris):
    X, y = iris
    pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=4, random_state=0))
    pipe.fit(X, y)
    scores = score_predictions(pipe, X.iloc[::25], noise=0.05, n_draws=200, seed=1)
    _every_score_accounted_for(scores, [*PROBA, *DOCTOR, "mc_robustness"])
    direct = black_box_robustness(pipe.predict, X.iloc[::25], 0.05, n_draws=200, seed=1)
    np.testing.assert_array_equal(scores["mc_robustness"], direct.estimate)
    assert "pipeline[-1]" in scores.attrs["skipped"]["tree_robustness"]


def test_xgboost_fitted_on_a_dataframe_gets_tree_robustness(iris):
    import xgboost as xgb

    X, y = iris
    model = xgb.XGBClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    rows = X.iloc[::30][list(reversed(X.columns))]
    scores = score_predictions(model, rows, noise=0.02, tree_options=DETERMINISTIC)
    _every_score_accounted_for(scores, [*PROBA, *DOCTOR, "tree_robustness", *LOGIT])
    direct = tree_robustness(model, rows, Gaussian(0.02), **DETERMINISTIC)
    np.testing.assert_array_equal(scores["tree_robustness"], direct)
    assert list(scores["prediction"]) == list(model.predict(X.iloc[::30]))


def test_the_progress_bar_draws_when_asked(iris, forest, capsys):
    X, _ = iris
    score_predictions(forest, X.iloc[:3], progress=True)
    assert "scores" in capsys.readouterr().err
    score_predictions(forest, X.iloc[:3], progress=False)
    assert "scores" not in capsys.readouterr().err


@svc_deprecation
@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"model": object()}, TypeError, ["model", "predict"]),
        ({"X": np.zeros(4)}, ValueError, ["X must be", "(4,)"]),
        ({"X": "frame"}, ValueError, ["X must be"]),
        ({"X_train": "train"}, ValueError, ["X_train is given without y_train"]),
        ({"y_train": [0]}, ValueError, ["y_train is given without X_train"]),
        ({"noise": "big"}, ValueError, ["noise must be", "str"]),
        ({"n_draws": 0}, ValueError, ["n_draws"]),
        ({"time_budget": -1.0}, ValueError, ["time_budget"]),
        ({"seed": -2}, ValueError, ["seed"]),
        ({"tree_options": 3}, ValueError, ["tree_options"]),
        ({"rename": {"petal width": "petal_width"}}, ValueError,
         ["X has the columns", "missing ['petal width']", "['petal_width']"]),
        ({"noise": np.array([0.1, 0.2, 0.3, 0.4]), "reverse": True}, ValueError,
         ["noise is a plain array", "give it by name"]),
        ({"noise": np.array([0.1, 0.2])}, ValueError, ["noise has 2 variances", "4 features"]),
        ({"noise": {"petal widht": 0.1}}, ValueError, ["noise has the columns", "petal widht"]),
        ({"X_train": "iris", "y_train": np.full(150, 7)}, ValueError,
         ["y_train: row 0 holds 7, which is none of the classes [0, 1, 2]"]),
    ],
)  # fmt: skip
def test_bad_inputs_are_refused_naming_the_argument(iris, svc, change, error, words):
    X, y = iris
    change = dict(change)
    rows = X.iloc[:5]
    if change.pop("reverse", False):
        rows = rows[list(reversed(X.columns))]
    if "rename" in change:
        rows = rows.rename(columns=change.pop("rename"))
    if change.get("X_train") == "iris":
        change["X_train"] = X
    args = {"model": svc, "X": rows, "noise": 0.1, "n_draws": 50} | change
    model, data = args.pop("model"), args.pop("X")
    with pytest.raises(error) as info:
        score_predictions(model, data, **args)
    for word in words:
        assert word in str(info.value), str(info.value)


def test_two_identical_calls_give_identical_scores_bit_for_bit(iris, forest):
    """Reproducible by default: the same call twice gives the same frame, bit for bit; with a
    time budget that is not the binding limit (every row certified exact well within it) as
    well. ``attrs`` name the budget and carry ``seconds`` and ``overrun``."""
    from sklearn.linear_model import LogisticRegression

    from reliquant.compare.robustness_scores import SCORE_MAX_BOXES, SCORE_MAX_DRAWS

    X, y = iris
    rows = X.iloc[::10]
    a = score_predictions(forest, rows, noise=0.3, X_train=X, y_train=y, seed=2)
    b = score_predictions(forest, rows, noise=0.3, X_train=X, y_train=y, seed=2)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    per_row = f"max_boxes={SCORE_MAX_BOXES}, max_draws={SCORE_MAX_DRAWS} per row"
    assert a.attrs["budget"] == f"tree_robustness: {per_row}" and a.attrs["overrun"] == ""
    assert a.attrs["seconds"] > 0 and b.attrs["seconds"] > 0
    # a generous time budget on a small forest: the engine certifies every row exactly in a
    # few boxes, long before the clock could stop it (30 s a row: even a busy machine's
    # pace leaves the certification its time)
    small = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    frame = tree_robustness(small, rows, Gaussian(0.3), time_budget=30.0, return_frame=True)
    assert (frame["status"] == "exact").all() and (frame["n_boxes"] < 100).all()
    timed = [score_predictions(small, rows, noise=0.3, time_budget=30.0, seed=2) for _ in range(2)]
    pd.testing.assert_frame_equal(timed[0], timed[1], check_exact=True)
    assert timed[0].attrs["budget"] == "tree_robustness: time_budget=30 s per row"
    assert timed[0].attrs["overrun"] == ""
    # any other model: the Monte Carlo robustness, n_draws per row
    logit = LogisticRegression(max_iter=500).fit(X, y)
    c, d = (score_predictions(logit, rows, noise=0.3, n_draws=200, seed=2) for _ in range(2))
    pd.testing.assert_frame_equal(c, d, check_exact=True)
    assert c.attrs["budget"] == "mc_robustness: n_draws=200 per row"
    assert score_predictions(logit, rows).attrs["budget"] == ""  # no noise: no robustness


def test_equal_variances_of_standardised_data_are_accepted_as_a_plain_vector(iris):
    """The user's trap: ``(0.1 * X.std()) ** 2`` of standardised data, a plain vector, next to
    X with its columns in another order than the model's. Its entries differ in their last
    bits, so it used to be refused as "in another order"; equal up to rounding, it does not
    matter which feature each entry belongs to."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from reliquant.trees import robustness

    X, y = iris
    Z = pd.DataFrame(StandardScaler().fit_transform(X), columns=X.columns)
    shuffled = Z[list(reversed(Z.columns))]
    variance = (0.1 * shuffled.std(ddof=0).to_numpy()) ** 2  # plain, in the input's order
    assert not np.array_equal(variance[::-1], variance)  # not bit-identical: the trap
    logit = LogisticRegression(max_iter=500).fit(Z, y)
    got = score_predictions(logit, shuffled.iloc[::15], noise=variance, n_draws=300, seed=1)
    want = score_predictions(logit, Z.iloc[::15], noise=np.full(4, 0.01), n_draws=300, seed=1)
    np.testing.assert_allclose(got["mc_robustness"], want["mc_robustness"], atol=0.02)
    forest = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(Z, y)
    r = robustness(forest, shuffled.iloc[3], Gaussian(variance))
    ref = robustness(forest, Z.iloc[3], Gaussian(np.full(4, 0.01)))
    assert abs(r.estimate - ref.estimate) < 1e-6
    # a vector that really differs between features is still refused next to reordered X
    with pytest.raises(ValueError, match="another order"):
        score_predictions(logit, shuffled.iloc[::15], noise=np.array([0.01, 0.02, 0.03, 0.04]))
    with pytest.raises(ValueError, match="another order|in the model's order"):
        robustness(forest, shuffled.iloc[3], Gaussian(np.array([0.01, 0.02, 0.03, 0.04])))


def test_training_labels_are_matched_to_the_classes_by_value(iris, forest):
    """y_train read as floats (a CSV column with an empty cell) or as text gives the
    centroids of the integer labels; a missing label is refused naming its row, text that is
    no class and booleans against numbered classes are refused naming both spellings."""
    X, y = iris
    rows = X.iloc[::15]
    want = score_predictions(forest, rows, X_train=X, y_train=y, seed=3)["centroid_proximity"]
    for spelled in (y.astype(np.float64), y.astype(str), y.astype(np.float64).astype(str),
                    y.tolist()):  # fmt: skip
        got = score_predictions(forest, rows, X_train=X, y_train=spelled, seed=3)
        np.testing.assert_array_equal(got["centroid_proximity"], want)
    missing = y.astype(np.float64).copy()
    missing.iloc[17] = np.nan
    foreign = y.astype(object).copy()
    foreign.iloc[3] = "setosa"
    for labels, message in [
        (missing, "y_train: row 17 has no label (NaN, None or an empty cell)"),
        (foreign, "y_train: row 3 holds 'setosa', which is none of the classes [0, 1, 2] "
                  "('setosa' is text, the classes are numbers)"),
        ((y > 0).to_numpy(), "y_train: row 0 holds False, which is none of the classes [0, 1, 2] "
                             "(False is a boolean, the classes are numbers)"),
    ]:  # fmt: skip
        with pytest.raises(ValueError) as info:
            score_predictions(forest, rows, X_train=X, y_train=labels)
        assert message in str(info.value), str(info.value)


def test_a_forest_with_a_malformed_tree_is_refused_before_any_predict(iris):
    """A forest whose tree 1 holds a NaN leaf value (as an edited model file can) was scored
    with NaN probabilities; it is refused naming the tree and the node, before the model's
    own predict is called (on a cycle or a child out of range it loops or crashes)."""
    from reliquant.trees import MalformedTreeError

    X, y = iris
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    tree = model.estimators_[1].tree_
    leaf = int(np.flatnonzero(tree.children_left == -1)[0])
    tree.value[leaf, 0, 0] = np.nan
    with pytest.raises(MalformedTreeError, match=rf"tree 1, node {leaf}: its leaf values are not"):
        score_predictions(model, X.iloc[:5])
