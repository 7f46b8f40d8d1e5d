"""Figures of the tree experiments (papers 001/002, Section 5), as matplotlib Figures.

The experiment functions of :mod:`reliquant.trees.reproduction.experiments` return them; the scripts save
them through :func:`reliquant.core.io.save_figure`.

* :func:`plot_box_comparison` - Table 1: all boxes vs 99 % boxes (Figure 4 of 001).
* :func:`plot_runtimes` - Table 2: seconds per sample and method.
* :func:`plot_mc_comparison` - Table 3: exact robustness vs Monte Carlo.
* :func:`plot_histogram` - Figure 4 of 002: robustness of the Pima test subjects.
* :func:`plot_per_sample` - Figure 5 of 001: robustness per Iris test sample with bounds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from reliquant.trees.reproduction.agreement import r2_score

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "figure_axes",
    "plot_box_comparison",
    "plot_histogram",
    "plot_mc_comparison",
    "plot_per_sample",
    "plot_runtimes",
]


def figure_axes(width: float = 4.2, height: float = 3.4) -> tuple[Figure, Axes]:
    """A new figure and its one axes in the project's style (for every figure of this topic).

    matplotlib is imported here, at the first figure, not with the module: the jobs that
    draw none (Table 3 per size, the kernels) do not load it."""
    import matplotlib.pyplot as plt

    from reliquant.core.plotting import apply_style

    apply_style()
    return plt.subplots(figsize=(width, height))


def _palette() -> tuple:
    """The project's colours (:data:`reliquant.core.plotting.PALETTE`)."""
    from reliquant.core.plotting import PALETTE

    return PALETTE


def plot_box_comparison(table: pd.DataFrame) -> Figure:
    """Robustness from all boxes against the 99 % boxes per test sample, with the identity
    line (the figure paper 001 shows next to Table 1, its Figure 4)."""
    fig, ax = figure_axes()
    ax.plot([0, 1], [0, 1], ls="--", color=_palette()[3], lw=1, label="identity")
    ax.scatter(
        table["robustness_all"],
        table["robustness_pruned"],
        s=18,
        color=_palette()[0],
        label="test samples",
        zorder=3,
    )
    ax.set_xlabel("robustness, all boxes")
    ax.set_ylabel("robustness, 99 % boxes")
    r2 = r2_score(table["robustness_all"], table["robustness_pruned"])
    ax.set_title(f"Iris decision tree: R$^2$ = {r2:.6f}")
    ax.legend(loc="upper left")
    return fig


def plot_runtimes(runtimes: pd.DataFrame) -> Figure:
    """Seconds per test sample of each method (log scale), Table 2; Monte Carlo on the
    compiled kernel and, where timed, with numpy sampling and predict."""
    fig, ax = figure_axes(5.0, 3.4)
    names = {
        "all_boxes": "all boxes",
        "pruned_boxes": "99 % boxes",
        "engine": "exact engine",
        "monte_carlo": "Monte Carlo (compiled)",
        "monte_carlo_numpy": "Monte Carlo (numpy + predict)",
    }
    methods = [c for c in names if c in runtimes]
    width = 0.8 / len(methods)
    x = np.arange(len(runtimes))
    for k, m in enumerate(methods):
        ax.bar(
            x + (k - (len(methods) - 1) / 2) * width,
            runtimes[m],
            width,
            color=_palette()[k],
            label=names[m],
        )
    ax.set_yscale("log")
    ax.set_xticks(x, runtimes["sample"].astype(int).astype(str))
    ax.set_xlabel("test sample")
    ax.set_ylabel("seconds")
    ncol = min(len(methods), 3)
    rows = -(-len(methods) // ncol)
    ax.set_title("MNIST 5x5 random forest: runtime per sample", pad=10 + 12 * rows)
    ax.legend(ncol=ncol, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return fig


def plot_mc_comparison(table: pd.DataFrame) -> Figure:
    """Exact robustness against the Monte Carlo estimate, one colour per variance (Table 3)."""
    fig, ax = figure_axes()
    ax.plot([0, 1], [0, 1], ls="--", color="0.5", lw=1)
    for k, (v, g) in enumerate(table.groupby("variance", sort=True)):
        ax.scatter(
            g["robustness_exact"],
            g["mc_estimate"],
            s=10,
            alpha=0.8,
            color=_palette()[k % len(_palette())],
            label=f"variance {v:g}",
        )
    ax.set_xlabel("exact robustness (engine)")
    ax.set_ylabel("Monte Carlo estimate")
    ax.set_title("MNIST decision trees: exact vs Monte Carlo")
    ax.legend(fontsize=7)
    return fig


def plot_histogram(robustness: np.ndarray, threshold: float, title: str) -> Figure:
    """Histogram of the test samples' robustness (paper 002, Figure 4)."""
    fig, ax = figure_axes()
    r = np.asarray(robustness, dtype=np.float64)
    ax.hist(r, bins=np.linspace(0.0, 1.0, 21), color=_palette()[0], edgecolor="white")
    ax.axvline(
        threshold,
        ls="--",
        color=_palette()[3],
        lw=1,
        label=f"{int(np.count_nonzero(r > threshold))} of {r.size} above {threshold:g}",
    )
    ax.set_xlabel("probabilistic robustness")
    ax.set_ylabel("test samples")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return fig


def plot_per_sample(table: pd.DataFrame, title: str) -> Figure:
    """Robustness per test sample with its certified interval; misclassified samples
    marked (paper 001, Figure 5)."""
    fig, ax = figure_axes(5.0, 3.2)
    x = table["sample"].to_numpy()
    r = table["robustness"].to_numpy()
    ok = table["correct"].to_numpy(dtype=bool)
    ax.scatter(x[ok], r[ok], color=_palette()[0], s=22, label="correct prediction", zorder=3)
    ax.scatter(
        x[~ok], r[~ok], color=_palette()[3], marker="x", s=30, label="wrong prediction", zorder=3
    )
    ax.vlines(x, table["lower"], table["upper"], color="0.3", lw=1)
    ax.set_ylim(min(0.0, float(r.min()) - 0.05), 1.05)
    ax.set_xticks(x)
    ax.set_xlabel("test sample")
    ax.set_ylabel("probabilistic robustness")
    ax.set_title(title)
    ax.legend(loc="lower left")
    return fig
