"""Figures of the compare topic.

* :func:`rejection_figure`: accuracy-rejection curves, a panel per data set (its shifted
  predictions pooled, the condition the claim judges), a line per score: solid for
  robustness scores, dashed for uncertainty scores, one colour per score across panels.
* :func:`forest_figure`: the headline, a row per data set and condition: the paper score
  minus its comparator with the t-interval over splits.
* :func:`difference_heatmap`: every declared comparison's mean paired difference per data
  set and case, Holm-significant ones marked.

* :func:`noise_figure`: AU-ARC of a grid score against its noise scale, validation and test.

Public API: :func:`score_colours`, :func:`rejection_figure`, :func:`forest_figure`,
:func:`difference_heatmap`, :func:`noise_figure`.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from reliquant.compare.reproduction.tables import DATASET_TITLES, SCORE_FAMILY
from reliquant.core.plotting import apply_style

__all__ = [
    "difference_heatmap",
    "FAMILY_MARKERS",
    "forest_figure",
    "noise_figure",
    "rejection_figure",
    "score_colours",
]


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


#: The marker of each comparator family in the forest plot (the headline's is a circle).
FAMILY_MARKERS = {"probability": "s", "logit": "^", "feature distance": "D", "ensemble": "v"}


def _family_points(ax: Any, families: pd.DataFrame, rows: list, colour: dict) -> None:
    """Beside each headline row, the paper score minus the best of each comparator family
    (:mod:`reliquant.compare.reproduction.family_verdicts`): a small marker per family just
    below the row, filled where its Holm-adjusted verdict is decided."""
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        mine = families[(families["dataset"] == r.dataset) & (families["condition"] == r.condition)]
        for k, f in enumerate(mine.itertuples(index=False)):
            c = colour.get(r.condition, "black")
            decided = f.verdict in ("robustness", "uncertainty")
            ax.plot([f.diff_mean], [y - 0.16 - 0.06 * k], FAMILY_MARKERS.get(f.family, "."),
                    color=c, ms=3.5, alpha=0.8, markerfacecolor=c if decided else "white")  # fmt: skip
    handles = [plt.Line2D([], [], marker="o", color="grey", ls="", label="headline comparator")]
    handles += [plt.Line2D([], [], marker=m, color="grey", ls="", ms=4, label=f"best {name}")
                for name, m in FAMILY_MARKERS.items() if (families["family"] == name).any()]  # fmt: skip
    ax.legend(handles=handles, fontsize=6, loc="lower left")


def forest_figure(headline: pd.DataFrame, families: pd.DataFrame | None = None) -> Figure:
    """The headline as a forest plot: a row per data set and condition, the mean paired
    AU-ARC difference (paper score minus comparator) over splits with its t-interval; filled
    where the Holm-adjusted verdict is decided, a cross where the two scores rank identically
    (:func:`reliquant.compare.reproduction.evaluation.headline_table`). ``families`` (the
    family table, :func:`reliquant.compare.reproduction.family_verdicts.family_table`): the
    paper score minus the best of each comparator family beside each row, a marker per
    family (:data:`FAMILY_MARKERS`)."""
    apply_style()
    rows = list(headline.itertuples(index=False))
    if not rows:
        raise ValueError("the headline table is empty")
    fig, ax = plt.subplots(figsize=(7.5, 0.9 + (0.38 if families is None else 0.5) * len(rows)))
    colour = {"clean": "tab:blue", "shifted": "tab:red"}
    labels = []
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        c = colour.get(r.condition, "black")
        if r.verdict == "identical ranking":
            ax.plot([0.0], [y], "x", color=c, ms=7)
        else:
            lo, hi = r.ci_low, r.ci_high
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([lo, hi], [y, y], "-", color=c, lw=1.6)
            decided = r.verdict in ("robustness", "uncertainty")
            ax.plot([r.diff_mean], [y], "o", color=c, ms=6,
                    markerfacecolor=c if decided else "white")  # fmt: skip
        labels.append(f"{DATASET_TITLES.get(r.dataset, r.dataset)}, {r.condition}\n"
                      f"{r.paper_score} - {r.comparator} ({r.n_splits} splits)")  # fmt: skip
    if families is not None and len(families):
        _family_points(ax, families, rows, colour)
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(range(len(rows))[::-1], labels, fontsize=7)
    ax.set_xlabel("AU-ARC(paper score) - AU-ARC(comparator), mean over splits, 95 % t-interval")
    ax.set_title("Paper robustness score against its comparator (right: robustness better)",
                 fontsize=9)  # fmt: skip
    fig.tight_layout()
    return fig


def difference_heatmap(declared: pd.DataFrame) -> Figure:
    """Every declared comparison as a heat map: a row per (score a, score b) pair, a column per
    (data set, case); colour the mean paired AU-ARC difference over splits (diverging, 0
    white), a dot where the Holm-adjusted verdict is decided, ``=`` where the two rank
    identically; blank where a data set has no such pair."""
    apply_style()
    pairs = list(dict.fromkeys(zip(declared["score_a"], declared["score_b"], strict=True)))
    columns = list(dict.fromkeys(zip(declared["dataset"], declared["case"], strict=True)))
    grid = np.full((len(pairs), len(columns)), np.nan)
    mark = np.full(grid.shape, "", dtype=object)
    for r in declared.itertuples(index=False):
        i, j = pairs.index((r.score_a, r.score_b)), columns.index((r.dataset, r.case))
        grid[i, j] = r.diff_mean
        mark[i, j] = ("=" if r.verdict == "identical ranking" else
                      "•" if r.verdict in ("robustness", "uncertainty") else "")  # fmt: skip
    fig, ax = plt.subplots(figsize=(1.6 + 0.5 * len(columns), 1.4 + 0.3 * len(pairs)))
    ax.grid(False)
    lim = max(1e-6, float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1e-6)
    im = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r", aspect="auto", vmin=-lim,
                   vmax=lim)  # fmt: skip
    for i in range(len(pairs)):
        for j in range(len(columns)):
            if mark[i, j]:
                ax.text(j, i, mark[i, j], ha="center", va="center", fontsize=8)
    ax.set_yticks(range(len(pairs)), [f"{a} - {b}" for a, b in pairs], fontsize=6)
    ax.set_xticks(range(len(columns)), [f"{d}\n{c}" for d, c in columns], rotation=90,
                  fontsize=6)  # fmt: skip
    fig.colorbar(im, ax=ax, label="mean AU-ARC difference over splits", shrink=0.8)
    ax.set_title("Paper score (or log-ratio) minus uncertainty score; • Holm-significant, "
                 "= identical ranking", fontsize=8)  # fmt: skip
    fig.tight_layout()
    return fig


def noise_figure(noise: pd.DataFrame) -> Figure:
    """AU-ARC of each grid score against its noise scale (log axis), a panel per score, a
    line per data set and condition: solid on the validation parts (where the scale is
    chosen, the ring), dotted on the test parts
    (:func:`reliquant.compare.reproduction.evaluation.noise_table`)."""
    apply_style()
    scores = list(dict.fromkeys(noise["score"])) or ["(no grid score)"]
    fig, axes = plt.subplots(1, len(scores), figsize=(5.2 * len(scores), 3.6), squeeze=False)
    cmap = plt.get_cmap("tab20")
    for ax, score in zip(axes.ravel(), scores, strict=True):
        rows = noise[noise["score"] == score]
        keys = list(dict.fromkeys(zip(rows["dataset"], rows["condition"], strict=True)))
        for i, (dataset, condition) in enumerate(keys):
            r = rows[(rows["dataset"] == dataset) & (rows["condition"] == condition)]
            r = r.sort_values("scale")
            c = cmap(i % 20)
            label = f"{DATASET_TITLES.get(dataset, dataset)}, {condition}"
            ax.plot(r["scale"], r["auarc_validation"], "-o", color=c, ms=3, lw=1.2, label=label)
            ax.plot(r["scale"], r["auarc_test"], ":", color=c, lw=1.0)
            pick = r[r["chosen"]]
            ax.plot(pick["scale"], pick["auarc_validation"], "o", ms=9, mfc="none", color=c)
        ax.set_xscale("log")
        ax.set_xlabel(
            "noise variance (MNIST: on the [0, 1] pixel scale; tables: in units of each "
            "feature's training variance)",
            fontsize=7,
        )
        ax.set_ylabel("mean AU-ARC over splits")
        ax.set_title(f"{score}: solid validation, dotted test, ring chosen", fontsize=9)
        if keys:
            ax.legend(fontsize=6, loc="best")
    fig.tight_layout()
    return fig
