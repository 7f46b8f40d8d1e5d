"""Tests of reliquant.mlm.matrices against direct loops, closed forms and scikit-learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import confusion_matrix as sk_confusion_matrix

from reliquant.mlm import matrices as mlm

K = mlm.N_CLASSES


def random_softmax(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.dirichlet(np.full(K, 0.3), size=n).astype(np.float32)


def direct_min_distances(s, y, mu):
    """Eq. 5 by a direct loop over classes, centroids and examples."""
    out = np.full((K, K), np.nan)
    for cls in range(K):
        for c in range(K):
            if c == cls:
                continue
            best = np.inf
            for i in range(len(s)):
                if y[i] == cls:
                    d = np.sqrt(sum((float(s[i, j]) - mu[c, j]) ** 2 for j in range(K)))
                    best = min(best, d)
            out[cls, c] = best
    return out


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(10, 80), chunk=st.integers(1, 50))
def test_min_distance_matrix_matches_double_loop(seed, n, chunk):
    rng = np.random.default_rng(seed)
    s = random_softmax(rng, n)
    y = rng.integers(0, K, n)
    mu = rng.dirichlet(np.ones(K), size=K)
    got = mlm.min_distance_matrix(s, y, mu, chunk=chunk)
    want = direct_min_distances(s, y, mu)
    assert np.isnan(np.diag(got)).all()
    off = ~np.eye(K, dtype=bool)
    # classes with no example: +inf rows in both
    np.testing.assert_allclose(got[off], want[off], rtol=1e-12)


def test_combine_min_equals_matrix_of_union():
    rng = np.random.default_rng(1)
    s, y = random_softmax(rng, 300), rng.integers(0, K, 300)
    mu = rng.dirichlet(np.ones(K), size=K)
    parts = [mlm.min_distance_matrix(s[a:b], y[a:b], mu) for a, b in [(0, 7), (7, 150), (150, 300)]]
    whole = mlm.min_distance_matrix(s, y, mu)
    np.testing.assert_array_equal(mlm.combine_min(parts), whole)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.floats(1e-6, 10.0, allow_nan=False, allow_infinity=False),
        min_size=K * K,
        max_size=K * K,
    )
)
def test_likelihood_rows_sum_to_one_with_empty_diagonal(values):
    d = np.array(values).reshape(K, K)
    L = mlm.likelihood_matrix(d)
    assert np.isnan(np.diag(L)).all()
    off = ~np.eye(K, dtype=bool)
    assert np.all(L[off] > 0) and np.all(L[off] < 1)
    np.testing.assert_allclose(np.nansum(L, axis=1), 1.0, rtol=1e-12)
    # eq. 6 written out for one entry per row
    for y in range(K):
        c = (y + 1) % K
        denom = sum(1.0 / d[y, j] for j in range(K) if j != y)
        assert L[y, c] == pytest.approx((1.0 / d[y, c]) / denom, rel=1e-12)
    # smaller distance -> larger likelihood within a row
    for y in range(K):
        cols = [c for c in range(K) if c != y]
        order_d = np.argsort(d[y, cols], kind="stable")
        assert np.all(np.diff(L[y, cols][order_d]) <= 1e-15)


def test_zero_distance_gets_all_the_mass():
    rng = np.random.default_rng(2)
    d = rng.uniform(0.1, 1.0, (K, K))
    d[3, 5] = 0.0
    d[7, 1] = d[7, 2] = 0.0
    L = mlm.likelihood_matrix(d)
    assert np.isfinite(L[~np.eye(K, dtype=bool)]).all()
    assert L[3, 5] == 1.0 and np.nansum(L[3]) == 1.0
    assert L[7, 1] == L[7, 2] == 0.5 and np.nansum(L[7]) == 1.0
    # limit of eq. 6 as the distance shrinks: the tiny-distance entry takes (almost) all mass
    d2 = d.copy()
    d2[3, 5] = 1e-300
    assert mlm.likelihood_matrix(d2)[3, 5] == pytest.approx(1.0)
    # other rows are untouched by the zero rows
    np.testing.assert_allclose(L[0], mlm.likelihood_matrix(d2)[0])


def test_softmax_equal_to_a_centroid_gives_zero_distance_and_finite_L():
    rng = np.random.default_rng(3)
    mu = rng.dirichlet(np.ones(K), size=K)
    s = random_softmax(rng, 50).astype(np.float64)
    y = np.arange(50) % K
    s[0] = mu[4]  # example of class 0 sits exactly on centroid 4
    D = mlm.min_distance_matrix(s, y, mu)
    assert D[0, 4] == 0.0
    L = mlm.likelihood_matrix(D)
    assert L[0, 4] == 1.0


@pytest.mark.parametrize("bad", [np.nan, -0.1, np.inf])
def test_likelihood_rejects_nan_negative_inf(bad):
    d = np.ones((K, K))
    d[2, 6] = bad
    with pytest.raises(ValueError, match="rows \\[2\\]"):
        mlm.likelihood_matrix(d)


def test_missing_class_row_is_inf_and_refused():
    rng = np.random.default_rng(4)
    s, y = random_softmax(rng, 40), np.arange(40) % 9  # class 9 absent
    D = mlm.min_distance_matrix(s, y, rng.dirichlet(np.ones(K), size=K))
    assert np.isinf(D[9, :9]).all()
    with pytest.raises(ValueError, match="no example"):
        mlm.likelihood_matrix(D)


def test_level_mean_std_matches_numpy():
    rng = np.random.default_rng(5)
    stack = np.stack([mlm.likelihood_matrix(rng.uniform(0.1, 1, (K, K))) for _ in range(10)])
    mean, std = mlm.level_mean_std(stack)
    np.testing.assert_allclose(mean, np.mean(stack, axis=0))
    np.testing.assert_allclose(std, np.std(stack, axis=0, ddof=0))
    assert np.isnan(np.diag(mean)).all() and np.isnan(np.diag(std)).all()
    np.testing.assert_allclose(np.nansum(mean, axis=1), 1.0)


def test_class_centroids_are_means_of_correct_examples():
    rng = np.random.default_rng(6)
    s = random_softmax(rng, 500)
    y = rng.integers(0, K, 500)
    s[np.arange(K), :] = np.eye(K)  # every class has at least one correct example
    y[:K] = np.arange(K)
    mu = mlm.class_centroids(s, y)
    for c in range(K):
        rows = [s[i] for i in range(len(s)) if y[i] == c and np.argmax(s[i]) == c]
        np.testing.assert_allclose(mu[c], np.mean(rows, axis=0), rtol=1e-6)
    y_bad = y.copy()
    y_bad[(y == 3) & (s.argmax(1) == 3)] = 2  # no correct example of class 3 left
    with pytest.raises(ValueError, match="class 3"):
        mlm.class_centroids(s, y_bad)


def test_kmeans_started_at_cluster_means_does_not_move():
    rng = np.random.default_rng(7)
    centres = np.eye(K) * 0.9 + 0.01
    labels = np.repeat(np.arange(K), 200)
    pts = centres[labels] + rng.normal(0, 0.005, (len(labels), K))
    init = np.stack([pts[labels == c].mean(0) for c in range(K)])
    res = mlm.refine_centroids(pts, init, seed=0)
    shift = mlm.centroid_shift(init, res.centroids)
    assert shift.max() < 1e-12
    np.testing.assert_array_equal(res.assignments, labels)
    assert len(mlm.misclustered(labels, res.assignments)) == 0


def test_kmeans_moves_a_misplaced_start_and_flags_misclustered():
    rng = np.random.default_rng(8)
    centres = np.eye(K)
    labels = np.repeat(np.arange(K), 50)
    pts = centres[labels] + rng.normal(0, 0.01, (len(labels), K))
    # a class-6 point lying on the class-5 centre is "misclustered"
    idx6 = np.flatnonzero(labels == 6)[0]
    pts[idx6] = centres[5]
    init = np.stack([pts[labels == c].mean(0) for c in range(K)])
    res = mlm.refine_centroids(pts, init)
    shift = mlm.centroid_shift(init, res.centroids)
    # centroid 6 loses the stray point: it moves by |centre5 - mean6| / 49 ~ 0.028
    assert shift[6] == pytest.approx(np.linalg.norm(centres[5] - init[6]) / 49, rel=1e-9)
    assert np.delete(shift, [5, 6]).max() < 1e-12
    assert list(mlm.misclustered(labels, res.assignments)) == [idx6]
    assert res.assignments[idx6] == 5


def test_distances_to_centroids_match_numpy_norm():
    rng = np.random.default_rng(9)
    s, mu = random_softmax(rng, 100), rng.dirichlet(np.ones(K), size=K)
    want = np.linalg.norm(s[:, None, :].astype(np.float64) - mu[None], axis=2)
    np.testing.assert_allclose(mlm.distances_to_centroids(s, mu), want, rtol=1e-12)


def test_confusion_matrix_matches_sklearn():
    rng = np.random.default_rng(10)
    y, p = rng.integers(0, K, 1000), rng.integers(0, K, 1000)
    np.testing.assert_array_equal(
        mlm.confusion_matrix(y, p), sk_confusion_matrix(y, p, labels=range(K))
    )


def test_accuracy_by_group_matches_loop():
    rng = np.random.default_rng(11)
    n = 2000
    frame = pd.DataFrame(
        {
            "label": rng.integers(0, K, n),
            "prediction": rng.integers(0, K, n),
            "corruption": rng.choice(["a", "b", "c"], n),
            "level": rng.integers(1, 4, n),
        }
    )
    frame.loc[frame.index % 3 == 0, "prediction"] = frame["label"]
    got = mlm.accuracy_by_group(frame, ["corruption", "level"])
    for row in got.itertuples():
        sub = frame[(frame.corruption == row.corruption) & (frame.level == row.level)]
        assert row.n == len(sub)
        assert row.accuracy == pytest.approx((sub.label == sub.prediction).mean())
    assert got["n"].sum() == n


def test_input_validation_messages():
    with pytest.raises(ValueError, match="shape \\(n, 10\\)"):
        mlm.class_centroids(np.zeros((5, 9)), np.zeros(5, int))
    with pytest.raises(ValueError, match="0..9"):
        mlm.class_centroids(np.full((2, 10), 0.1), np.array([0, 10]))


def test_matrices_long_scopes_match_direct_computation():
    rng = np.random.default_rng(12)
    names, levels = ["blur", "noise"], [1, 2, 3]
    rows = []
    for name in ["clean", *names]:
        for lev in [0] if name == "clean" else levels:
            rows += [(name, lev)] * 60
    corr = np.array([r[0] for r in rows])
    lev = np.array([r[1] for r in rows])
    n = len(rows)
    s, y = random_softmax(rng, n), np.arange(n) % K
    mu = rng.dirichlet(np.ones(K), size=K)
    cells = mlm.cell_distance_matrices(s, y, corr, lev, mu)
    assert set(cells) == {("clean", 0)} | {(c, v) for c in names for v in levels}
    long = mlm.matrices_long(cells, clean="clean")
    assert long.groupby("scope").size().to_dict() == {
        "overall": 90,
        "clean": 90,
        "level": 270,
        "corruption": 180,
        "mean": 90,
        "std": 90,
    }

    def scope(name, **kw):
        sub = long[long.scope == name]
        for k, v in kw.items():
            sub = sub[sub[k] == v]
        return sub

    corrupted = corr != "clean"
    want = mlm.min_distance_matrix(s[corrupted], y[corrupted], mu)
    np.testing.assert_allclose(mlm.long_to_matrix(scope("overall"), "distance"), want)
    np.testing.assert_allclose(mlm.long_to_matrix(scope("overall")), mlm.likelihood_matrix(want))
    per_level = []
    for v in levels:
        m = corrupted & (lev == v)
        want = mlm.likelihood_matrix(mlm.min_distance_matrix(s[m], y[m], mu))
        per_level.append(want)
        np.testing.assert_allclose(mlm.long_to_matrix(scope("level", level=v)), want)
    m = corr == "noise"
    want = mlm.likelihood_matrix(mlm.min_distance_matrix(s[m], y[m], mu))
    np.testing.assert_allclose(mlm.long_to_matrix(scope("corruption", corruption="noise")), want)
    np.testing.assert_allclose(mlm.long_to_matrix(scope("mean")), np.mean(per_level, axis=0))
    np.testing.assert_allclose(mlm.long_to_matrix(scope("std")), np.std(per_level, axis=0))
    assert scope("mean")["distance"].isna().all()
    with_clean = mlm.matrices_long(cells, clean="clean", overall_includes_clean=True)
    want = mlm.min_distance_matrix(s, y, mu)
    got = with_clean[with_clean.scope == "overall"]
    np.testing.assert_allclose(mlm.long_to_matrix(got, "distance"), want)


def test_softmax_frame_columns_and_prediction():
    rng = np.random.default_rng(13)
    s = random_softmax(rng, 20)
    frame = mlm.softmax_frame(np.arange(20), np.arange(20) % K, "fog", 3, s)
    assert list(frame.columns) == [f.name for f in mlm.SOFTMAX_SCHEMA]
    np.testing.assert_array_equal(frame["prediction"], s.argmax(1))
    assert (frame["corruption"] == "fog").all() and (frame["level"] == 3).all()
    import pyarrow as pa

    pa.Table.from_pandas(frame, schema=mlm.SOFTMAX_SCHEMA, preserve_index=False)


def test_choose_examples():
    assert mlm.choose_examples(np.array([5, 8688, 3, 22561]), [8688, 22561]) == [8688, 22561]
    assert mlm.choose_examples(np.array([5, 3, 22561]), [8688, 22561]) == [22561, 3]
    assert mlm.choose_examples(np.array([7]), [8688, 22561]) == [7]
    assert mlm.choose_examples(np.array([], int), [1, 2]) == []


def test_accuracy_paper_comparison_level_means_and_brightness():
    from reliquant.mlm.matrices import accuracy_paper_comparison

    rows = [("clean", 0, 100, 0.99)]
    for name, base in (("brightness", 0.9), ("fog", 0.7)):
        rows += [(name, lvl, 100, base - 0.05 * lvl) for lvl in range(1, 11)]
    acc = pd.DataFrame(rows, columns=["corruption", "level", "n", "accuracy"])
    paper = {
        "train_accuracy": 0.98,
        "test_accuracy": 0.97,
        "level1_mean_accuracy": 0.8,
        "level10_mean_accuracy": 0.4,
        "perturbed_max_accuracy": 0.9,
        "perturbed_min_accuracy": 0.3,
        "brightness_level1_accuracy": 0.85,
        "brightness_level10_accuracy": 0.5,
    }
    out = accuracy_paper_comparison(acc, 0.981, 0.975, paper, "clean").set_index("quantity")
    assert out.loc["mean accuracy at level 1", "ours"] == pytest.approx((0.85 + 0.65) / 2)
    assert out.loc["mean accuracy at level 10", "ours"] == pytest.approx((0.4 + 0.2) / 2)
    assert out.loc["minimum over corruption x level", "ours"] == pytest.approx(0.2)
    assert out.loc["maximum over corruption x level", "ours"] == pytest.approx(0.85)
    assert out.loc["brightness, level 10", "paper"] == 0.5
    assert out.loc["clean partition accuracy", "ours"] == pytest.approx(0.99)
