"""The experiment functions the trees scripts call, on small configs: the config's ``model:``
key decides the model, the tables fit their Arrow schemas, and the numbers agree with
computations repeated here from the building blocks."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliquant.core.datasets import IRIS_FEATURES, iris_table
from reliquant.core.io import read_frame, write_frame
from reliquant.core.seeding import block_int_seed
from reliquant.trees.experiments import iris_mixed, pima, table1, table2, table3, table3_size
from reliquant.trees.models import fit_model, split_train_test
from reliquant.trees.per_sample import RUNTIME_COLUMNS
from reliquant.trees.structure import extract_ensemble

COMMON = {"seed": 7, "engine_tol": 1e-9, "prune_level": 0.99, "mnist_resize": "area"}
RAW = Path(__file__).resolve().parents[1] / "data" / "raw"


@pytest.fixture(scope="module")
def iris() -> pd.DataFrame:
    return iris_table().to_pandas()


def _roundtrip(result, tmp_path: Path) -> pd.DataFrame:
    """The table written with its schema and read back (fails on a column mismatch)."""
    write_frame(result.table, tmp_path / "t.parquet", result.schema)
    back = read_frame(tmp_path / "t.parquet")
    assert list(back.columns) == result.schema.names
    return back


def test_table1_fits_the_configured_model_on_the_papers_split(iris, tmp_path):
    exp = {
        "model": {"kind": "decision_tree", "max_depth": 3},
        "test_fraction": 0.1,
        "variance": 0.1,
    }
    result = table1(iris, exp=exp, common=COMMON)
    back = _roundtrip(result, tmp_path)
    assert len(back) == 15
    # the same split and model, rebuilt from the seeds the docstrings name
    x, y = iris[IRIS_FEATURES].to_numpy(float), iris["target"].to_numpy()
    x_tr, x_te, y_tr, _ = split_train_test(
        x, y, test_fraction=0.1, seed=block_int_seed(7, "table1", "split")
    )
    model = fit_model(exp["model"], x_tr, y_tr, seed=block_int_seed(7, "table1", "fit"), key="k")
    np.testing.assert_array_equal(back["label"], model.predict(x_te))
    assert extract_ensemble(model).n_trees == 1
    assert "R^2(all, pruned)" in result.markdown and result.figure is not None
    # another model kind from config gives another table
    forest = {"kind": "random_forest", "n_estimators": 3, "max_depth": 3}
    other = table1(iris, exp={**exp, "model": forest}, common=COMMON)
    assert not np.allclose(other.table["robustness_all"], result.table["robustness_all"])
    assert "random forest of 3 trees of depth 3" in other.markdown


def test_an_unknown_model_kind_names_the_experiments_config_key(iris):
    exp = {"model": {"kind": "svm"}, "test_fraction": 0.1, "variance": 0.1}
    with pytest.raises(ValueError, match=r"trees\.table1\.model\.kind"):
        table1(iris, exp=exp, common=COMMON)


def _mnist_like(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Images whose label is the brighter image half (so small trees learn something)."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 120, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 2, size=n)
    images[labels == 1, :14] += 100
    return images, labels


def test_table2_true_labels_runtimes_and_schema(tmp_path):
    train, test = _mnist_like(300, 0), _mnist_like(40, 1)
    exp = {
        "size": 3,
        "model": {"kind": "random_forest", "n_estimators": 2, "max_depth": 2},
        "n_test": 3,
        "variance": 0.01,
        "mc_draws": 2000,
        "max_grid_boxes": 10**6,
    }
    result = table2(train=train, test=test, exp=exp, common=COMMON)
    back = _roundtrip(result, tmp_path)
    np.testing.assert_array_equal(back["true_label"], test[1][:3])
    runtimes = pd.read_csv(io.StringIO(result.runtimes_tsv), sep="\t")
    assert list(runtimes.columns) == list(RUNTIME_COLUMNS) and len(runtimes) == 3
    np.testing.assert_allclose(back["robustness_exact"], back["robustness_all"], atol=1e-9)


def test_table3_per_size_and_summary(tmp_path):
    train, test = _mnist_like(300, 2), _mnist_like(30, 3)
    exp = {
        "model": {"kind": "decision_tree"},
        "variances": [0.001, 0.05],
        "n_test": 3,
        "mc_draws": 2000,
        "max_grid_boxes": 10**6,
    }
    sizes = {3: [2, 3], 4: [2]}
    per_size = [
        _roundtrip(
            table3_size(size=s, depths=d, train=train, test=test, exp=exp, common=COMMON),
            tmp_path,
        )
        for s, d in sizes.items()
    ]
    assert [len(f) for f in per_size] == [2 * 2 * 3, 1 * 2 * 3]
    first = per_size[0]
    assert list(first["depth"].unique()) == [2, 3] and set(first["size"]) == {3}
    # each depth is the model's max_depth, fitted with the seed (seed, "table3", size, depth)
    from reliquant.trees.data import mnist_features

    x_tr = mnist_features(train[0], 3)
    model = fit_model(
        {"kind": "decision_tree", "max_depth": 2},
        x_tr,
        train[1],
        seed=block_int_seed(7, "table3", 3, 2),
        key="k",
    )
    acc = float(np.mean(model.predict(mnist_features(test[0], 3)) == test[1]))
    assert first.loc[first["depth"] == 2, "accuracy"].iloc[0] == pytest.approx(acc)
    summary = table3(per_size)
    back = _roundtrip(summary, tmp_path)
    assert len(back) == 3 * 2  # (size, depth) pairs x variances
    assert back["n"].eq(3).all()


@pytest.fixture(scope="module")
def raw_pima() -> pd.DataFrame:
    path = RAW / "pima" / "diabetes.csv"
    if not path.exists():
        pytest.skip(f"{path} not vendored")
    return pd.read_csv(path)


def test_pima_counts_subjects_above_the_threshold(raw_pima, tmp_path):
    exp = {
        "model": {"kind": "xgboost", "max_depth": 2, "n_estimators": 3},
        "test_fraction": 0.1,
        "snr": 10.0,
        "snr_kind": "variance",
        "families": {
            "Pregnancies": "exponential",
            "Glucose": "normal",
            "BloodPressure": "normal",
            "Insulin": "exponential",
            "BMI": "normal",
            "DiabetesPedigreeFunction": "normal",
            "Age": "exponential",
        },
        "centred": False,
        "method": "monte_carlo",
        "engine_tol": 1e-3,
        "abseps": 1e-5,
        "mc_draws": 500,
    }
    result = pima(raw_pima, exp=exp, seed=3, threshold=0.9)
    back = _roundtrip(result, tmp_path)
    assert len(back) == 73
    n_above = int((back["robustness"] > 0.9).sum())
    assert f"{n_above} of 73 above 0.9" in result.markdown
    assert np.all(back["boxes"] == -1)


def test_iris_mixed_reports_the_fully_robust_samples(iris, tmp_path):
    exp = {
        "model": {"kind": "xgboost", "max_depth": 2, "n_estimators": 2},
        "test_fraction": 0.1,
        "marginals": [
            {"family": "normal", "scale": 0.3},
            {"family": "exponential", "scale": 0.2},
            {"family": "chi-square", "scale": 0.1, "shape": 2.0},
            {"family": "lognormal", "scale": 0.1, "shape": 0.5},
        ],
        "centred": False,
        "corr_low": 0.1,
        "corr_high": 0.3,
        "method": "engine",
        "engine_tol": 1e-3,
        "abseps": 1e-6,
        "mc_draws": 500,
    }
    result = iris_mixed(iris, exp=exp, seed=3)
    back = _roundtrip(result, tmp_path)
    assert len(back) == 15 and "mc_estimate" in back
    assert np.all(back["upper"] - back["lower"] <= 1e-3 + 1e-6)
    n_one = int((back["lower"] >= 1 - 1e-3).sum())
    assert f"{n_one} samples have robustness 1" in result.markdown
