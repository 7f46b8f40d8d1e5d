"""Figures of the compare topic.

* :func:`rejection_figure`: accuracy-rejection curves, a panel per data set (its shifted
  predictions pooled, the condition the claim judges), a line per score: solid for
  robustness scores, dashed for uncertainty scores, one colour per score across panels.
* :func:`rank_heatmap`: the rank of every score's AU-ARC (1 = best) in every case of every
  data set; blank where a data set has no such score.

Public API: :func:`score_colours`, :func:`rejection_figure`, :func:`rank_heatmap`.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from reliquant.compare.reproduction.evaluation import POOLED
from reliquant.compare.reproduction.tables import DATASET_TITLES, SCORE_FAMILY
from reliquant.core.plotting import apply_style

__all__ = ["rank_heatmap", "rejection_figure", "score_colours"]


def score_colours() -> dict[str, tuple[float, ...]]:
    """One colour per score of :data:`SCORE_FAMILY` (tab20), the same in every figure."""
    cmap = plt.get_cmap("tab20")
    return {s: cmap(i % 20) for i, s in enumerate(SCORE_FAMILY)}


def _datasets(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame["dataset"]))
    return [d for d in DATASET_TITLES if d in present] + [
        d for d in present if d not in DATASET_TITLES
    ]


def rejection_figure(curves: pd.DataFrame, condition: str = "shifted") -> Figure:
    """Accuracy against rejected fraction, a panel per data set (``condition``'s predictions,
    pooled), a line per score (:func:`reliquant.compare.reproduction.evaluation.curve_table`)."""
    apply_style()
    sub = curves[curves["condition"] == condition]
    datasets = _datasets(sub)
    if not datasets:
        raise ValueError(f"no curves of condition {condition!r}")
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.9 * nrows), squeeze=False)
    colours = score_colours()
    for ax, dataset in zip(axes.ravel(), datasets, strict=False):
        rows = sub[sub["dataset"] == dataset]
        for score in dict.fromkeys(rows["score"]):
            c = rows[rows["score"] == score]
            style = "-" if SCORE_FAMILY.get(score) == "robustness" else "--"
            ax.plot(c["rejected"], c["accuracy"], style, color=colours.get(score), lw=1.3,
                    label=score)  # fmt: skip
        ax.set_title(DATASET_TITLES.get(dataset, dataset))
        ax.set_xlabel("rejected fraction")
        ax.set_ylabel("accuracy of the rest")
        ax.set_xlim(0, 1)
        ax.legend(loc="lower right", fontsize=6)
    for ax in axes.ravel()[len(datasets) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"Accuracy-rejection curves, {condition} predictions "
        "(solid: robustness, dashed: uncertainty)"
    )
    fig.tight_layout()
    return fig


def rank_heatmap(auarc: pd.DataFrame) -> Figure:
    """Rank of each score's AU-ARC (rows) in each (data set, case) (columns; pooled rows
    left out), annotated; blank where the data set has no such score."""
    apply_style()
    table = auarc[auarc["case"] != POOLED]
    columns = []
    for dataset in _datasets(table):
        for case in dict.fromkeys(table.loc[table["dataset"] == dataset, "case"]):
            columns.append((dataset, case))
    scores = [s for s in SCORE_FAMILY if s in set(table["score"])]
    grid = np.full((len(scores), len(columns)), np.nan)
    for j, (dataset, case) in enumerate(columns):
        rows = table[(table["dataset"] == dataset) & (table["case"] == case)]
        for r in rows.itertuples(index=False):
            grid[scores.index(r.score), j] = r.rank
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * len(columns), 1.2 + 0.35 * len(scores)))
    ax.grid(False)
    im = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis_r", aspect="auto",
                   vmin=1, vmax=max(2.0, float(np.nanmax(grid))))  # fmt: skip
    for i in range(len(scores)):
        for j in range(len(columns)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{int(grid[i, j])}", ha="center", va="center", fontsize=7,
                        color="white" if grid[i, j] > 0.6 * np.nanmax(grid) else "black")  # fmt: skip
    ax.set_yticks(range(len(scores)), [f"{s} ({SCORE_FAMILY[s][0].upper()}Q)" for s in scores])
    ax.set_xticks(range(len(columns)), [f"{d}\n{c}" for d, c in columns], rotation=90, fontsize=7)
    fig.colorbar(im, ax=ax, label="rank of AU-ARC (1 = best)", shrink=0.8)
    ax.set_title("Score ranks by AU-ARC in every case (RQ: robustness, UQ: uncertainty)")
    fig.tight_layout()
    return fig
