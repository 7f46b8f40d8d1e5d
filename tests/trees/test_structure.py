"""The TreeEnsemble representation: predict() equals the libraries' predict (models read by
reliquant.trees.readers), threshold semantics, the grid of effective boundaries."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees.readers import extract_ensemble
from reliquant.trees.structure import effective_boundary


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(600, 5, n_informative=4, n_redundant=0, n_classes=3, random_state=0)
    return X, y


def _boundary_inputs(ens, X, rng, per_feature=15):
    """Rows whose one coordinate sits exactly on, just above, or at float32 of a threshold."""
    rows = []
    for f, t in enumerate(ens.thresholds()):
        raw = np.concatenate([tr.threshold[tr.feature == f] for tr in ens.trees])
        for b in np.concatenate([t[:per_feature], raw[:per_feature]]):
            r = X[rng.integers(len(X))].copy()
            for v in (b, np.nextafter(b, np.inf), np.nextafter(b, -np.inf), float(np.float32(b))):
                r[f] = v
                rows.append(r.copy())
    return np.array(rows)


MODELS = [
    lambda: DecisionTreeClassifier(max_depth=6, random_state=0),
    lambda: RandomForestClassifier(15, max_depth=5, random_state=0),
    lambda: ExtraTreesClassifier(15, max_depth=5, random_state=0),
    lambda: xgb.XGBClassifier(n_estimators=12, max_depth=4, random_state=0),
]


@pytest.mark.parametrize("make", MODELS, ids=["dt", "rf", "et", "xgb-multi"])
def test_predict_matches_library(make, data):
    X, y = data
    model = make().fit(X, y)
    ens = extract_ensemble(model)
    rng = np.random.default_rng(1)
    Z = np.vstack([rng.normal(size=(3000, X.shape[1])) * 2, _boundary_inputs(ens, X, rng)])
    np.testing.assert_array_equal(ens.predict(Z), model.predict(Z))


@pytest.mark.parametrize("make", MODELS + [lambda: __import__("lightgbm").LGBMClassifier(
    n_estimators=8, num_leaves=8, verbose=-1)], ids=["dt", "rf", "et", "xgb-multi", "lgbm"])  # fmt: skip
def test_one_row_walk_equals_the_batched_walk(make, data):
    """The scalar path for a single row gives the leaves of the vectorised one, boundary
    inputs included (le32, lt32 and le64z rules)."""
    X, y = data
    ens = extract_ensemble(make().fit(X, y))
    rng = np.random.default_rng(3)
    Z = np.vstack([rng.normal(size=(200, X.shape[1])) * 2, _boundary_inputs(ens, X, rng, 5)])
    Z[::9, 2] = 0.0  # LightGBM's zero rule
    batched = ens.leaf_indices(Z)
    one = np.vstack([ens.leaf_indices(z) for z in Z])
    np.testing.assert_array_equal(one, batched)


def test_predict_matches_xgboost_binary_and_booster(data):
    X, y = data
    model = xgb.XGBClassifier(n_estimators=12, max_depth=4, random_state=0).fit(X, y == 1)
    ens = extract_ensemble(model)
    rng = np.random.default_rng(2)
    Z = np.vstack([rng.normal(size=(3000, X.shape[1])) * 2, _boundary_inputs(ens, X, rng)])
    np.testing.assert_array_equal(ens.predict(Z), model.predict(Z))
    # a raw Booster predicts class indices; margins equal XGBoost's own
    ens_b = extract_ensemble(model.get_booster())
    margin = model.get_booster().predict(xgb.DMatrix(Z), output_margin=True)
    np.testing.assert_allclose(ens_b.scores(Z)[:, 1], margin, rtol=1e-5, atol=1e-5)


def test_sklearn_float32_quirk_at_threshold():
    """A float64 input equal to t can go right when float32(t) > t (scikit-learn casts X)."""
    X = np.array([[0.0], [1.0]])
    y = np.array([0, 1])
    model = DecisionTreeClassifier().fit(X, y)
    ens = extract_ensemble(model)
    # replace the threshold by one whose float32 rounding lies above it
    t = 0.1  # float32(0.1) = 0.10000000149 > 0.1
    assert float(np.float32(t)) > t
    model.tree_.threshold[0] = t
    ens = extract_ensemble(model)
    probe = np.array(
        [
            [t],
            [np.nextafter(t, 1.0)],
            [float(np.float32(t))],
            [np.nextafter(float(np.float32(t)), 1.0)],
        ]
    )
    np.testing.assert_array_equal(ens.predict(probe), model.predict(probe))
    # x == t (float64) goes right... no: float32(t) > t, so float32(x) <= t is false -> right
    assert model.predict(np.array([[t]]))[0] == 1
    b = ens.trees[0].boundary[0]
    assert b < t  # the effective boundary lies below t


def test_xgboost_strict_less_than():
    X = np.repeat([[0.0], [1.0]], 50, axis=0)
    y = np.repeat([0, 1], 50)
    model = xgb.XGBClassifier(
        n_estimators=1, max_depth=1, learning_rate=1.0, base_score=0.5, min_child_weight=0
    ).fit(X, y)
    assert ens_has_split(model)
    ens = extract_ensemble(model)
    c = np.float32(ens.trees[0].threshold[0])
    assert 0 < c <= 1
    probe = np.array([[float(c)], [float(np.nextafter(c, np.float32(-1)))], [float(c) - 1e-12]])
    np.testing.assert_array_equal(ens.predict(probe), model.predict(probe))
    assert model.predict(probe[:1])[0] == 1  # x == c goes right (strict <)


def ens_has_split(model) -> bool:
    return extract_ensemble(model).trees[0].n_nodes == 3


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from(["le32", "lt32"]))
def test_effective_boundary_is_exact(t, rule):
    b = effective_boundary(np.array([t]), rule)[0]
    xs = np.array([b, np.nextafter(b, np.inf), np.nextafter(b, -np.inf), t, float(np.float32(t))])
    if rule == "le32":
        lib = xs.astype(np.float32).astype(np.float64) <= t
    else:
        lib = xs.astype(np.float32) < np.float32(t)
    np.testing.assert_array_equal(lib, xs <= b)


def test_thresholds_and_grid_size(data):
    X, y = data
    model = RandomForestClassifier(4, max_depth=3, random_state=0).fit(X, y)
    ens = extract_ensemble(model)
    th = ens.thresholds()
    raw = set()
    for est in model.estimators_:
        t = est.tree_
        inner = t.children_left >= 0
        raw |= set(zip(t.feature[inner].tolist(), t.threshold[inner].tolist(), strict=True))
    assert sum(len(t) for t in th) == len(
        {(f, float(effective_boundary(np.array([v]), "le32")[0])) for f, v in raw}
    )
    assert all(np.all(np.diff(t) > 0) for t in th)
    assert all(np.array_equal(a, b) for a, b in zip(ens.thresholds(), th, strict=True))
    assert ens.n_grid_boxes() == int(np.prod([len(t) + 1 for t in th]))
