"""Figures of the MLM paper (paper 004, Figures 1-7) from arrays and tables; no file I/O.

Every function returns a matplotlib ``Figure``; callers save it with
``reliquant.core.io.save_figure``. Call ``reliquant.core.plotting.apply_style()`` first.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reliquant.core.plotting import PALETTE

__all__ = [
    "CLASSES",
    "LINE_STYLES",
    "MARKERS",
    "accuracy_heatmap_figure",
    "accuracy_lines_figure",
    "bars_figure",
    "confusion_figure",
    "heatmap",
    "mean_std_figure",
    "mlm_figure",
    "per_level_figure",
    "pixelation_figure",
]

CLASSES = list(range(10))
#: Line styles of Figure 5: 12 corruptions, each a distinct (colour, style, marker).
LINE_STYLES = ("-", "--", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")


def heatmap(
    ax: Axes,
    matrix: np.ndarray,
    cmap: str,
    fmt: str = "{:.2f}",
    vmin: float | None = None,
    vmax: float | None = None,
    xlabels: Sequence | None = None,
    ylabels: Sequence | None = None,
    annotate: bool = True,
    fontsize: float = 6.5,
    norm: Normalize | None = None,
):
    """Draw ``matrix`` as an annotated heatmap (NaN cells blank); returns the image.

    Tick marks are hidden (labels stay), so a mark never reads as a minus sign in front of a
    cell's number. ``norm`` (e.g. ``LogNorm``) replaces ``vmin``/``vmax``; cells it cannot
    map (0 on a log scale) stay blank but keep their number.
    """
    m = np.asarray(matrix, dtype=np.float64)
    shown = np.ma.masked_invalid(
        m if norm is None or not isinstance(norm, LogNorm) else np.where(m > 0, m, np.nan)
    )
    if norm is None:
        im = ax.imshow(shown, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    else:
        im = ax.imshow(shown, cmap=cmap, norm=norm, aspect="auto")
    ax.grid(False)
    ax.tick_params(length=0)
    xlabels = CLASSES if xlabels is None else xlabels
    ylabels = CLASSES if ylabels is None else ylabels
    ax.set_xticks(range(m.shape[1]), labels=xlabels)
    ax.set_yticks(range(m.shape[0]), labels=ylabels)
    if annotate:
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                if np.isfinite(m[i, j]):
                    inside = np.isfinite(shown.filled(np.nan)[i, j])
                    r, g, b, _ = im.cmap(im.norm(m[i, j])) if inside else (1, 1, 1, 1)
                    dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # perceived luminance
                    ax.text(
                        j,
                        i,
                        fmt.format(m[i, j]),
                        ha="center",
                        va="center",
                        fontsize=fontsize,
                        color="white" if dark else "black",
                    )
    return im


def confusion_figure(counts: np.ndarray, title: str) -> Figure:
    """Figure 1: confusion matrix counts (true rows, predicted columns), on a log colour scale
    so the off-diagonal counts (a few to a few hundred) are visible beside the diagonal's
    thousands; zero cells are white."""
    counts = np.asarray(counts, dtype=np.float64)
    top = max(float(np.nanmax(counts)), 10.0)
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    im = heatmap(ax, counts, "Blues", fmt="{:.0f}", norm=LogNorm(vmin=1, vmax=top))
    ax.set_xlabel("predicted label")
    ax.set_ylabel("true label")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, shrink=0.85, label="count (log scale)")
    return fig


def mlm_figure(likelihood: np.ndarray, title: str) -> Figure:
    """Figure 2: a Misclassification Likelihood Matrix (dark blue = more likely; empty diagonal)."""
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    im = heatmap(ax, likelihood, "YlGnBu", fmt="{:.3f}")
    ax.set_xlabel("misclassified as (centroid c)")
    ax.set_ylabel("true class y")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, shrink=0.85, label="likelihood $L_{y,c}$")
    return fig


def mean_std_figure(mean: np.ndarray, std: np.ndarray, n_levels: int) -> Figure:
    """Eqs. 9-10: mean and standard deviation of ``L^(p)`` across the levels, side by side."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.3))
    for ax, m, name, cmap in [
        (axes[0], mean, f"mean over {n_levels} levels (eq. 9)", "YlGnBu"),
        (axes[1], std, f"standard deviation over {n_levels} levels (eq. 10)", "OrRd"),
    ]:
        im = heatmap(ax, m, cmap, fmt="{:.3f}")
        ax.set_xlabel("misclassified as")
        ax.set_ylabel("true class")
        ax.set_title(name)
        fig.colorbar(im, ax=ax, shrink=0.85)
    return fig


