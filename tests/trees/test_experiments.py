"""The experiment functions the trees scripts call, on small configs: the config's ``model:``
key decides the model, the tables fit their Arrow schemas, and the numbers agree with
computations repeated here from the building blocks."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from reliquant.core.datasets import IRIS_FEATURES, iris_table
from reliquant.core.io import read_frame, write_frame
from reliquant.core.seeding import block_int_seed
from reliquant.trees.anytime import robustness
from reliquant.trees.noise import Norta
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.reproduction.data import (
    PIMA_FEATURES,
    PIMA_TARGET,
    filter_pima,
    marginals_at,
    pima_noise,
)
from reliquant.trees.reproduction.experiments import iris_mixed, table1, table2, table3, table3_size
from reliquant.trees.reproduction.models import fit_model, fit_split, split_train_test
from reliquant.trees.reproduction.paper import pima_best_match
from reliquant.trees.reproduction.per_sample import ANYTIME_SCHEMA, RUNTIME_COLUMNS
from reliquant.trees.reproduction.pima import PIMA_SENSITIVITY_SCHEMA, pima, pima_cell, pima_fit

COMMON = {"seed": 7, "engine_tol": 1e-9, "prune_level": 0.99, "mnist_resize": "area"}
RAW = Path(__file__).resolve().parents[2] / "data" / "raw"


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
    assert (runtimes[["monte_carlo", "monte_carlo_numpy"]] > 0).all().all()
    np.testing.assert_allclose(back["robustness_exact"], back["robustness_all"], atol=1e-9)
    # the compiled Monte Carlo and numpy + predict: two independent estimates of R (2,000
    # draws each), within 4.5 standard deviations of their difference, and of the exact value
    p = back["robustness_exact"]
    sd = np.sqrt(2 * p * (1 - p) / 2000) + 1e-12
    assert np.all(np.abs(back["mc_estimate"] - back["mc_numpy_estimate"]) <= 4.5 * sd)
    assert np.all(np.abs(back["mc_estimate"] - p) <= 4.5 * sd / np.sqrt(2))
    assert "compiled kernel" in result.markdown and "numpy sampling" in result.markdown


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
    from reliquant.trees.reproduction.data import mnist_features

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
    # the compiled Monte Carlo (2,000 draws) within 4.5 binomial standard deviations of exact
    for frame in per_size:
        p = frame["robustness_exact"]
        sd = np.sqrt(p * (1 - p) / 2000) + 1e-12
        assert np.all(np.abs(frame["mc_estimate"] - p) <= 4.5 * sd)
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


PIMA_EXP = {
    "model": {"kind": "xgboost", "max_depth": 2},
    "test_fraction": 0.1,
    "snr": 10.0,
    "readings": ["variance", "amplitude"],
    "rounds": [2, 3],
    "default": {"reading": "amplitude", "rounds": 3},
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
    "confidence": 0.95,
    "half_width": 0.02,
    "max_draws": 20_000,
    "max_boxes": 0,
    "engine_tol": 1e-3,
    "abseps": 1e-5,
}
#: The trees.paper numbers of Figure 4, with a threshold the small models cross.
PIMA_PAPER = {
    "pima_accuracy": 0.75,
    "pima_min": 0.34,
    "pima_max": 1.0,
    "pima_n_above": 55,
    "pima_n_test": 73,
    "pima_threshold": 0.9,
}


@pytest.fixture(scope="module")
def pima_result(raw_pima):
    return pima(raw_pima, exp=PIMA_EXP, seed=3, paper=PIMA_PAPER)


def test_pima_sensitivity_has_one_row_per_cell_and_the_default_is_the_per_subject_table(
    pima_result, tmp_path
):
    back = _roundtrip(pima_result, tmp_path)
    assert list(back.columns) == ANYTIME_SCHEMA.names and len(back) == 73
    # the anytime method's per-subject result: estimate inside its interval, the interval
    # inside the certified bounds ([0, 1] without certified boxes), the draw budget kept
    assert np.all((back["ci_low"] <= back["robustness"]) & (back["robustness"] <= back["ci_high"]))
    assert np.all((back["lower"] <= back["ci_low"]) & (back["ci_high"] <= back["upper"]))
    assert np.all((back["n_draws"] > 0) & (back["n_draws"] <= 20_000)) and np.all(
        back["boxes"] == 0
    )
    assert set(back["stop"]) <= {"half_width", "max_draws"} and not back["exact"].any()
    write_frame(pima_result.sensitivity, tmp_path / "s.parquet", PIMA_SENSITIVITY_SCHEMA)
    sens = read_frame(tmp_path / "s.parquet")
    assert list(sens.columns) == PIMA_SENSITIVITY_SCHEMA.names
    cells = list(zip(sens["reading"], sens["rounds"], strict=True))
    assert cells == [("variance", 2), ("variance", 3), ("amplitude", 2), ("amplitude", 3)]
    assert sens["default"].tolist() == [False, False, False, True]
    np.testing.assert_allclose(sens["noise_std_factor"], [10**-0.5, 10**-0.5, 0.1, 0.1], rtol=1e-12)
    row = sens[sens["default"]].iloc[0]
    r = back["robustness"]
    assert row["n_test"] == 73 and row["n_above"] == int((r > 0.9).sum())
    assert row["min_robustness"] == r.min() and row["max_robustness"] == r.max()
    assert row["median_robustness"] == pytest.approx(r.median())
    assert row["accuracy"] == pytest.approx(back["correct"].mean())
    assert row["n_ci_above"] == int((back["ci_low"] > 0.9).sum())
    assert row["n_ci_below"] == int((back["ci_high"] <= 0.9).sum())
    assert row["n_ci_above"] <= row["n_above"] <= 73 - row["n_ci_below"]
    assert f"{row['n_above']} of 73 above 0.9" in pima_result.markdown
    assert f"{row['n_ci_above']} with the interval above 0.9" in pima_result.markdown
    assert "## Sensitivity: SNR reading x boosting rounds" in pima_result.markdown
    best = pima_best_match(sens, PIMA_PAPER)
    assert f"match best the {best['reading']} reading, {best['rounds']} rounds cell" in (
        pima_result.markdown
    )


def _norta_monte_carlo(model, mu, specs, corr, n: int, seed: int) -> float:
    """Plain NORTA Monte Carlo built here from scipy and numpy: z ~ N(0, corr),
    x_i = F_i^-1(Phi(z_i)) with the marginals located at mu, then the model's predict."""
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal(np.zeros(len(mu)), corr, size=n)
    located = marginals_at(specs, mu)
    x = np.column_stack([m._frozen().ppf(special.ndtr(z[:, i])) for i, m in enumerate(located)])
    return float(np.mean(model.predict(x) == model.predict(mu[None, :])[0]))


