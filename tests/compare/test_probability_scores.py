"""Scores from class probabilities against direct numpy, the MLM's centroids, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.compare import (
    centroid_proximity,
    check_probabilities,
    fit_centroids,
    log_ratio,
    margin,
    max_probability,
    negative_entropy,
    probability_scores,
)


@pytest.fixture
def proba() -> np.ndarray:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(4, 0.5), size=200)
    p[0] = [1.0, 0.0, 0.0, 0.0]  # zeros: entropy 0 ln 0, log-ratio floor
    p[1] = [0.5, 0.5, 0.0, 0.0]  # tie for the top
    return p


def test_equal_direct_numpy(proba) -> None:
    srt = np.sort(proba, axis=1)
    p1, p2 = srt[:, -1], srt[:, -2]
    np.testing.assert_allclose(max_probability(proba), p1)
    np.testing.assert_allclose(margin(proba), p1 - p2)
    ent = np.array([-sum(v * np.log(v) for v in row if v > 0) for row in proba])
    np.testing.assert_allclose(negative_entropy(proba), -ent, atol=1e-14)
    np.testing.assert_allclose(log_ratio(proba), np.log(p1) - np.log(np.maximum(p2, 1e-3)))
    assert log_ratio(proba)[0] == pytest.approx(np.log(1e3))
    assert log_ratio(proba)[1] == 0.0 and margin(proba)[1] == 0.0
    inner = proba[2:]
    q = np.sort(inner, axis=1)
    np.testing.assert_allclose(log_ratio(inner, floor=None), np.log(q[:, -1] / q[:, -2]))
    # sqrt(p1 / p2) (the authors' other form) ranks the same
    assert (
        np.argsort(log_ratio(inner, floor=None)) == np.argsort(np.sqrt(q[:, -1] / q[:, -2]))
    ).all()
    frame = probability_scores(proba)
    assert list(frame.columns) == [
        "prediction", "max_probability", "negative_entropy", "margin", "log_ratio",
    ]  # fmt: skip
    np.testing.assert_array_equal(frame["prediction"], proba.argmax(1))


def test_centroids_as_the_mlm_computes_them(proba) -> None:
    y = proba.argmax(1).copy()
    y[5:20] = (y[5:20] + 1) % 4  # some wrong predictions: not used for the centroids
    ok = proba.argmax(1) == y
    means = np.stack([proba[ok & (y == c)].mean(0) for c in range(4)])
    np.testing.assert_allclose(fit_centroids(proba, y, refine=False), means)
    refined = fit_centroids(proba, y, seed=0)
    assert refined.shape == (4, 4) and np.isfinite(refined).all()
    prox = centroid_proximity(proba, means)
    direct = -np.linalg.norm(proba - means[proba.argmax(1)], axis=1)
    np.testing.assert_allclose(prox, direct, atol=1e-12)
    frame = probability_scores(proba, centroids=means)
    np.testing.assert_allclose(frame["centroid_proximity"], direct, atol=1e-12)
    y_missing = y.copy()
    y_missing[proba.argmax(1) == 3] = 0  # class 3 never predicted correctly
    with pytest.raises(ValueError, match="class 3 has no correctly classified"):
        fit_centroids(proba, y_missing)
    with pytest.raises(ValueError, match="train_labels must be integer column indices"):
        fit_centroids(proba, y + 4)


def test_bad_input(proba) -> None:
    with pytest.raises(ValueError, match="at least two classes"):
        max_probability(np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"rows must sum to 1 within sum_tol=0\.0001"):
        margin(proba * 1.01)
    with pytest.raises(ValueError, match="proba has NaN"):
        negative_entropy(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="proba has negative"):
        negative_entropy(np.array([[-0.5, 1.5]]))
    with pytest.raises(ValueError, match="proba is empty"):
        log_ratio(np.empty((0, 3)))
    with pytest.raises(ValueError, match="second-largest probability is 0"):
        log_ratio(proba, floor=None)
    with pytest.raises(ValueError, match="floor must be a finite number > 0 and <= 0.25; got 0.0"):
        log_ratio(proba, floor=0.0)
    assert check_probabilities(proba * 1.01, sum_tol=0.02).shape == proba.shape
    with pytest.raises(ValueError, match=r"sum_tol must be a finite number >= 0; got nan"):
        check_probabilities(proba * 1.5, sum_tol=np.nan)
