"""AU-ARC table, best-RQ-vs-best-UQ contrast, hybrid and curves on small tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.compare import accuracy_rejection_curve, auarc, bootstrap_auarc
from reliquant.compare.reproduction.evaluation import (
    POOLED,
    auarc_table,
    curve_table,
    family_contrast,
    hybrid_table,
    verdict,
)
from reliquant.compare.reproduction.tables import prediction_frame
from reliquant.core.seeding import block_int_seed


def _table(n: int = 200, seed: int = 0, accuracy: float = 0.7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for case, condition in (("clean", "clean"), ("level 1", "shifted"), ("level 5", "shifted")):
        label = rng.integers(0, 3, n)
        right = rng.random(n) < accuracy
        pred = np.where(right, label, (label + 1) % 3)
        parts.append(
            prediction_frame(
                dataset="cnn_mnist",
                case=case,
                condition=condition,
                item=np.arange(n),
                label=label,
                prediction=pred,
                scores={
                    "mc_robustness": np.round(right + rng.normal(0, 0.8, n), 1),  # ties
                    "log_ratio": right + rng.normal(0, 1.5, n),
                    "margin": right + rng.normal(0, 1.0, n),
                    "max_probability": rng.random(n),
                },
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)


def test_auarc_table_point_values_ranks_and_pooled_rows() -> None:
    frame = _table()
    table = auarc_table([frame], n_boot=100, confidence=0.9, seed=3)
    assert list(dict.fromkeys(table["case"])) == ["clean", "level 1", "level 5", POOLED]
    pooled = frame[frame["condition"] == "shifted"]
    for r in table.itertuples(index=False):
        rows = pooled if r.case == POOLED else frame[frame["case"] == r.case]
        assert r.n == len(rows)
        assert r.auarc == pytest.approx(auarc(rows[r.score], rows["correct"]), abs=1e-12)
        assert r.ci_low <= r.auarc <= r.ci_high or r.ci_high - r.ci_low < 0.2
    for _, case_rows in table.groupby("case"):
        order = case_rows.sort_values("auarc", ascending=False)
        assert order["rank"].iloc[0] == 1
        assert case_rows.loc[case_rows["best"], "rank"].item() == 1
        assert (np.diff(order["rank"].to_numpy()) >= 0).all()


def test_single_shifted_case_gets_no_pooled_rows() -> None:
    frame = _table()
    frame = frame[frame["case"] != "level 5"]
    table = auarc_table([frame], n_boot=20, confidence=0.9, seed=3)
    assert POOLED not in set(table["case"])


def test_contrast_picks_best_of_each_family_and_pairs_the_bootstrap() -> None:
    frame = _table(n=300)
    contrast = family_contrast([frame], n_boot=200, confidence=0.9, seed=5)
    shifted = contrast[contrast["condition"] == "shifted"].iloc[0]
    rows = frame[frame["condition"] == "shifted"]
    point = {
        s: auarc(rows[s], rows["correct"])
        for s in ("mc_robustness", "log_ratio", "margin", "max_probability")
    }
    assert shifted["best_rq"] == max(["mc_robustness", "log_ratio"], key=point.get)
    assert shifted["best_uq"] == max(["margin", "max_probability"], key=point.get)
    assert shifted["diff"] == pytest.approx(point[shifted["best_rq"]] - point[shifted["best_uq"]])
    # the interval comes from the AU-ARC table's resamples of the pooled case
    _, boot = bootstrap_auarc(
        {s: rows[s].to_numpy() for s in (shifted["best_rq"], shifted["best_uq"])},
        rows["correct"].to_numpy(), n_boot=200,
        seed=block_int_seed(5, "bootstrap", "cnn_mnist", POOLED),
    )  # fmt: skip
    lo, hi = np.quantile(boot[0] - boot[1], [0.05, 0.95])
    assert (shifted["diff_ci_low"], shifted["diff_ci_high"]) == pytest.approx((lo, hi))
    assert shifted["verdict"] == verdict(lo, hi)


def test_verdict_rule() -> None:
    assert verdict(0.01, 0.02) == "robustness"
    assert verdict(-0.02, -0.01) == "uncertainty"
    assert verdict(-0.01, 0.02) == "undecided"
    assert verdict(0.01, 0.02, min_difference=0.015) == "undecided"


def test_hybrid_weights_and_all_correct_validation() -> None:
    frame = _table(n=400)
    table = hybrid_table([frame], validation_fraction=0.5, C=1.0, seed=2)
    assert list(table["condition"]) == ["clean", "shifted"]
    assert (table["n_validation"] + table["n_test"]).tolist() == [400, 800]
    assert np.isfinite(table["weight_rq"]).all() and (table["note"] == "").all()
    assert ((table["importance_rq"] >= 0) & (table["importance_rq"] <= 1)).all()
    perfect = frame.assign(correct=True)
    table = hybrid_table([perfect], validation_fraction=0.5, C=1.0, seed=2)
    assert table["note"].str.contains("all right").all() and table["weight_rq"].isna().all()


def test_curves_match_the_library_curve() -> None:
    frame = _table(n=50)
    curves = curve_table([frame], points=10)
    rows = frame[frame["condition"] == "shifted"]
    t, acc = accuracy_rejection_curve(rows["margin"], rows["correct"])
    c = curves[(curves["condition"] == "shifted") & (curves["score"] == "margin")]
    assert c["rejected"].tolist() == pytest.approx(np.arange(10) / 10)
    assert c["accuracy"].iloc[0] == pytest.approx(rows["correct"].mean())
    assert c["accuracy"].tolist() == pytest.approx(
        acc[np.round(np.arange(10) / 10 * 100).astype(int)]
    )
