"""Every score of every data set evaluated on the same predictions, over independent splits.

A data set's per-prediction table has one row per (split, test prediction); each split is a
replicate with its own training set and fitted model (:mod:`.tables`, ``split``), and each
split's predictions are dealt into a validation part (where choices are made) and a test part
(where claims are judged), ``part``. Every interval here is over **splits**:

    d_s = AU-ARC_s(a) - AU-ARC_s(b)          (paired: same split, same predictions)
    mean d = (1/S) sum_s d_s,   se = sd(d_s) / sqrt(S)   (sd with ddof = 1)
    interval: mean d -/+ t_{(1 + confidence)/2, S - 1} se,  p: two-sided t-test of mean d = 0.

The split is the unit that a user re-draws when training their own model, so the spread of
``d_s`` carries the variation over training sets and (where splits have their own test rows)
over test predictions; the one-sample t-interval is the interval of paper 000's own claims
check (mean +- z se over its training sets) with the small-sample quantile.

* :func:`noise_table`, :func:`pick_noise`: a perturbation-based score computed on a grid of
  noise scales (columns ``<score>@<scale>``) gets, per data set, the scale with the largest
  mean AU-ARC on the **validation** parts; that column stands for the score from then on.
* :func:`split_auarc`: AU-ARC of every score per data set, case, split and part (``all``,
  ``validation``, ``test``); a data set with several cases of one condition also gets that
  condition's predictions pooled per split (case :func:`pooled_case`, e.g. :data:`POOLED`
  for the shifted ones; the full preset's NBC cells have two clean cases).
* :func:`family_contrast`: **paper 000's rule** (the nbc topic's
  :func:`reliquant.nbc.reproduction.paper.claims_check`) on every data set and case: the
  paper robustness score and the uncertainty score with the largest mean AU-ARC over splits,
  their paired difference, ``better`` beyond ``z`` standard errors. The two are picked on the
  predictions they are judged on, as the paper does; on the NBC cells it is the nbc topic's
  verdict exactly.
* :func:`declared_table`: every comparison declared in config (``compare.comparisons``), each
  paper score and the log-ratio against each uncertainty score, per data set and case, on all
  predictions: mean difference, t-interval, p-value, Holm-adjusted over the whole table, and
  the verdict; a pair that ranks the predictions identically on every split (from the data,
  or by the two-class argument, :data:`TWO_CLASS_EQUIVALENTS`) says ``identical ranking`` and
  is not tested.
* :func:`headline_table`: per data set and condition the first declared paper score against
  its *comparator*, the declared uncertainty score with the largest mean AU-ARC on the
  **validation** parts; judged on the **test** parts (Holm over the table's rows).
* :func:`hybrid_table`: per data set, condition and split, the hybrid of the headline's two
  scores fitted on the validation part and scored on the test part; its gain over the better
  input and the importance of robustness, as mean and t-interval over splits.
* :func:`curve_table`: accuracy-rejection curves of every score per data set and condition
  (all splits pooled), for the figure.

The t-interval (:func:`paired_t`), the verdict rule (``p_holm < 1 - confidence``,
:func:`reliquant.compare.family_verdict`), the identical-ranking check and the share of ties
are the library's public code (:mod:`reliquant.compare.verdict`, which a user calls through
:func:`reliquant.compare.which_score`); this module re-exports the first, third and fourth.

Public API: :data:`POOLED`, :func:`pooled_case`, :data:`VERDICTS`, :data:`SPLIT_AUARC_SCHEMA`,
:data:`CONTRAST_SCHEMA`, :data:`DECLARED_SCHEMA`, :data:`HEADLINE_SCHEMA`,
:data:`HYBRID_SCHEMA`, :data:`NOISE_SCHEMA`, :data:`CURVE_SCHEMA`, :data:`TWO_CLASS_EQUIVALENTS`,
:func:`case_order`, :func:`condition_case`,
:func:`paired_t`,
:func:`holm`, :func:`identical_ranking`, :func:`tied_share`, :func:`split_auarc`, :func:`family_contrast`,
:func:`declared_pairs`, :func:`declared_table`, :func:`headline_table`, :func:`hybrid_table`,
:func:`noise_table`, :func:`pick_noise`, :func:`curve_table`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.compare import evaluate_hybrid
from reliquant.compare.rejection import auarc_rows
from reliquant.compare.reproduction.tables import (
    CONDITIONS,
    PAPER_SCORES,
    family_of,
    score_columns,
    split_grid_score,
)
from reliquant.compare.verdict import (
    curve_at,
    family_verdict,
    identical_ranking,
    paired_t,
    tied_share,
)

__all__ = [
    "CONTRAST_SCHEMA",
    "CURVE_SCHEMA",
    "DECLARED_SCHEMA",
    "HEADLINE_SCHEMA",
    "HYBRID_SCHEMA",
    "NOISE_SCHEMA",
    "POOLED",
    "pooled_case",
    "SPLIT_AUARC_SCHEMA",
    "TWO_CLASS_EQUIVALENTS",
    "VERDICTS",
    "case_order",
    "condition_case",
    "curve_table",
    "declared_pairs",
    "declared_table",
    "family_contrast",
    "headline_table",
    "holm",
    "hybrid_table",
    "identical_ranking",
    "noise_table",
    "paired_t",
    "pick_noise",
    "split_auarc",
    "tied_share",
]


def pooled_case(condition: str) -> str:
    """The case name of a data set's predictions of ``condition`` pooled (per split), where
    the condition has several cases."""
    return f"{condition} (pooled)"


#: The case name of a data set's shifted predictions pooled (per split).
POOLED = pooled_case("shifted")
#: Verdicts of a comparison "a - b" (a: a robustness score, b: an uncertainty score).
VERDICTS = ("robustness", "uncertainty", "undecided", "identical ranking")
_ALL = "all"

SPLIT_AUARC_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("case", pa.string()),
        ("condition", pa.string()),
        ("split", pa.int32()),
        ("part", pa.string()),
        ("n", pa.int64()),
        ("accuracy", pa.float64()),
        ("score", pa.string()),
        ("family", pa.string()),
        ("auarc", pa.float64()),
        ("tied", pa.float64()),
    ]
)
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
NOISE_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("score", pa.string()),
        ("scale", pa.float64()),
        ("condition", pa.string()),
        ("case", pa.string()),
        ("auarc_validation", pa.float64()),
        ("auarc_test", pa.float64()),
        ("tied", pa.float64()),
        ("criterion", pa.float64()),
        ("chosen", pa.bool_()),
    ]
)
CURVE_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("condition", pa.string()),
        ("score", pa.string()),
        ("family", pa.string()),
        ("rejected", pa.float64()),
        ("accuracy", pa.float64()),
    ]
)


def case_order(frame: pd.DataFrame) -> list[str]:
    """The cases of a per-prediction table in table order (first appearance)."""
    return list(dict.fromkeys(frame["case"]))


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


def _cases(frame: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(case, condition, rows) of every case, then per condition with several cases its rows
    pooled (case :func:`pooled_case`)."""
    by_condition: dict[str, list[str]] = {}
    for case in case_order(frame):
        rows = frame[frame["case"] == case]
        condition = str(rows["condition"].iloc[0])
        by_condition.setdefault(condition, []).append(case)
        yield case, condition, rows
    for condition, cases in by_condition.items():
        if len(cases) > 1:
            yield pooled_case(condition), condition, frame[frame["condition"] == condition]


