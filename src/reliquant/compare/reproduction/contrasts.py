"""Scores contrasted over splits (:mod:`reliquant.compare.reproduction.evaluation`): paper 000's
rule on every data set and case (:func:`family_contrast`), every declared comparison
(:func:`declared_table`), the headline against the comparator picked on the validation parts
(:func:`headline_table`), the hybrid of the headline's two scores (:func:`hybrid_table`), and
Holm's adjusted p-values (:func:`holm`). The Arrow schema of each table sits beside it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.compare import comparator_family, evaluate_hybrid
from reliquant.compare.reproduction.cases import ALL_PARTS, condition_case, pooled_case
from reliquant.compare.reproduction.tables import (
    CONDITIONS,
    PAPER_SCORES,
    family_of,
    score_columns,
    split_grid_score,
)
from reliquant.compare.verdict import (
    family_verdict,
    identical_ranking,
    paired_t,
)

__all__ = [
    "CONTRAST_SCHEMA",
    "DECLARED_SCHEMA",
    "HEADLINE_SCHEMA",
    "HYBRID_SCHEMA",
    "RULE_FAMILIES",
    "TWO_CLASS_EQUIVALENTS",
    "VERDICTS",
    "declared_pairs",
    "declared_table",
    "family_contrast",
    "headline_table",
    "holm",
    "holm_verdicts",
    "hybrid_table",
]


#: Verdicts of a comparison "a - b" (a: a robustness score, b: an uncertainty score).
VERDICTS = ("robustness", "uncertainty", "undecided", "identical ranking")

CONTRAST_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("case", pa.string()),
        ("condition", pa.string()),
        ("n_splits", pa.int64()),
        ("best_rq", pa.string()),
        ("auarc_rq", pa.float64()),
        ("best_uq", pa.string()),
        ("auarc_uq", pa.float64()),
        ("diff_mean", pa.float64()),
        ("diff_se", pa.float64()),
        ("z", pa.float64()),
        ("verdict", pa.string()),
    ]
)
_COMPARISON_FIELDS = [
    ("n_splits", pa.int64()),
    ("auarc_a", pa.float64()),
    ("auarc_b", pa.float64()),
    ("diff_mean", pa.float64()),
    ("diff_se", pa.float64()),
    ("ci_low", pa.float64()),
    ("ci_high", pa.float64()),
    ("p_value", pa.float64()),
    ("p_holm", pa.float64()),
    ("verdict", pa.string()),
]
DECLARED_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("case", pa.string()),
        ("condition", pa.string()),
        ("score_a", pa.string()),
        ("role_a", pa.string()),  # "paper" or "log-ratio"
        ("score_b", pa.string()),
    ]
    + _COMPARISON_FIELDS
)
HEADLINE_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("condition", pa.string()),
        ("case", pa.string()),
        ("accuracy", pa.float64()),
        ("paper_score", pa.string()),
        ("comparator", pa.string()),
        ("comparator_validation_auarc", pa.float64()),
    ]
    + _COMPARISON_FIELDS
)
HYBRID_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("condition", pa.string()),
        ("rq_score", pa.string()),
        ("uq_score", pa.string()),
        ("n_splits", pa.int64()),
        ("n_fitted", pa.int64()),
        ("auarc_hybrid", pa.float64()),
        ("gain_mean", pa.float64()),
        ("gain_ci_low", pa.float64()),
        ("gain_ci_high", pa.float64()),
        ("gain_positive", pa.float64()),
        ("importance_mean", pa.float64()),
        ("importance_ci_low", pa.float64()),
        ("importance_ci_high", pa.float64()),
        ("note", pa.string()),
    ]
)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate): with ``p_(1) <= ... <=
    p_(m)``, ``adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``. NaN entries are not tests:
    they stay NaN and do not count in ``m``."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adj)
    return out


def holm_verdicts(table: pd.DataFrame, *, confidence: float) -> pd.DataFrame:
    """In place, and returned: ``p_holm``, Holm's adjustment (:func:`holm`) of the table's
    ``p_value`` over every row, and ``verdict`` where it is still empty:
    :func:`reliquant.compare.family_verdict` of ``diff_mean`` at ``1 - confidence``. A row
    that already says why it is not a test (``identical ranking``, ``nothing certified``)
    keeps its verdict and a NaN p-value."""
    table["p_holm"] = holm(table["p_value"].to_numpy(dtype=float))
    alpha = 1 - confidence
    table["verdict"] = [
        r["verdict"] or family_verdict(r["diff_mean"], r["p_holm"], alpha=alpha)
        for r in table.to_dict("records")
    ]
    return table


def _wide(split: pd.DataFrame, part: str) -> Iterator[tuple[tuple[str, str, str], pd.DataFrame]]:
    """Per (dataset, case, condition): AU-ARC of one part, splits x scores (column order
    of the predictions table)."""
    sub = split[split["part"] == part]
    for key, rows in sub.groupby(["dataset", "case", "condition"], sort=False):
        wide = rows.pivot(index="split", columns="score", values="auarc")
        yield key, wide[list(dict.fromkeys(rows["score"]))]


#: The comparator families whose scores paper 000's rule counts as uncertainty: read from the
#: predicted distribution (one model's or a bootstrap's), as its five u_* metrics are; the
#: failure-detection field's logit and feature-space scores meet the paper score in the
#: family table instead (:mod:`reliquant.compare.reproduction.family_verdicts`).
RULE_FAMILIES = ("probability", "ensemble")


def family_contrast(split: pd.DataFrame, *, z: float) -> pd.DataFrame:
    """Paper 000's rule on every data set and case (module docstring; the nbc topic's
    ``claims_check``): the paper robustness score (:data:`PAPER_SCORES`) and the uncertainty
    score of :data:`RULE_FAMILIES` with the largest mean AU-ARC over splits (the first listed
    on a tie), ``d_s`` their
    paired difference; ``robustness`` if ``mean d > z se``, ``uncertainty`` if ``mean d <
    -z se``, else ``undecided`` (``se = sd(d) / sqrt(S)``; one split: undecided). Columns:
    :data:`CONTRAST_SCHEMA`."""
    out = []
    for (dataset, case, condition), wide in _wide(split, ALL_PARTS):
        means = wide.mean()
        rq = [s for s in wide.columns if s in PAPER_SCORES]
        uq = [s for s in wide.columns if family_of(s) == "uncertainty"
              and comparator_family(split_grid_score(s)[0]) in RULE_FAMILIES]  # fmt: skip
        if not rq or not uq:
            raise ValueError(f"data set {dataset} needs a paper score and an uncertainty score")
        best_r = max(rq, key=lambda s: means[s])
        best_u = max(uq, key=lambda s: means[s])
        d = (wide[best_r] - wide[best_u]).to_numpy()
        se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
        m = float(d.mean())
        verdict = "robustness" if m > z * se else ("uncertainty" if m < -z * se else "undecided")
        out.append({"dataset": dataset, "case": case, "condition": condition,
                    "n_splits": d.size, "best_rq": best_r, "auarc_rq": float(means[best_r]),
                    "best_uq": best_u, "auarc_uq": float(means[best_u]), "diff_mean": m,
                    "diff_se": se, "z": float(z), "verdict": verdict})  # fmt: skip
    return pd.DataFrame(out, columns=CONTRAST_SCHEMA.names)


def declared_pairs(
    dataset: str, scores: Sequence[str], comparisons: Mapping[str, Any]
) -> list[tuple[str, str, str]]:
    """The declared comparisons of a data set present in its table: ``(a, role, b)`` for each
    paper score ``a`` (role ``paper``) and, if the table has it, ``log_ratio`` (role
    ``log-ratio``), against each uncertainty score ``b`` of ``comparisons[dataset]``
    (``paper`` and ``uncertainty`` lists). A declared score missing from the table raises,
    naming it."""
    if dataset not in comparisons:
        raise KeyError(f"compare.comparisons has no entry for data set {dataset!r}")
    entry = comparisons[dataset]
    missing = [s for s in [*entry["paper"], *entry["uncertainty"]] if s not in scores]
    if missing:
        raise ValueError(
            f"compare.comparisons.{dataset} declares {missing}, not scores of its table "
            f"({', '.join(scores)})"
        )
    firsts = [(a, "paper") for a in entry["paper"]]
    if "log_ratio" in scores:
        firsts.append(("log_ratio", "log-ratio"))
    return [(a, role, b) for a, role in firsts for b in entry["uncertainty"]]


#: Scores that rank two-class predictions exactly as the log-ratio does: with probabilities
#: ``(p, 1 - p)``, ``p >= 1/2``, the log-ratio ``ln(p / (1 - p))``, the margin ``2p - 1``, the
#: maximum probability ``p`` and the negative entropy are all increasing in ``p``.
TWO_CLASS_EQUIVALENTS = frozenset({"log_ratio", "max_probability", "margin", "negative_entropy"})


def _identical_on_every_split(rows: pd.DataFrame, a: str, b: str) -> bool:
    """Identical ranking of ``a`` and ``b``: by the two-class argument
    (:data:`TWO_CLASS_EQUIVALENTS`, every label and prediction 0 or 1; rounding can split or
    merge ties of mathematically equal orders), else from the data on every split."""
    two_class = bool(rows["label"].isin([0, 1]).all() and rows["prediction"].isin([0, 1]).all())
    if two_class and {a, b} <= TWO_CLASS_EQUIVALENTS:
        return True
    return all(
        identical_ranking(g[a].to_numpy(), g[b].to_numpy())
        for _, g in rows.groupby("split", sort=False)
    )


def declared_table(
    tables: Sequence[pd.DataFrame],
    split: pd.DataFrame,
    comparisons: Mapping[str, Any],
    *,
    confidence: float,
) -> pd.DataFrame:
    """Every declared comparison (:func:`declared_pairs`) per data set and case on all
    predictions of every split (module docstring): columns of :data:`DECLARED_SCHEMA`.
    ``p_holm``: Holm over every tested row of the table; verdict at ``1 - confidence``."""
    frames = {str(f["dataset"].iloc[0]): f for f in tables}
    out = []
    for (dataset, case, condition), wide in _wide(split, ALL_PARTS):
        frame = frames[dataset]
        pooled = case == pooled_case(condition)
        rows = frame[frame["condition"] == condition] if pooled else frame[frame["case"] == case]
        for a, role, b in declared_pairs(dataset, list(wide.columns), comparisons):
            d = (wide[a] - wide[b]).to_numpy()
            row = {"dataset": dataset, "case": case, "condition": condition, "score_a": a,
                   "role_a": role, "score_b": b, "n_splits": d.size,
                   "auarc_a": float(wide[a].mean()), "auarc_b": float(wide[b].mean()),
                   **paired_t(d, confidence), "verdict": ""}  # fmt: skip
            if _identical_on_every_split(rows, a, b):
                row["p_value"] = float("nan")
                row["verdict"] = "identical ranking"
            out.append(row)
    table = pd.DataFrame(out)
    holm_verdicts(table, confidence=confidence)
    return table[DECLARED_SCHEMA.names]


def headline_table(
    tables: Sequence[pd.DataFrame],
    split: pd.DataFrame,
    comparisons: Mapping[str, Any],
    *,
    confidence: float,
) -> pd.DataFrame:
    """Per data set and condition (module docstring): the first declared paper score against
    the comparator picked on the validation parts, judged on the test parts; Holm over the
    table's rows. Columns: :data:`HEADLINE_SCHEMA`."""
    val = {k: w for k, w in _wide(split, "validation")}
    test = {k: w for k, w in _wide(split, "test")}
    out = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        for condition in CONDITIONS:
            case = condition_case(frame, condition)
            if case is None:
                continue
            key = (dataset, case, condition)
            entry = comparisons[dataset]
            declared_pairs(dataset, score_columns(frame), comparisons)
            a = entry["paper"][0]
            means = val[key].mean()
            b = max(entry["uncertainty"], key=lambda s: means[s])
            d = (test[key][a] - test[key][b]).to_numpy()
            rows = frame[frame["condition"] == condition]
            rows = rows[rows["part"] == "test"]
            row = {"dataset": dataset, "condition": condition, "case": case,
                   "accuracy": float(rows["correct"].mean()), "paper_score": a,
                   "comparator": b, "comparator_validation_auarc": float(means[b]),
                   "n_splits": d.size, "auarc_a": float(test[key][a].mean()),
                   "auarc_b": float(test[key][b].mean()), **paired_t(d, confidence),
                   "verdict": ""}  # fmt: skip
            if _identical_on_every_split(rows, a, b):
                row["p_value"] = float("nan")
                row["verdict"] = "identical ranking"
            out.append(row)
    table = pd.DataFrame(out)
    holm_verdicts(table, confidence=confidence)
    return table[HEADLINE_SCHEMA.names]


