"""The compare topic's claim, judged per data set: "robustness flags unreliable predictions
better than uncertainty under shift".

The claim comes from the NBC paper (000, Sections 1, 7.6 and 8: robustness beats uncertainty
when training data are few or shifted) and its follow-ups (Detavernier & De Bock, arXiv
2512.15492 and 2603.22988: robustness quantification is competitive or better under
distribution shift). Here it is judged on each data set's shifted predictions (pooled over
its shifted cases) from :func:`reliquant.compare.reproduction.evaluation.headline_table`:

    holds on a data set if its first declared paper robustness score beats its comparator
    (the declared uncertainty score with the largest mean AU-ARC on the validation parts) on
    the test parts: mean paired AU-ARC difference over splits > 0 with a Holm-adjusted
    p-value below 1 - confidence.

The evidence says which scores met, the difference and its t-interval over splits, and the
verdict (``uncertainty`` where the uncertainty score wins, ``undecided`` where neither does,
``identical ranking`` where the two order every prediction alike; the claim holds on none of
these). The claims go in the cross-paper summary under the key :data:`PAPER_KEY`; no paper
states a number our run reproduces, so the comparison table is empty.

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


def claim_rows(headline: pd.DataFrame, *, confidence: float) -> list[Claim]:
    """One claim per data set from the shifted rows of the headline table."""
    rule = (
        "holds if the data set's first declared paper robustness score beats the uncertainty "
        "score picked on the validation parts, on the test parts of its shifted predictions: "
        f"mean paired AU-ARC difference over splits above 0, Holm-adjusted p < {1 - confidence:g}"
    )
    words = {"robustness": "robustness better", "uncertainty": "uncertainty better"}
    rows = []
    for r in headline[headline["condition"] == "shifted"].itertuples(index=False):
        evidence = (
            f"{r.paper_score} {r.auarc_a:.4f} against {r.comparator} {r.auarc_b:.4f}: "
            f"difference {r.diff_mean:+.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}] over "
            f"{r.n_splits} splits (Holm p {r.p_holm:.3g}); {words.get(r.verdict, r.verdict)}"
        )
        title = DATASET_TITLES.get(r.dataset, r.dataset)
        rows.append(
            Claim(
                PAPER_KEY,
                f"Robustness flags unreliable predictions better than uncertainty under shift: "
                f"{title}",
                r.verdict == "robustness",
                evidence,
                rule,
            )
        )
    return rows


def paper_tables(headline: pd.DataFrame, evaluation: Mapping[str, Any]) -> PaperTables:
    """Rule ``compare_paper``: no comparison rows, one claim per data set
    (:func:`claim_rows`; ``evaluation``: the ``compare.evaluation`` section), no notes."""
    rows = claim_rows(headline, confidence=float(evaluation["confidence"]))
    return PaperTables(comparison_frame([]), claim_frame(rows), notes_markdown({}))
