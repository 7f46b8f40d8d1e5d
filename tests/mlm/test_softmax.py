"""reliquant.mlm.softmax: the softmax table every mlm module shares."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reliquant.mlm import softmax as sm
from reliquant.mlm.softmax import N_CLASSES as K


def random_softmax(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.dirichlet(np.full(K, 0.3), size=n).astype(np.float32)


def test_softmax_frame_columns_and_prediction():
    rng = np.random.default_rng(13)
    s = random_softmax(rng, 20)
    frame = sm.softmax_frame(np.arange(20), np.arange(20) % K, "fog", 3, s)
    assert list(frame.columns) == [f.name for f in sm.SOFTMAX_SCHEMA]
    np.testing.assert_array_equal(frame["prediction"], s.argmax(1))
    assert (frame["corruption"] == "fog").all() and (frame["level"] == 3).all()
    pa.Table.from_pandas(frame, schema=sm.SOFTMAX_SCHEMA, preserve_index=False)


def test_check_softmax_names_the_problem():
    with pytest.raises(ValueError, match=r"shape \(n, 10\)"):
        sm.check_softmax(np.zeros((3, 9)), n_classes=10)  # the MNIST tables fix K = 10
    with pytest.raises(ValueError, match="K >= 2"):
        sm.check_softmax(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="2-D"):
        sm.check_softmax(np.zeros(3))
    with pytest.raises(ValueError, match="real-valued"):
        sm.check_softmax(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="labels must have shape"):
        sm.check_softmax(np.zeros((3, K)), np.zeros(2, int))
    assert sm.check_softmax(np.zeros((0, K))).shape == (0, K)


@pytest.mark.parametrize("k", [2, 3, 7, 10])
def test_check_softmax_takes_k_from_the_array(k):
    rng = np.random.default_rng(k)
    s = rng.dirichlet(np.ones(k), size=6)
    y = np.arange(6) % k
    assert sm.check_softmax(s, y, sum_tol=1e-9) is not None
    np.testing.assert_array_equal(sm.check_labels(y.astype(float), 6, k), y)
    with pytest.raises(ValueError, match=rf"labels must lie in 0\.\.{k - 1}"):
        sm.check_softmax(s, np.r_[y[:-1], k])
    with pytest.raises(ValueError, match=rf"0\.\.{k - 1}"):
        sm.check_softmax(s, np.r_[-1, y[1:]])


def test_check_softmax_nan_sums_and_labels():
    s = np.full((4, 3), 1 / 3)
    s[2, 1] = np.nan
    with pytest.raises(ValueError, match="row 2 has NaN"):
        sm.check_softmax(s)
    s[2, 1] = np.inf
    with pytest.raises(ValueError, match="row 2 has inf"):
        sm.check_softmax(s)
    s = np.array([[0.5, 0.6, 0.0], [0.2, 0.3, 0.5]])
    sm.check_softmax(s)  # sums not checked by default
    with pytest.raises(ValueError, match=r"sum to 1 within sum_tol=0\.001.*row 0 sums to 1\.1"):
        sm.check_softmax(s, sum_tol=1e-3)
    sm.check_softmax(s, sum_tol=0.2)
    with pytest.raises(ValueError, match=r"negative entries \(row 1\)"):
        sm.check_softmax(np.array([[0.5, 0.5, 0.0], [1.2, -0.2, 0.0]]), sum_tol=1e-3)
    s = np.full((3, 3), 1 / 3)
    with pytest.raises(ValueError, match="labels contain NaN"):
        sm.check_softmax(s, np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="whole numbers"):
        sm.check_softmax(s, np.array([0.0, 1.5, 1.0]))
    with pytest.raises(ValueError, match="integer class indices"):
        sm.check_softmax(s, np.array(["0", "1", "2"]))


def test_softmax_frame_is_mnist_only():
    with pytest.raises(ValueError, match=r"shape \(n, 10\)"):
        sm.softmax_frame(np.arange(2), np.zeros(2, int), "none", 0, np.full((2, 3), 1 / 3))


@pytest.mark.parametrize(
    "corruption",
    ["fog", np.array(["fog", "snow"] * 10, dtype=object), pa.array(["fog", "snow"] * 10)],
    ids=["one name", "numpy names", "arrow column"],
)
def test_softmax_table_equals_the_frame(corruption):
    """softmax_table holds softmax_frame's rows (the frame converted by pyarrow), whatever
    form the corruption names take; argmax ties go to the lowest class."""
    rng = np.random.default_rng(14)
    s = random_softmax(rng, 20)
    s[3] = 0.1  # a tie between all classes
    names = (
        corruption.to_numpy(zero_copy_only=False)
        if isinstance(corruption, pa.Array)
        else corruption
    )
    frame = sm.softmax_frame(np.arange(20), np.arange(20) % K, names, 3, s)
    table = sm.softmax_table(np.arange(20), np.arange(20) % K, corruption, 3, s)
    assert table.schema == sm.SOFTMAX_SCHEMA
    assert table.equals(pa.Table.from_pandas(frame, schema=sm.SOFTMAX_SCHEMA, preserve_index=False))
    assert table.column("prediction")[3].as_py() == 0
    assert table.column("corruption").null_count == 0


def test_softmax_table_checks_its_inputs():
    with pytest.raises(ValueError, match=r"shape \(n, 10\)"):
        sm.softmax_table(np.arange(2), np.zeros(2, int), "none", 0, np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="corruption must have 2 values"):
        sm.softmax_table(np.arange(2), np.zeros(2, int), pa.array(["a"]), 0, np.eye(2, K))
    empty = sm.softmax_table(np.zeros(0), np.zeros(0), "none", 0, np.zeros((0, K), np.float32))
    assert empty.num_rows == 0 and empty.schema == sm.SOFTMAX_SCHEMA
