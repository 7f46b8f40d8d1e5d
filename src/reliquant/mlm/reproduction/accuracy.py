"""Accuracy of the CNN per corruption and level, and the test confusion matrix (paper 004).

Section 4.4 (Figures 5 and 7): accuracy ``mean(prediction == label)`` per (corruption, level)
of the perturbed test set, beside the paper's numbers; Section 4.1 (Figure 1): the confusion
matrix of the clean test set. The output schemas sit beside the functions that make the tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown
from reliquant.core.paper import Comparison, comparison_frame, paper_number
from reliquant.mlm.softmax import N_CLASSES

__all__ = [
    "ACCURACY_SCHEMA",
    "CONFUSION_SCHEMA",
    "AccuracyReport",
    "accuracy_by_group",
    "accuracy_comparisons",
    "accuracy_pivot",
    "accuracy_report",
    "confusion_frame",
    "confusion_matrix",
]

#: Accuracy per (corruption, level): :func:`accuracy_by_group` over those keys.
ACCURACY_SCHEMA = pa.schema(
    [
        pa.field("corruption", pa.string()),
        pa.field("level", pa.uint8()),
        pa.field("n", pa.int64()),
        pa.field("accuracy", pa.float64()),
    ]
)
#: The confusion matrix in long format (:func:`confusion_frame`).
CONFUSION_SCHEMA = pa.schema(
    [pa.field("true", pa.uint8()), pa.field("predicted", pa.uint8()), pa.field("count", pa.int64())]
)


def confusion_matrix(labels: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """Counts ``C[y, c]`` of true class y predicted as c (Figure 1), int64 (10, 10)."""
    y, p = np.asarray(labels).astype(np.int64), np.asarray(predictions).astype(np.int64)
    if y.shape != p.shape:
        raise ValueError(f"labels and predictions differ in shape: {y.shape} vs {p.shape}")
    return np.bincount(y * N_CLASSES + p, minlength=N_CLASSES * N_CLASSES).reshape(
        N_CLASSES, N_CLASSES
    )


def confusion_frame(counts: np.ndarray) -> pd.DataFrame:
    """A confusion matrix as rows ``true, predicted, count`` (:data:`CONFUSION_SCHEMA`),
    diagonal included, in row-major order."""
    t, p = np.indices(counts.shape)
    return pd.DataFrame({"true": t.ravel(), "predicted": p.ravel(), "count": counts.ravel()})


def accuracy_by_group(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Accuracy ``mean(prediction == label)`` and count per group of ``keys`` (Figures 5, 7).

    ``frame`` needs ``label`` and ``prediction`` columns and the ``keys``; the result has the
    keys, ``n`` and ``accuracy``, sorted by the keys.
    """
    missing = [k for k in ["label", "prediction", *keys] if k not in frame.columns]
    if missing:
        raise ValueError(f"frame lacks columns {missing}; has {list(frame.columns)}")
    hit = (frame["label"].to_numpy() == frame["prediction"].to_numpy()).astype(np.float64)
    g = pd.DataFrame({k: frame[k].to_numpy() for k in keys}).assign(hit=hit)
    out = g.groupby(keys, sort=True).agg(n=("hit", "size"), accuracy=("hit", "mean")).reset_index()
    return out


