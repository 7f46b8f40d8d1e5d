"""Cross-section checks of the compare config, and the sizes its data holds: what the workflow
refuses before any job (workflow/rules/compare.smk) instead of a job failing late."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import RAW

from reliquant.compare.reproduction.settings import (
    TABLE_ROWS,
    check_benchmarks,
    check_settings,
    mnist_corruptions,
    partition_images,
    split_sizes,
)
from reliquant.compare.reproduction.tabular import table_predictions
from reliquant.core.config import load_config, read_config_file, validate_config
from reliquant.core.datasets import read_idx
from reliquant.core.seeding import block_rng
from reliquant.pmnist.reproduction.partitions import select_subset

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
NBC = {"grid": {"n_train": [25, 100], "gamma": [0.0, 0.4]},
       "fit": {"n_train_sets": 2}, "design": {"n_shift": 2}}  # fmt: skip


def _compare(corruptions=None, cells=None):
    compare = load_config(REPO / "config.yaml")["compare"]
    compare["mnist"]["corruptions"] = corruptions
    compare["nbc"] = {"cells": cells or [{"n_train": 25, "gamma": 0.4}]}
    return compare


def test_defaults_pass_and_null_means_every_mlm_partition() -> None:
    check_settings(_compare(), ["fog", "snow"], NBC, images_per_class=None)
    assert mnist_corruptions(_compare(), ["fog", "snow"]) == ["fog", "snow"]
    assert mnist_corruptions(_compare(["snow"]), ["fog", "snow"]) == ["snow"]


@pytest.mark.parametrize(
    ("compare", "match"),
    [
        (_compare(["frost"]), "not scored by the mlm topic"),
        (_compare(cells=[{"n_train": 50, "gamma": 0.4}]), "not a cell of the nbc grid"),
        (_compare(cells=[{"n_train": 25, "gamma": 0.0}] * 2), "twice"),
    ],
)
def test_inconsistent_settings_are_named(compare, match) -> None:
    with pytest.raises(ValueError, match=match):
        check_settings(compare, ["fog", "snow"], NBC, images_per_class=None)


# ------------------------------------ overlays that passed, then failed inside jobs (issue 35)
def _check_before_any_job(tmp_path: Path, text: str) -> None:
    """What the workflow checks before any job for ``snakemake --configfile mine.yaml`` with
    ``mine.yaml`` holding ``text``: the overlay read strictly (Snakefile), config.yaml merged
    with it and checked against the schema (Snakefile), then compare's constraints
    (workflow/rules/compare.smk, with the mlm topic's partitions as workflow/rules/mlm.smk
    lists them)."""
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    read_config_file(path)
    config = load_config(REPO / "config.yaml", [path])
    validate_config(config, SCHEMA)
    mlm = list(config["mlm"]["perturbed"]["corruptions"] or config["pmnist"]["corruptions"])
    images_per_class = config["pmnist"]["images_per_class"]
    check_settings(config["compare"], mlm, config["nbc"], images_per_class=images_per_class)
    check_benchmarks(config["compare"], config["data"]["benchmarks"])


def test_the_shipped_configurations_pass(tmp_path) -> None:
    _check_before_any_job(tmp_path, "compare:\n  seed: 1\n")
    _check_before_any_job(tmp_path, (REPO / "tests" / "smoke.yaml").read_text())


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # jobs failed: "TypeError: seed key parts must be int or str; got float"
        ("compare:\n  seed: 1000.0\n", "compare.seed = 1000.0: not an integer (write 1000"),
        # the job failed in fit_table, without the key
        (
            "compare:\n  table:\n    cv_folds: 500\n",
            "compare.table.cv_folds = 500 exceeds the 285 training rows (compare.table.name = "
            "breast_cancer has 569 rows; test_fraction 0.5 holds out 284)",
        ),
        # the job failed with "variances must be finite and >= 0"
        (
            "compare:\n  pima:\n    snr: 1.0e-300\n",
            "compare.pima.snr = 1e-300: 1e-300 is less than the minimum of 0.001",
        ),
        # the job compare_mnist_sample failed, after pmnist and mlm had run
        (
            "compare:\n  mnist:\n    n_clean: 100000\n",
            "compare.mnist.n_clean = 100000 exceeds the 10000 test images",
        ),
        # MemoryError: a 7.45 GiB grid
        (
            "compare:\n  evaluation:\n    curve_points: 1000000000\n",
            "compare.evaluation.curve_points = 1000000000: 1000000000 is greater than the "
            "maximum of 1000",
        ),
        # accepted, although nbc.fit.alphas refuses duplicates
        (
            "compare:\n  table:\n    alphas: [1.0, 1.0, 10.0]\n",
            "compare.table.alphas = [1.0, 1.0, 10.0]: [1.0, 1.0, 10.0] has non-unique elements",
        ),
        # benchmark sets: each a table of data.benchmarks with its declared comparison
        (
            "compare:\n  benchmarks:\n    wine:\n      model: {kind: random_forest, "
            "n_estimators: 2, max_depth: 2}\n      test_fraction: 0.3\n      max_rows: null\n"
            "      shift: {kind: noise, scale: 1.0}\n      robustness: {variances: [0.1], "
            "n_draws: 10}\n      n_splits: 2\n",
            "compare.benchmarks.wine: 'wine' is not in data.benchmarks",
        ),
        (
            "compare:\n  benchmarks:\n    authent:\n      model: {learning_rate: 0.1}\n"
            "    segment:\n      model: {learning_rate: 0.1}\n",
            "compare.benchmarks.segment.model: kind random_forest takes no learning_rate",
        ),
        (
            "compare:\n  benchmarks:\n    authent:\n      shift: {scale: 1.0}\n",
            "compare.benchmarks.authent.shift: 'scale' must not be set here (a quantile shift "
            "takes quantile and feature)",
        ),
        (
            "compare:\n  benchmarks:\n    segment:\n      shift: {quantile: 0.5}\n",
            "compare.benchmarks.segment.shift: 'quantile' must not be set here",
        ),
        (
            "compare:\n  comparisons:\n    bench_robot:\n      paper: [mc_robustness]\n"
            "      uncertainty: [margin]\n",
            "compare.comparisons ['bench_robot'] declare benchmark sets that compare.benchmarks "
            "does not list",
        ),
        # a key written twice in the overlay: the last one won silently
        (
            "compare:\n  table:\n    cv_folds: 5\n    cv_folds: 3\n",
            "key 'cv_folds' written twice (first at line 3)",
        ),
    ],
)
def test_overlays_that_failed_in_jobs_are_refused_before_any_job(tmp_path, text, line) -> None:
    with pytest.raises(ValueError) as err:
        _check_before_any_job(tmp_path, text)
    assert line in str(err.value)


def test_a_float_seed_is_what_the_jobs_refused() -> None:
    """The row above guards the failure a job met: ``block_rng`` takes no float seed."""
    with pytest.raises(TypeError, match="got float"):
        block_rng(1000.0, "pima_split")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "pmnist:\n  images_per_class: 20\ncompare:\n  mnist:\n    n_per_corruption: 201\n",
            "compare.mnist.n_per_corruption = 201 exceeds the 200 test images of the Perturbed "
            "MNIST partitions (pmnist.images_per_class = 20: the first 20 of each digit)",
        ),
        (
            "compare:\n  table: {name: wine, test_fraction: 0.002}\n",
            "compare.table.test_fraction = 0.002: compare.table.name = wine has 178 rows; "
            "test_fraction 0.002 holds out 0",
        ),
        ("compare:\n  pima:\n    snr: 2000000.0\n", "compare.pima.snr = 2000000.0"),
        ("compare:\n  pima:\n    shift_scale: 1.0e+200\n", "compare.pima.shift_scale = 1e+200"),
        ("compare:\n  pima:\n    test_fraction: 0.0005\n", "compare.pima.test_fraction = 0.0005"),
        ("compare:\n  speed:\n    batch_rows: 1000000000\n", "compare.speed.batch_rows"),
    ],
)
def test_other_values_a_job_cannot_use_are_refused_before_any_job(tmp_path, text, line) -> None:
    with pytest.raises(ValueError) as err:
        _check_before_any_job(tmp_path, text)
    assert line in str(err.value)


def test_the_cv_folds_limit_is_where_the_job_fails() -> None:
    """The parse-time limit equals the job's: wine, half held out, trains on 89 rows; 89 folds
    run, 90 fail inside fit_table."""
    base = {"name": "wine", "test_fraction": 0.5, "n_bins": 3, "flip": 0.3,
            "alphas": [0.1, 1.0], "n_bootstrap": 1}  # fmt: skip
    assert split_sizes(TABLE_ROWS["wine"], 0.5) == (89, 89)
    for folds, refused in ((89, False), (90, True)):
        compare = _compare()
        compare["table"] = {**base, "cv_folds": folds}
        if refused:
            with pytest.raises(ValueError, match="compare.table.cv_folds = 90 exceeds the 89"):
                check_settings(compare, ["fog"], NBC, images_per_class=None)
            with pytest.raises(
                ValueError, match="89 training rows cannot be split into cv_folds=90"
            ):
                table_predictions(exp=compare["table"], seed=3)
        else:
            check_settings(compare, ["fog"], NBC, images_per_class=None)
            assert len(table_predictions(exp=compare["table"], seed=3)) == 2 * 89


def test_table_rows_are_scikit_learns() -> None:
    from sklearn import datasets

    for name, rows in TABLE_ROWS.items():
        assert getattr(datasets, f"load_{name}")().data.shape[0] == rows


@pytest.mark.parametrize("images_per_class", [None, 1, 20, 891, 892, 893, 1135, 5000])
def test_partition_images_counts_the_pmnist_subset(images_per_class) -> None:
    """Against the pmnist topic's own selection on the MNIST test labels."""
    labels = read_idx(RAW / "mnist" / "t10k-labels-idx1-ubyte.gz")
    assert (
        partition_images(images_per_class)
        == np.unique(select_subset(labels, images_per_class)).size
    )


