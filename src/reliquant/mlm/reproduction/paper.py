"""Paper 004 beside our run: accuracies, Table 1 centroid shifts, and the paper's claims.

Every number of the paper and every threshold of its claims comes from the config key
``mlm.paper``; the rows reach the summary through :mod:`reliquant.core.paper`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from reliquant.core.paper import (
    Claim,
    Comparison,
    PaperTables,
    claim_frame,
    comparison_frame,
    notes_markdown,
    paper_number,
)
from reliquant.mlm.reproduction.accuracy import accuracy_comparisons

__all__ = [
    "mlm_claims",
    "mlm_comparisons",
    "paper_moved_classes",
    "paper_tables",
]


def _paper(paper: Mapping[str, Any], key: str) -> Any:
    return paper_number(paper, key, "mlm")


def mlm_comparisons(accuracy: list[Comparison], centroid_shift: pd.DataFrame) -> list[Comparison]:
    """Paper 004's accuracies (those it states) and Table 1 centroid shifts beside ours.

    ``centroid_shift`` is Table 1 (:data:`reliquant.mlm.centroids.TABLE1_SCHEMA`), whose
    ``paper_distance`` column holds the paper's shifts.
    """
    rows = [r for r in accuracy if not np.isnan(r.paper_value)]
    rows += [
        Comparison("004", f"Table 1: centroid shift, class {int(c)}", float(paper), float(ours))
        for c, paper, ours in zip(
            centroid_shift["class"],
            centroid_shift["paper_distance"],
            centroid_shift["distance"],
            strict=True,
        )
    ]
    return rows


def _short(value: float) -> str:
    """``1e-08`` written ``1e-8`` (a threshold as the paper writes it)."""
    return re.sub(r"e([+-]?)0+(\d)", r"e\1\2", f"{value:g}")


def paper_moved_classes(paper: Mapping[str, Any]) -> list[int]:
    """Classes whose mean Table 1 of the paper moves by more than ``moved_class_shift``."""
    cut = float(_paper(paper, "moved_class_shift"))
    return [c for c, d in enumerate(_paper(paper, "centroid_shift")) if d > cut]


def mlm_claims(
    per_level: pd.DataFrame, centroid_shift: pd.DataFrame, paper: Mapping[str, Any]
) -> list[Claim]:
    """Paper 004's claims: accuracy falls roughly linearly with the level (Section 4.4), and
    K-Means moves the class means of a few classes by about 1e-4 and the others by about
    1e-14 (Section 4.2, Table 1), namely those whose mean the paper's Table 1 moves.

    "Roughly linearly": the least-squares line of the mean accuracy per level (every row of
    ``per_level`` averaged per level) has a negative slope and ``R^2 >= linear_min_r2``. A
    class mean "moves" when its shift exceeds ``moved_class_shift``; "a few" means 1 to
    ``few_moved_classes_max`` classes. The thresholds come from ``paper`` (config
    ``mlm.paper``) and each claim states its rule with them.
    """
    min_r2 = float(_paper(paper, "linear_min_r2"))
    cut = float(_paper(paper, "moved_class_shift"))
    few = int(_paper(paper, "few_moved_classes_max"))
    mean = per_level.groupby("level")["accuracy"].mean()
    x, y = mean.index.to_numpy(dtype=float), mean.to_numpy(dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1 - np.sum((y - (slope * x + intercept)) ** 2) / np.sum((y - y.mean()) ** 2)
    moved = sorted(int(c) for c in centroid_shift.loc[centroid_shift["distance"] > cut, "class"])
    paper_moved = paper_moved_classes(paper)
    return [
        Claim(
            "004",
            "mean accuracy over corruptions decreases roughly linearly with the level",
            bool(slope < 0 and r2 >= min_r2),
            f"least-squares line: slope {slope:.4f} per level, R^2 = {r2:.6f}",
            f"holds if the slope is negative and R^2 >= {min_r2:g}",
        ),
        Claim(
            "004",
            "K-Means leaves most class means in place (~1e-14) and moves a few by ~1e-4",
            0 < len(moved) <= few,
            f"moved by more than {_short(cut)}: {len(moved)} classes {moved}",
            f"holds if 1 to {few} of {len(centroid_shift)} class means move by more than "
            f"{_short(cut)}",
        ),
        Claim(
            "004",
            f"the classes whose means move are {paper_moved}",
            moved == paper_moved,
            f"ours: {moved}",
            f"holds if the classes moved by more than {_short(cut)} are exactly the paper's",
        ),
    ]


def paper_tables(
    accuracy: pd.DataFrame,
    training_log: pd.DataFrame,
    centroid_shift: pd.DataFrame,
    paper: Mapping[str, Any],
    clean_partition: str,
) -> PaperTables:
    """Rule ``mlm_paper``: the comparison rows, the claims and the summary notes (none), as
    :class:`reliquant.core.paper.PaperTables` (frames of
    :data:`reliquant.core.paper.COMPARISON_SCHEMA` / ``CLAIM_SCHEMA`` and markdown).

    ``accuracy`` per corruption and level (``results/mlm/accuracy.parquet``), the CNN's
    training log, Table 1 and the config's ``mlm.paper``.
    """
    acc = accuracy_comparisons(accuracy, training_log, paper, clean_partition)
    comparisons = comparison_frame(mlm_comparisons(acc, centroid_shift))
    claims = claim_frame(mlm_claims(accuracy, centroid_shift, paper))
    return PaperTables(comparisons, claims, notes_markdown({}))
