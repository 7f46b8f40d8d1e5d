"""The dynamic-selection protocol's tables and figure from its per-split rows
(:mod:`reliquant.compare.reproduction.selection_protocol`): per data set, setting and method
the mean and sd over splits, the paired difference to the single best model with its
t-interval and the rank; the mean ranks over data sets; the markdown and the figure.

Public API: :data:`SUMMARY_SCHEMA`, :data:`RANKS_SCHEMA`, :func:`selection_summary`,
:func:`mean_ranks`, :func:`selection_markdown`, :func:`selection_figure`,
:func:`selection_report`, :class:`SelectionReport`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure

from reliquant.compare.reproduction.deslib_pool import DESLIB_METHODS
from reliquant.compare.verdict import paired_t
from reliquant.core.plotting import apply_style

__all__ = [
    "RANKS_SCHEMA",
    "SUMMARY_SCHEMA",
    "SelectionReport",
    "mean_ranks",
    "selection_figure",
    "selection_markdown",
    "selection_report",
    "selection_summary",
]

#: Per data set, setting and method (:func:`selection_summary`).
SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("n_splits", pa.int64(), nullable=False),
        pa.field("accuracy_mean", pa.float64(), nullable=False),
        pa.field("accuracy_sd", pa.float64(), nullable=False),
        pa.field("diff_mean", pa.float64(), nullable=False),
        pa.field("diff_low", pa.float64(), nullable=False),
        pa.field("diff_high", pa.float64(), nullable=False),
        pa.field("rank", pa.float64(), nullable=False),
    ]
)

#: Per setting and method (:func:`mean_ranks`).
RANKS_SCHEMA = pa.schema(
    [
        pa.field("setting", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("n_datasets", pa.int64(), nullable=False),
        pa.field("mean_rank", pa.float64(), nullable=False),
        pa.field("accuracy_mean", pa.float64(), nullable=False),
    ]
)


# ---------------------------------------------------------------------- summaries
def _check_rows(rows: pd.DataFrame) -> None:
    missing = [c for c in ("dataset", "setting", "split", "method", "accuracy") if c not in rows]
    if missing:
        raise ValueError(f"the per-split table lacks the columns {missing}")
    if rows.duplicated(["dataset", "setting", "split", "method"]).any():
        raise ValueError("the per-split table holds a (dataset, setting, split, method) twice")
    counts = rows.groupby(["dataset", "setting", "split"])["method"].nunique()
    if (counts != len(set(rows["method"]))).any():
        raise ValueError("every split must hold the same methods")


def selection_summary(rows: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Per data set, setting and method (table order): ``n_splits``, ``accuracy_mean`` and
    ``accuracy_sd`` (``ddof = 1``; NaN for one split), ``diff_mean`` = mean over splits of
    ``acc(method) - acc(single_best)`` with the ``level`` t-interval
    ``diff_mean -+ t_{level, S-1} sd(diff) / sqrt(S)`` (``diff_low``, ``diff_high``;
    :func:`reliquant.compare.paired_t`), and
    ``rank``: the rank of ``accuracy_mean`` among the methods of the data set and setting
    (1 = most accurate, ties share the mean of their ranks)."""
    _check_rows(rows)
    base = rows[rows["method"] == "single_best"].set_index(["dataset", "setting", "split"])
    if base.empty:
        raise ValueError("the per-split table has no single_best rows to compare against")
    out = []
    for (dataset, setting, method), group in rows.groupby(
        ["dataset", "setting", "method"], sort=False
    ):
        acc = group["accuracy"].to_numpy(dtype=np.float64)
        ref = base.loc[[(dataset, setting, s) for s in group["split"]], "accuracy"].to_numpy()
        t = paired_t(acc - ref, level)  # NaN interval for one split
        n = len(acc)
        out.append(
            {
                "dataset": dataset,
                "setting": setting,
                "method": method,
                "n_splits": n,
                "accuracy_mean": float(acc.mean()),
                "accuracy_sd": float(acc.std(ddof=1)) if n > 1 else math.nan,
                "diff_mean": t["diff_mean"],
                "diff_low": t["ci_low"],
                "diff_high": t["ci_high"],
            }
        )
    summary = pd.DataFrame(out)
    summary["rank"] = summary.groupby(["dataset", "setting"])["accuracy_mean"].rank(
        ascending=False, method="average"
    )
    return summary[SUMMARY_SCHEMA.names]