def hybrid_table(
    tables: Sequence[pd.DataFrame], headline: pd.DataFrame, *, C: float, confidence: float
) -> pd.DataFrame:
    """The hybrid per data set and condition over splits (module docstring): inputs the
    headline's paper score and comparator; per split fitted on the validation part and scored
    on the test part (:func:`reliquant.compare.evaluate_hybrid`); ``gain`` = AU-ARC(hybrid) -
    max(AU-ARC of the inputs) on the test part; ``gain_positive`` the share of fitted splits
    with gain > 0. A split whose validation part is all right (or all wrong) cannot be fitted
    and is left out (``n_fitted``). Columns: :data:`HYBRID_SCHEMA`."""
    frames = {str(f["dataset"].iloc[0]): f for f in tables}
    out = []
    for h in headline.itertuples(index=False):
        frame = frames[h.dataset]
        rows = frame[frame["condition"] == h.condition]
        a, b = h.paper_score, h.comparator
        gains, imps, hyb = [], [], []
        n_splits = 0
        for _, g in rows.groupby("split", sort=True):
            n_splits += 1
            val, test = g[g["part"] == "validation"], g[g["part"] == "test"]
            cv, ct = val["correct"].to_numpy(), test["correct"].to_numpy()
            if len(val) == 0 or len(test) == 0 or cv.all() or not cv.any():
                continue
            res = evaluate_hybrid(val[a].to_numpy(), val[b].to_numpy(), cv, test[a].to_numpy(),
                                  test[b].to_numpy(), ct, C=C)  # fmt: skip
            gains.append(res["auarc_hybrid"] - max(res["auarc_rq"], res["auarc_uq"]))
            imps.append(res["importance_rq"])
            hyb.append(res["auarc_hybrid"])
        row: dict[str, Any] = {"dataset": h.dataset, "condition": h.condition, "rq_score": a,
                               "uq_score": b, "n_splits": n_splits, "n_fitted": len(gains)}  # fmt: skip
        nan = float("nan")
        if not gains:
            row.update(dict.fromkeys(HYBRID_SCHEMA.names[6:-1], nan))
            row["note"] = "not fitted: every validation part all right or all wrong"
        else:
            g = paired_t(gains, confidence)
            finite = [x for x in imps if np.isfinite(x)]
            i = paired_t(finite, confidence) if finite else dict.fromkeys(g, nan)
            row.update({"auarc_hybrid": float(np.mean(hyb)), "gain_mean": g["diff_mean"],
                        "gain_ci_low": g["ci_low"], "gain_ci_high": g["ci_high"],
                        "gain_positive": float(np.mean(np.asarray(gains) > 0)),
                        "importance_mean": i["diff_mean"], "importance_ci_low": i["ci_low"],
                        "importance_ci_high": i["ci_high"], "note": ""})  # fmt: skip
        out.append(row)
    return pd.DataFrame(out, columns=HYBRID_SCHEMA.names)
