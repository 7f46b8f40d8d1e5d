"""reliquant.mlm.likelihood: the MLM of paper 004 for any K-class softmax (eqs. 3-8).

Against brute force (per-class means, double loops of Euclidean distances, eq. 6 written out),
scikit-learn's KMeans called directly, and, for K = 10, the MNIST workflow's own path.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans

import reliquant.mlm as mlm_pkg
from reliquant.core.seeding import block_int_seed
from reliquant.mlm import centroids as cen
from reliquant.mlm import matrices as mat
from reliquant.mlm.likelihood import MLMResult, misclassification_likelihood
from reliquant.mlm.reproduction import centroid_tables as ct


def synthetic(seed: int, k: int, n_per: int = 60, scale: float = 2.5) -> tuple[np.ndarray, ...]:
    """A K-class classifier's float32 softmax: logits = scale * one-hot(label) + N(0, 1), so
    most examples are correctly classified and some are not."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(k), n_per))
    logits = rng.normal(0.0, 1.0, (len(labels), k))
    logits[np.arange(len(labels)), labels] += scale
    e = np.exp(logits - logits.max(1, keepdims=True))
    return (e / e.sum(1, keepdims=True)).astype(np.float32), labels


def brute_means(s: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Eq. 3 by a loop over rows: mean softmax of the correctly classified rows of each class."""
    sums = [[0.0] * k for _ in range(k)]
    counts = [0] * k
    for row, lab in zip(s, y, strict=True):
        if int(np.argmax(row)) == lab:
            counts[lab] += 1
            for j in range(k):
                sums[lab][j] += float(row[j])
    return np.array([[v / counts[c] for v in sums[c]] for c in range(k)])


def brute_distances(s: np.ndarray, y: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Eqs. 4-5 by a double loop over (true class, centroid) and the examples."""
    k = len(mu)
    out = np.full((k, k), np.nan)
    for t in range(k):
        for c in range(k):
            if c != t:
                out[t, c] = min(
                    math.sqrt(sum((float(s[i, j]) - mu[c, j]) ** 2 for j in range(k)))
                    for i in range(len(s))
                    if y[i] == t
                )
    return out


@pytest.mark.parametrize("k", [3, 7])
def test_centroids_are_the_class_means_of_the_correct_rows(k):
    s, y = synthetic(k, k)
    assert (s.argmax(1) != y).any()  # some misclassified rows, which eq. 3 leaves out
    res = misclassification_likelihood(s, y, refine=False)
    want = brute_means(s, y, k)
    np.testing.assert_allclose(res.class_means, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(res.centroids, res.class_means)
    np.testing.assert_array_equal(res.centroid_shift, np.zeros(k))
    np.testing.assert_array_equal(res.classes, np.arange(k))
    correct = s.argmax(1) == y
    np.testing.assert_array_equal(res.n_correct, [(correct & (y == c)).sum() for c in range(k)])
    assert res.n_iter == 0 and not res.n_misclustered.any() and res.n_classes == k


@pytest.mark.parametrize("k", [3, 7])
@pytest.mark.parametrize("refine", [False, True])
def test_distances_are_the_double_loop_and_likelihood_eq6(k, refine):
    s, y = synthetic(10 + k, k, n_per=25)
    res = misclassification_likelihood(s, y, refine=refine)
    D, L = res.distances, res.likelihood
    off = ~np.eye(k, dtype=bool)
    assert np.isnan(np.diag(D)).all() and np.isnan(np.diag(L)).all()
    np.testing.assert_allclose(D[off], brute_distances(s, y, res.centroids)[off], rtol=1e-12)
    assert np.all(L[off] > 0)
    np.testing.assert_allclose(np.nansum(L, axis=1), 1.0, rtol=1e-12)
    for t in range(k):
        denom = sum(1.0 / D[t, j] for j in range(k) if j != t)
        for c in range(k):
            if c != t:
                assert L[t, c] == pytest.approx((1.0 / D[t, c]) / denom, rel=1e-12)


@pytest.mark.parametrize("k", [3, 7])
@pytest.mark.parametrize("seed", [0, 5])
def test_kmeans_refinement_matches_sklearn_called_directly(k, seed):
    s, y = synthetic(20 + k, k, scale=1.0)  # overlapping classes: K-Means moves the means
    res = misclassification_likelihood(s, y, seed=seed)
    correct = s.argmax(1) == y
    init = brute_means(s, y, k)
    km = KMeans(
        n_clusters=k, init=init, n_init=1, algorithm="lloyd", random_state=seed, tol=1e-4
    ).fit(s[correct].astype(np.float64))
    np.testing.assert_allclose(res.centroids, km.cluster_centers_, rtol=1e-10, atol=1e-14)
    assert res.n_iter == km.n_iter_
    shift = np.linalg.norm(km.cluster_centers_ - init, axis=1)
    np.testing.assert_allclose(res.centroid_shift, shift, rtol=1e-8, atol=1e-14)
    assert shift.max() > 1e-3  # the refinement did something
    yc = y[correct]
    mis = [int(((yc == c) & (km.labels_ != c)).sum()) for c in range(k)]
    np.testing.assert_array_equal(res.n_misclustered, mis)
    assert sum(mis) > 0


def test_reference_set_gives_the_centroids():
    k = 4
    train_s, train_y = synthetic(1, k, n_per=80)
    test_s, test_y = synthetic(2, k, n_per=30, scale=1.0)
    res = misclassification_likelihood(
        test_s, test_y, reference_softmax=train_s, reference_labels=train_y
    )
    np.testing.assert_array_equal(res.class_means, cen.class_centroids(train_s, train_y))
    np.testing.assert_allclose(
        res.class_means, brute_means(train_s, train_y, k), rtol=1e-12, atol=1e-15
    )
    off = ~np.eye(k, dtype=bool)
    want = brute_distances(test_s, test_y, res.centroids)
    np.testing.assert_allclose(res.distances[off], want[off], rtol=1e-12)
    own = misclassification_likelihood(test_s, test_y)
    assert not np.allclose(own.centroids, res.centroids)


@pytest.mark.parametrize("refine", [True, False])
def test_k10_equals_the_workflow_path_bit_for_bit(refine):
    train_s, train_y = synthetic(3, 10, n_per=50, scale=2.0)
    test_s, test_y = synthetic(4, 10, n_per=20, scale=1.5)
    seed = block_int_seed(3, "mlm", "kmeans")
    res = misclassification_likelihood(
        test_s,
        test_y,
        refine=refine,
        seed=seed,
        reference_softmax=train_s,
        reference_labels=train_y,
    )
    # the steps, as the workflow's functions run them
    initial = cen.class_centroids(train_s, train_y)
    mu = initial
    if refine:
        correct = train_s.argmax(1) == train_y
        mu = cen.refine_centroids(train_s[correct], initial, seed=seed).centroids
    D = mat.min_distance_matrix(test_s, test_y, mu)
    for got, want in [
        (res.class_means, initial),
        (res.centroids, mu),
        (res.distances, D),
        (res.likelihood, mat.likelihood_matrix(D)),
    ]:
        np.testing.assert_array_equal(got, want)
        assert got.tobytes() == want.tobytes()
    if not refine:
        return
    # and the workflow's tables: centroid_tables (rule mlm_centroids), matrices_long
    # (rule mlm_matrices) with every test row in one corrupted cell
    train = pd.DataFrame(train_s, columns=[f"p{c}" for c in range(10)])
    train.insert(0, "index", np.arange(len(train_y), dtype=np.int32))
    train.insert(1, "label", train_y.astype(np.uint8))
    tables = ct.centroid_tables(train, {"max_iter": 300, "tol": 1e-4}, 3, [0.0] * 10)
    kmeans = ct.centroid_array(tables.centroids, "kmeans")
    assert kmeans.tobytes() == res.centroids.tobytes()
    assert tables.table1["distance"].to_numpy().tobytes() == res.centroid_shift.tobytes()
    np.testing.assert_array_equal(tables.table1["n_misclustered"], res.n_misclustered)
    np.testing.assert_array_equal(tables.table1["n_correct"], res.n_correct)
    n = len(test_y)
    cells = mat.cell_distance_matrices(
        test_s, test_y.astype(np.uint8), np.full(n, "fog"), np.ones(n, np.uint8), kmeans
    )
    long = mat.matrices_long(cells, clean="clean")
    overall = long[long["scope"] == "overall"].reset_index(drop=True)
    frame = res.to_frame()
    for col in ["true", "predicted", "distance", "likelihood"]:
        np.testing.assert_array_equal(overall[col].to_numpy(), frame[col].to_numpy())


@pytest.mark.parametrize("k", [2, 3, 7])
def test_to_frame_is_the_long_table(k):
    s, y = synthetic(40 + k, k, n_per=20)
    res = misclassification_likelihood(s, y)
    frame = res.to_frame()
    assert list(frame.columns) == ["true", "predicted", "distance", "likelihood"]
    assert len(frame) == k * (k - 1) and (frame["true"] != frame["predicted"]).all()
    for row in frame.itertuples():
        assert row.distance == res.distances[row.true, row.predicted]
        assert row.likelihood == res.likelihood[row.true, row.predicted]
    np.testing.assert_allclose(frame.groupby("true")["likelihood"].sum(), 1.0, rtol=1e-12)
    if k == 2:
        assert (frame["likelihood"] == 1.0).all()


def test_exported_from_the_package():
    assert mlm_pkg.misclassification_likelihood is misclassification_likelihood
    assert mlm_pkg.MLMResult is MLMResult
    assert {"misclassification_likelihood", "MLMResult"} <= set(mlm_pkg.__all__)


def test_bad_inputs_name_the_problem():
    s, y = synthetic(7, 3, n_per=10)
    with pytest.raises(ValueError, match="K >= 2"):
        misclassification_likelihood(np.ones((5, 1)), np.zeros(5, int))
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.2.*first at row 4"):
        misclassification_likelihood(s, np.r_[y[:4], 3, y[5:]])
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.2"):
        misclassification_likelihood(s, np.r_[-1, y[1:]])
    with pytest.raises(ValueError, match=r"labels must have shape \(30,\)"):
        misclassification_likelihood(s, y[:-1])
    bad = s.copy()
    bad[6, 2] = np.nan
    with pytest.raises(ValueError, match="row 6 has NaN"):
        misclassification_likelihood(bad, y)
    with pytest.raises(ValueError, match="labels contain NaN"):
        misclassification_likelihood(s, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError, match="rows must sum to 1 within sum_tol=0.001"):
        misclassification_likelihood(s * 1.01, y)
    with pytest.raises(ValueError, match="negative entries"):
        misclassification_likelihood(np.log(s), y)  # log-probabilities passed by mistake
    # sum_tol=None skips the simplex check (scores that are not probabilities)
    scores = s * 2.0
    res = misclassification_likelihood(scores, y, sum_tol=None, refine=False)
    assert np.isfinite(res.likelihood[~np.eye(3, dtype=bool)]).all()
    # a class with no correctly classified example: no centroid (eq. 3)
    wrong = s.copy()
    wrong[y == 1] = wrong[y == 1][:, [1, 0, 2]]  # class-1 rows: swap p0 and p1
    assert (y == 1).any() and not (wrong[y == 1].argmax(1) == 1).any()
    with pytest.raises(ValueError, match="class 1 has no correctly classified example"):
        misclassification_likelihood(wrong, y)
    # a class absent from labels: no row of D (eq. 5)
    keep = y != 2
    with pytest.raises(ValueError, match="class 2 has no example in labels"):
        misclassification_likelihood(s[keep], y[keep], reference_softmax=s, reference_labels=y)
    with pytest.raises(ValueError, match="reference_softmax given without its partner"):
        misclassification_likelihood(s, y, reference_softmax=s)
    with pytest.raises(ValueError, match="reference_labels given without its partner"):
        misclassification_likelihood(s, y, reference_labels=y)
    s4, y4 = synthetic(8, 4, n_per=10)
    with pytest.raises(ValueError, match="reference_softmax has K = 4 classes"):
        misclassification_likelihood(s, y, reference_softmax=s4, reference_labels=y4)
    with pytest.raises(ValueError, match=r"reference_labels must lie in 0\.\.2"):
        misclassification_likelihood(s, y, reference_softmax=s, reference_labels=np.r_[y[:-1], 5])
    with pytest.raises(ValueError, match="centroids from reference_softmax/reference_labels"):
        misclassification_likelihood(s, y, reference_softmax=wrong, reference_labels=y)


@pytest.mark.parametrize("with_reference", [False, True])
def test_softmax_is_checked_once_per_array_at_the_entry_point(monkeypatch, with_reference):
    """The entry point checks each softmax once; centroids, K-Means and distances trust it
    (check=False), with the same result as the checked steps."""
    import reliquant.mlm.centroids
    import reliquant.mlm.likelihood
    import reliquant.mlm.matrices
    import reliquant.mlm.softmax

    s, y = synthetic(41, 4, n_per=40)
    ref = {"reference_softmax": s[::2], "reference_labels": y[::2]} if with_reference else {}
    want = misclassification_likelihood(s, y, chunk=7, **ref)
    calls = []
    real = reliquant.mlm.softmax.check_softmax

    def counting(*args, **kwargs):
        calls.append(kwargs.get("name", "softmax"))
        return real(*args, **kwargs)

    for module in (reliquant.mlm.likelihood, reliquant.mlm.centroids, reliquant.mlm.matrices):
        monkeypatch.setattr(module, "check_softmax", counting)
    got = misclassification_likelihood(s, y, chunk=7, **ref)
    assert calls == (["softmax", "reference_softmax"] if with_reference else ["softmax"])
    for field in ("centroids", "class_means", "distances", "likelihood", "centroid_shift"):
        assert getattr(got, field).tobytes() == getattr(want, field).tobytes()
    # the steps called alone still check their input
    with pytest.raises(ValueError, match="non-finite"):
        cen.class_centroids(np.full((3, 2), np.nan), np.zeros(3, int))
    with pytest.raises(ValueError, match="labels must lie in 0..1"):
        mat.min_distance_matrix(np.eye(2), np.array([0, 5]), np.eye(2))


@pytest.mark.parametrize("sum_tol", [np.nan, -1.0, np.inf, "0.001"])
def test_sum_tol_itself_is_checked_before_the_rows(sum_tol):
    """A NaN tolerance compares false with every row's error and switched the simplex check
    off; -1 was refused with a message about a row's sum. The argument is named instead."""
    s, y = synthetic(7, 3, n_per=10)
    unnormalised = s * 1.5  # rows sum to 1.5: refused by any valid tolerance below 0.5
    error = TypeError if isinstance(sum_tol, str) else ValueError
    with pytest.raises(error, match=r"sum_tol must be a finite number >= 0; got ") as err:
        misclassification_likelihood(unnormalised, y, sum_tol=sum_tol)
    assert "row" not in str(err.value)
    with pytest.raises(ValueError, match="rows must sum to 1 within sum_tol=0.1"):
        misclassification_likelihood(unnormalised, y, sum_tol=0.1)
