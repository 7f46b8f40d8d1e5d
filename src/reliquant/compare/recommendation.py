"""The one sentence of :attr:`reliquant.compare.ScoreVerdict.recommendation`: which score to
use, its held-out (cross-fitted) AU-ARC and difference with the interval, how the verdict was
judged (units, folds, test, degrees of freedom) and, without groups, that the interval holds
the variation of the test predictions only. The ranked table's AU-ARCs are on all
predictions; the sentence's are held out, and it says so.

Public API: :func:`recommendation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reliquant.compare.families import FAMILIES

__all__ = ["recommendation"]


def _how(r: Mapping[str, Any]) -> str:
    """The parenthesis of the sentence: how the verdict was judged, with its degrees of
    freedom, and how unanimous the folds' picks were."""
    u, k, pct = r["n_units"], r["n_folds"], f"{100 * r['confidence']:g} %"
    if r["method"] == "groups" and k == u:
        how = f"{u} groups, each judged by the two scores picked on the other {u - 1}"
    elif r["method"] == "groups":
        how = f"{u} groups in {k} folds, each judged by the two scores picked on the other folds"
    else:
        how = (f"{k} folds of the predictions dealt {r['n_deals']} times, each fold judged by "
               f"the scores picked on the other {k - 1}")  # fmt: skip
    how += f": mean paired difference, {pct} t-interval, {r['dof']} degrees of freedom"
    judged = r["judged"]
    agree = [(judged[f] == r[f]).sum() for f in FAMILIES]
    if min(agree) < len(judged):
        how += (f"; the folds' picks differ from these: {r['robustness']} judged "
                f"{agree[0]} of the {len(judged)} units, {r['uncertainty']} {agree[1]}")  # fmt: skip
    if r["method"] == "folds":
        how += ("; it shows the variation of the test predictions only, not of training the "
                "model again: pass groups= (one per fitted model) for that")  # fmt: skip
    return how


def recommendation(r: Mapping[str, Any], table: pd.DataFrame) -> str:
    """The sentence of the fields ``r`` of a :class:`reliquant.compare.ScoreVerdict` (the
    verdict, the two scores, their held-out numbers, ``method``, ``n_units``, ``n_folds``,
    ``n_deals``, ``dof``, ``judged``, ``confidence``) and its ranked ``table`` (the best score on all
    predictions, named when there is no comparison)."""
    rq, uq = r["robustness"], r["uncertainty"]
    if r["verdict"] == "no comparison":
        best = table.iloc[0]
        return (f"No comparison between the families ({r['reason']}); the best score on all "
                f"predictions is {best['score']}: AU-ARC {best['auarc']:.3f} "
                f"[{best['ci_low']:.3f}, {best['ci_high']:.3f}].")  # fmt: skip
    how = _how(r)
    if r["verdict"] == "identical ranking":
        return (f"{rq} and {uq} rank the held-out predictions identically (held-out AU-ARC "
                f"{r['auarc_robustness']:.3f} each; {how}): they reject the same predictions, "
                "so use either, the cheaper to compute.")  # fmt: skip
    d, lo, hi = r["diff"], r["ci_low"], r["ci_high"]
    if r["verdict"] == "robustness better":
        return (f"Use {rq}: held-out AU-ARC {r['auarc_robustness']:.3f}, {d:+.3f} "
                f"[{lo:+.3f}, {hi:+.3f}] over {uq}, the best uncertainty score ({how}).")  # fmt: skip
    if r["verdict"] == "uncertainty better":
        return (f"Use {uq}: held-out AU-ARC {r['auarc_uncertainty']:.3f}, {-d:+.3f} "
                f"[{-hi:+.3f}, {-lo:+.3f}] over {rq}, the best robustness score ({how}).")  # fmt: skip
    return (f"Undecided: {rq} (robustness) minus {uq} (uncertainty) is {d:+.3f} "
            f"[{lo:+.3f}, {hi:+.3f}] in held-out AU-ARC ({how}); the interval includes 0, so "
            "either will do: take the cheaper to compute.")  # fmt: skip
