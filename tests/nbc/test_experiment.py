"""reliquant.nbc.reproduction.experiment: one training set and one (N_train, gamma) cell of Section 7."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.core.io import read_frame, write_frame
from reliquant.nbc.classifier import fit_nbc, predict
from reliquant.nbc.reproduction.curves import cell_curves
from reliquant.nbc.reproduction.distributions import make_distributions, sample_joint
from reliquant.nbc.reproduction.experiment import (
    CELL_SCHEMA,
    METRICS,
    evaluate_training_set,
    gamma_key,
    parse_gamma,
    run_cell,
)

DESIGN = {
    "class_probs": [0.4, 0.35, 0.25],
    "n_values": [2, 3, 3, 4],
    "favoured": [[0, 0, 0, 0], [1, 1, 1, 1], [0, 2, 2, 3]],
    "p_favoured": 0.85,
    "beta": 0.3,
    "n_shift": 2,
    "n_test": 200,
}
FIT = {
    "n_train_sets": 2,
    "alphas": [0.1, 1.0, 5.0],
    "cv_folds": 5,
    "n_bootstrap": 4,
    "eps_loc_tol": 1e-12,
}


def test_evaluate_training_set_consistency() -> None:
    d = make_distributions(DESIGN, seed=1)
    rng = np.random.default_rng(3)
    X_tr, y_tr = sample_joint(rng, d["test"], 40)
    res = evaluate_training_set(
        X_tr, y_tr, d["X_test"], d["y_test"], 3, DESIGN["n_values"], FIT["alphas"], 5, 4, rng
    )
    assert res["alpha"] in FIT["alphas"]
    model = fit_nbc(X_tr, y_tr, 3, DESIGN["n_values"], res["alpha"])
    np.testing.assert_array_equal(res["y_pred"], predict(model, d["X_test"]))
    np.testing.assert_array_equal(res["correct"], res["y_pred"] == d["y_test"])
    # identical features -> bit-identical metric values
    keys = [tuple(r) for r in d["X_test"]]
    for name in METRICS:
        by_key: dict = {}
        for key, v in zip(keys, res[name], strict=True):
            assert by_key.setdefault(key, v) == v
    assert np.all((res["eps_glob"] >= 0) & (res["eps_glob"] <= 0.5))
    assert np.all((res["eps_loc"] >= 0) & (res["eps_loc"] <= 0.5))
    assert np.all(res["u_e"] >= 0)


def test_run_cell_deterministic_and_curves_end_at_accuracy(tmp_path) -> None:
    d = make_distributions(DESIGN, seed=2)
    a = run_cell(d, 25, 0.2, FIT, seed=9)
    b = run_cell(d, 25, 0.2, FIT, seed=9)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == DESIGN["n_shift"] * FIT["n_train_sets"] * DESIGN["n_test"]
    assert not a.equals(run_cell(d, 25, 0.4, FIT, seed=9))
    write_frame(a, tmp_path / "cell.parquet", CELL_SCHEMA)  # the table fits its schema
    np.testing.assert_array_equal(read_frame(tmp_path / "cell.parquet")["eps_loc"], a["eps_loc"])
    curves = cell_curves(a)
    acc = a.groupby("train_set")["correct"].mean()
    last = curves[curves["n_accepted"] == DESIGN["n_test"]].set_index("train_set")
    for name in METRICS:
        np.testing.assert_allclose(last[name], acc.loc[last.index], atol=1e-12)
    # shuffling the test rows changes nothing
    shuffled = a.sample(frac=1.0, random_state=0)
    shuffled["test_index"] = np.random.default_rng(0).permutation(len(shuffled)) % DESIGN["n_test"]
    shuffled = shuffled.sort_values(["train_set", "test_index"])
    pd.testing.assert_frame_equal(
        cell_curves(shuffled).reset_index(drop=True), curves.reset_index(drop=True)
    )


def test_gamma_text_is_canonical() -> None:
    assert gamma_key(0.2) == "0.2" and gamma_key(0) == "0"
    assert parse_gamma("0.4") == 0.4
    with pytest.raises(ValueError, match="must be written '0.4'"):
        parse_gamma("0.40")
