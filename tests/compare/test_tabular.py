"""Tabular data sets of the compare topic: discretisation, NBC cells, the scikit-learn table,
Pima."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.compare.reproduction.tables import score_columns
from reliquant.compare.reproduction.tabular import (
    discretise,
    nbc_case,
    nbc_cell_predictions,
    pima_predictions,
    table_predictions,
)


def test_discretise_matches_a_direct_count() -> None:
    rng = np.random.default_rng(0)
    train, X = rng.normal(size=(50, 3)), rng.normal(size=(20, 3))
    codes = discretise(train, X, 4)
    for j in range(3):
        edges = np.quantile(train[:, j], [0.25, 0.5, 0.75])
        assert codes[:, j].tolist() == [int((x >= edges).sum()) for x in X[:, j]]
    assert codes.min() >= 0 and codes.max() <= 3
    with pytest.raises(ValueError, match="n_bins"):
        discretise(train, X, 1)


def _cell(n_train: int, gamma: float, n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(n_train)
    rows = []
    for train_set in (0, 1):
        y = rng.integers(0, 3, n)
        rows.append(pd.DataFrame({
            "n_train": n_train, "gamma": gamma, "train_set": train_set,
            "test_index": np.arange(n)[::-1], "y_true": y, "y_pred": rng.integers(0, 3, n),
            **{m: rng.random(n) for m in ("u_m", "u_H", "u_a", "u_t", "u_e", "eps_glob", "eps_loc")},
        }))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


def test_nbc_cells_every_training_set_negated_exactly() -> None:
    cells = {(25, 0.0): _cell(25, 0.0), (25, 0.4): _cell(25, 0.4)}
    frame = nbc_cell_predictions(cells)
    assert frame["case"].unique().tolist() == [nbc_case(25, 0.0), nbc_case(25, 0.4)]
    assert frame["condition"].unique().tolist() == ["clean", "shifted"]
    assert sorted(frame["split"].unique()) == [0, 1]
    for train_set in (0, 1):
        src = cells[(25, 0.4)]
        src = src[src["train_set"] == train_set].sort_values("test_index")
        got = frame[(frame["case"] == "N=25, gamma=0.4") & (frame["split"] == train_set)]
        assert got["item"].tolist() == src["test_index"].tolist()
        assert (got["negative_u_m"].to_numpy() == -src["u_m"].to_numpy()).all()
        assert (got["negative_u_H"].to_numpy() == -src["u_H"].to_numpy()).all()
        assert (got["eps_loc"].to_numpy() == src["eps_loc"].to_numpy()).all()
        assert (got["correct"] == (src["y_true"].to_numpy() == src["y_pred"].to_numpy())).all()


def test_wine_table_scores_every_row_twice() -> None:
    exp = dict(name="wine", test_fraction=0.5, n_bins=3, flip=0.5, alphas=[0.1, 1.0],
               cv_folds=3, n_bootstrap=2)  # fmt: skip
    frame = table_predictions(exp=exp, seed=1, n_splits=2)
    assert frame["case"].value_counts().to_dict() == {"clean": 178, "value noise": 178}
    # each split its own random split of the 178 wines
    items = [set(frame.loc[(frame["split"] == s) & (frame["case"] == "clean"), "item"])
             for s in (0, 1)]  # fmt: skip
    assert len(items[0]) == len(items[1]) == 89 and items[0] != items[1]
    assert set(score_columns(frame)) >= {"eps_glob", "eps_loc", "log_ratio", "negative_u_e"}
    clean = frame[frame["case"] == "clean"]
    assert clean["correct"].mean() > 0.8  # the NBC fits wine well
    assert (frame["eps_glob"] >= 0).all() and (frame["eps_loc"] >= frame["eps_glob"] - 1e-12).all()
    again = table_predictions(exp=exp, seed=1, n_splits=2)
    pd.testing.assert_frame_equal(frame, again)


def test_pima_like_table() -> None:
    from reliquant.trees.reproduction.data import PIMA_DROPPED, PIMA_FEATURES, PIMA_TARGET

    rng = np.random.default_rng(0)
    n = 120
    data = {c: rng.uniform(1, 100, n) for c in [*PIMA_FEATURES, *PIMA_DROPPED]}
    data[PIMA_TARGET] = (data[PIMA_FEATURES[1]] + rng.normal(0, 20, n) > 50).astype(int)
    exp = dict(model={"n_estimators": 5, "max_depth": 2}, test_fraction=0.5, shift_scale=0.5,
               snr=10.0, max_boxes=0, max_draws=300, half_width=0.05)  # fmt: skip
    frame = pima_predictions(pd.DataFrame(data), exp=exp, seed=2)
    assert frame["case"].value_counts().to_dict() == {"clean": 60, "noise": 60}
    assert ((frame["tree_robustness"] >= 0) & (frame["tree_robustness"] <= 1)).all()
    assert frame["item"].iloc[:60].tolist() == frame["item"].iloc[60:].tolist()


def test_a_noise_variance_out_of_floating_point_names_snr() -> None:
    """Below the schema's bounds (sd / snr)^2 is infinite: the job names the key, not the
    noise model's "variances must be finite and >= 0"."""
    from reliquant.trees.reproduction.data import PIMA_DROPPED, PIMA_FEATURES, PIMA_TARGET

    rng = np.random.default_rng(1)
    n = 40
    data = {c: rng.uniform(1, 100, n) for c in [*PIMA_FEATURES, *PIMA_DROPPED]}
    data[PIMA_TARGET] = np.arange(n) % 2
    exp = dict(model={"n_estimators": 2, "max_depth": 2}, test_fraction=0.5, shift_scale=0.5,
               snr=1.0e-300, max_boxes=0, max_draws=100, half_width=0.1)  # fmt: skip
    with pytest.raises(ValueError, match=r"compare.pima.snr = 1e-300 gives noise variances"):
        pima_predictions(pd.DataFrame(data), exp=exp, seed=2)
