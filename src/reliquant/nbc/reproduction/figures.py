"""Figures 1 (mean accuracy-acceptance curves) and 2 (their standard deviations) of paper 000."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from reliquant.nbc.reproduction.experiment import METRICS, gamma_key

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_curve_grid"]


def plot_curve_grid(curves: pd.DataFrame, stat: str, title: str | None = None) -> Figure:
    """Figures 1 and 2 of paper 000: 3 x 3 grid (rows N_train decreasing, columns gamma).

    ``stat`` is ``"mean"`` or ``"std"`` (sample std, ddof = 1) of the accuracy over the training
    sets of each cell at each acceptance rate; one line per metric.
    """
    import matplotlib.pyplot as plt

    from reliquant.core.plotting import PALETTE, apply_style

    if stat not in ("mean", "std"):
        raise ValueError(f"stat must be 'mean' or 'std'; got {stat!r}")
    apply_style()
    names = list(METRICS)
    agg = curves.groupby(["n_train", "gamma", "rate"], sort=True)[names].agg(stat).reset_index()
    ns = sorted(agg["n_train"].unique(), reverse=True)
    gs = sorted(agg["gamma"].unique())
    fig, axes = plt.subplots(
        len(ns),
        len(gs),
        figsize=(3.2 * len(gs), 2.6 * len(ns)),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    styles = {"uncertainty": "-", "robustness": "--"}
    for i, n in enumerate(ns):
        for j, g in enumerate(gs):
            ax = axes[i][j]
            sub = agg[(agg["n_train"] == n) & (agg["gamma"] == g)]
            for k, name in enumerate(names):
                _, fam, label = METRICS[name]
                ax.plot(sub["rate"], sub[name], styles[fam], color=PALETTE[k], lw=1.2, label=label)
            ax.set_title(rf"$N_{{train}}$ = {n}, $\gamma$ = {gamma_key(g)}")
            if i == len(ns) - 1:
                ax.set_xlabel("acceptance rate r")
            if j == 0:
                ax.set_ylabel("mean accuracy" if stat == "mean" else "std of accuracy")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(names), bbox_to_anchor=(0.5, 0.0))
    return fig
