"""The failure-detection comparators of the compare topic's tables: the same numbers as
score_predictions gives a user for the same model and rows (itself checked against brute
force in test_model_comparators), and on raw features against a brute-force k-NN distance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from xgboost import XGBClassifier

from reliquant.compare import score_predictions
from reliquant.compare.reproduction.comparators import TABLE_COMPARATORS, comparator_columns


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return X[::2], y[::2], X[1::2], y[1::2]


@pytest.mark.parametrize("kind", ["xgboost", "random_forest"])
def test_table_columns_equal_score_predictions(wine, kind):
    X_tr, y_tr, X_te, _ = wine
    if kind == "xgboost":
        model = XGBClassifier(n_estimators=5, max_depth=2, random_state=0, n_jobs=1)
    else:
        model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    model.fit(X_tr, y_tr)
    proba = model.predict_proba(X_te)
    pred = proba.argmax(axis=1)
    ours = comparator_columns(proba, pred, model=model, x=X_te, x_train=X_tr, y_train=y_tr)
    user = score_predictions(model, X_te, X_train=X_tr, y_train=y_tr)
    expected = [s for s in TABLE_COMPARATORS if s in user.columns]
    assert list(ours) == expected
    assert ("max_logit" in ours) == (kind == "xgboost")
    for name in expected:
        np.testing.assert_array_equal(ours[name], user[name].to_numpy(), err_msg=name)


def test_raw_features_knn_distance_is_the_kth_smallest_distance(wine):
    X_tr, y_tr, X_te, _ = wine
    proba = np.full((len(X_te), 3), 1 / 3)
    pred = np.arange(len(X_te)) % 3
    ours = comparator_columns(proba, pred, x=X_te, x_train=X_tr, y_train=y_tr, standardise=False)
    k = min(50, len(X_tr))
    brute = [-np.sort(np.linalg.norm(X_tr - row, axis=1))[k - 1] for row in X_te]
    np.testing.assert_allclose(ours["negative_knn_distance"], brute, rtol=1e-9)
    to_class = pd.DataFrame(
        {c: [np.linalg.norm(X_tr[y_tr == c] - r, axis=1).min() for r in X_te] for c in range(3)}
    ).to_numpy()
    rows = np.arange(len(X_te))
    other = np.where(np.arange(3) == pred[:, None], np.inf, to_class).min(axis=1)
    np.testing.assert_allclose(ours["trust_score"], other / (to_class[rows, pred] + 1e-12))
    assert "max_logit" not in ours  # no model: no logits
