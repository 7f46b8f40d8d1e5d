"""Are the Monte Carlo robustness's ties the model's or the estimator's? The CNN at more draws.

With ``n`` draws the Monte Carlo robustness takes one of ``n + 1`` values; with 50 draws most
clean CNN predictions keep their class on every draw and tie at exactly 1. Whether those ties
(and the AU-ARC they give) belong to the model or to the estimator shows when the same
predictions are scored again with more draws: ties that stay are the model's (its robustness
is 1 to within ``1 / n``); ties that go were the estimator's, and the AU-ARC that changes with
them was the estimator's too.

:func:`resolution_table` takes the CNN's per-prediction tables
(:func:`reliquant.compare.reproduction.mnist.cnn_predictions`) computed at several numbers of
draws, the same images, splits and noise grid in each, and reports per number of draws, case
and noise scale: the share of tied predictions (mean over splits), the mean AU-ARC over
splits of the Monte Carlo robustness and of a fixed comparator (``max_probability``, chosen
before any of these tables was seen: the uncertainty score the default run's headline picks
for the CNN most often), and their mean paired difference with its t-interval over splits
(:func:`reliquant.compare.paired_t`). Every prediction of a split
counts (no validation part: nothing is picked here). The CNN is one model, so the intervals
carry the variation over test images only (docs/compare.md).

Public API: :data:`RESOLUTION_SCHEMA`, :func:`resolution_table`, :func:`resolution_markdown`,
:func:`plot_resolution`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure

from reliquant.compare.reproduction.evaluation import split_auarc
from reliquant.compare.reproduction.tables import split_grid_score
from reliquant.compare.verdict import paired_t

__all__ = ["RESOLUTION_SCHEMA", "plot_resolution", "resolution_markdown", "resolution_table"]

RESOLUTION_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("case", pa.string()),
        ("scale", pa.float64()),  # the noise variance of the Monte Carlo robustness
        ("n_draws", pa.int64()),
        ("splits", pa.int64()),
        ("tied", pa.float64()),  # share of the robustness's tied predictions, mean over splits
        ("auarc_robustness", pa.float64()),  # mean over splits
        ("comparator", pa.string()),
        ("auarc_comparator", pa.float64()),
        ("diff_mean", pa.float64()),  # robustness minus comparator, mean over splits
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
    ]
)

#: The part of split_auarc's table that holds every prediction of a split.
_ALL_PART = "all"


def resolution_table(
    frames: Mapping[int, pd.DataFrame],
    *,
    comparator: str = "max_probability",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Ties and AU-ARC of the Monte Carlo robustness at each number of draws (module docstring).

    Parameters
    ----------
    frames
        ``{n_draws: per-prediction table}``, every table of the same predictions (data set,
        case, split, item, label and prediction equal) with its ``mc_robustness@<v>`` columns
        estimated from ``n_draws`` draws.
    comparator
        The uncertainty score every robustness column is held against (a column of each table).
    confidence
        Of the t-interval of the mean paired difference over splits.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`RESOLUTION_SCHEMA`, one row per (number of draws, case, scale).
    """
    if not frames:
        raise ValueError("frames is empty: give at least one number of draws")
    keys = ["dataset", "case", "split", "item", "label", "prediction"]
    first = None
    rows = []
    for n_draws in sorted(frames):
        frame = frames[n_draws]
        missing = [c for c in [*keys, comparator] if c not in frame.columns]
        if missing:
            raise ValueError(f"the table of {n_draws} draws lacks the columns {missing}")
        if first is None:
            first = frame[keys].reset_index(drop=True)
        elif not frame[keys].reset_index(drop=True).equals(first):
            raise ValueError(
                f"the table of {n_draws} draws holds other predictions than the table of "
                f"{min(frames)} draws: every number of draws must score the same predictions"
            )
        auarc = split_auarc([frame], metrics=False)
        auarc = auarc[auarc["part"] == _ALL_PART]
        for (dataset, case), case_rows in auarc.groupby(["dataset", "case"], sort=False):
            wide = case_rows.pivot(index="split", columns="score", values="auarc")
            tied = case_rows.pivot(index="split", columns="score", values="tied")
            for column in wide.columns:
                score, scale = split_grid_score(column)
                if score != "mc_robustness" or scale is None:
                    continue
                diff = paired_t(wide[column] - wide[comparator], confidence)
                rows.append({
                    "dataset": dataset, "case": case, "scale": float(scale),
                    "n_draws": int(n_draws), "splits": len(wide),
                    "tied": float(tied[column].mean()),
                    "auarc_robustness": float(wide[column].mean()), "comparator": comparator,
                    "auarc_comparator": float(wide[comparator].mean()),
                    "diff_mean": diff["diff_mean"], "ci_low": diff["ci_low"],
                    "ci_high": diff["ci_high"],
                })  # fmt: skip
    if not rows:
        raise ValueError("no mc_robustness@<variance> column in the tables")
    return pd.DataFrame(rows, columns=RESOLUTION_SCHEMA.names)


