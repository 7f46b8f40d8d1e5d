"""The compare topic's claim, judged per data set: "robustness flags unreliable predictions
better than uncertainty under shift".

The claim comes from the NBC paper (000, Sections 1, 7.6 and 8: robustness beats uncertainty
when training data are few or shifted) and its follow-ups (Detavernier & De Bock, arXiv
2512.15492 and 2603.22988: robustness quantification is competitive or better under
distribution shift). Here it is judged on each data set's shifted predictions (pooled over
its shifted cases) from :func:`reliquant.compare.reproduction.evaluation.family_contrast`:

    holds on a data set if the paired percentile bootstrap interval of
    AU-ARC(best robustness score) - AU-ARC(best uncertainty score) lies above ``min_difference``
    (``compare.claim.min_difference``, 0 by default).

The evidence says which scores were best, the difference and its interval, and the verdict
(the contrast table's ``verdict``: an interval below ``-min_difference`` means uncertainty
wins, one that straddles it is undecided; the claim holds on neither). The claims go in the cross-paper
summary under the key :data:`PAPER_KEY`; no paper states a number our run reproduces, so the
comparison table is empty.

Public API: :data:`PAPER_KEY`, :func:`claim_rows`, :func:`paper_tables`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reliquant.compare.reproduction.tables import DATASET_TITLES
from reliquant.core.paper import (
    Claim,
    PaperTables,
    claim_frame,
    comparison_frame,
    notes_markdown,
)

__all__ = ["PAPER_KEY", "claim_rows", "paper_tables"]

#: The key of this topic's claims in the cross-paper summary ("beyond the papers").
PAPER_KEY = "beyond"


def claim_rows(
    contrast: pd.DataFrame, *, confidence: float, n_boot: int, min_difference: float
) -> list[Claim]:
    """One claim per data set from the shifted rows of the contrast table."""
    rule = (
        f"holds if the {confidence:.0%} paired percentile bootstrap interval ({n_boot} "
        "resamples) of AU-ARC(best robustness score) - AU-ARC(best uncertainty score), on the "
        f"data set's shifted predictions pooled, lies above {min_difference:g}"
    )
    rows = []
    shifted = contrast[contrast["condition"] == "shifted"]
    for r in shifted.itertuples(index=False):
        v = r.verdict
        evidence = (
            f"best robustness {r.best_rq} {r.auarc_rq:.4f}, best uncertainty {r.best_uq} "
            f"{r.auarc_uq:.4f}: difference {r.diff:+.4f} [{r.diff_ci_low:+.4f}, "
            f"{r.diff_ci_high:+.4f}] on {r.n} predictions (accuracy {r.accuracy:.3f}); "
            f"{'better' if v == 'robustness' else 'uncertainty better' if v == 'uncertainty' else 'undecided'}"
        )
        title = DATASET_TITLES.get(r.dataset, r.dataset)
        rows.append(
            Claim(
                PAPER_KEY,
                f"Robustness flags unreliable predictions better than uncertainty under shift: "
                f"{title}",
                v == "robustness",
                evidence,
                rule,
            )
        )
    return rows


def paper_tables(contrast: pd.DataFrame, evaluation: Mapping[str, Any],
                 claim: Mapping[str, Any]) -> PaperTables:  # fmt: skip
    """Rule ``compare_paper``: no comparison rows, one claim per data set
    (:func:`claim_rows`; ``evaluation``: the ``compare.evaluation`` section, ``claim``: the
    ``compare.claim`` section), no notes."""
    rows = claim_rows(
        contrast,
        confidence=float(evaluation["confidence"]),
        n_boot=int(evaluation["n_boot"]),
        min_difference=float(claim["min_difference"]),
    )
    return PaperTables(comparison_frame([]), claim_frame(rows), notes_markdown({}))