@pytest.mark.slow
def test_a_pima_sensitivity_cell_repeats_the_direct_computation(raw_pima, pima_result):
    """The (variance, 2 rounds) cell from the building blocks: split, fit, noise, and the
    public ``robustness(model, x, Norta(marginals, correlation))`` per subject with the
    documented seeds (the same numbers); each estimate against plain NORTA Monte Carlo built
    here from scipy and the model's own predict (within 4.5 standard deviations)."""
    frame = filter_pima(raw_pima)
    x, y = frame[list(PIMA_FEATURES)].to_numpy(float), frame[PIMA_TARGET].to_numpy()
    fit = fit_split(
        x,
        y,
        model={"kind": "xgboost", "max_depth": 2, "n_estimators": 2},
        test_fraction=0.1,
        seed=3,
        block="pima",
        key="k",
    )
    specs, corr = pima_noise(
        fit.x_train, families=PIMA_EXP["families"], snr=10.0, snr_kind="variance", centred=False
    )
    noise = Norta(specs, corr, abseps=1e-5, seed=block_int_seed(3, "pima", "qmc") % 2**32)
    results = [
        robustness(
            fit.model,
            mu,
            noise,
            confidence=0.95,
            tol=1e-3,
            seed=block_int_seed(3, "pima", j),
            half_width=0.02,
            max_draws=20_000,
            max_boxes=0,
        )
        for j, mu in enumerate(fit.x_test)
    ]
    est = pd.Series([r.estimate for r in results])
    sens = pima_result.sensitivity
    row = sens[(sens["reading"] == "variance") & (sens["rounds"] == 2)].iloc[0]
    assert row["n_above"] == int((est > 0.9).sum())
    assert row["n_ci_above"] == sum(r.ci_low > 0.9 for r in results)
    assert row["min_robustness"] == est.min()
    assert row["median_robustness"] == est.median()
    assert row["accuracy"] == pytest.approx(fit.accuracy)
    n = 20_000
    for j, (mu, r) in enumerate(zip(fit.x_test[:25], results, strict=False)):
        mc = _norta_monte_carlo(fit.model, mu, specs, corr, n, j)
        p = (mc + r.estimate) / 2
        sd = np.sqrt(max(p * (1 - p), 1e-4) * (1 / n + 1 / r.n_draws))
        assert abs(mc - r.estimate) <= 4.5 * sd, (j, mc, r)