def per_level_figure(matrices: dict[int, np.ndarray]) -> Figure:
    """``L^(p)`` for every level p on a shared colour scale (Section 3.4)."""
    levels = sorted(matrices)
    ncols = min(5, len(levels))
    nrows = int(np.ceil(len(levels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.0 * ncols, 2.9 * nrows), squeeze=False)
    vmax = max(np.nanmax(m) for m in matrices.values())
    im = None
    for ax, lev in zip(axes.flat, levels, strict=False):
        im = heatmap(ax, matrices[lev], "YlGnBu", vmin=0, vmax=vmax, annotate=False)
        ax.set_title(f"level {lev}")
        ax.tick_params(labelsize=6)
    for ax in list(axes.flat)[len(levels) :]:
        ax.axis("off")
    fig.colorbar(im, ax=axes, shrink=0.8, label="likelihood")
    return fig


def bars_figure(
    values: Sequence[np.ndarray],
    titles: Sequence[str],
    ylabel: str,
    images: Sequence[np.ndarray | None] | None = None,
    highlight: Sequence[Sequence[int]] | None = None,
) -> Figure:
    """Figures 3-4: per example, its digit (left) and a bar chart over the 10 classes.

    ``highlight[k] = [true class, cluster]`` colours those bars blue and red.
    """
    n = len(values)
    fig, axes = plt.subplots(
        1, 2 * n, figsize=(5.4 * n, 3.2), gridspec_kw={"width_ratios": [1, 3] * n}, squeeze=False
    )
    for k in range(n):
        img_ax, ax = axes[0, 2 * k], axes[0, 2 * k + 1]
        image = images[k] if images else None
        if image is not None:
            img_ax.imshow(image, cmap="gray_r")
        img_ax.set_xticks([])
        img_ax.set_yticks([])
        img_ax.grid(False)
        for spine in img_ax.spines.values():
            spine.set_visible(image is not None)
        colours = [PALETTE[7]] * 10
        marks = highlight[k] if highlight else []
        for c in marks:
            colours[c] = PALETTE[0] if c == marks[0] else PALETTE[3]
        ax.bar(CLASSES, values[k], color=colours)
        ax.set_xticks(CLASSES)
        ax.set_xlabel("class")
        ax.set_ylabel(ylabel)
        ax.set_title(titles[k])
        if marks:
            legend = [Patch(color=PALETTE[0], label=f"true class ({marks[0]})")]
            legend += [Patch(color=PALETTE[3], label=f"assigned cluster ({c})") for c in marks[1:]]
            legend.append(Patch(color=PALETTE[7], label="other classes"))
            ax.legend(handles=legend, fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def accuracy_lines_figure(acc: pd.DataFrame) -> Figure:
    """Figure 5: accuracy against level, one line per corruption (plus the mean). Each line
    has its own colour, line style and marker, so no two corruptions look alike."""
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    names = sorted(acc["corruption"].unique())
    cmap = plt.get_cmap("tab10")
    for k, name in enumerate(names):
        sub = acc[acc["corruption"] == name].sort_values("level")
        ax.plot(
            sub["level"],
            sub["accuracy"],
            marker=MARKERS[k % len(MARKERS)],
            ms=4,
            linestyle=LINE_STYLES[(k // 10) % len(LINE_STYLES)],
            color=cmap(k % 10),
            label=name,
        )
    mean = acc.groupby("level")["accuracy"].mean()
    ax.plot(mean.index, mean.to_numpy(), "k--", lw=2, label="mean")
    ax.set_xlabel("perturbation level")
    ax.set_ylabel("accuracy")
    ax.set_xticks(sorted(acc["level"].unique()))
    ax.legend(ncols=2, loc="lower left")
    ax.set_title("Accuracy of the CNN on perturbed MNIST")
    return fig


def accuracy_heatmap_figure(pivot: pd.DataFrame) -> Figure:
    """Figure 7: accuracy per corruption (rows) and level (columns); red high, blue low."""
    fig, ax = plt.subplots(figsize=(8, 5))
    im = heatmap(
        ax,
        pivot.to_numpy(),
        "RdYlBu_r",
        fmt="{:.2f}",
        xlabels=list(pivot.columns),
        ylabels=list(pivot.index),
        fontsize=7,
    )
    ax.set_xlabel("perturbation intensity (level)")
    ax.set_ylabel("perturbation")
    ax.set_title("Perturbed MNIST accuracy")
    fig.colorbar(im, ax=ax, shrink=0.85, label="accuracy")
    return fig


def pixelation_figure(
    images: dict[int, np.ndarray], mean_softmax: dict[int, np.ndarray], digit_class: int, title: str
) -> Figure:
    """Figure 6: a digit at each level (top) and the mean softmax of its class per level (bottom)."""
    levels = sorted(set(images) | set(mean_softmax))
    n = len(levels)
    fig, axes = plt.subplots(2, n, figsize=(1.9 * n, 3.8), squeeze=False)
    for k, lev in enumerate(levels):
        top, bottom = axes[0, k], axes[1, k]
        if lev in images:
            top.imshow(images[lev], cmap="gray", vmin=0, vmax=255)
        top.set_xticks([])
        top.set_yticks([])
        top.grid(False)
        top.set_title(f"level {lev}", fontsize=8)
        if lev in mean_softmax:
            colours = [PALETTE[0] if c == digit_class else PALETTE[7] for c in CLASSES]
            bottom.bar(CLASSES, mean_softmax[lev], color=colours)
        bottom.set_ylim(0, 1)
        bottom.set_xticks(CLASSES, labels=[str(c) for c in CLASSES], fontsize=7)
        if k:
            bottom.set_yticklabels([])
    axes[1, 0].set_ylabel("mean softmax")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
