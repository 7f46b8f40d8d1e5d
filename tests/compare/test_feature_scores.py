"""Trust score, Mahalanobis and k-NN distance against brute-force loops over every training
point, scipy's and scikit-learn's Mahalanobis distances, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import mahalanobis
from sklearn.covariance import EmpiricalCovariance
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression

from reliquant.compare.feature_scores import (
    fit_knn_distance,
    fit_mahalanobis,
    fit_trust_score,
)


def blobs(seed: int, n: int = 90, d: int = 3, k: int = 3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    x = rng.normal(size=(n, d)) + 1.5 * rng.normal(size=(k, d))[y]
    return x, y


def brute_trust(x, y, xq, pred, *, alpha, k):
    """Jiang et al.'s Algorithms 1-2 by loops: k-NN radius counting the point itself, keep
    radii <= the (1 - alpha) percentile, then nearest kept point per class."""
    kept = {}
    for c in sorted(set(y.tolist())):
        pts = x[y == c]
        radii = [sorted(np.linalg.norm(pts - p, axis=1))[k - 1] for p in pts]
        cut = np.percentile(radii, 100 * (1 - alpha))
        kept[c] = pts[[r <= cut for r in radii]]
    out = []
    for q, p in zip(xq, pred, strict=True):
        dist = {c: min(np.linalg.norm(q - v) for v in pts) for c, pts in kept.items()}
        out.append(min(dist[c] for c in dist if c != p) / (dist[p] + 1e-12))
    return np.array(out), kept


@pytest.mark.parametrize(("alpha", "k"), [(0.0, 10), (0.1, 5), (0.3, 1), (0.5, 8)])
def test_trust_score_equals_brute_force(alpha, k) -> None:
    x, y = blobs(0)
    xq, _ = blobs(1, n=40)
    pred = np.random.default_rng(2).integers(0, 3, 40)
    ts = fit_trust_score(x, y, alpha=alpha, k=k)
    expected, kept = brute_trust(x, y, xq, pred, alpha=alpha, k=k)
    np.testing.assert_allclose(ts.score(xq, pred), expected, rtol=1e-9)
    for c, pts in kept.items():
        got = ts.kept_[list(ts.classes_).index(c)]
        assert sorted(map(tuple, got)) == sorted(map(tuple, pts))
    if alpha > 0 and k > 1:  # about an alpha share of each class dropped
        for c in range(3):
            n_c = (y == c).sum()
            assert abs((n_c - len(ts.kept_[c])) - alpha * n_c) <= 1.0 + 1e-9


def test_trust_score_on_a_model_s_predictions_with_string_labels() -> None:
    x, y_idx = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y_idx]
    model = LogisticRegression(max_iter=500).fit(x, names)
    pred = model.predict(x)
    ts = fit_trust_score(x, names, alpha=0.1, k=10)
    assert ts.classes_.tolist() == model.classes_.tolist()
    score = ts.score(x, pred)
    expected, _ = brute_trust(x, names, x, pred, alpha=0.1, k=10)
    np.testing.assert_allclose(score, expected, rtol=1e-9)
    # a training point kept in its predicted class's set: distance 0 -> ratio / 1e-12
    assert score.max() > 1e9
    wrong = pred != names
    assert score[wrong].mean() < score[~wrong].mean()


def loop_covariance(x, y):
    means = {c: x[y == c].mean(axis=0) for c in set(y.tolist())}
    cov = sum(np.outer(v - means[c], v - means[c]) for v, c in zip(x, y.tolist(), strict=True))
    return means, cov / len(x)


def test_mahalanobis_equals_scipy_with_a_loop_covariance() -> None:
    x, y = blobs(3, n=120, d=4)
    xq, _ = blobs(4, n=30, d=4)
    pred = np.random.default_rng(5).integers(0, 3, 30)
    means, cov = loop_covariance(x, y)
    vi = np.linalg.inv(cov)
    fitted = fit_mahalanobis(x, y)
    np.testing.assert_allclose(fitted.covariance_, cov, atol=1e-12)
    expected = [-(mahalanobis(q, means[p], vi) ** 2) for q, p in zip(xq, pred, strict=True)]
    np.testing.assert_allclose(fitted.score(xq, pred), expected, rtol=1e-9)
    closest = [-min(mahalanobis(q, means[c], vi) ** 2 for c in means) for q in xq]
    np.testing.assert_allclose(fitted.score(xq), closest, rtol=1e-9)
    # unchanged by an invertible affine map of the features
    a = np.random.default_rng(6).normal(size=(4, 4)) + 3 * np.eye(4)
    moved = fit_mahalanobis(x @ a + 7.0, y)
    np.testing.assert_allclose(moved.score(xq @ a + 7.0, pred), expected, rtol=1e-7)


def test_mahalanobis_singular_covariance_as_sklearn_and_as_dropping_the_column() -> None:
    x, y = blobs(7, n=100, d=3)
    xs = np.column_stack([x, np.full(100, 2.5), x[:, 0] * 2.0])  # constant, duplicated
    xq, _ = blobs(8, n=20, d=3)
    xqs = np.column_stack([xq, np.full(20, 2.5), xq[:, 0] * 2.0])
    fitted = fit_mahalanobis(xs, y)
    assert fitted.whitener_.shape == (5, 3)  # rank 3
    ec = EmpiricalCovariance(assume_centered=True).fit(xs - fitted.means_[y])
    expected = np.column_stack([ec.mahalanobis(xqs - mu) for mu in fitted.means_])
    np.testing.assert_allclose(fitted.squared_distances(xqs), expected, rtol=1e-6)
    np.testing.assert_allclose(
        fitted.squared_distances(xqs), fit_mahalanobis(x, y).squared_distances(xq), rtol=1e-6
    )


@pytest.mark.parametrize(("k", "normalize"), [(1, True), (7, True), (7, False), (90, True)])
def test_knn_distance_equals_brute_force(k, normalize) -> None:
    x, _ = blobs(9)
    xq, _ = blobs(10, n=25)
    x[5] = x[6]  # a duplicate training vector
    fitted = fit_knn_distance(x, k=k, normalize=normalize)

    def unit(v):
        return v / np.linalg.norm(v) if normalize else v

    train = [unit(v) for v in x]
    expected = [-sorted(np.linalg.norm(unit(q) - t) for t in train)[k - 1] for q in xq]
    np.testing.assert_allclose(fitted.score(xq), expected, rtol=1e-9)


def test_bad_input_names_the_argument() -> None:
    x, y = blobs(11, n=30)
    with pytest.raises(ValueError, match="alpha must be a finite number >= 0 and < 1"):
        fit_trust_score(x, y, alpha=1.0)
    with pytest.raises(ValueError, match="alpha must be"):
        fit_trust_score(x, y, alpha=-0.1)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        fit_trust_score(x, y, k=0)
    with pytest.raises(ValueError, match="k must be at most the smallest class's.*class 2"):
        y_small = y.copy()
        y_small[y_small == 2] = 0
        y_small[:2] = 2
        fit_trust_score(x, y_small, alpha=0.1, k=3)
    with pytest.raises(ValueError, match="at least two classes"):
        fit_trust_score(x, np.zeros(30, int))
    with pytest.raises(ValueError, match="y_train must be 1-D with one label per row"):
        fit_mahalanobis(x, y[:-1])
    with pytest.raises(ValueError, match="y_train has NaN labels"):
        fit_trust_score(x, np.where(y == 1, np.nan, y))
    bad = x.copy()
    bad[4, 0] = np.inf
    with pytest.raises(ValueError, match="X_train has NaN or inf in 1 row.*first row 4"):
        fit_knn_distance(bad)
    with pytest.raises(ValueError, match="X_train must be 2-D"):
        fit_mahalanobis(x[:, 0], y)
    with pytest.raises(ValueError, match="k must be at most the number of training rows"):
        fit_knn_distance(x, k=31)
    with pytest.raises(ValueError, match="X_train has 1 all-zero row.*normalize=False"):
        fit_knn_distance(np.vstack([x, np.zeros(3)]), k=3)
    ts = fit_trust_score(x, y)
    with pytest.raises(ValueError, match="X has 2 features.*fitted on 3"):
        ts.score(x[:, :2], y)
    with pytest.raises(ValueError, match="predicted must be 1-D with one label per row of X"):
        ts.score(x, y[:5])
    with pytest.raises(ValueError, match="predicted holds label.*first 7 at row 0"):
        ts.score(x, np.full(30, 7))
    with pytest.raises(ValueError, match="predicted holds label.*'a'"):
        fit_mahalanobis(x, y).score(x, np.array(["a"] * 30))
    with pytest.raises(ValueError, match="X has NaN or inf"):
        fit_knn_distance(x, k=2).score(np.full((2, 3), np.nan))
