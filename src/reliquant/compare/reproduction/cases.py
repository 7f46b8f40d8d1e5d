"""A data set's cases and conditions in the per-prediction tables: the pooled case of a
condition with several cases (:func:`pooled_case`), the case that stands for a condition
(:func:`condition_case`), the cases in table order (:func:`case_order`), and the name of the
part that holds every prediction of a split (:data:`ALL_PARTS`)."""

from __future__ import annotations

import pandas as pd

__all__ = [
    "ALL_PARTS",
    "POOLED",
    "case_order",
    "condition_case",
    "pooled_case",
]


def pooled_case(condition: str) -> str:
    """The case name of a data set's predictions of ``condition`` pooled (per split), where
    the condition has several cases."""
    return f"{condition} (pooled)"


#: The case name of a data set's shifted predictions pooled (per split).
POOLED = pooled_case("shifted")
#: Verdicts of a comparison "a - b" (a: a robustness score, b: an uncertainty score).
ALL_PARTS = "all"


def case_order(frame: pd.DataFrame) -> list[str]:
    """The cases of a per-prediction table in table order (first appearance)."""
    return list(dict.fromkeys(frame["case"]))


def condition_case(frame: pd.DataFrame, condition: str) -> str | None:
    """The case that stands for ``condition`` of a data set: its one case, or
    :func:`pooled_case` where several cases of the condition pool; None if the data set has
    no such predictions."""
    cases = list(dict.fromkeys(frame.loc[frame["condition"] == condition, "case"]))
    if not cases:
        return None
    return cases[0] if len(cases) == 1 else pooled_case(condition)