def mean_ranks(summary: pd.DataFrame) -> pd.DataFrame:
    """Per setting and method (table order): the mean over data sets of the method's rank
    (:func:`selection_summary`) and of its mean accuracy; every data set must hold every
    method."""
    per = summary.groupby(["setting", "method"], sort=False)
    for setting, part in summary.groupby("setting"):
        counts = part.groupby("method")["dataset"].nunique()
        if (counts != part["dataset"].nunique()).any():
            raise ValueError(f"setting {setting}: every data set must hold every method")
    out = per.agg(
        n_datasets=("dataset", "nunique"),
        mean_rank=("rank", "mean"),
        accuracy_mean=("accuracy_mean", "mean"),
    ).reset_index()
    return out[RANKS_SCHEMA.names]


# ---------------------------------------------------------------------- reporting
_METHOD_TITLES = {
    "gradient_boosting": "GB",
    "random_forest": "RF",
    "xgboost": "XGB",
    "single_best": "single best",
}


#: The methods whose paired difference to the single best the markdown tabulates.
_DIFFERENCE_METHODS = ("RS-D", "RS-I")


def _difference_rows(part: pd.DataFrame, datasets: list[str], methods: list[str]) -> list[str]:
    """Markdown rows of ``acc(method) - acc(single_best)``: the mean over splits and its
    t-interval (:func:`selection_summary`), per data set and method of ``methods``."""
    if not methods:
        return []
    rows = ["", "| data set | " + " | ".join(f"{m} - single best [95 % t-interval]"
            for m in methods) + " |", "|---|" + "---:|" * len(methods)]  # fmt: skip
    for d in datasets:
        cells = []
        for m in methods:
            r = part.loc[(d, m)]
            interval = ("" if math.isnan(r["diff_low"])
                        else f" [{r['diff_low']:+.4f}, {r['diff_high']:+.4f}]")  # fmt: skip
            cells.append(f"{r['diff_mean']:+.4f}{interval}")
        rows.append(f"| {d} | " + " | ".join(cells) + " |")
    return rows


def selection_markdown(
    summary: pd.DataFrame,
    ranks: pd.DataFrame,
    *,
    n_splits: int,
    runtime_s: float | None = None,
    n_jobs: int | None = None,
) -> str:
    """Per setting, a markdown table: a row per data set, a column per method with the mean
    test accuracy over splits (sd in brackets), then the mean rank over data sets; and a
    sentence on the run (its runtime, when given, is the jobs' summed seconds)."""
    methods = list(dict.fromkeys(summary["method"]))
    names = [_METHOD_TITLES.get(m, m) for m in methods]
    datasets = list(dict.fromkeys(summary["dataset"]))
    text = [
        f"Test accuracy, mean over {n_splits} stratified 70/15/15 splits (sd over splits, "
        f"ddof = 1) on {len(datasets)} data set(s); rank 1 = most accurate, ties averaged."
    ]
    if runtime_s is not None:
        text[0] += f" Run time {runtime_s / 60:.1f} minutes" + (
            f" ({n_jobs} parallel fits per job; the jobs' seconds summed)." if n_jobs else "."
        )
    for setting in dict.fromkeys(summary["setting"]):
        part = summary[summary["setting"] == setting].set_index(["dataset", "method"])
        text += ["", f"**{setting.replace('_', ' ')}**", "",
                 "| data set | " + " | ".join(names) + " |",
                 "|---|" + "---:|" * len(names)]  # fmt: skip
        for d in datasets:
            cells = []
            for m in methods:
                r = part.loc[(d, m)]
                sd = "" if math.isnan(r["accuracy_sd"]) else f" ({r['accuracy_sd']:.4f})"
                cells.append(f"{r['accuracy_mean']:.4f}{sd}")
            text.append(f"| {d} | " + " | ".join(cells) + " |")
        rk = ranks[ranks["setting"] == setting].set_index("method")["mean_rank"]
        text.append("| **mean rank** | " + " | ".join(f"{rk[m]:.2f}" for m in methods) + " |")
        text += _difference_rows(part, datasets, [m for m in _DIFFERENCE_METHODS if m in methods])
    return "\n".join(text) + "\n"


