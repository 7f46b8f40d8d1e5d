"""The Pima sensitivity table computed all cells at once (subject by subject, the normal
scores of each subject's NORTA draws shared between cells) against the cells computed one
at a time, each on its own: the tables must be identical, value for value."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from reliquant.trees.reproduction.data import filter_pima
from reliquant.trees.reproduction.per_sample import anytime_norta_robustness, anytime_norta_tables
from reliquant.trees.reproduction.pima import pima, pima_cell, pima_fit, pima_sensitivity

RAW = Path(__file__).resolve().parents[2] / "data" / "raw"

EXP = {
    "model": {"kind": "xgboost", "max_depth": 2},
    "test_fraction": 0.1,
    "snr": 10.0,
    "readings": ["variance", "amplitude"],
    # one round uses fewer features than three: cells with other in-play features (another
    # correlation of the normal scores) alternate with cells that share theirs
    "rounds": [1, 3],
    "default": {"reading": "amplitude", "rounds": 3},
    "families": {
        "Pregnancies": "exponential",
        "Glucose": "normal",
        "BloodPressure": "normal",
        "Insulin": "exponential",
        "BMI": "normal",
        "DiabetesPedigreeFunction": "normal",
        "Age": "exponential",
    },
    "centred": False,
    "confidence": 0.95,
    "half_width": 1e-3,
    # two rounds at most, the second of 2.2 chunks of 4,096 draws (a short one at its end)
    "max_draws": 140_000,
    "max_boxes": 0,
    "engine_tol": 1e-3,
    "abseps": 1e-5,
}
PAPER = {
    "pima_accuracy": 0.75,
    "pima_min": 0.34,
    "pima_max": 1.0,
    "pima_n_above": 55,
    "pima_n_test": 73,
    "pima_threshold": 0.9,
}


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    path = RAW / "pima" / "diabetes.csv"
    if not path.exists():
        pytest.skip(f"{path} not vendored")
    return pd.read_csv(path)


@pytest.mark.slow
def test_all_cells_at_once_equal_each_cell_on_its_own(raw):
    """Every cell's table computed subject by subject with the other cells (shared normal
    scores; one numba thread) equals the table pima_cell computes alone; so do pima()'s
    sensitivity table and default cell (on every numba thread)."""
    frame = filter_pima(raw)
    fits = {r: pima_fit(frame, exp=EXP, seed=3, rounds=r) for r in EXP["rounds"]}
    in_play = {len({int(f) for t in fits[r].ensemble.trees for f in t.feature[t.left >= 0]})
               for r in EXP["rounds"]}  # fmt: skip
    assert len(in_play) == 2  # the cells do not all share their in-play features
    alone = [
        pima_cell(frame, exp=EXP, seed=3, reading=reading, rounds=r, fit=fits[r])
        for reading in EXP["readings"]
        for r in EXP["rounds"]
    ]
    drawn = np.concatenate([c.table["n_draws"].to_numpy() for c in alone])
    assert drawn.max() == EXP["max_draws"] and drawn.min() < EXP["max_draws"]
    settings = {k: EXP[k] for k in ("confidence", "half_width", "max_draws", "max_boxes")}
    settings.update(tol=EXP["engine_tol"], abseps=EXP["abseps"], seed=3, key="pima")
    fit = fits[EXP["rounds"][0]]
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        tables = anytime_norta_tables(
            [(c.fit.ensemble, c.specs, c.corr) for c in alone],
            x_test=fit.x_test, y_test=fit.y_test, **settings,
        )  # fmt: skip
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        result = pima(raw, exp=EXP, seed=3, paper=PAPER)
    finally:
        numba.set_num_threads(before)
    for table, cell in zip(tables, alone, strict=True):
        assert table.equals(cell.table), (cell.reading, cell.rounds)
    expected = pima_sensitivity(
        alone, snr=EXP["snr"], threshold=PAPER["pima_threshold"], default=("amplitude", 3)
    )
    assert result.sensitivity.equals(expected)
    assert result.table.equals(alone[-1].table)


def test_tables_of_several_models_equal_each_model_alone(raw):
    """anytime_norta_tables for several models (one repeated) equals
    anytime_norta_robustness of each."""
    frame = filter_pima(raw)
    settings = {k: EXP[k] for k in ("confidence", "half_width", "max_draws", "max_boxes")}
    settings.update(tol=EXP["engine_tol"], abseps=EXP["abseps"], seed=5, key="t")
    fit = pima_fit(frame, exp=EXP, seed=3, rounds=3)
    cell = pima_cell(frame, exp=EXP, seed=3, reading="variance", rounds=3, fit=fit)
    models = [(fit.ensemble, cell.specs, cell.corr)] * 2
    x, y = fit.x_test[:6], fit.y_test[:6]
    tables = anytime_norta_tables(models, x_test=x, y_test=y, **settings)
    alone = anytime_norta_robustness(
        fit.ensemble, x_test=x, y_test=y, specs=cell.specs, corr=cell.corr, **settings
    )
    assert len(tables) == 2
    for table in tables:
        assert table.equals(alone)
