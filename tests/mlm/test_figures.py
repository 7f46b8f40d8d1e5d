"""reliquant.mlm.reproduction.figures: the MLM figures say what they show (scales, legends, distinct lines)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgba

from reliquant.mlm.reproduction import figures as F


def test_confusion_counts_are_visible_off_the_diagonal():
    counts = np.diag([980.0, 1130, 1020, 1000, 980, 890, 950, 1020, 970, 1000])
    counts[3, 5], counts[7, 2] = 5.0, 40.0
    fig = F.confusion_figure(counts, "Figure 1")
    im = fig.axes[0].images[0]
    white = np.array(to_rgba("white"))
    assert not np.allclose(im.to_rgba(5.0), white, atol=0.05)  # a count of 5 is coloured
    assert im.norm(5.0) > 0.2  # log scale: 5 of ~1000 is a fifth of the way, not 0.005
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"5", "40", "0", "1130"} <= texts


def test_heatmap_tick_marks_cannot_read_as_minus_signs():
    fig = F.mean_std_figure(np.full((10, 10), 0.052), np.full((10, 10), 0.01), 10)
    for ax in fig.axes[:2]:
        for tick in ax.xaxis.get_major_ticks() + ax.yaxis.get_major_ticks():
            assert tick.tick1line.get_markersize() == 0
        assert all(not t.get_text().startswith("-") for t in ax.texts)


def test_figure5_lines_are_distinct_for_twelve_corruptions():
    names = [f"c{k:02d}" for k in range(12)]
    acc = pd.DataFrame(
        [
            {"corruption": n, "level": lv, "accuracy": 1 - 0.01 * lv * k}
            for k, n in enumerate(names)
            for lv in range(1, 11)
        ]
    )
    fig = F.accuracy_lines_figure(acc)
    lines = [ln for ln in fig.axes[0].get_lines() if ln.get_label() in names]
    looks = {(to_rgba(ln.get_color()), ln.get_linestyle(), ln.get_marker()) for ln in lines}
    assert len(lines) == 12 and len(looks) == 12
    # a marker of its own per corruption: lines of similar colour still differ at every point
    assert len({ln.get_marker() for ln in lines}) == 12


def test_misclustered_bars_have_a_legend():
    fig = F.bars_figure([np.full(10, 0.1)], ["example"], "distance", highlight=[[3, 8]])
    legend = fig.axes[1].get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["true class (3)", "assigned cluster (8)", "other classes"]


def test_pixelation_tick_labels_are_readable():
    images = {lv: np.zeros((28, 28)) for lv in range(3)}
    soft = {lv: np.full(10, 0.1) for lv in range(3)}
    fig = F.pixelation_figure(images, soft, 3, "Figure 6")
    sizes = [t.get_fontsize() for ax in fig.axes[3:] for t in ax.get_xticklabels()]
    assert sizes and min(sizes) >= 7