#: The methods the figure compares with the single best model.
_FIGURE_METHODS = ("RS-D", "RS-I", *DESLIB_METHODS)


def selection_figure(summary: pd.DataFrame) -> Figure:
    """Paired differences to the single best model: a panel per setting, a row per data set,
    per method of RS-D, RS-I and DESlib's four the mean over splits of
    ``acc(method) - acc(single_best)`` with its 95 % t-interval (:func:`selection_summary`)."""
    apply_style()
    settings = list(dict.fromkeys(summary["setting"]))
    datasets = list(dict.fromkeys(summary["dataset"]))
    methods = [m for m in _FIGURE_METHODS if m in set(summary["method"])]
    if not settings or not methods:
        raise ValueError("the summary holds no method to compare with single_best")
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings) + 1.2,
                             1.2 + 0.42 * len(datasets) * (1 + len(methods) / 8)),
                             sharey=True, squeeze=False)  # fmt: skip
    offsets = np.linspace(-0.3, 0.3, len(methods))
    for ax, setting in zip(axes[0], settings, strict=True):
        part = summary[summary["setting"] == setting].set_index(["dataset", "method"])
        for j, m in enumerate(methods):
            for i, d in enumerate(datasets):
                r = part.loc[(d, m)]
                yv = len(datasets) - 1 - i - offsets[j]  # the first method on top
                if np.isfinite(r["diff_low"]):
                    ax.plot(
                        [r["diff_low"], r["diff_high"]], [yv, yv], "-", color=colours(j), lw=1.2
                    )
                ax.plot([r["diff_mean"]], [yv], "o", color=colours(j), ms=3.5,
                        label=m if i == 0 else None)  # fmt: skip
        ax.axvline(0.0, color="grey", lw=0.8)
        ax.set_title(setting.replace("_", " "), fontsize=9)
        ax.set_xlabel("accuracy - single best's (mean, 95 % t-interval)", fontsize=8)
    axes[0][0].set_yticks(range(len(datasets))[::-1], datasets, fontsize=8)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.suptitle("Dynamic selection against the single best model (right: better)", fontsize=9)
    fig.tight_layout()
    return fig


@dataclass
class SelectionReport:
    """What the workflow writes from the per-split rows: the :func:`selection_summary`, the
    :func:`mean_ranks`, their markdown (:func:`selection_markdown`) and the figure
    (:func:`selection_figure`)."""

    summary: pd.DataFrame
    ranks: pd.DataFrame
    markdown: str
    figure: Figure


def selection_report(
    rows: pd.DataFrame, *, runtime_s: float | None = None, n_jobs: int | None = None
) -> SelectionReport:
    """The summary, mean ranks, markdown and figure of the per-split ``rows`` (columns of
    :data:`SELECTION_SCHEMA`); every data set and setting must hold the same splits."""
    splits = rows.groupby(["dataset", "setting"])["split"].nunique()
    if splits.nunique() != 1:
        raise ValueError(
            f"the data sets and settings hold different numbers of splits: {splits.to_dict()}"
        )
    summary = selection_summary(rows)
    ranks = mean_ranks(summary)
    text = selection_markdown(
        summary, ranks, n_splits=int(splits.iloc[0]), runtime_s=runtime_s, n_jobs=n_jobs
    )
    return SelectionReport(summary, ranks, text, selection_figure(summary))