def accuracy_comparisons(
    accuracy: pd.DataFrame,
    training_log: pd.DataFrame,
    paper: Mapping[str, Any],
    clean_partition: str,
) -> list[Comparison]:
    """Our accuracies beside the numbers of paper 004 (Sections 4.1 and 4.4).

    ``accuracy`` is :func:`reliquant.mlm.reproduction.accuracy.accuracy_by_group` over ``corruption,
    level``; ``training_log`` the per-epoch log of the CNN (its last row: train and test
    accuracy after the last epoch); ``paper`` the config's ``mlm.paper``. Level means average
    the corruptions at the lowest and highest level. ``paper_value`` is NaN where the paper
    states nothing (the clean partition). With ``accuracies_swapped`` (config), our test
    accuracy is compared with the number the paper prints as its train accuracy and vice
    versa: the authors' own trained network gives the printed train accuracy (98.38 %) on the
    test set, so the two look swapped in Section 4.1; each row's note says so.
    """
    nan = float("nan")
    last = training_log.iloc[-1]
    pert = accuracy[accuracy["corruption"] != clean_partition]
    clean = accuracy.loc[accuracy["corruption"] == clean_partition, "accuracy"]
    by_level = pert.groupby("level")["accuracy"].mean()
    levels = sorted(pert["level"].unique())
    lo, hi = levels[0], levels[-1]
    bright = pert[pert["corruption"] == "brightness"].set_index("level")["accuracy"]
    swapped = bool(paper_number(paper, "accuracies_swapped", "mlm"))
    train_key, test_key = ("test_accuracy", "train_accuracy") if swapped else ("train_accuracy", "test_accuracy")  # fmt: skip
    rows = [
        ("CNN train accuracy (last epoch)", last["train_accuracy"], train_key),
        ("CNN test accuracy", last["test_accuracy"], test_key),
        ("clean partition accuracy", clean.iloc[0] if len(clean) else nan, None),
        (f"mean accuracy at level {lo}", by_level[lo], "level1_mean_accuracy"),
        (f"mean accuracy at level {hi}", by_level[hi], "level10_mean_accuracy"),
        ("maximum over corruption x level", pert["accuracy"].max(), "perturbed_max_accuracy"),
        ("minimum over corruption x level", pert["accuracy"].min(), "perturbed_min_accuracy"),
        (f"brightness, level {lo}", bright.get(lo, nan), "brightness_level1_accuracy"),
        (f"brightness, level {hi}", bright.get(hi, nan), "brightness_level10_accuracy"),
    ]
    notes = {
        "train_accuracy": "printed as the train accuracy; the paper's two look swapped",
        "test_accuracy": "printed as the test accuracy; the paper's two look swapped",
    }
    return [
        Comparison(
            "004",
            quantity,
            nan if key is None else float(paper_number(paper, key, "mlm")),
            float(ours),
            "accuracy",
            notes[key] if swapped and quantity.startswith("CNN ") else "",
        )
        for quantity, ours, key in rows
    ]


@dataclass(frozen=True)
class AccuracyReport:
    """What rule ``mlm_accuracy`` writes and plots.

    ``table``: accuracy per (corruption, level), clean partition included
    (:data:`ACCURACY_SCHEMA`); ``perturbed``: its corrupted rows (Figure 5); ``pivot``:
    corruption x level accuracies (Figure 7); ``markdown``: the paper's numbers beside ours
    and the pivot with a row of level means.
    """

    table: pd.DataFrame
    perturbed: pd.DataFrame
    pivot: pd.DataFrame
    comparison: pd.DataFrame
    markdown: str


def accuracy_pivot(table: pd.DataFrame, clean_partition: str = "clean") -> pd.DataFrame:
    """Accuracy of the corrupted rows of ``table`` (:data:`ACCURACY_SCHEMA`) with one row per
    corruption and one column per level."""
    perturbed = table[table["corruption"] != clean_partition]
    return perturbed.pivot(index="corruption", columns="level", values="accuracy")


def accuracy_report(
    softmax: pd.DataFrame,
    training_log: pd.DataFrame,
    paper: Mapping[str, Any],
    clean_partition: str,
) -> AccuracyReport:
    """Accuracy per corruption and level of the scored partitions (``label, prediction,
    corruption, level``), beside paper 004's numbers (Sections 4.1 and 4.4, config
    ``mlm.paper``; :func:`accuracy_comparisons`)."""
    table = accuracy_by_group(softmax, ["corruption", "level"])
    perturbed = table[table["corruption"] != clean_partition]
    comparison = comparison_frame(accuracy_comparisons(table, training_log, paper, clean_partition))
    pivot = accuracy_pivot(table, clean_partition)
    with_mean = pivot.copy()
    with_mean.loc["mean"] = pivot.mean(axis=0)
    wide = with_mean.reset_index()
    wide.columns = [str(c) for c in wide.columns]
    beside = comparison[["quantity", "ours", "paper_value"]].rename(
        columns={"paper_value": "paper"}
    )
    markdown = (
        "# Accuracy of the CNN on perturbed MNIST\n\n"
        "Paper numbers: Sections 4.1 and 4.4 of paper 004 (levels 1..10).\n\n"
        + frame_to_markdown(beside, floatfmt=".4f")
        + "\n## Accuracy per corruption (rows) and level (columns)\n\n"
        + frame_to_markdown(wide, floatfmt=".4f")
    )
    return AccuracyReport(table, perturbed, pivot, comparison, markdown)
