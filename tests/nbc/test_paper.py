"""reliquant.nbc.reproduction.paper: the per-cell claims check under config thresholds and paper 000's claims."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reliquant.core.config import config_section
from reliquant.core.io import write_frame
from reliquant.core.paper import CLAIM_SCHEMA, PaperTables
from reliquant.nbc.reproduction.experiment import METRICS
from reliquant.nbc.reproduction.paper import (
    CELL_CLAIMS_SCHEMA,
    ClaimThresholds,
    auc_report,
    claims_check,
    nbc_claims,
    paper_tables,
)

REPO = Path(__file__).resolve().parents[2]
PAPER = {"hard_n_train_below": 100, "hard_gamma_above": 0.0, "z": 2.0}
BASE = [0.70, 0.72, 0.71, 0.69]
UNC = {m: BASE for m in METRICS if METRICS[m][1] == "uncertainty"}


def _per_set(values: dict[tuple[int, float], dict[str, list[float]]]) -> pd.DataFrame:
    rows = []
    for (n, g), metrics in values.items():
        for m, aucs in metrics.items():
            for ts, v in enumerate(aucs):
                rows.append({"n_train": n, "gamma": g, "train_set": ts, "metric": m, "auc": v})
    return pd.DataFrame(rows)


def _robustness_ahead_by(deltas: list[float]) -> dict[str, list[float]]:
    """AUCs where eps_glob is ahead of the best uncertainty metric by ``deltas`` per set."""
    return {
        **UNC,
        "eps_glob": [b + d for b, d in zip(BASE, deltas, strict=True)],
        "eps_loc": BASE,
    }


def test_claims_check_verdicts_and_hard_cells(tmp_path) -> None:
    same = _robustness_ahead_by([0.001, -0.001, 0.0005, -0.0005])
    better = _robustness_ahead_by([0.05] * 4)
    worse = {**UNC, "eps_glob": [b - 0.05 for b in BASE], "eps_loc": [b - 0.06 for b in BASE]}
    per_set = _per_set({(100, 0.0): {**same}, (25, 0.0): better, (25, 0.4): worse})
    out = claims_check(per_set, PAPER).set_index(["n_train", "gamma"])
    assert out.loc[(100, 0.0), "verdict"] == "tie" and out.loc[(100, 0.0), "claim_holds"]
    assert out.loc[(25, 0.0), "verdict"] == "better" and out.loc[(25, 0.0), "claim_holds"]
    assert out.loc[(25, 0.4), "verdict"] == "worse" and not out.loc[(25, 0.4), "claim_holds"]
    assert out.loc[(25, 0.0), "diff_mean"] == pytest.approx(0.05)
    assert out["hard"].tolist() == [False, True, True]
    assert out.loc[(25, 0.4), "best_robustness"] == "eps_glob"
    write_frame(out.reset_index(), tmp_path / "c.parquet", CELL_CLAIMS_SCHEMA)
    # the hard bound comes from the thresholds, not from the grid: with 25 as the bound, the
    # cell (25, 0) is easy, so "tie" or "better" there both satisfy the claim
    easy = claims_check(per_set, {**PAPER, "hard_n_train_below": 25}).set_index(
        ["n_train", "gamma"]
    )
    assert not easy.loc[(25, 0.0), "hard"] and easy.loc[(25, 0.4), "hard"]


def test_missing_threshold_is_named() -> None:
    with pytest.raises(KeyError, match="nbc.paper.z"):
        ClaimThresholds.from_config({"hard_n_train_below": 100, "hard_gamma_above": 0.0})


def test_claim_fails_under_the_config_thresholds() -> None:
    """Robustness ahead in a hard cell by (z - 0.5) standard errors: not significant under the
    z of config.yaml, so the first claim fails; ahead by (z + 0.5) standard errors, it holds."""
    paper = config_section("nbc", REPO / "config.yaml")["paper"]
    limits = ClaimThresholds.from_config(paper)
    n_hard = limits.hard_n_train_below - 1  # few data, no shift: hard by the config alone
    assert limits.hard(n_hard, 0.0) and not limits.hard(limits.hard_n_train_below, 0.0)
    spread = np.array([1.0, -1.0, 1.0, -1.0]) * 0.01
    se = spread.std(ddof=1) / 2  # standard error of the mean difference over 4 sets
    for margin, holds in [(limits.z - 0.5, False), (limits.z + 0.5, True)]:
        per_set = _per_set(
            {
                (n_hard, 0.0): _robustness_ahead_by(list(margin * se + spread)),
                (limits.hard_n_train_below, 0.0): _robustness_ahead_by(list(spread)),
            }
        )
        cells = claims_check(per_set, paper)
        first, second = nbc_claims(cells, paper)
        assert first.holds is holds
        assert second.holds  # the easy cell ties
        verdict = cells.set_index("n_train").loc[n_hard, "verdict"]
        assert verdict == ("better" if holds else "tie")


def _cells(verdicts):
    rows = [
        {"n_train": n, "gamma": g, "hard": n < 100 or g > 0, "verdict": v}
        for (n, g), v in verdicts.items()
    ]
    return pd.DataFrame(rows)


def test_nbc_claims_follow_the_cell_verdicts(tmp_path):
    all_better = _cells({(100, 0.0): "tie", (25, 0.0): "better", (100, 0.4): "better"})
    first, second = nbc_claims(all_better, PAPER)
    assert first.holds and second.holds
    one_tie = _cells({(100, 0.0): "worse", (25, 0.0): "better", (100, 0.4): "tie"})
    first, second = nbc_claims(one_tie, PAPER)
    assert not first.holds and "not in N=100, γ=0.4" in first.evidence
    assert "N_train < 100 or gamma > 0 " in first.rule and "2 standard errors" in first.rule
    assert not second.holds
    tables = paper_tables(one_tie, PAPER)
    assert isinstance(tables, PaperTables) and tables.summary == ""
    comparisons, claims, notes = tables.comparison, tables.claims, tables.notes
    assert comparisons.empty and list(claims["holds"]) == [False, False]
    assert set(claims["paper"]) == {"000"} and notes.strip() == ""
    write_frame(claims, tmp_path / "claims.parquet", CLAIM_SCHEMA)


def test_auc_report_states_the_thresholds() -> None:
    n = 5
    rows = []
    for cell, (ts, level) in enumerate([(0, 0.6), (1, 0.8)] * 2):
        rows.append(
            pd.DataFrame(
                {
                    "n_train": [50, 100][cell // 2],
                    "gamma": 0.0,
                    "train_set": ts,
                    "n_accepted": np.arange(1, n + 1),
                    "rate": np.arange(1, n + 1) / n,
                    **{m: np.full(n, level) for m in METRICS},
                }
            )
        )
    report = auc_report(pd.concat(rows, ignore_index=True), {**PAPER, "z": 3.0})
    assert len(report.summary) == 2 * len(METRICS) and len(report.claims) == 2
    assert "beyond 3 standard errors" in report.markdown
    assert "*hard* with N_train below 100 or gamma > 0." in report.markdown
    assert "better in 0 of 1 hard cells -> claim does not hold" in report.markdown
