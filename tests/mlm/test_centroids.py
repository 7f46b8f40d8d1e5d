"""reliquant.mlm.centroids: class means (eq. 3), K-Means (Section 3.3 a), Table 1."""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.mlm import centroids as cen
from reliquant.mlm.softmax import N_CLASSES as K


def random_softmax(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.dirichlet(np.full(K, 0.3), size=n).astype(np.float32)


def test_class_centroids_are_means_of_correct_examples():
    rng = np.random.default_rng(6)
    s = random_softmax(rng, 500)
    y = rng.integers(0, K, 500)
    s[np.arange(K), :] = np.eye(K)  # every class has at least one correct example
    y[:K] = np.arange(K)
    mu = cen.class_centroids(s, y)
    for c in range(K):
        rows = [s[i] for i in range(len(s)) if y[i] == c and np.argmax(s[i]) == c]
        np.testing.assert_allclose(mu[c], np.mean(rows, axis=0), rtol=1e-6)
    y_bad = y.copy()
    y_bad[(y == 3) & (s.argmax(1) == 3)] = 2  # no correct example of class 3 left
    with pytest.raises(ValueError, match="class 3"):
        cen.class_centroids(s, y_bad)


def test_kmeans_started_at_cluster_means_does_not_move():
    rng = np.random.default_rng(7)
    centres = np.eye(K) * 0.9 + 0.01
    labels = np.repeat(np.arange(K), 200)
    pts = centres[labels] + rng.normal(0, 0.005, (len(labels), K))
    init = np.stack([pts[labels == c].mean(0) for c in range(K)])
    res = cen.refine_centroids(pts, init, seed=0)
    shift = cen.centroid_shift(init, res.centroids)
    assert shift.max() < 1e-12
    np.testing.assert_array_equal(res.assignments, labels)
    assert len(cen.misclustered(labels, res.assignments)) == 0


def test_kmeans_moves_a_misplaced_start_and_flags_misclustered():
    rng = np.random.default_rng(8)
    centres = np.eye(K)
    labels = np.repeat(np.arange(K), 50)
    pts = centres[labels] + rng.normal(0, 0.01, (len(labels), K))
    # a class-6 point lying on the class-5 centre is "misclustered"
    idx6 = np.flatnonzero(labels == 6)[0]
    pts[idx6] = centres[5]
    init = np.stack([pts[labels == c].mean(0) for c in range(K)])
    res = cen.refine_centroids(pts, init)
    shift = cen.centroid_shift(init, res.centroids)
    # centroid 6 loses the stray point: it moves by |centre5 - mean6| / 49 ~ 0.028
    assert shift[6] == pytest.approx(np.linalg.norm(centres[5] - init[6]) / 49, rel=1e-9)
    assert np.delete(shift, [5, 6]).max() < 1e-12
    assert list(cen.misclustered(labels, res.assignments)) == [idx6]
    assert res.assignments[idx6] == 5


def test_distances_to_centroids_match_numpy_norm():
    rng = np.random.default_rng(9)
    s, mu = random_softmax(rng, 100), rng.dirichlet(np.ones(K), size=K)
    want = np.linalg.norm(s[:, None, :].astype(np.float64) - mu[None], axis=2)
    np.testing.assert_allclose(cen.distances_to_centroids(s, mu), want, rtol=1e-12)


def test_input_validation_messages():
    with pytest.raises(ValueError, match="K >= 2"):
        cen.class_centroids(np.zeros((5, 1)), np.zeros(5, int))
    with pytest.raises(ValueError, match="0..9"):
        cen.class_centroids(np.full((2, 10), 0.1), np.array([0, 10]))
    with pytest.raises(ValueError, match="0..8"):
        cen.class_centroids(np.full((2, 9), 1 / 9), np.array([0, 9]))
    with pytest.raises(ValueError, match="row 1 has NaN"):
        cen.class_centroids(np.array([[0.9, 0.1], [np.nan, 0.5]]), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"classes \[1, 2\] have no correctly classified"):
        cen.class_centroids(np.array([[0.8, 0.1, 0.1], [0.8, 0.1, 0.1]]), np.array([0, 1]))
    with pytest.raises(ValueError, match="sum to 1"):
        cen.class_centroids(np.array([[0.9, 0.9], [0.1, 0.9]]), np.array([0, 1]), sum_tol=1e-3)
    with pytest.raises(ValueError, match=r"init must have shape \(3, 3\)"):
        cen.refine_centroids(np.full((5, 3), 1 / 3), np.eye(4))
    with pytest.raises(ValueError, match="at least 3 points"):
        cen.refine_centroids(np.full((2, 3), 1 / 3), np.eye(3))
    with pytest.raises(ValueError, match=r"centroids must have shape \(3, 3\)"):
        cen.distances_to_centroids(np.full((5, 3), 1 / 3), np.eye(10))


@pytest.mark.parametrize("k", [2, 3, 7])
def test_array_functions_take_k_from_the_softmax(k):
    """K classes, K from the softmax's second dimension: means, K-Means, shift, distances."""
    rng = np.random.default_rng(20 + k)
    labels = np.repeat(np.arange(k), 30)
    s = rng.dirichlet(np.full(k, 0.2), size=len(labels))
    s[np.arange(len(labels)), labels] += 2.0
    s /= s.sum(1, keepdims=True)  # every example correctly classified, near its corner
    mu = cen.class_centroids(s, labels)
    assert mu.shape == (k, k)
    for c in range(k):
        np.testing.assert_allclose(mu[c], s[labels == c].mean(0), rtol=1e-13)
    res = cen.refine_centroids(s, mu)
    assert res.centroids.shape == (k, k) and res.assignments.shape == (len(s),)
    assert cen.centroid_shift(mu, res.centroids).shape == (k,)
    want = np.linalg.norm(s[:, None, :] - res.centroids[None], axis=2)
    np.testing.assert_allclose(cen.distances_to_centroids(s, res.centroids), want, rtol=1e-12)


REFINE = """
import hashlib
import numpy as np
from reliquant.mlm import centroids as cen
rng = np.random.default_rng(11)
logits = rng.normal(size=(20_000, 10)) * 3
points = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
init = cen.class_centroids(points, points.argmax(axis=1)) * 0.9 + 0.01
result = cen.refine_centroids(points, init)
print(result.n_iter, hashlib.sha256(result.centroids.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_refined_centroids_do_not_depend_on_the_threads_allowed():
    """scikit-learn's Lloyd iterations add per-thread partial sums, so their rounding follows
    the number of OpenMP threads (``OMP_NUM_THREADS``, which Snakemake sets to a job's
    ``threads``; else every core): refine_centroids runs them on one thread, so the centroids
    are the same bit for bit on any machine and in any job. Checked in fresh processes, as a
    job or a user's script starts."""
    import os
    import subprocess
    import sys

    runs = []
    for threads in ("1", "4"):
        env = {**os.environ, "OMP_NUM_THREADS": threads}
        out = subprocess.run(
            [sys.executable, "-c", REFINE], env=env, capture_output=True, text=True, check=True
        )
        runs.append(out.stdout.split())
    assert int(runs[0][0]) > 1  # several Lloyd iterations: each sums over all points
    assert runs[0] == runs[1]
