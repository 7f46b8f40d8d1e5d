"""Accuracy-acceptance curves per cell and their areas (paper 000, Section 7.4).

Per training set of a cell, one curve per metric (:func:`cell_curves`); the area under each
curve, and its mean and sample standard deviation per (N_train, gamma) cell and metric
(:func:`auc_table`). The output schemas sit beside the functions that make the tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.nbc.reproduction.acceptance import accuracy_acceptance_curve, area_under_curve
from reliquant.nbc.reproduction.experiment import METRICS

__all__ = ["AUC_PER_SET_SCHEMA", "AUC_SCHEMA", "CURVES_SCHEMA", "auc_table", "cell_curves"]

#: One row per (training set, number of accepted instances) with one accuracy per metric.
CURVES_SCHEMA = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("train_set", pa.int32()),
        ("n_accepted", pa.int32()),
        ("rate", pa.float64()),
    ]
    + [(m, pa.float64()) for m in METRICS]
)

#: Mean and sample standard deviation of the area per cell and metric (:func:`auc_table`).
AUC_SCHEMA = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("metric", pa.string()),
        ("family", pa.string()),
        ("auc_mean", pa.float64()),
        ("auc_std", pa.float64()),
        ("n_sets", pa.int32()),
    ]
)

#: The area under every curve, one row per (training set, metric) (:func:`auc_table`).
AUC_PER_SET_SCHEMA = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("train_set", pa.int32()),
        ("metric", pa.string()),
        ("auc", pa.float64()),
    ]
)


def cell_curves(metrics: pd.DataFrame) -> pd.DataFrame:
    """Accuracy-acceptance curve of every metric per training set (Section 7.4), wide format.

    One row per (training set, N = 1..n_test) with ``rate = N / n_test`` and one accuracy
    column per metric (ties averaged,
    :func:`reliquant.nbc.reproduction.acceptance.accuracy_acceptance_curve`, built on
    :func:`reliquant.core.rejection.expected_kept_correct`).
    """
    frames = []
    for ts, g in metrics.groupby("train_set", sort=True):
        g = g.sort_values("test_index")
        cols: dict[str, Any] = {}
        for name, (desc, _, _) in METRICS.items():
            rate, acc = accuracy_acceptance_curve(g[name].to_numpy(), g["correct"].to_numpy(), desc)
            cols[name] = acc
        frames.append(
            pd.DataFrame(
                {
                    "n_train": g["n_train"].iloc[0],
                    "gamma": g["gamma"].iloc[0],
                    "train_set": ts,
                    "n_accepted": np.arange(1, rate.size + 1),
                    "rate": rate,
                    **cols,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def auc_table(curves: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Area under every curve: per training set (long) and mean/std per cell and metric.

    Returns ``(per_set, summary)``; summary columns: ``n_train, gamma, metric, family,
    auc_mean, auc_std, n_sets``. ``auc_std`` is the sample standard deviation (ddof = 1).
    """
    names = list(METRICS)
    per_set = (
        curves.groupby(["n_train", "gamma", "train_set"], sort=True)[names]
        .agg(lambda a: float(area_under_curve(a.to_numpy())))
        .reset_index()
        .melt(id_vars=["n_train", "gamma", "train_set"], var_name="metric", value_name="auc")
    )
    summary = (
        per_set.groupby(["n_train", "gamma", "metric"], sort=False)["auc"]
        .agg(auc_mean="mean", auc_std="std", n_sets="count")
        .reset_index()
    )
    summary["family"] = summary["metric"].map(lambda m: METRICS[m][1])
    summary["metric"] = pd.Categorical(summary["metric"], categories=names, ordered=True)
    summary = summary.sort_values(["n_train", "gamma", "metric"], ascending=[False, True, True])
    summary["metric"] = summary["metric"].astype(str)
    cols = ["n_train", "gamma", "metric", "family", "auc_mean", "auc_std", "n_sets"]
    return per_set, summary[cols].reset_index(drop=True)
