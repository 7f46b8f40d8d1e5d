"""The MNIST subsample and the models' per-prediction tables on tiny synthetic partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from reliquant.compare import black_box_robustness
from reliquant.compare.reproduction.mnist import (
    cnn_predictions,
    fit_mnist_model,
    mnist_sample,
    sample_arrays,
    sample_splits,
    sample_table,
    softmax_for_sample,
    tree_mnist_predictions,
)
from reliquant.core.io import images_to_arrow, write_table
from reliquant.core.seeding import block_int_seed

N = 30  # test images per level


def _partition(path, name: str, levels: list[int], rng) -> None:
    rows = [(lv, i) for lv in levels for i in range(N)]
    images = rng.integers(0, 256, (len(rows), 28, 28), dtype=np.uint8)
    table = pa.table({
        "test_index": pa.array([i for _, i in rows], pa.int32()),
        "label": pa.array([i % 10 for _, i in rows], pa.uint8()),
        "corruption": [name] * len(rows),
        "level": pa.array([lv for lv, _ in rows], pa.uint8()),
        "image": images_to_arrow(images),
    })  # fmt: skip
    write_table(table, path)


@pytest.fixture
def sample(tmp_path):
    rng = np.random.default_rng(0)
    _partition(tmp_path / "clean.parquet", "clean", [0], rng)
    for name in ("fog", "snow"):
        _partition(tmp_path / f"{name}.parquet", name, list(range(1, 11)), rng)
    parts = {n: tmp_path / f"{n}.parquet" for n in ("fog", "snow")}
    return mnist_sample(tmp_path / "clean.parquet", parts, levels=[1, 5], n_clean=8,
                        n_per_corruption=4, seed=7)  # fmt: skip


def test_sample_cases_share_images_and_round_trip(sample) -> None:
    meta, images = sample
    assert meta.groupby("case", sort=False).size().to_dict() == {
        "clean": 8,
        "level 1": 8,
        "level 5": 8,
    }
    shifted = meta[meta["case"] != "clean"]
    per = shifted.groupby(["case", "corruption"])["test_index"].apply(tuple)
    assert per.nunique() == 1  # the same test images for every corruption and level
    assert images.shape == (24, 28, 28) and images.dtype == np.uint8
    back_meta, back_images = sample_arrays(sample_table(meta, images))
    pd.testing.assert_frame_equal(back_meta, meta, check_dtype=False)
    assert np.array_equal(back_images, images)


def test_sample_larger_than_the_partitions_is_refused(tmp_path) -> None:
    rng = np.random.default_rng(0)
    _partition(tmp_path / "clean.parquet", "clean", [0], rng)
    with pytest.raises(ValueError, match="n_clean"):
        mnist_sample(tmp_path / "clean.parquet", {}, levels=[1], n_clean=N + 1,
                     n_per_corruption=1, seed=0)  # fmt: skip


def _softmax(meta: pd.DataFrame, rng) -> dict[str, pd.DataFrame]:
    out = {}
    for name, rows in meta.groupby("corruption"):
        p = rng.dirichlet(np.ones(10) * 0.3, len(rows)).astype(np.float32)
        frame = pd.DataFrame(p, columns=[f"p{c}" for c in range(10)])
        frame.insert(0, "index", rows["test_index"].to_numpy())
        frame.insert(1, "label", rows["label"].to_numpy())
        frame.insert(2, "level", rows["level"].to_numpy())
        frame["prediction"] = p.argmax(axis=1)
        out[name] = frame
    return out


def test_cnn_table_uses_the_stored_softmax_and_the_black_box(sample) -> None:
    meta, images = sample
    rng = np.random.default_rng(1)
    rows = softmax_for_sample(meta, _softmax(meta, rng))
    weights = rng.normal(size=(784, 10))

    def predict(batch: np.ndarray) -> np.ndarray:
        return (batch.reshape(len(batch), -1) @ weights).argmax(axis=1)

    train = rng.dirichlet(np.ones(10), 500)
    exp = {"variances": [0.05, 0.5], "n_draws": 40}
    frame = cnn_predictions(meta, images, rows, train, train.argmax(axis=1), predict, exp=exp,
                            seed=3)  # fmt: skip
    assert frame["prediction"].tolist() == rows["prediction"].tolist()
    for k, v in enumerate(exp["variances"]):  # one column per variance of the grid
        direct = black_box_robustness(
            predict, images.astype(np.float32) / np.float32(255), v, n_draws=40,
            seed=block_int_seed(block_int_seed(3, "cnn_mc"), k),
            labels=rows["prediction"].to_numpy(),
        )  # fmt: skip
        assert frame[f"mc_robustness@{v:g}"].to_numpy() == pytest.approx(direct.estimate)
    # more noise, less robust on average
    assert frame["mc_robustness@0.5"].mean() <= frame["mc_robustness@0.05"].mean()
    assert frame["max_probability"].to_numpy() == pytest.approx(
        rows[[f"p{c}" for c in range(10)]].max(axis=1).to_numpy(), rel=1e-6
    )


def test_softmax_rows_missing_are_named(sample) -> None:
    meta, _ = sample
    soft = _softmax(meta, np.random.default_rng(1))
    soft["snow"] = soft["snow"].iloc[1:]
    with pytest.raises(ValueError, match="no softmax row for snow"):
        softmax_for_sample(meta, soft)


def test_random_forest_table(sample) -> None:
    meta, images = sample
    rng = np.random.default_rng(2)
    train = rng.integers(0, 256, (200, 28, 28), dtype=np.uint8)
    labels = np.arange(200) % 10
    exp = {"n_train": 150, "variances": [0.05], "n_draws": 10,
           "random_forest": {"n_estimators": 3, "max_depth": 3}}  # fmt: skip
    model, X, y = fit_mnist_model("random_forest", train, labels, exp=exp, seed=1)
    assert X.shape == (150, 784) and X.max() <= 1.0
    frame = tree_mnist_predictions("random_forest", train, labels, meta, images, exp=exp, seed=1)
    proba = model.predict_proba(images.reshape(len(images), -1).astype(np.float32) / 255)
    assert frame["prediction"].tolist() == proba.argmax(axis=1).tolist()
    # two splits: disjoint test images, each scored by its own model (split 1's: other rows)
    two = tree_mnist_predictions("random_forest", train, labels, meta, images, exp=exp, seed=1,
                                 n_splits=2)  # fmt: skip
    split_of = sample_splits(meta, 2, 1)
    for s in (0, 1):
        rows = np.flatnonzero(split_of == s)
        m, _, _ = fit_mnist_model("random_forest", train, labels, exp=exp, seed=1, split=s)
        p = m.predict_proba(images[rows].reshape(rows.size, -1).astype(np.float32) / 255)
        assert two.loc[two["split"] == s, "prediction"].tolist() == p.argmax(axis=1).tolist()
    a = set(zip(meta["test_index"][split_of == 0], strict=True))
    b = set(zip(meta["test_index"][split_of == 1], strict=True))
    assert a and b and not (a & b)
    assert frame["dataset"].unique().tolist() == ["rf_mnist"]
    assert ((frame["mc_robustness@0.05"] >= 0) & (frame["mc_robustness@0.05"] <= 1)).all()
    with pytest.raises(ValueError, match="model kind"):
        fit_mnist_model("svm", train, labels, exp=exp, seed=1)