def condition_case(frame: pd.DataFrame, condition: str) -> str | None:
    """The case that stands for ``condition`` of a data set: its one case, or
    :func:`pooled_case` where several cases of the condition pool; None if the data set has
    no such predictions."""
    cases = list(dict.fromkeys(frame.loc[frame["condition"] == condition, "case"]))
    if not cases:
        return None
    return cases[0] if len(cases) == 1 else pooled_case(condition)


def split_auarc(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """AU-ARC of every score per data set, case (and :func:`pooled_case`), split and part
    (``all``, ``validation``, ``test``), and the share of its tied predictions
    (:func:`tied_share`): columns of :data:`SPLIT_AUARC_SCHEMA`. Ties are averaged exactly
    (:func:`reliquant.compare.auarc`)."""
    out = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        names = score_columns(frame)
        fam = [family_of(s) for s in names]
        for case, condition, rows in _cases(frame):
            for split, srows in rows.groupby("split", sort=True):
                for part in (_ALL, "validation", "test"):
                    sub = srows if part == _ALL else srows[srows["part"] == part]
                    if sub.empty:
                        continue
                    c = sub["correct"].to_numpy()
                    s = sub[names].to_numpy(dtype=np.float64).T
                    values = auarc_rows(s, np.broadcast_to(c, s.shape))
                    out.append(pd.DataFrame({
                        "dataset": dataset, "case": case, "condition": condition,
                        "split": int(split), "part": part, "n": len(sub),
                        "accuracy": float(c.mean()), "score": names, "family": fam,
                        "auarc": values, "tied": [tied_share(v) for v in s],
                    }))  # fmt: skip
    return pd.concat(out, ignore_index=True)[SPLIT_AUARC_SCHEMA.names]


def _wide(split: pd.DataFrame, part: str) -> Iterator[tuple[tuple[str, str, str], pd.DataFrame]]:
    """Per (dataset, case, condition): AU-ARC of one part, splits x scores (column order
    of the predictions table)."""
    sub = split[split["part"] == part]
    for key, rows in sub.groupby(["dataset", "case", "condition"], sort=False):
        wide = rows.pivot(index="split", columns="score", values="auarc")
        yield key, wide[list(dict.fromkeys(rows["score"]))]


def family_contrast(split: pd.DataFrame, *, z: float) -> pd.DataFrame:
    """Paper 000's rule on every data set and case (module docstring; the nbc topic's
    ``claims_check``): the paper robustness score (:data:`PAPER_SCORES`) and the uncertainty
    score with the largest mean AU-ARC over splits (the first listed on a tie), ``d_s`` their
    paired difference; ``robustness`` if ``mean d > z se``, ``uncertainty`` if ``mean d <
    -z se``, else ``undecided`` (``se = sd(d) / sqrt(S)``; one split: undecided). Columns:
    :data:`CONTRAST_SCHEMA`."""
    out = []
    for (dataset, case, condition), wide in _wide(split, _ALL):
        means = wide.mean()
        rq = [s for s in wide.columns if s in PAPER_SCORES]
        uq = [s for s in wide.columns if family_of(s) == "uncertainty"]
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
    for (dataset, case, condition), wide in _wide(split, _ALL):
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
    table["p_holm"] = holm(table["p_value"].to_numpy())
    alpha = 1 - confidence
    table["verdict"] = [
        r["verdict"] or family_verdict(r["diff_mean"], r["p_holm"], alpha=alpha)
        for r in table.to_dict("records")
    ]
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
    table["p_holm"] = holm(table["p_value"].to_numpy())
    alpha = 1 - confidence
    table["verdict"] = [
        r["verdict"] or family_verdict(r["diff_mean"], r["p_holm"], alpha=alpha)
        for r in table.to_dict("records")
    ]
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


def noise_table(split: pd.DataFrame) -> pd.DataFrame:
    """The noise scale of every perturbation-based score with a grid (columns
    ``<score>@<scale>``, :func:`reliquant.compare.reproduction.tables.grid_score`), per data
    set: per scale and condition (its representative case, :func:`condition_case`) the mean
    AU-ARC over splits on the validation and on the test parts, and the mean share of ties;
    ``criterion`` = the validation AU-ARC averaged over the conditions; ``chosen`` the scale
    with the largest criterion (the smallest scale on a tie). The test parts are reported,
    never used. Columns: :data:`NOISE_SCHEMA`."""
    out = []
    for dataset, rows in split.groupby("dataset", sort=False):
        grid = [(s, *split_grid_score(s)) for s in dict.fromkeys(rows["score"])]
        grid = [(col, base, scale) for col, base, scale in grid if scale is not None]
        if not grid:
            continue
        cases = {c: case for c in CONDITIONS
                 if (case := _representative(rows, c)) is not None}  # fmt: skip
        for base in dict.fromkeys(b for _, b, _ in grid):
            part = []
            for col, b, scale in grid:
                if b != base:
                    continue
                for condition, case in cases.items():
                    r = rows[(rows["score"] == col) & (rows["case"] == case)]
                    val = r.loc[r["part"] == "validation", "auarc"].mean()
                    tst = r.loc[r["part"] == "test", "auarc"].mean()
                    tied = r.loc[r["part"] == "all", "tied"].mean()
                    part.append({"dataset": dataset, "score": base, "scale": scale,
                                 "condition": condition, "case": case, "auarc_validation": val,
                                 "auarc_test": tst, "tied": tied})  # fmt: skip
            frame = pd.DataFrame(part)
            crit = frame.groupby("scale")["auarc_validation"].mean()
            best = float(crit.index[np.argmax(crit.to_numpy())])
            frame["criterion"] = frame["scale"].map(crit)
            frame["chosen"] = frame["scale"] == best
            out.append(frame)
    if not out:
        return pd.DataFrame(columns=NOISE_SCHEMA.names)
    return pd.concat(out, ignore_index=True)[NOISE_SCHEMA.names]


def _representative(rows: pd.DataFrame, condition: str) -> str | None:
    cases = list(dict.fromkeys(rows.loc[rows["condition"] == condition, "case"]))
    if not cases:
        return None
    pooled = pooled_case(condition)
    return pooled if pooled in cases else cases[0]


def pick_noise(tables: Sequence[pd.DataFrame], noise: pd.DataFrame) -> list[pd.DataFrame]:
    """The per-prediction tables with every grid score at its chosen scale
    (:func:`noise_table`): column ``<score>`` = column ``<score>@<chosen scale>``, the grid
    columns dropped; tables without a grid unchanged."""
    out = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        chosen = noise[(noise["dataset"] == dataset) & noise["chosen"]]
        frame = frame.copy()
        grid_cols = [c for c in score_columns(frame) if split_grid_score(c)[1] is not None]
        for base, scale in chosen[["score", "scale"]].drop_duplicates().itertuples(index=False):
            col = next(c for c in grid_cols if split_grid_score(c) == (base, scale))
            family = [c for c in grid_cols if split_grid_score(c)[0] == base]
            position = min(frame.columns.get_loc(c) for c in family)
            values = frame[col].to_numpy()
            frame = frame.drop(columns=family)
            frame.insert(position, base, values)
        out.append(frame)
    return out


def curve_table(tables: Iterable[pd.DataFrame], *, points: int) -> pd.DataFrame:
    """Accuracy-rejection curves of every score per data set and condition (every split's
    predictions pooled), at the rejected fractions ``j / points``, ``j = 0..points-1``
    (:func:`reliquant.compare.verdict.curve_at`), columns of :data:`CURVE_SCHEMA`."""
    if points < 2:
        raise ValueError(f"points must be >= 2; got {points}")
    grid = np.arange(points) / points
    out = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        for condition in CONDITIONS:
            rows = frame[frame["condition"] == condition]
            if rows.empty:
                continue
            correct = rows["correct"].to_numpy()
            for s in score_columns(rows):
                acc = curve_at(rows[s].to_numpy(), correct, grid)
                out.append(pd.DataFrame({"dataset": dataset, "condition": condition, "score": s,
                                         "family": family_of(s), "rejected": grid,
                                         "accuracy": acc}))  # fmt: skip
    return pd.concat(out, ignore_index=True)[CURVE_SCHEMA.names]
