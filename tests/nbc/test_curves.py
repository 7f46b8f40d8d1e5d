"""reliquant.nbc.reproduction.curves: curves per training set and the area table of Section 7.4."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliquant.core.io import read_frame, write_frame
from reliquant.nbc.reproduction.acceptance import accuracy_acceptance_curve
from reliquant.nbc.reproduction.curves import (
    AUC_PER_SET_SCHEMA,
    AUC_SCHEMA,
    CURVES_SCHEMA,
    auc_table,
    cell_curves,
)
from reliquant.nbc.reproduction.experiment import METRICS


def test_auc_table_mean_and_sample_std(tmp_path) -> None:
    n = 10
    curves = pd.DataFrame(
        {
            "n_train": 25,
            "gamma": 0.0,
            "train_set": np.repeat([0, 1], n),
            "n_accepted": np.tile(np.arange(1, n + 1), 2),
            "rate": np.tile(np.arange(1, n + 1) / n, 2),
            **{m: np.r_[np.full(n, 0.6), np.full(n, 0.8)] for m in METRICS},
        }
    )
    per, summary = auc_table(curves)
    assert len(per) == 2 * len(METRICS)
    np.testing.assert_allclose(summary["auc_mean"], 0.7)
    np.testing.assert_allclose(summary["auc_std"], np.std([0.6, 0.8], ddof=1))
    assert list(summary["metric"]) == list(METRICS)
    assert set(summary["family"]) == {"uncertainty", "robustness"}
    write_frame(summary, tmp_path / "auc.parquet", AUC_SCHEMA)
    write_frame(per, tmp_path / "per.parquet", AUC_PER_SET_SCHEMA)
    assert read_frame(tmp_path / "auc.parquet")["n_sets"].tolist() == [2] * len(METRICS)


def test_cell_curves_are_the_acceptance_curve_of_each_set_and_metric(tmp_path) -> None:
    rng = np.random.default_rng(4)
    n_test = 30
    metrics = pd.DataFrame(
        {
            "n_train": 50,
            "gamma": 0.2,
            "train_set": np.repeat([0, 1], n_test),
            "test_index": np.tile(np.arange(n_test), 2),
            "correct": rng.random(2 * n_test) < 0.7,
            **{m: rng.integers(0, 5, 2 * n_test) / 4 for m in METRICS},  # many ties
        }
    )
    curves = cell_curves(metrics)
    assert len(curves) == 2 * n_test
    for ts in (0, 1):
        rows = metrics[metrics["train_set"] == ts]
        got = curves[curves["train_set"] == ts]
        for name, (desc, _, _) in METRICS.items():
            _, acc = accuracy_acceptance_curve(
                rows[name].to_numpy(), rows["correct"].to_numpy(), desc
            )
            np.testing.assert_array_equal(got[name].to_numpy(), acc)
    write_frame(curves, tmp_path / "curves.parquet", CURVES_SCHEMA)
