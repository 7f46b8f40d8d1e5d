"""The papers' grid method against brute force and the 99 % bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xgboost as xgb
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.boxes import grid_robustness
from reliquant.trees.readers import extract_ensemble


def brute_force(ens, noise, mu):
    """Independent re-implementation: all boxes via itertools, label = model at a point
    strictly inside (the lower-edge + tiny), mass from scipy-free products."""
    y = ens.predict(mu[None])[0]
    th = ens.thresholds()
    edges = [np.concatenate([[-np.inf], t, [np.inf]]) for t in th]
    total = 0.0
    for idx in itertools.product(*[range(len(e) - 1) for e in edges]):
        lo = np.array([edges[i][j] for i, j in enumerate(idx)])
        hi = np.array([edges[i][j + 1] for i, j in enumerate(idx)])
        pt = np.where(np.isfinite(hi), hi, np.where(np.isfinite(lo), lo + 1.0, 0.0))
        if ens.predict(pt[None])[0] == y:  # hi is inside the box (lo < x <= hi)
            total += float(noise.box_mass(lo[None], hi[None])[0])
    return total


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def test_grid_equals_brute_force_decision_tree(iris):
    X, y = iris
    ens = extract_ensemble(DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y))
    for mu in X[::37]:
        noise = IndependentNormal.from_variance(mu, 0.1)
        g = grid_robustness(ens, noise, mu)
        assert g.robustness == pytest.approx(brute_force(ens, noise, mu), abs=1e-12)
        assert g.n_boxes == ens.n_grid_boxes()


def test_grid_equals_brute_force_small_forest_and_xgb(iris):
    X, y = iris
    models = [
        RandomForestClassifier(3, max_depth=2, random_state=1).fit(X, y),
        xgb.XGBClassifier(n_estimators=2, max_depth=2).fit(X, y),
    ]
    for model in models:
        ens = extract_ensemble(model)
        for mu in X[[5, 70, 140]]:
            noise = IndependentNormal.from_variance(mu, 0.2)
            g = grid_robustness(ens, noise, mu)
            assert g.robustness == pytest.approx(brute_force(ens, noise, mu), abs=1e-12)


def test_pruned_grid_within_one_point(iris):
    X, y = iris
    ens = extract_ensemble(RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, y))
    for mu in X[::15]:
        noise = IndependentNormal.from_variance(mu, 0.1)
        full = grid_robustness(ens, noise, mu)
        p = grid_robustness(ens, noise, mu, prune=0.99)
        assert p.n_boxes <= full.n_boxes
        # kept boxes contribute their full mass: pruned <= full <= pruned + 1 %
        assert p.robustness <= full.robustness + 1e-15
        assert full.robustness - p.robustness <= 0.01


def test_max_boxes_guard(iris):
    X, y = iris
    ens = extract_ensemble(RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, y))
    with pytest.raises(ValueError, match="max_boxes"):
        grid_robustness(ens, IndependentNormal(X[0], 0.1), X[0], max_boxes=10)
