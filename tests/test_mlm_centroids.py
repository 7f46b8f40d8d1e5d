"""reliquant.mlm.centroids: class means (eq. 3), K-Means (Section 3.3 a), Table 1."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.core.io import read_frame, write_frame
from reliquant.core.seeding import block_int_seed
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


def test_choose_examples():
    assert cen.choose_examples(np.array([5, 8688, 3, 22561]), [8688, 22561]) == [8688, 22561]
    assert cen.choose_examples(np.array([5, 3, 22561]), [8688, 22561]) == [22561, 3]
    assert cen.choose_examples(np.array([7]), [8688, 22561]) == [7]
    assert cen.choose_examples(np.array([], int), [1, 2]) == []


def _train_frame(rng: np.random.Generator) -> pd.DataFrame:
    """A softmax table of 'training images': tight clusters near the corners of the simplex,
    except class 5, whose images hesitate between 5 and 6; every 7th image mislabelled; three
    correct class-6 images hesitate the same way, so they lie nearer the class-5 mean."""
    labels = np.repeat(np.arange(K), 40)
    s = np.full((len(labels), K), 0.01)
    s[np.arange(len(labels)), labels] = 0.91
    s[labels == 5, 5], s[labels == 5, 6] = 0.5, 0.45
    stray = np.flatnonzero(labels == 6)[1:4]
    s[stray, 5], s[stray, 6] = 0.48, 0.5  # argmax 6: correctly classified
    s += rng.uniform(0, 0.002, s.shape)
    s /= s.sum(1, keepdims=True)
    y = labels.copy()
    y[::7] = (y[::7] + 1) % K
    frame = pd.DataFrame(s.astype(np.float32), columns=[f"p{c}" for c in range(K)])
    frame.insert(0, "index", np.arange(len(y), dtype=np.int32) + 1000)
    frame.insert(1, "label", y.astype(np.uint8))
    return frame


def test_centroid_tables_match_the_steps_done_by_hand(tmp_path):
    rng = np.random.default_rng(14)
    train = _train_frame(rng)
    kmeans = {"max_iter": 300, "tol": 1e-4}
    paper_shift = [1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3
    out = cen.centroid_tables(train, kmeans, seed=3, paper_shift=paper_shift)

    s = train[[f"p{c}" for c in range(K)]].to_numpy(np.float64)
    y = train["label"].to_numpy(np.int64)
    correct = s.argmax(1) == y
    initial = cen.class_centroids(s, y)
    km = cen.refine_centroids(s[correct], initial, seed=block_int_seed(3, "mlm", "kmeans"))
    np.testing.assert_array_equal(cen.centroid_array(out.centroids, "mean"), initial)
    np.testing.assert_array_equal(cen.centroid_array(out.centroids, "kmeans"), km.centroids)
    np.testing.assert_array_equal(out.table1["distance"], cen.centroid_shift(initial, km.centroids))
    np.testing.assert_array_equal(out.table1["paper_distance"], paper_shift)
    assert out.table1["n_correct"].sum() == correct.sum() == out.n_correct
    # misclustered rows: correct images whose cluster is not their class, by brute force
    rows = np.flatnonzero(correct)
    wrong = [i for k, i in enumerate(rows) if km.assignments[k] != y[i]]
    assert out.misclustered["index"].tolist() == train["index"].iloc[wrong].tolist()
    assert out.table1["n_misclustered"].sum() == len(wrong) == 3
    assert out.table1.loc[6, "n_misclustered"] == 3 and set(out.misclustered["cluster"]) == {5}
    np.testing.assert_allclose(
        out.misclustered[[f"d{c}" for c in range(K)]].to_numpy(),
        cen.distances_to_centroids(s[wrong], km.centroids),
    )
    assert f"softmax of the {out.n_correct} correctly classified" in out.table1_markdown
    for table, schema in [
        (out.centroids, cen.CENTROIDS_SCHEMA),
        (out.table1, cen.TABLE1_SCHEMA),
        (out.misclustered, cen.MISCLUSTERED_SCHEMA),
    ]:
        write_frame(table, tmp_path / "t.parquet", schema)
        assert len(read_frame(tmp_path / "t.parquet")) == len(table)
    with pytest.raises(ValueError, match="kind 'median'"):
        cen.centroid_array(out.centroids, "median")