def test_pima_tables_are_identical_between_runs_and_thread_counts(raw_pima, tmp_path):
    """The anytime method in deterministic mode: two runs (one on one numba thread, one on
    all) write byte-identical parquet files."""
    import numba

    exp = {**PIMA_EXP, "readings": ["amplitude"], "rounds": [3], "max_draws": 50_000}
    exp["default"] = {"reading": "amplitude", "rounds": 3}
    exp["half_width"] = 2e-3
    paths = []
    before = numba.get_num_threads()
    try:
        for k, threads in enumerate((1, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            result = pima(raw_pima, exp=exp, seed=3, paper=PIMA_PAPER)
            write_frame(result.table, tmp_path / f"pima{k}.parquet", result.schema)
            write_frame(result.sensitivity, tmp_path / f"s{k}.parquet", PIMA_SENSITIVITY_SCHEMA)
            paths.append((tmp_path / f"pima{k}.parquet", tmp_path / f"s{k}.parquet"))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(*paths, strict=True):
        assert a.read_bytes() == b.read_bytes()
    table = read_frame(paths[0][0])
    assert table["n_draws"].max() > 4096  # sampling went on past the first round


@pytest.mark.parametrize(
    ("reading", "variance_of"),
    [
        ("amplitude", lambda s: (s / 10.0) ** 2),
        ("variance", lambda s: s**2 / 10.0),
    ],
)
def test_pima_cell_builds_the_noise_of_its_reading(raw_pima, reading, variance_of):
    exp = {**PIMA_EXP, "test_fraction": 0.02, "max_draws": 5000}
    cell = pima_cell(filter_pima(raw_pima), exp=exp, seed=3, reading=reading, rounds=1)
    s = cell.fit.x_train.std(axis=0, ddof=1)
    mu = cell.fit.x_test[0]
    noise_var = [m._frozen().var() for m in marginals_at(cell.specs, mu)]
    np.testing.assert_allclose(noise_var, variance_of(s), rtol=1e-10)
    assert cell.fit.ensemble.n_trees == 1 and len(cell.table) == len(cell.fit.x_test)


def test_pima_cell_with_a_shared_fit_equals_its_own_fit(raw_pima):
    # pima() fits once per rounds and shares the fit between readings: the same table
    exp = {**PIMA_EXP, "test_fraction": 0.02, "max_draws": 5000}
    frame = filter_pima(raw_pima)
    fit = pima_fit(frame, exp=exp, seed=3, rounds=2)
    own = pima_cell(frame, exp=exp, seed=3, reading="variance", rounds=2)
    shared = pima_cell(frame, exp=exp, seed=3, reading="variance", rounds=2, fit=fit)
    pd.testing.assert_frame_equal(own.table, shared.table)
    assert own.fit.accuracy == shared.fit.accuracy


def test_pima_figure_follows_the_configured_default(raw_pima):
    exp = {**PIMA_EXP, "rounds": [2], "max_draws": 5000}
    runs = {
        reading: pima(
            raw_pima,
            exp={**exp, "default": {"reading": reading, "rounds": 2}},
            seed=3,
            paper=PIMA_PAPER,
        )
        for reading in ("variance", "amplitude")
    }
    for reading, result in runs.items():
        sens = result.sensitivity
        assert sens.loc[sens["default"], "reading"].tolist() == [reading]
        assert result.default.reading == reading
        (ax,) = result.figure.axes
        assert f"{reading} SNR, 2 rounds" in ax.get_title()
        heights = [p.get_height() for p in ax.patches]
        expected, _ = np.histogram(result.table["robustness"], bins=np.linspace(0, 1, 21))
        np.testing.assert_array_equal(heights, expected)
        n_above = int(sens.loc[sens["default"], "n_above"].iloc[0])
        assert ax.get_legend().get_texts()[0].get_text() == f"{n_above} of 73 above 0.9"
    # the same cells in both runs; only the default (table and figure) moves
    pd.testing.assert_frame_equal(
        runs["variance"].sensitivity.drop(columns="default"),
        runs["amplitude"].sensitivity.drop(columns="default"),
    )
    assert not runs["variance"].table["robustness"].equals(runs["amplitude"].table["robustness"])


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"default": {"reading": "amplitude", "rounds": 7}}, r"trees\.pima\.default"),
        ({"readings": ["variance"]}, r"trees\.pima\.default"),
        ({"model": {"kind": "xgboost", "n_estimators": 5}}, r"trees\.pima\.model .*n_estimators"),
    ],
)
def test_pima_rejects_a_default_outside_the_grid(raw_pima, change, match):
    with pytest.raises(ValueError, match=match):
        pima(raw_pima, exp={**PIMA_EXP, **change}, seed=3, paper=PIMA_PAPER)


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