def test_full_preset_is_a_valid_overlay_of_the_default_config() -> None:
    """workflow/presets/compare_full.yaml validates over config.yaml and asks for more than
    the default (more splits, more draws), with NBC cells of the nbc grid."""
    from pathlib import Path

    from reliquant.core.config import load_config, validate_config

    repo = Path(__file__).resolve().parents[2]
    base = load_config(repo / "config.yaml", [])
    full = load_config(repo / "config.yaml", [repo / "workflow" / "presets" / "compare_full.yaml"])
    validate_config(full, repo / "workflow" / "schemas" / "config.schema.yaml")
    validate_config(base, repo / "workflow" / "schemas" / "config.schema.yaml")
    check_settings(full["compare"], ["fog", "snow"], full["nbc"], images_per_class=None)
    for key in ("mnist", "pima", "table"):
        assert full["compare"][key]["n_splits"] > base["compare"][key]["n_splits"] >= 1
    for name, entry in base["compare"]["benchmarks"].items():
        bigger = full["compare"]["benchmarks"][name]
        assert bigger["n_splits"] > entry["n_splits"] >= 2
        assert bigger["robustness"]["n_draws"] > entry["robustness"]["n_draws"]
    assert full["compare"]["mnist"]["n_draws"] > base["compare"]["mnist"]["n_draws"]


def test_a_benchmark_set_needs_a_declared_comparison_and_a_title() -> None:
    """A set without compare.comparisons.bench_<name> would be evaluated against nothing
    declared; a set the topic has no title for would fail in its job."""
    compare = load_config(REPO / "config.yaml")["compare"]
    data_benchmarks = load_config(REPO / "config.yaml")["data"]["benchmarks"]
    check_benchmarks(compare, data_benchmarks)
    compare["benchmarks"]["twonorm"] = dict(compare["benchmarks"]["authent"])
    with pytest.raises(ValueError, match=r"compare.benchmarks.twonorm has no declared "
                       r"comparison compare.comparisons.bench_twonorm"):  # fmt: skip
        check_benchmarks(compare, data_benchmarks)
    compare["comparisons"]["bench_twonorm"] = compare["comparisons"]["bench_authent"]
    check_benchmarks(compare, data_benchmarks)
    compare["benchmarks"]["iris"] = compare["benchmarks"].pop("twonorm")
    with pytest.raises(ValueError, match=r"'iris' has no title in .*BENCHMARK_TITLES"):
        check_benchmarks(compare, [*data_benchmarks, "iris"])
