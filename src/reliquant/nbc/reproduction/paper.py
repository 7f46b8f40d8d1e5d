"""Paper 000 beside our run: the per-cell claims check, its report and the paper's claims.

The claim (Sections 1, 7.6 and 8): robustness metrics flag unreliable predictions better than
uncertainty metrics when training data are few or shifted, and no worse otherwise. Its
thresholds (which cells are "few or shifted", how many standard errors are "significantly")
come from the config key ``nbc.paper`` (:class:`ClaimThresholds`); the rows reach the summary
through :mod:`reliquant.core.paper`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown
from reliquant.core.paper import (
    Claim,
    PaperTables,
    claim_frame,
    comparison_frame,
    notes_markdown,
    paper_number,
)
from reliquant.nbc.reproduction.curves import auc_table
from reliquant.nbc.reproduction.experiment import METRICS, gamma_key

__all__ = [
    "CELL_CLAIMS_SCHEMA",
    "AucReport",
    "ClaimThresholds",
    "auc_report",
    "claims_check",
    "claims_markdown",
    "nbc_claims",
    "paper_tables",
]

#: One row per (N_train, gamma) cell: the best metric of each family and the verdict.
CELL_CLAIMS_SCHEMA = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("hard", pa.bool_()),
        ("best_robustness", pa.string()),
        ("auc_robustness", pa.float64()),
        ("best_uncertainty", pa.string()),
        ("auc_uncertainty", pa.float64()),
        ("diff_mean", pa.float64()),
        ("diff_se", pa.float64()),
        ("verdict", pa.string()),
        ("claim_holds", pa.bool_()),
    ]
)


@dataclass(frozen=True)
class ClaimThresholds:
    """What paper 000's claim means in numbers (config ``nbc.paper``).

    A cell is *hard* (few or shifted training data) when ``N_train < hard_n_train_below`` or
    ``gamma > hard_gamma_above``; a paired AUC difference is significant beyond ``z`` standard
    errors.
    """

    z: float
    hard_n_train_below: float
    hard_gamma_above: float

    @classmethod
    def from_config(cls, paper: Mapping[str, Any]) -> ClaimThresholds:
        """The thresholds of the ``nbc.paper`` config section (a KeyError names a missing key)."""
        return cls(
            z=float(paper_number(paper, "z", "nbc")),
            hard_n_train_below=paper_number(paper, "hard_n_train_below", "nbc"),
            hard_gamma_above=float(paper_number(paper, "hard_gamma_above", "nbc")),
        )

    def hard(self, n_train: float, gamma: float) -> bool:
        """Whether a cell has few (``N_train`` below the bound) or shifted training data."""
        return bool(n_train < self.hard_n_train_below or gamma > self.hard_gamma_above)


def claims_check(per_set: pd.DataFrame, paper: Mapping[str, Any]) -> pd.DataFrame:
    """Paper 000's claim, cell by cell, from the areas under the curves (Sections 1, 7.6, 8).

    In each cell take the robustness metric and the uncertainty metric with the highest mean
    AUC; ``diff`` is their paired AUC difference per training set. The verdict is ``better``
    if ``mean(diff) > z * se``, ``worse`` if ``mean(diff) < -z * se``, else ``tie``
    (``se = std(diff) / sqrt(n_sets)``). A cell is ``hard`` as :class:`ClaimThresholds` says.
    The claim "robustness beats uncertainty when data are few or shifted and is no worse
    otherwise" predicts ``better`` in hard cells and not ``worse`` in the others. Columns:
    :data:`CELL_CLAIMS_SCHEMA`.
    """
    limits = ClaimThresholds.from_config(paper)
    z = limits.z
    rows = []
    for (n, g), sub in per_set.groupby(["n_train", "gamma"], sort=True):
        wide = sub.pivot(index="train_set", columns="metric", values="auc")
        means = wide.mean()
        rob = means[[m for m in METRICS if METRICS[m][1] == "robustness"]].idxmax()
        unc = means[[m for m in METRICS if METRICS[m][1] == "uncertainty"]].idxmax()
        diff = wide[rob] - wide[unc]
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
        d = float(diff.mean())
        verdict = "better" if d > z * se else ("worse" if d < -z * se else "tie")
        hard = limits.hard(n, g)
        expected_ok = verdict == "better" if hard else verdict != "worse"
        rows.append(
            {
                "n_train": int(n),
                "gamma": float(g),
                "hard": hard,
                "best_robustness": rob,
                "auc_robustness": float(means[rob]),
                "best_uncertainty": unc,
                "auc_uncertainty": float(means[unc]),
                "diff_mean": d,
                "diff_se": se,
                "verdict": verdict,
                "claim_holds": expected_ok,
            }
        )
    out = pd.DataFrame(rows)
    return out.sort_values(["n_train", "gamma"], ascending=[False, True]).reset_index(drop=True)


def _verdict_word(n_ok: int, n_cells: int, partly: bool) -> str:
    """``holds`` if every cell agrees, ``holds only partly`` if some do (when ``partly``)."""
    if n_ok == n_cells:
        return "holds"
    return "holds only partly" if partly and n_ok else "does not hold"


def claims_markdown(summary: pd.DataFrame, claims: pd.DataFrame, paper: Mapping[str, Any]) -> str:
    """Markdown report: AUC mean +- std per cell and metric, the per-cell claims check, verdict."""
    limits = ClaimThresholds.from_config(paper)
    wide = summary.assign(
        cell=summary["auc_mean"].map("{:.4f}".format)
        + " ± "
        + summary["auc_std"].map("{:.4f}".format)
    )
    wide = wide.pivot_table(
        index=["n_train", "gamma"], columns="metric", values="cell", aggfunc="first"
    )
    wide = (
        wide[[m for m in METRICS if m in wide.columns]]
        .sort_index(ascending=[False, True])
        .reset_index()
    )
    wide["gamma"] = wide["gamma"].map(gamma_key)
    cl = claims.copy()
    cl["gamma"] = cl["gamma"].map(gamma_key)
    hard, easy = claims[claims["hard"]], claims[~claims["hard"]]
    n_hard_better = int((hard["verdict"] == "better").sum())
    n_easy_ok = int((easy["verdict"] != "worse").sum())
    n_worse = int((claims["verdict"] == "worse").sum())
    lines = [
        "# NBC robustness quantification: area under the accuracy-acceptance curves",
        "",
        "Paper 000 (Detavernier & De Bock), Section 7. Area under each curve (mean of the",
        "accuracy over r = 1/n, ..., 1), mean ± sample standard deviation over the training sets",
        "of each (N_train, gamma) cell. Higher is better.",
        "",
        frame_to_markdown(wide),
        "## Claims check",
        "",
        "Per cell, the best robustness metric against the best uncertainty metric (by mean AUC);",
        f"`diff` is their paired AUC difference, `better`/`worse` beyond {limits.z:g} standard "
        "errors,",
        f"`tie` otherwise. A cell is *hard* with N_train below {limits.hard_n_train_below:g} or "
        f"gamma > {limits.hard_gamma_above:g}.",
        "",
        frame_to_markdown(cl),
        "## Verdict",
        "",
        f"- Robustness beats uncertainty when data are few or shifted: better in {n_hard_better} of "
        f"{len(hard)} hard cells -> claim {_verdict_word(n_hard_better, len(hard), True)}.",
        f"- No worse otherwise: not worse in {n_easy_ok} of {len(easy)} easy cells -> claim "
        f"{_verdict_word(n_easy_ok, len(easy), False)}.",
        f"- Cells where robustness is significantly worse: {n_worse} of {len(claims)}.",
        "",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class AucReport:
    """Everything rule ``nbc_auc`` writes: the AUC tables, the per-cell check, the report."""

    summary: pd.DataFrame
    per_set: pd.DataFrame
    claims: pd.DataFrame
    markdown: str


def auc_report(curves: pd.DataFrame, paper: Mapping[str, Any]) -> AucReport:
    """Areas under the curves of every cell (:func:`reliquant.nbc.reproduction.curves.auc_table`), the
    claims check under the ``nbc.paper`` thresholds and the markdown report of both."""
    per_set, summary = auc_table(curves)
    claims = claims_check(per_set, paper)
    return AucReport(summary, per_set, claims, claims_markdown(summary, claims, paper))


def _cell(row) -> str:
    return f"N={int(row.n_train)}, γ={row.gamma:g}"


def nbc_claims(cells: pd.DataFrame, paper: Mapping[str, Any]) -> list[Claim]:
    """Paper 000's two claims from the per-cell check (:func:`claims_check`), each with its
    rule in the thresholds of ``paper`` (config ``nbc.paper``).

    Robustness metrics are *better* than uncertainty metrics where training data are few or
    shifted (every hard cell ``better``) and *no worse* otherwise (no easy cell ``worse``).
    """
    limits = ClaimThresholds.from_config(paper)
    hard_cell = f"N_train < {limits.hard_n_train_below:g} or gamma > {limits.hard_gamma_above:g}"
    significant = f"by more than {limits.z:g} standard errors of the paired AUC difference"
    hard, easy = cells[cells["hard"]], cells[~cells["hard"]]
    not_better = [_cell(r) for r in hard.itertuples() if r.verdict != "better"]
    worse_easy = [_cell(r) for r in easy.itertuples() if r.verdict == "worse"]
    return [
        Claim(
            "000",
            "robustness metrics flag unreliable predictions better than uncertainty metrics "
            "when training data are few or shifted",
            len(hard) > 0 and not not_better,
            f"best robustness AUC significantly higher in {len(hard) - len(not_better)} of "
            f"{len(hard)} such cells" + (f"; not in {', '.join(not_better)}" if not_better else ""),
            f"holds if in every cell with {hard_cell} the best robustness AUC exceeds the best "
            f"uncertainty AUC {significant}",
        ),
        Claim(
            "000",
            "and no worse otherwise",
            not worse_easy,
            f"{len(easy) - len(worse_easy)} of {len(easy)} remaining cells not worse",
            f"holds if in no other cell the best robustness AUC falls below the best "
            f"uncertainty AUC {significant}",
        ),
    ]


def paper_tables(cells: pd.DataFrame, paper: Mapping[str, Any]) -> PaperTables:
    """Rule ``nbc_paper``: the comparison rows (paper 000 states no number our synthetic run
    reproduces: none), the claims of :func:`nbc_claims` and the summary notes (none), as
    :class:`reliquant.core.paper.PaperTables` (frames of
    :data:`reliquant.core.paper.COMPARISON_SCHEMA` / ``CLAIM_SCHEMA`` and markdown)."""
    return PaperTables(
        comparison_frame([]), claim_frame(nbc_claims(cells, paper)), notes_markdown({})
    )
