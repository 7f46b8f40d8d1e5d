"""The failure-detection comparators of score_predictions (DOCTOR, maximum logit, energy, trust
score, Mahalanobis and k-NN distance), called as a user calls them and checked against an
independent computation: the model's coefficients, XGBoost's own booster, brute-force loops
over the training rows, scipy's Mahalanobis distance."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import mahalanobis
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from reliquant.compare import score_predictions
from reliquant.compare.model_comparators import KNN_K

LOGIT = ["max_logit", "energy_score"]
FEATURE = ["trust_score", "negative_mahalanobis", "negative_knn_distance"]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = ["sepal length", "sepal width", "petal length", "petal width"]
    return X, y


def _energy(row: np.ndarray) -> float:
    """ln sum_k exp(f_k), term by term."""
    return math.log(sum(math.exp(v) for v in row))


def test_logistic_regression_logits_are_its_coefficients_times_the_input(iris):
    X, y = iris
    model = LogisticRegression(max_iter=1000).fit(X, y)
    rows = X.iloc[::7][list(reversed(X.columns))]  # another column order: matched by name
    scores = score_predictions(model, rows)
    f = X.iloc[::7].to_numpy() @ model.coef_.T + model.intercept_  # model order
    np.testing.assert_allclose(scores["max_logit"], f.max(axis=1), rtol=1e-12)
    np.testing.assert_allclose(scores["energy_score"], [_energy(r) for r in f], rtol=1e-12)
    # the columns come after every earlier score, in MODEL_SCORES order
    assert list(scores.columns)[-4:] == ["doctor_alpha", "doctor_beta", *LOGIT]


def test_a_binary_model_gets_no_logit_scores_and_says_why():
    """A binary margin ``f`` is the logits ``[0, f]`` only by convention: on those the maximum
    logit puts every class-0 prediction at 0, below every class-1 prediction, so accuracy
    falls as it rejects. Both scores are skipped with the reason; the margin itself is still
    found (:func:`model_logits`: ``[0, f]``, checked against ``predict_proba``)."""
    from reliquant.compare import model_logits
    from reliquant.compare.model_comparators import BINARY_LOGITS
    from reliquant.compare.model_inputs import ModelRows

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X, y)
    scores = score_predictions(model, X.iloc[::20])
    assert not set(LOGIT) & set(scores.columns)
    assert scores.attrs["skipped"]["max_logit"] == BINARY_LOGITS
    z = (X.iloc[::20] - model[0].mean_) / model[0].scale_
    f = z.to_numpy() @ model[-1].coef_[0] + model[-1].intercept_[0]
    rows = ModelRows(model, X.iloc[::20], "X")
    logits, _ = model_logits(model, rows, model.predict_proba(X.iloc[::20]))
    np.testing.assert_allclose(
        logits, np.column_stack([np.zeros_like(f), f]), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("n_classes", [3])
def test_xgboost_margins_are_its_boosters_output_margin(iris, n_classes):
    import xgboost as xgb

    X, y = iris
    keep = y < n_classes
    X, y = X[keep], y[keep]
    model = xgb.XGBClassifier(n_estimators=6, max_depth=2, random_state=0).fit(X, y)
    rows = X.iloc[::5][["petal width", "sepal length", "petal length", "sepal width"]]
    scores = score_predictions(model, rows)
    margin = model.get_booster().predict(xgb.DMatrix(X.iloc[::5]), output_margin=True)
    f = np.column_stack([np.zeros(len(margin)), margin]) if margin.ndim == 1 else margin
    np.testing.assert_allclose(scores["max_logit"], f.max(axis=1), rtol=1e-6)
    np.testing.assert_allclose(scores["energy_score"], [_energy(r) for r in f], rtol=1e-6)


def test_models_without_logits_say_why(iris):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        svc = SVC(probability=True, random_state=0).fit(X, y)
    forest = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    linear = LinearSVC().fit(X, y)
    for model, words in (
        (forest, "no decision_function"),
        (svc, "not the logits of its predict_proba"),
        (linear, "no predict_proba"),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # SVC: predict differs from argmax
            scores = score_predictions(model, X.iloc[::10])
        for name in LOGIT:
            assert name not in scores.columns
            assert words in scores.attrs["skipped"][name], (type(model), scores.attrs)


def _brute_force_features(train: np.ndarray, labels: np.ndarray, x: np.ndarray,
                          predicted: np.ndarray) -> dict[str, np.ndarray]:  # fmt: skip
    """Trust score, minus the squared Mahalanobis distance and minus the k-NN distance by
    loops over the standardised training rows (model feature order)."""
    mean, sd = train.mean(axis=0), train.std(axis=0)
    zt, z = (train - mean) / sd, (x - mean) / sd
    classes = np.unique(labels)
    centred = np.vstack([zt[labels == c] - zt[labels == c].mean(axis=0) for c in classes])
    inverse = np.linalg.inv(centred.T @ centred / len(zt))
    k = min(KNN_K, len(zt))
    trust, maha, knn = [], [], []
    for row, pred in zip(z, predicted, strict=True):
        dist = {c: min(np.linalg.norm(row - t) for t in zt[labels == c]) for c in classes}
        other = min(d for c, d in dist.items() if c != pred)
        trust.append(other / (dist[pred] + 1e-12))
        maha.append(-(mahalanobis(row, zt[labels == pred].mean(axis=0), inverse) ** 2))
        knn.append(-sorted(np.linalg.norm(row - t) for t in zt)[k - 1])
    return {"trust_score": trust, "negative_mahalanobis": maha, "negative_knn_distance": knn}


def test_feature_scores_equal_brute_force_on_shuffled_columns_and_string_labels(iris):
    X, y = iris
    names = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    train, rows = X.iloc[::2], X.iloc[1::2]
    model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0)
    model.fit(train, names[::2])
    order = ["petal length", "sepal width", "petal width", "sepal length"]
    scores = score_predictions(model, rows[order], X_train=train[order[::-1]],
                               y_train=pd.Series(names[::2]))  # fmt: skip
    expected = _brute_force_features(train.to_numpy(), names[::2], rows.to_numpy(),
                                     model.predict(rows))  # fmt: skip
    for name in FEATURE:
        np.testing.assert_allclose(scores[name], expected[name], rtol=1e-9, err_msg=name)
    same = score_predictions(model, rows, X_train=train, y_train=names[::2])
    pd.testing.assert_frame_equal(scores, same.set_axis(scores.index))
    assert (scores["trust_score"] < 1).any() and (scores["trust_score"] > 1).any()


def test_doctor_alpha_ranks_as_minus_the_gini_impurity(iris):
    X, y = iris
    model = RandomForestClassifier(n_estimators=7, max_depth=2, random_state=1).fit(X, y)
    scores = score_predictions(model, X)
    p = model.predict_proba(X)
    g = (p**2).sum(axis=1)
    np.testing.assert_allclose(scores["doctor_alpha"], -(1 - g) / g, rtol=1e-12)
    np.testing.assert_allclose(scores["doctor_beta"], 1 - 1 / p.max(axis=1), rtol=1e-12)
    # the same order as minus the Gini impurity 1 - g, ties included
    rank_a = pd.Series(scores["doctor_alpha"].to_numpy()).rank(method="min").to_numpy()
    rank_g = pd.Series(g - 1).rank(method="min").to_numpy()
    np.testing.assert_array_equal(rank_a, rank_g)


def test_a_single_training_class_skips_only_the_trust_score(iris):
    X, y = iris
    model = LinearSVC().fit(X, y)  # no probabilities: no centroids, which need every class
    scores = score_predictions(model, X.iloc[:5], X_train=X.iloc[:40], y_train=y.iloc[:40])
    assert "one class" in scores.attrs["skipped"]["trust_score"]
    assert {"negative_mahalanobis", "negative_knn_distance"} <= set(scores.columns)
