"""The two figures draw a panel per data set and a cell per (score, case)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliquant.compare.reproduction.evaluation import auarc_table, curve_table
from reliquant.compare.reproduction.figures import rank_heatmap, rejection_figure
from reliquant.compare.reproduction.tables import prediction_frame


def _tables():
    rng = np.random.default_rng(0)
    out = []
    for dataset, scores in (("pima_xgb", ("tree_robustness", "margin")),
                            ("table_nbc", ("eps_loc", "max_probability"))):  # fmt: skip
        for case, cond in (("clean", "clean"), ("noise", "shifted")):
            right = rng.random(60) < 0.7
            out.append(prediction_frame(
                dataset=dataset, case=case, condition=cond, item=np.arange(60),
                label=np.ones(60), prediction=np.where(right, 1, 0),
                scores={s: right + rng.normal(0, 1, 60) for s in scores},
            ))  # fmt: skip
    return [pd.concat(out[:2]), pd.concat(out[2:])]


def test_figures() -> None:
    tables = _tables()
    fig = rejection_figure(curve_table(tables, points=20))
    assert sum(ax.get_visible() for ax in fig.axes) == 2
    assert len(fig.axes[0].lines) == 2
    heat = rank_heatmap(auarc_table(tables, n_boot=10, confidence=0.9, seed=0))
    assert len(heat.axes[0].get_xticklabels()) == 4