def resolution_markdown(table: pd.DataFrame, seconds: float | None = None) -> str:
    """The table as markdown: per case and scale, each number of draws' tie share, AU-ARC of
    the robustness and of the comparator, and their difference with its interval; a first
    line with the splits and, given ``seconds``, the run time of the rescoring."""
    splits = int(table["splits"].max())
    head = (
        f"The CNN's subsample rescored at {', '.join(str(n) for n in sorted(set(table['n_draws'])))}"
        f" draws per prediction; means over {splits} splits, 95 % t-intervals of the paired "
        "difference (test-image variation only: one CNN)"
    )
    if seconds is not None:
        head += f"; run time {seconds / 60:.1f} minutes on one core"
    lines = [
        head + ".",
        "",
        "| case | variance | draws | tied | AU-ARC robustness | AU-ARC comparator | "
        "difference [interval] |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    cases = list(dict.fromkeys(table["case"]))  # the tables' order: clean, levels, pooled
    order = table.assign(_case=table["case"].map(cases.index))
    for row in order.sort_values(["_case", "scale", "n_draws"], kind="stable").itertuples():
        lines.append(
            f"| {row.case} | {row.scale:g} | {row.n_draws} | {row.tied:.0%} | "
            f"{row.auarc_robustness:.4f} | {row.auarc_comparator:.4f} ({row.comparator}) | "
            f"{row.diff_mean:+.4f} [{row.ci_low:+.4f}, {row.ci_high:+.4f}] |"
        )
    return "\n".join(lines) + "\n"


def plot_resolution(table: pd.DataFrame) -> Figure:
    """Two panels against the number of draws (log scale), one line per case and scale: the
    share of tied predictions, and the robustness's AU-ARC minus the comparator's with its
    interval (a band); a dashed line at 0."""
    fig = Figure(figsize=(9.0, 3.6), layout="constrained")
    ties, diff = fig.subplots(1, 2)
    for (case, scale), rows in table.groupby(["case", "scale"], sort=False):
        rows = rows.sort_values("n_draws")
        x = rows["n_draws"].to_numpy()
        label = f"{case}, v = {scale:g}"
        (line,) = ties.plot(x, 100 * rows["tied"].to_numpy(), marker="o", label=label)
        diff.plot(x, rows["diff_mean"].to_numpy(), marker="o", color=line.get_color())
        diff.fill_between(
            x, rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy(),
            color=line.get_color(), alpha=0.15, linewidth=0,
        )  # fmt: skip
    for ax in (ties, diff):
        ax.set_xscale("log")
        ax.set_xlabel("Monte Carlo draws per prediction")
        ax.set_xticks(np.unique(table["n_draws"]), [str(n) for n in np.unique(table["n_draws"])])
    ties.set_ylabel("tied predictions (%)")
    ties.set_ylim(0, 100)
    comparator = str(table["comparator"].iloc[0])
    diff.axhline(0.0, color="0.4", linestyle="--", linewidth=0.8)
    diff.set_ylabel(f"AU-ARC: robustness - {comparator}")
    ties.legend(fontsize="small", loc="best")
    fig.suptitle("CNN on MNIST: the Monte Carlo robustness at more draws (mean over splits)")
    return fig
