"""The CNN's Monte Carlo robustness at more draws (reliquant.compare.reproduction.resolution):
tie shares and paired AU-ARC differences recomputed from their definitions, and refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reliquant.compare.reproduction.resolution import (
    RESOLUTION_SCHEMA,
    plot_resolution,
    resolution_markdown,
    resolution_table,
)
from reliquant.compare.reproduction.tables import prediction_frame


def _reader_auarc(score: np.ndarray, correct: np.ndarray) -> float:
    """Mean accuracy of the m most reliable predictions, m = 1..n, averaged over every order
    of tied scores (enumerated: the inputs are small)."""
    rng = np.random.default_rng(0)
    total = []
    for _ in range(4000):
        order = np.lexsort((rng.random(score.size), -score))
        kept = np.cumsum(correct[order]) / np.arange(1, score.size + 1)
        total.append(kept.mean())
    return float(np.mean(total))


def _frame(n_draws: int, rng: np.random.Generator, truth: np.ndarray, proba: np.ndarray):
    """A CNN-like table: 3 splits x 8 predictions, one clean case, an estimate from n_draws."""
    n = truth.size
    label = np.zeros(n, dtype=np.int64)
    pattern = np.tile([1, 1, 0, 1, 1, 1, 0, 1], n // 8).astype(bool)
    prediction = np.where(pattern, 0, 1)
    mc = rng.binomial(n_draws, truth) / n_draws
    return prediction_frame(
        dataset="cnn_mnist", case=np.array(["clean"] * n), condition=np.array(["clean"] * n),
        corruption=np.array(["none"] * n), item=np.arange(n), label=label,
        prediction=prediction, split=np.repeat(np.arange(3), n // 3),
        scores={"mc_robustness@0.03": mc, "max_probability": proba},
    )  # fmt: skip


def test_tie_shares_and_differences_follow_their_definitions():
    rng = np.random.default_rng(5)
    n = 24
    truth = rng.uniform(0.9, 1.0, n)
    proba = rng.uniform(0.5, 1.0, n)
    frames = {50: _frame(50, rng, truth, proba), 1000: _frame(1000, rng, truth, proba)}
    table = resolution_table(frames)
    assert list(table.columns) == RESOLUTION_SCHEMA.names
    clean = table[table["case"] == "clean"].set_index("n_draws")
    assert set(clean.index) == {50, 1000}
    for n_draws, frame in frames.items():
        diffs, ties = [], []
        for _, g in frame.groupby("split"):
            c = g["correct"].to_numpy()
            mc = g["mc_robustness@0.03"].to_numpy()
            diffs.append(_reader_auarc(mc, c) - _reader_auarc(g["max_probability"].to_numpy(), c))
            _, counts = np.unique(mc, return_counts=True)
            ties.append(counts[counts > 1].sum() / mc.size)
        d = np.array(diffs)
        half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
        row = clean.loc[n_draws]
        assert row["splits"] == 3
        assert row["tied"] == pytest.approx(np.mean(ties), abs=1e-12)
        assert row["diff_mean"] == pytest.approx(d.mean(), abs=2e-3)  # the orders are sampled
        assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * half, abs=4e-3)
    # more draws, fewer ties: the estimator's resolution, seen in the table
    assert clean.loc[1000, "tied"] < clean.loc[50, "tied"]
    text = resolution_markdown(table)
    assert text.count("| clean | 0.03 |") == 2
    fig = plot_resolution(table)
    ties_ax, diff_ax = fig.axes
    assert list(ties_ax.lines[0].get_xdata()) == [50, 1000]
    assert ties_ax.lines[0].get_ydata() == pytest.approx(100 * clean["tied"].to_numpy())


def test_tables_of_other_predictions_are_refused():
    rng = np.random.default_rng(1)
    truth, proba = rng.uniform(0.9, 1, 24), rng.uniform(0.5, 1, 24)
    a, b = _frame(50, rng, truth, proba), _frame(200, rng, truth, proba)
    b.loc[0, "item"] = 99
    with pytest.raises(ValueError, match="other predictions"):
        resolution_table({50: a, 200: b})
    with pytest.raises(ValueError, match="lacks the columns"):
        resolution_table({50: a}, comparator="margin")
    with pytest.raises(ValueError, match="empty"):
        resolution_table({})
