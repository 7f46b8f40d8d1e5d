"""The Section 7 experiment of paper 000: distributions, sampling, one cell, curves, claims."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.nbc.classifier import fit_nbc, predict
from reliquant.nbc.experiment import (
    METRICS,
    auc_table,
    cell_curves,
    claims_check,
    evaluate_training_set,
    make_distributions,
    mix,
    p_fix,
    run_cell,
    sample_joint,
    table_from_frame,
    table_to_frame,
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


def test_p_fix_is_the_stated_naive_bayes_joint() -> None:
    t = p_fix(DESIGN["class_probs"], DESIGN["n_values"], DESIGN["favoured"], 0.85)
    assert t.shape == (3, 2, 3, 3, 4)
    np.testing.assert_allclose(t.sum(), 1.0)
    np.testing.assert_allclose(t.sum(axis=(1, 2, 3, 4)), DESIGN["class_probs"])
    for c in range(3):
        cond = t[c] / t[c].sum()
        margins = [cond.sum(axis=tuple(j for j in range(4) if j != i)) for i in range(4)]
        for i, v in enumerate(DESIGN["n_values"]):
            expect = np.full(v, 0.15 / (v - 1))
            expect[DESIGN["favoured"][c][i]] = 0.85
            np.testing.assert_allclose(margins[i], expect)
        # eq. 17: the joint given c is the product of its margins
        outer = margins[0][:, None, None, None] * margins[1][None, :, None, None]
        outer = outer * margins[2][None, None, :, None] * margins[3][None, None, None, :]
        np.testing.assert_allclose(cond, outer)
    with pytest.raises(ValueError, match="favoured values of feature 0"):
        p_fix([0.5, 0.5], [2], [[0], [2]], 0.85)


def test_mixtures_sampling_and_frames() -> None:
    d = make_distributions(DESIGN, seed=5)
    np.testing.assert_allclose(d["test"], 0.7 * d["fix"] + 0.3 * d["rand"])
    np.testing.assert_allclose(
        mix(d["test"], d["shift"][1], 0.4), 0.6 * d["test"] + 0.4 * d["shift"][1]
    )
    for t in [d["rand"], *d["shift"]]:
        np.testing.assert_allclose(t.sum(), 1.0)
        assert np.all(t > 0)
    again = make_distributions(DESIGN, seed=5)
    for k in d:
        np.testing.assert_array_equal(d[k], again[k])
    assert not np.array_equal(d["shift"][0], d["shift"][1])
    # Monte Carlo: empirical cell frequencies match the joint (5 sigma)
    X, y = sample_joint(np.random.default_rng(0), d["test"], 200_000)
    counts = np.zeros(d["test"].shape)
    np.add.at(counts, (y, *X.T), 1)
    p = d["test"]
    assert np.all(np.abs(counts / 200_000 - p) < 5 * np.sqrt(p * (1 - p) / 200_000) + 1e-12)
    # frame round trip
    frame = table_to_frame({"test": d["test"][None], "shift": d["shift"]})
    np.testing.assert_array_equal(table_from_frame(frame, "shift"), d["shift"])
    np.testing.assert_array_equal(table_from_frame(frame, "test")[0], d["test"])
    with pytest.raises(ValueError, match="'fix' not found"):
        table_from_frame(frame, "fix")


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


def test_run_cell_deterministic_and_curves_end_at_accuracy() -> None:
    d = make_distributions(DESIGN, seed=2)
    a = run_cell(d, 25, 0.2, FIT, seed=9)
    b = run_cell(d, 25, 0.2, FIT, seed=9)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == DESIGN["n_shift"] * FIT["n_train_sets"] * DESIGN["n_test"]
    assert not a.equals(run_cell(d, 25, 0.4, FIT, seed=9))
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


def _per_set(values: dict[tuple[int, float], dict[str, list[float]]]) -> pd.DataFrame:
    rows = []
    for (n, g), metrics in values.items():
        for m, aucs in metrics.items():
            for ts, v in enumerate(aucs):
                rows.append({"n_train": n, "gamma": g, "train_set": ts, "metric": m, "auc": v})
    return pd.DataFrame(rows)


def test_auc_table_and_claims_check() -> None:
    base = [0.70, 0.72, 0.71, 0.69]
    noise = [0.001, -0.001, 0.0005, -0.0005]
    unc = {m: base for m in METRICS if METRICS[m][1] == "uncertainty"}
    better = {"eps_glob": [b + 0.05 for b in base], "eps_loc": base}
    same = {"eps_glob": [b + e for b, e in zip(base, noise, strict=True)], "eps_loc": base}
    worse = {"eps_glob": [b - 0.05 for b in base], "eps_loc": [b - 0.06 for b in base]}
    per_set = _per_set(
        {(100, 0.0): {**unc, **same}, (25, 0.0): {**unc, **better}, (25, 0.4): {**unc, **worse}}
    )
    out = claims_check(per_set).set_index(["n_train", "gamma"])
    assert out.loc[(100, 0.0), "verdict"] == "tie" and out.loc[(100, 0.0), "claim_holds"]
    assert out.loc[(25, 0.0), "verdict"] == "better" and out.loc[(25, 0.0), "claim_holds"]
    assert out.loc[(25, 0.4), "verdict"] == "worse" and not out.loc[(25, 0.4), "claim_holds"]
    assert out.loc[(25, 0.0), "diff_mean"] == pytest.approx(0.05)
    # auc_table summary: mean and sample std per cell and metric
    n = 10
    curves = pd.DataFrame(
        {
            "n_train": 25,
            "gamma": 0.0,
            "train_set": np.repeat([0, 1], n),
            "n_accepted": np.tile(np.arange(1, n + 1), 2),
            "rate": np.tile(np.arange(1, n + 1) / n, 2),
            **{m: np.r_[np.full(n, 0.6), np.full(n, 0.8)] for m in METRICS},
        }
    )
    per, summary = auc_table(curves)
    assert len(per) == 2 * len(METRICS)
    np.testing.assert_allclose(summary["auc_mean"], 0.7)
    np.testing.assert_allclose(summary["auc_std"], np.std([0.6, 0.8], ddof=1))
    assert list(summary["metric"]) == list(METRICS)
