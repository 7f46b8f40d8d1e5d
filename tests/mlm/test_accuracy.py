"""reliquant.mlm.reproduction.accuracy: accuracy per group and the confusion matrix (Sections 4.1, 4.4)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix as sk_confusion_matrix

from reliquant.mlm.reproduction import accuracy as acc_mod
from reliquant.mlm.softmax import N_CLASSES as K


def test_confusion_matrix_matches_sklearn():
    rng = np.random.default_rng(10)
    y, p = rng.integers(0, K, 1000), rng.integers(0, K, 1000)
    np.testing.assert_array_equal(
        acc_mod.confusion_matrix(y, p), sk_confusion_matrix(y, p, labels=range(K))
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
    got = acc_mod.accuracy_by_group(frame, ["corruption", "level"])
    for row in got.itertuples():
        sub = frame[(frame.corruption == row.corruption) & (frame.level == row.level)]
        assert row.n == len(sub)
        assert row.accuracy == pytest.approx((sub.label == sub.prediction).mean())
    assert got["n"].sum() == n


def test_confusion_frame_round_trips_the_matrix(tmp_path):
    from reliquant.core.io import read_frame, write_frame

    rng = np.random.default_rng(15)
    cm = acc_mod.confusion_matrix(rng.integers(0, K, 300), rng.integers(0, K, 300))
    frame = acc_mod.confusion_frame(cm)
    write_frame(frame, tmp_path / "c.parquet", acc_mod.CONFUSION_SCHEMA)
    back = read_frame(tmp_path / "c.parquet")
    got = np.zeros((K, K), np.int64)
    got[back["true"], back["predicted"]] = back["count"]
    np.testing.assert_array_equal(got, cm)


PAPER = {
    "train_accuracy": 0.98,
    "test_accuracy": 0.97,
    "accuracies_swapped": False,
    "level1_mean_accuracy": 0.8,
    "level10_mean_accuracy": 0.4,
    "perturbed_max_accuracy": 0.9,
    "perturbed_min_accuracy": 0.3,
    "brightness_level1_accuracy": 0.85,
    "brightness_level10_accuracy": 0.5,
}


def test_accuracy_report_tables_and_markdown(tmp_path):
    from reliquant.core.io import write_frame

    rng = np.random.default_rng(16)
    parts = []
    for name, levels in (("clean", [0]), ("brightness", [1, 2]), ("fog", [1, 2])):
        for lvl in levels:
            n = 50
            label = rng.integers(0, K, n)
            hit = rng.random(n) < 0.9 - 0.2 * lvl
            parts.append(
                pd.DataFrame(
                    {
                        "label": label,
                        "prediction": np.where(hit, label, (label + 1) % K),
                        "corruption": name,
                        "level": lvl,
                    }
                )
            )
    frame = pd.concat(parts, ignore_index=True)
    log = pd.DataFrame(
        {"epoch": [1, 2], "train_accuracy": [0.9, 0.95], "test_accuracy": [0.9, 0.96]}
    )
    report = acc_mod.accuracy_report(frame, log, PAPER, "clean")
    assert len(report.table) == 5 and set(report.perturbed["corruption"]) == {"brightness", "fog"}
    write_frame(report.table, tmp_path / "a.parquet", acc_mod.ACCURACY_SCHEMA)
    sub = frame[(frame.corruption == "fog") & (frame.level == 2)]
    assert report.pivot.loc["fog", 2] == pytest.approx((sub.label == sub.prediction).mean())
    assert list(report.pivot.index) == ["brightness", "fog"]  # no mean row in the pivot
    cmp = report.comparison.set_index("quantity")
    assert cmp.loc["CNN test accuracy", "ours"] == 0.96  # last epoch of the log
    assert np.isnan(cmp.loc["clean partition accuracy", "paper_value"])
    assert "| quantity" in report.markdown and "| mean " in report.markdown
    assert re.search(r"\| CNN test accuracy +\| +0\.9600 \| +0\.9700 \|", report.markdown)
