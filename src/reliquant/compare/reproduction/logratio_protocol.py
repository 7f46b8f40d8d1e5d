"""The log-ratio follow-up's own evaluation protocol (Lassance & De Bock, arXiv 2603.23318;
code: rflassance/rob4discriminative), run on its own benchmark tables.

Per data set ``(X, y)`` (:func:`reliquant.core.datasets.read_benchmark_csv`) and split
``i = 0..n_splits-1`` (the authors: 15):

1. ``train_test_split(X, y, test_size=0.7, random_state=i)`` (30 % training, not stratified;
   :func:`protocol_splits`);
2. each model tuned on the training part by ``GridSearchCV(cv=5, scoring="neg_log_loss")``
   over its grid, refitted on the whole training part (:func:`tune_model`): scikit-learn's
   ``GradientBoostingClassifier(random_state=8)``, ``RandomForestClassifier(random_state=7)``
   and XGBoost's ``XGBClassifier(random_state=6)``, otherwise at their defaults. The seeds
   and grids are the published ones (config ``compare.logratio_protocol``), not derived from
   the topic's seed;
3. on the test part, the log-ratio ``r(x) = ln p_(1) - ln p_(2)``, a ``p_(2)`` of exactly 0
   replaced by 0.001 as in the authors' code (:func:`reliquant.compare.protocol_log_ratio`;
   :func:`reliquant.compare.log_ratio` would clamp every ``p_(2)`` below 0.001 and tie those
   predictions) and its accuracy-rejection curve
   ``ARC(k / n) = E[C_{n-k}] / (n - k)``, ``k = 0..n-1`` (:func:`reliquant.compare.
   accuracy_rejection_curve`; tied scores averaged over their orders, where the authors keep
   the split's order), with its area ``AU-ARC_i = (1/n) sum_k ARC(k / n)``.

Per data set and model the curve is averaged pointwise over the splits (every split has the
same ``n = ceil(0.7 N)`` test rows) and its mean is the published AU-ARC,
``AU-ARC = (1/n) sum_k (1/S) sum_i ARC_i(k / n) = (1/S) sum_i AU-ARC_i``: the mean of the
splits' AU-ARCs, whose standard deviation over the splits (``ddof = 1``) is reported beside it.

Public API: :data:`PUBLISHED_SPLITS`, :data:`PROTOCOL_MODELS`, :data:`PROTOCOL_SCHEMA`, :func:`protocol_splits`,
:func:`protocol_estimator`, :func:`tune_model`, :func:`split_result`,
:func:`run_protocol`, :func:`protocol_summary`, :func:`protocol_markdown`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from sklearn.base import ClassifierMixin
from sklearn.model_selection import GridSearchCV, train_test_split
from tqdm import tqdm

from reliquant.compare.rejection import accuracy_rejection_curve
from reliquant.compare.selection import protocol_log_ratio
from reliquant.core.runlog import progress_enabled

__all__ = [
    "PROTOCOL_MODELS",
    "PUBLISHED_SPLITS",
    "PROTOCOL_SCHEMA",
    "TIMING_COLUMN",
    "protocol_estimator",
    "protocol_markdown",
    "protocol_splits",
    "protocol_summary",
    "run_protocol",
    "split_result",
    "tune_model",
]

#: The authors' number of splits (random_state 0..14).
PUBLISHED_SPLITS = 15

#: The models of the protocol (config keys) and what each is.
PROTOCOL_MODELS = {
    "gradient_boosting": "scikit-learn GradientBoostingClassifier",
    "random_forest": "scikit-learn RandomForestClassifier",
    "xgboost": "XGBoost XGBClassifier",
}

#: One row per data set, model and split: the split's test accuracy and log-ratio AU-ARC,
#: the tuned hyper-parameters (JSON) and the accuracy-rejection curve (accuracy at the
#: rejected fractions k / n_test, k = 0..n_test-1). :func:`run_protocol` adds a column
#: ``seconds`` (the tuning and scoring time of the row: a timing, not a result), which the
#: workflow keeps out of the parquet table (:data:`TIMING_COLUMN`) so that two runs give the
#: same table.
PROTOCOL_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("split", pa.int64(), nullable=False),
        pa.field("n_train", pa.int64(), nullable=False),
        pa.field("n_test", pa.int64(), nullable=False),
        pa.field("accuracy", pa.float64(), nullable=False),
        pa.field("auarc", pa.float64(), nullable=False),
        pa.field("best_params", pa.string(), nullable=False),
        pa.field("curve", pa.list_(pa.float64()), nullable=False),
    ]
)
#: The timing column of :func:`run_protocol`'s frame, not part of :data:`PROTOCOL_SCHEMA`.
TIMING_COLUMN = "seconds"


def protocol_splits(
    n_rows: int, *, test_size: float, n_splits: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` row indices of split ``i = 0..n_splits-1``:
    ``train_test_split(arange(n_rows), test_size=test_size, random_state=i)``, the same rows
    as ``train_test_split(X, y, ...)`` gives (its shuffle depends on the row count only)."""
    if n_rows < 2 or not 0 < test_size < 1 or n_splits < 1:
        raise ValueError(
            f"need n_rows >= 2, 0 < test_size < 1, n_splits >= 1; got {n_rows}, {test_size}, "
            f"{n_splits}"
        )
    rows = np.arange(n_rows)
    return [
        tuple(train_test_split(rows, test_size=test_size, random_state=i)) for i in range(n_splits)
    ]


