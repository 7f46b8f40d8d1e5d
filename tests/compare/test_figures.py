"""The figures draw a panel per data set, a row per headline comparison and a cell per
declared comparison."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliquant.compare.reproduction.evaluation import (
    curve_table,
    declared_table,
    headline_table,
    split_auarc,
)
from reliquant.compare.reproduction.figures import (
    difference_heatmap,
    forest_figure,
    rejection_figure,
)
from reliquant.compare.reproduction.tables import assign_parts, prediction_frame

COMPARISONS = {
    "pima_xgb": {"paper": ["tree_robustness"], "uncertainty": ["margin"]},
    "table_nbc": {"paper": ["eps_loc"], "uncertainty": ["max_probability"]},
}


def _tables():
    rng = np.random.default_rng(0)
    out = []
    for dataset, scores in (("pima_xgb", ("tree_robustness", "margin")),
                            ("table_nbc", ("eps_loc", "max_probability"))):  # fmt: skip
        parts = []
        for split in range(3):
            for case, cond in (("clean", "clean"), ("noise", "shifted")):
                right = rng.random(60) < 0.7
                parts.append(prediction_frame(
                    dataset=dataset, case=case, condition=cond, item=np.arange(60),
                    label=np.ones(60), prediction=np.where(right, 1, 0), split=split,
                    scores={s: right + rng.normal(0, 1, 60) for s in scores},
                ))  # fmt: skip
        out.append(assign_parts(pd.concat(parts), validation_fraction=0.5, seed=0))
    return out


def test_figures() -> None:
    tables = _tables()
    fig = rejection_figure(curve_table(tables, points=20))
    assert sum(ax.get_visible() for ax in fig.axes) == 2
    assert len(fig.axes[0].lines) == 2
    split = split_auarc(tables)
    heat = difference_heatmap(declared_table(tables, split, COMPARISONS, confidence=0.95))
    assert len(heat.axes[0].get_xticklabels()) == 4  # 2 data sets x 2 cases
    assert len(heat.axes[0].get_yticklabels()) == 2  # 2 pairs
    forest = forest_figure(headline_table(tables, split, COMPARISONS, confidence=0.95))
    assert len(forest.axes[0].get_yticklabels()) == 4  # 2 data sets x 2 conditions


def test_the_forest_plot_marks_the_best_of_each_family_beside_its_row() -> None:
    """With the family table, each row gets one marker per comparator family at that
    family's mean difference (the same x as the table), in the legend by family."""
    from reliquant.compare.reproduction.family_verdicts import family_table
    from reliquant.compare.reproduction.figures import FAMILY_MARKERS

    tables = _tables()
    split = split_auarc(tables, metrics=False)
    headline = headline_table(tables, split, COMPARISONS, confidence=0.95)
    families = family_table(tables, split, COMPARISONS, confidence=0.95)
    bare = forest_figure(headline)
    forest = forest_figure(headline, families)
    ax = forest.axes[0]
    assert len(ax.lines) == len(bare.axes[0].lines) + len(families)
    marked = [ln for ln in ax.lines if ln.get_marker() == FAMILY_MARKERS["probability"]]
    assert len(marked) == len(families)
    np.testing.assert_allclose(sorted(ln.get_xdata()[0] for ln in marked),
                               sorted(families["diff_mean"]))  # fmt: skip
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["headline comparator", "best probability"]
