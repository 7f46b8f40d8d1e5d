"""The tree figures draw the data they are given (bar heights, counts, marked samples)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliquant.trees.reproduction.figures import (
    plot_box_comparison,
    plot_histogram,
    plot_mc_comparison,
    plot_per_sample,
    plot_runtimes,
)


def test_runtimes_bars_are_the_seconds_per_method():
    runtimes = pd.DataFrame(
        {
            "sample": [1, 2],
            "all_boxes": [4.0, 5.0],
            "pruned_boxes": [0.1, 0.2],
            "engine": [0.01, 0.02],
            "monte_carlo": [0.5, 0.6],
        }
    )
    ax = plot_runtimes(runtimes).axes[0]
    heights = [[bar.get_height() for bar in c] for c in ax.containers]
    assert heights == [[4.0, 5.0], [0.1, 0.2], [0.01, 0.02], [0.5, 0.6]]
    assert ax.get_yscale() == "log"


def test_histogram_counts_samples_above_the_threshold():
    r = np.array([0.2, 0.95, 0.995, 1.0])
    ax = plot_histogram(r, 0.99, "t").axes[0]
    assert sum(p.get_height() for p in ax.patches) == 4
    assert ax.get_legend().get_texts()[0].get_text() == "2 of 4 above 0.99"


def test_per_sample_marks_wrong_predictions():
    table = pd.DataFrame(
        {
            "sample": [1, 2, 3],
            "robustness": [0.9, 0.5, 1.0],
            "lower": [0.89, 0.49, 1.0],
            "upper": [0.91, 0.51, 1.0],
            "correct": [True, False, True],
        }
    )
    ax = plot_per_sample(table, "t").axes[0]
    correct, wrong = ax.collections[0], ax.collections[1]
    np.testing.assert_array_equal(correct.get_offsets(), [[1, 0.9], [3, 1.0]])
    np.testing.assert_array_equal(wrong.get_offsets(), [[2, 0.5]])


def test_scatter_figures_show_every_sample():
    t1 = pd.DataFrame({"robustness_all": [0.2, 0.9, 0.5], "robustness_pruned": [0.2, 0.89, 0.5]})
    ax = plot_box_comparison(t1).axes[0]
    assert len(ax.collections[0].get_offsets()) == 3
    assert "R$^2$ = 0.99" in ax.get_title()
    t3 = pd.DataFrame(
        {
            "variance": [0.1, 0.1, 0.5],
            "robustness_exact": [0.1, 0.2, 0.3],
            "mc_estimate": [0.1, 0.21, 0.3],
        }
    )
    ax = plot_mc_comparison(t3).axes[0]
    assert [len(c.get_offsets()) for c in ax.collections] == [2, 1]
