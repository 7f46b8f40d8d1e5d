"""Accuracy-rejection curves and their area (AU-ARC), invariant to the order of tied scores.

The one implementation lives in :mod:`reliquant.core.rejection` (the NBC reproduction uses it
too, and a paper package may not import :mod:`reliquant.compare`); this module re-exports its
public names so that the comparison reads ``reliquant.compare.rejection`` as before. Scores
are oriented higher = more reliable; ties are averaged over every order in closed form.

Public API: :func:`check_score`, :func:`check_correct`, :func:`check_score_inputs`,
:func:`expected_kept_correct`, :func:`accuracy_rejection_curve`, :func:`auarc`,
:func:`auarc_rows` (all from :mod:`reliquant.core.rejection`).
"""

from __future__ import annotations

from reliquant.core.rejection import (
    accuracy_rejection_curve,
    auarc,
    auarc_rows,
    check_correct,
    check_score,
    check_score_inputs,
    expected_kept_correct,
)

__all__ = [
    "accuracy_rejection_curve",
    "auarc",
    "auarc_rows",
    "check_correct",
    "check_score",
    "check_score_inputs",
    "expected_kept_correct",
]