def protocol_estimator(model: str, *, random_state: int, n_jobs: int = 1) -> ClassifierMixin:
    """The untuned model ``model`` (a key of :data:`PROTOCOL_MODELS`) with its published
    ``random_state``, otherwise at the library's defaults (``n_jobs`` threads where the
    library has them: they do not change the fit)."""
    if model == "gradient_boosting":
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(random_state=random_state)
    if model == "random_forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(random_state=random_state, n_jobs=n_jobs)
    if model == "xgboost":
        from xgboost import XGBClassifier

        return XGBClassifier(random_state=random_state, n_jobs=n_jobs)
    raise ValueError(f"unknown protocol model {model!r}: expected one of {list(PROTOCOL_MODELS)}")


def tune_model(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    *,
    settings: Mapping[str, Any],
    cv_folds: int,
    n_jobs: int = 1,
) -> tuple[ClassifierMixin, dict]:
    """``GridSearchCV(model, settings["grid"], cv=cv_folds, scoring="neg_log_loss")`` fitted
    on the training part; returns the best model refitted on all of it and its parameters.
    ``settings``: ``{"random_state": int, "grid": {parameter: [values]}}``; the search runs
    ``n_jobs`` fits at once (the models themselves one thread each)."""
    search = GridSearchCV(
        protocol_estimator(model, random_state=int(settings["random_state"])),
        {k: list(v) for k, v in settings["grid"].items()},
        cv=cv_folds,
        scoring="neg_log_loss",
        n_jobs=n_jobs,
    )
    search.fit(x_train, y_train)
    return search.best_estimator_, dict(search.best_params_)


def split_result(
    fitted: ClassifierMixin, x_test: np.ndarray, y_test: np.ndarray, *, floor: float
) -> tuple[float, np.ndarray]:
    """The test accuracy and the log-ratio's accuracy-rejection curve ``ARC(k / n)``,
    ``k = 0..n-1`` (ties averaged), of a fitted model: prediction = ``classes_[argmax p]``,
    ``r = ln p_(1) - ln p_(2)`` with a zero ``p_(2)`` replaced by ``floor``. AU-ARC is the
    curve's mean."""
    proba = fitted.predict_proba(x_test)
    correct = np.asarray(fitted.classes_)[np.argmax(proba, axis=1)] == np.asarray(y_test)
    _, curve = accuracy_rejection_curve(protocol_log_ratio(proba, floor=floor), correct)
    return float(correct.mean()), curve


