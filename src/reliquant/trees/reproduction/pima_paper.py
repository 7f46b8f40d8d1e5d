"""Figure 4 of paper 002 (Pima under NORTA noise) beside our run: the default cell's comparison
rows (:func:`pima_comparisons`), and the cells of the Pima sensitivity table
(:func:`reliquant.trees.reproduction.pima.pima`) ranked by their distance to the paper's
numbers (:func:`pima_best_match`), the best one compared (:func:`pima_sensitivity_comparisons`).
Every number of the paper comes from the ``trees.paper`` config key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reliquant.core.paper import (
    Comparison,
    paper_number,
)
from reliquant.trees.reproduction.agreement import robustness_summary

__all__ = [
    "PIMA_MATCH_DISTANCES",
    "pima_best_match",
    "pima_cell_name",
    "pima_comparisons",
    "pima_match_distances",
    "pima_match_sentence",
    "pima_sensitivity_comparisons",
]


def _number(paper: Mapping[str, Any], key: str) -> Any:
    return paper_number(paper, key, "trees")


def pima_comparisons(
    pima: pd.DataFrame, paper: Mapping[str, Any], note: str = ""
) -> list[Comparison]:
    """Figure 4 of 002: test accuracy, subjects, robustness range, subjects above the
    paper's threshold (``trees.paper.pima_threshold``), of the per-subject table ``pima`` (the
    default sensitivity cell, which ``note`` may name)."""
    threshold = _number(paper, "pima_threshold")
    s = robustness_summary(pima["robustness"], threshold)
    accuracy = float(pima["correct"].mean())
    rows = [
        ("Figure 4: Pima test accuracy", _number(paper, "pima_accuracy"), accuracy),
        ("Figure 4: Pima test subjects", _number(paper, "pima_n_test"), s["n"]),
        ("Figure 4: min robustness", _number(paper, "pima_min"), s["min"]),
        ("Figure 4: max robustness", _number(paper, "pima_max"), s["max"]),
        (f"Figure 4: subjects above {threshold:g}", _number(paper, "pima_n_above"), s["n_above"]),
    ]
    return [Comparison("002", quantity, value, ours, "", note) for quantity, value, ours in rows]


#: Columns :func:`pima_best_match` adds: distances of a sensitivity cell to the paper's numbers,
#: in the order they rank the cells.
PIMA_MATCH_DISTANCES = ("d_above", "d_min", "d_accuracy")


def pima_match_distances(sensitivity: pd.DataFrame, paper: Mapping[str, Any]) -> pd.DataFrame:
    """The Pima sensitivity table
    (:data:`reliquant.trees.reproduction.pima.PIMA_SENSITIVITY_SCHEMA`) with its distances to the paper's Figure 4 numbers (``trees.paper.pima_*``):

    * ``d_above``: |our subjects above the threshold - the paper's ``pima_n_above``|, our
      count rescaled to the paper's ``pima_n_test`` subjects (the plain count difference when
      we have as many test subjects as the paper);
    * ``d_min``: |min robustness - ``pima_min``|; ``d_accuracy``: |accuracy - ``pima_accuracy``|.
    """
    scale = _number(paper, "pima_n_test") / sensitivity["n_test"].astype(float)
    out = sensitivity.copy()
    out["d_above"] = (out["n_above"] * scale - _number(paper, "pima_n_above")).abs()
    out["d_min"] = (out["min_robustness"] - _number(paper, "pima_min")).abs()
    out["d_accuracy"] = (out["accuracy"] - _number(paper, "pima_accuracy")).abs()
    return out


def pima_best_match(sensitivity: pd.DataFrame, paper: Mapping[str, Any]) -> pd.Series:
    """The sensitivity cell closest to the paper's Figure 4: smallest ``d_above`` (subjects
    above the threshold), ties broken by ``d_min``, then ``d_accuracy``, then table order
    (:func:`pima_match_distances`). Returns that row with its distances."""
    if sensitivity.empty:
        raise ValueError("the Pima sensitivity table has no cells")
    ranked = pima_match_distances(sensitivity, paper).reset_index(drop=True)
    order = ranked.sort_values(list(PIMA_MATCH_DISTANCES), kind="stable")
    return ranked.loc[order.index[0]]


def pima_cell_name(row: pd.Series) -> str:
    """``amplitude reading, 20 rounds``: a sensitivity cell in words."""
    return f"{row['reading']} reading, {int(row['rounds'])} rounds"


def pima_match_sentence(best: pd.Series, paper: Mapping[str, Any]) -> str:
    """One sentence: which cell matches the paper's numbers best, and its numbers."""
    threshold = _number(paper, "pima_threshold")
    return (
        f"The paper's numbers ({_number(paper, 'pima_n_above')} of "
        f"{_number(paper, 'pima_n_test')} above {threshold:g}, min "
        f"{_number(paper, 'pima_min'):g}, accuracy {_number(paper, 'pima_accuracy'):g}) match "
        f"best the {pima_cell_name(best)} cell: {int(best['n_above'])} of "
        f"{int(best['n_test'])} above {threshold:g}, min {best['min_robustness']:.3g}, "
        f"accuracy {best['accuracy']:.3g} (closest in subjects above {threshold:g}, then in "
        "min robustness, then in accuracy)."
    )


def pima_sensitivity_comparisons(
    sensitivity: pd.DataFrame, paper: Mapping[str, Any]
) -> list[Comparison]:
    """Figure 4: the numbers of the sensitivity cell that matches the paper best
    (:func:`pima_best_match`); the cell is named in the note."""
    best = pima_best_match(sensitivity, paper)
    threshold = _number(paper, "pima_threshold")
    note = f"{pima_cell_name(best)} (closest of {len(sensitivity)} cells)"
    prefix = "Figure 4, best-matching sensitivity cell:"
    return [
        Comparison(
            "002",
            f"{prefix} subjects above {threshold:g}",
            _number(paper, "pima_n_above"),
            int(best["n_above"]),
            "",
            note,
        ),
        Comparison(
            "002",
            f"{prefix} min robustness",
            _number(paper, "pima_min"),
            float(best["min_robustness"]),
            "",
            note,
        ),
        Comparison(
            "002",
            f"{prefix} test accuracy",
            _number(paper, "pima_accuracy"),
            float(best["accuracy"]),
            "",
            note,
        ),
    ]