def run_protocol(
    x: np.ndarray,
    y: np.ndarray,
    *,
    dataset: str,
    protocol: Mapping[str, Any],
    n_jobs: int = 1,
) -> pd.DataFrame:
    """The protocol (module docstring) on one data set: one row per model and split,
    columns of :data:`PROTOCOL_SCHEMA` and :data:`TIMING_COLUMN`. ``protocol``: the config section
    ``compare.logratio_protocol`` (``n_splits``, ``test_size``, ``cv_folds``, ``floor``,
    ``models: {name: {random_state, grid}}``); ``n_jobs`` changes speed, not results.
    Unknown models raise a ValueError before any fit."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"{dataset}: X must be (n, d) and y (n,); got {x.shape}, {y.shape}")
    splits = protocol_splits(
        len(y), test_size=float(protocol["test_size"]), n_splits=int(protocol["n_splits"])
    )
    for model in protocol["models"]:
        protocol_estimator(model, random_state=0)
    rows = []
    steps = [(m, i) for m in protocol["models"] for i in range(len(splits))]
    for model, i in tqdm(steps, desc=f"protocol {dataset}", disable=not progress_enabled()):
        train, test = splits[i]
        start = time.perf_counter()
        fitted, best = tune_model(
            model,
            x[train],
            y[train],
            settings=protocol["models"][model],
            cv_folds=int(protocol["cv_folds"]),
            n_jobs=n_jobs,
        )
        accuracy, curve = split_result(fitted, x[test], y[test], floor=float(protocol["floor"]))
        rows.append(
            {
                "dataset": dataset,
                "model": model,
                "split": i,
                "n_train": len(train),
                "n_test": len(test),
                "accuracy": accuracy,
                "auarc": float(curve.mean()),
                "best_params": json.dumps(best, sort_keys=True),
                "curve": curve,
                "seconds": time.perf_counter() - start,
            }
        )
    return pd.DataFrame(rows, columns=[*PROTOCOL_SCHEMA.names, TIMING_COLUMN])


def protocol_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per data set and model (in the table's order): ``n_splits``, ``auarc_curve`` (the mean
    of the curve averaged pointwise over the splits, the published AU-ARC), ``auarc_mean``
    and ``auarc_sd`` (mean and sample standard deviation, ``ddof = 1``, of the splits'
    AU-ARCs) and ``accuracy_mean``. The splits of a data set must share one test size."""
    out = []
    for (dataset, model), group in table.groupby(["dataset", "model"], sort=False):
        if len({len(c) for c in group["curve"]}) != 1:
            raise ValueError(f"{dataset}/{model}: the splits' test sizes differ")
        curves = np.stack([np.asarray(c, dtype=np.float64) for c in group["curve"]])
        auarc = group["auarc"].to_numpy()
        out.append(
            {
                "dataset": dataset,
                "model": model,
                "n_splits": len(group),
                "auarc_curve": float(curves.mean(axis=0).mean()),
                "auarc_mean": float(auarc.mean()),
                "auarc_sd": float(auarc.std(ddof=1)) if len(auarc) > 1 else math.nan,
                "accuracy_mean": float(group["accuracy"].mean()),
            }
        )
    return pd.DataFrame(out)


def protocol_markdown(
    summary: pd.DataFrame,
    *,
    protocol: Mapping[str, Any],
    runtime_s: float | None = None,
    n_jobs: int | None = None,
    datasets: Sequence[str] | None = None,
) -> str:
    """A markdown table of :func:`protocol_summary` with a sentence on the protocol and,
    when given, the runtime of the whole run on ``n_jobs`` parallel fits."""
    lines = [
        "| data set | model | AU-ARC of the averaged curve | mean over splits | sd over splits "
        "| test accuracy (mean) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in summary.itertuples(index=False):
        lines.append(
            f"| {row.dataset} | {row.model} | {row.auarc_curve:.4f} | {row.auarc_mean:.4f} | "
            f"{row.auarc_sd:.4f} | {row.accuracy_mean:.4f} |"
        )
    names = ", ".join(datasets if datasets is not None else summary["dataset"].unique())
    text = (
        f"Log-ratio AU-ARC on {names}: {int(protocol['n_splits'])} splits "
        f"`train_test_split(X, y, test_size={protocol['test_size']}, random_state=i)`, "
        f"each model tuned by `GridSearchCV(cv={protocol['cv_folds']}, "
        'scoring="neg_log_loss")`; sd with ddof = 1.'
    )
    if runtime_s is not None:
        n_splits = int(protocol["n_splits"])
        text += (
            f" Run time {runtime_s / 60:.1f} minutes"
            + (f" with {n_jobs} parallel fits" if n_jobs else "")
            + f" (the fits' wall seconds summed), {runtime_s / 60 / n_splits:.1f} minutes a split"
            " of every data set."
        )
        if n_splits != PUBLISHED_SPLITS:
            text += (
                f" Only {n_splits} of the published {PUBLISHED_SPLITS} splits: at that rate all"
                f" {PUBLISHED_SPLITS} take about {runtime_s * PUBLISHED_SPLITS / n_splits / 60:.0f}"
                " minutes."
            )
    return text + "\n\n" + "\n".join(lines) + "\n"
