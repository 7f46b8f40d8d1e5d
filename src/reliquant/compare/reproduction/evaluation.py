"""Every score of every data set evaluated on the same predictions.

* :func:`auarc_table`: per data set and case, each score's AU-ARC with a percentile
  bootstrap interval, its paired difference to the case's best score
  (:func:`reliquant.compare.compare_scores`) and its rank (1 = largest AU-ARC; tied AU-ARCs
  share the smallest rank). A data set with several shifted cases also gets a row set for
  its shifted predictions pooled (case :data:`POOLED`).
* :func:`family_contrast`: per data set and condition (its predictions of that condition
  pooled), the best robustness score against the best uncertainty score (largest AU-ARC in
  each family, :data:`reliquant.compare.reproduction.tables.SCORE_FAMILY`): the paired
  difference ``AU-ARC(best RQ) - AU-ARC(best UQ)`` with its percentile interval over the same
  bootstrap resamples as :func:`auarc_table` (:func:`reliquant.compare.bootstrap_auarc`).
  The choice of the two best scores is made on the same predictions, for both families alike.
* :func:`hybrid_table`: per data set and condition, the pooled predictions split at random
  into a validation part (``validation_fraction``) and a held-out part; on the validation
  part the best robustness and the best uncertainty score (by AU-ARC) are picked and the
  hybrid fitted (:func:`reliquant.compare.evaluate_hybrid`); its weights, the relative
  importance of robustness, and the held-out AU-ARC of the hybrid and of both inputs.
* :func:`curve_table`: accuracy-rejection curves of every score on a grid of rejected
  fractions, per data set and condition (pooled), for the figure.

Seeds: the bootstrap of (data set, case) uses ``block_int_seed(seed, "bootstrap", dataset,
case)``; the hybrid's split ``block_rng(seed, "hybrid", dataset, condition)``.

Public API: :data:`POOLED`, :data:`AUARC_SCHEMA`, :data:`CONTRAST_SCHEMA`,
:data:`HYBRID_SCHEMA`, :data:`CURVE_SCHEMA`, :func:`case_order`, :func:`auarc_table`,
:func:`family_contrast`, :func:`verdict`, :func:`hybrid_table`, :func:`curve_table`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.compare import (
    accuracy_rejection_curve,
    auarc,
    bootstrap_auarc,
    compare_scores,
    evaluate_hybrid,
)
from reliquant.compare.reproduction.tables import CONDITIONS, family_of, score_columns
from reliquant.core.seeding import block_int_seed, block_rng

__all__ = [
    "AUARC_SCHEMA",
    "CONTRAST_SCHEMA",
    "CURVE_SCHEMA",
    "HYBRID_SCHEMA",
    "POOLED",
    "auarc_table",
    "case_order",
    "curve_table",
    "family_contrast",
    "hybrid_table",
    "verdict",
]

#: The case name of a data set's shifted predictions pooled.
POOLED = "shifted (pooled)"

AUARC_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("case", pa.string()),
        ("condition", pa.string()),
        ("n", pa.int64()),
        ("accuracy", pa.float64()),
        ("score", pa.string()),
        ("family", pa.string()),
        ("auarc", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("diff_vs_best", pa.float64()),
        ("diff_ci_low", pa.float64()),
        ("diff_ci_high", pa.float64()),
        ("best", pa.bool_()),
        ("rank", pa.int32()),
    ]
)
CONTRAST_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("condition", pa.string()),
        ("n", pa.int64()),
        ("accuracy", pa.float64()),
        ("best_rq", pa.string()),
        ("auarc_rq", pa.float64()),
        ("best_uq", pa.string()),
        ("auarc_uq", pa.float64()),
        ("diff", pa.float64()),
        ("diff_ci_low", pa.float64()),
        ("diff_ci_high", pa.float64()),
        ("verdict", pa.string()),
    ]
)
HYBRID_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("condition", pa.string()),
        ("n_validation", pa.int64()),
        ("n_test", pa.int64()),
        ("rq_score", pa.string()),
        ("uq_score", pa.string()),
        ("weight_rq", pa.float64()),
        ("weight_uq", pa.float64()),
        ("intercept", pa.float64()),
        ("importance_rq", pa.float64()),
        ("auarc_hybrid", pa.float64()),
        ("auarc_rq", pa.float64()),
        ("auarc_uq", pa.float64()),
        ("note", pa.string()),
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


def _groups(
    tables: Iterable[pd.DataFrame], *, pooled_cases: bool
) -> Iterator[tuple[str, str, str, pd.DataFrame]]:
    """(dataset, case, condition, rows) of every case, then (with ``pooled_cases``) the
    pooled shifted rows of a data set with several shifted cases."""
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        shifted = []
        for case in case_order(frame):
            rows = frame[frame["case"] == case]
            condition = str(rows["condition"].iloc[0])
            shifted += [case] if condition == "shifted" else []
            yield dataset, case, condition, rows
        if pooled_cases and len(shifted) > 1:
            yield dataset, POOLED, "shifted", frame[frame["condition"] == "shifted"]


def _by_condition(tables: Iterable[pd.DataFrame]) -> Iterator[tuple[str, str, pd.DataFrame]]:
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        for condition in CONDITIONS:
            rows = frame[frame["condition"] == condition]
            if len(rows):
                yield dataset, condition, rows


def _seed_case(seed: int, dataset: str, condition: str, case: str | None = None) -> int:
    # the pooled rows of a condition use the seed of that condition's pooled case, so the
    # contrast and the AU-ARC table share resamples
    return block_int_seed(seed, "bootstrap", dataset, case or condition)


def auarc_table(
    tables: Iterable[pd.DataFrame], *, n_boot: int, confidence: float, seed: int
) -> pd.DataFrame:
    """The AU-ARC table (module docstring), columns of :data:`AUARC_SCHEMA`."""
    out = []
    for dataset, case, condition, rows in _groups(tables, pooled_cases=True):
        scores = rows[score_columns(rows)]
        correct = rows["correct"].to_numpy()
        table = compare_scores(
            scores, correct, n_boot=n_boot, confidence=confidence,
            seed=_seed_case(seed, dataset, condition, case),
        )  # fmt: skip
        table.insert(0, "dataset", dataset)
        table.insert(1, "case", case)
        table.insert(2, "condition", condition)
        table.insert(3, "n", len(rows))
        table.insert(4, "accuracy", float(correct.mean()))
        table.insert(6, "family", [family_of(s) for s in table["score"]])
        table["rank"] = table["auarc"].rank(method="min", ascending=False).astype(np.int32)
        out.append(table)
    return pd.concat(out, ignore_index=True)[AUARC_SCHEMA.names]


def verdict(diff_ci_low: float, diff_ci_high: float, min_difference: float = 0.0) -> str:
    """``"robustness"`` if the interval of RQ - UQ lies above ``min_difference``,
    ``"uncertainty"`` if it lies below ``-min_difference``, else ``"undecided"``."""
    if diff_ci_low > min_difference:
        return "robustness"
    if diff_ci_high < -min_difference:
        return "uncertainty"
    return "undecided"


def family_contrast(
    tables: Iterable[pd.DataFrame],
    *,
    n_boot: int,
    confidence: float,
    seed: int,
    min_difference: float = 0.0,
) -> pd.DataFrame:
    """Best robustness against best uncertainty score per data set and condition (module
    docstring), columns of :data:`CONTRAST_SCHEMA`; ``verdict`` by :func:`verdict`."""
    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    out = []
    for dataset, condition, rows in _by_condition(tables):
        names = score_columns(rows)
        correct = rows["correct"].to_numpy()
        n_cases = rows["case"].nunique()
        case = POOLED if condition == "shifted" and n_cases > 1 else rows["case"].iloc[0]
        point = {s: auarc(rows[s].to_numpy(), correct) for s in names}
        best = {}
        for family in ("robustness", "uncertainty"):
            members = [s for s in names if family_of(s) == family]
            if not members:
                raise ValueError(f"data set {dataset} has no {family} score: {names}")
            best[family] = max(members, key=lambda s: point[s])  # first listed on a tie
        rq, uq = best["robustness"], best["uncertainty"]
        _, boot = bootstrap_auarc(
            {rq: rows[rq].to_numpy(), uq: rows[uq].to_numpy()}, correct, n_boot=n_boot,
            seed=_seed_case(seed, dataset, condition, case),
        )  # fmt: skip
        lo, hi = np.quantile(boot[0] - boot[1], q)
        out.append(
            {
                "dataset": dataset,
                "condition": condition,
                "n": len(rows),
                "accuracy": float(correct.mean()),
                "best_rq": rq,
                "auarc_rq": point[rq],
                "best_uq": uq,
                "auarc_uq": point[uq],
                "diff": point[rq] - point[uq],
                "diff_ci_low": float(lo),
                "diff_ci_high": float(hi),
                "verdict": verdict(float(lo), float(hi), min_difference),
            }  # fmt: skip
        )
    return pd.DataFrame(out, columns=CONTRAST_SCHEMA.names)


def hybrid_table(
    tables: Iterable[pd.DataFrame], *, validation_fraction: float, C: float, seed: int
) -> pd.DataFrame:
    """The hybrid per data set and condition (module docstring), columns of
    :data:`HYBRID_SCHEMA`. A validation part with only right (or only wrong) predictions
    cannot be fitted: its row has NaN weights and says so in ``note``."""
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1); got {validation_fraction!r}")
    out = []
    for dataset, condition, rows in _by_condition(tables):
        n = len(rows)
        perm = block_rng(seed, "hybrid", dataset, condition).permutation(n)
        n_val = int(round(validation_fraction * n))
        val, test = rows.iloc[np.sort(perm[:n_val])], rows.iloc[np.sort(perm[n_val:])]
        row: dict[str, Any] = {"dataset": dataset, "condition": condition,
                               "n_validation": len(val), "n_test": len(test)}  # fmt: skip
        cv, ct = val["correct"].to_numpy(), test["correct"].to_numpy()
        names = score_columns(rows)
        nan = dict.fromkeys(HYBRID_SCHEMA.names[4:-1], np.nan)
        if len(val) == 0 or len(test) == 0 or cv.all() or not cv.any():
            what = "too few predictions" if len(val) == 0 or len(test) == 0 else (
                "all right" if cv.all() else "all wrong")  # fmt: skip
            out.append({**row, **nan, "rq_score": "", "uq_score": "",
                        "note": f"not fitted: validation predictions {what}"})  # fmt: skip
            continue
        pick = {}
        for family in ("robustness", "uncertainty"):
            members = [s for s in names if family_of(s) == family]
            pick[family] = max(members, key=lambda s: auarc(val[s].to_numpy(), cv))
        rq, uq = pick["robustness"], pick["uncertainty"]
        res = evaluate_hybrid(
            val[rq].to_numpy(), val[uq].to_numpy(), cv, test[rq].to_numpy(), test[uq].to_numpy(),
            ct, C=C,
        )  # fmt: skip
        out.append({**row, "rq_score": rq, "uq_score": uq, **res, "note": ""})
    return pd.DataFrame(out, columns=HYBRID_SCHEMA.names)


def curve_table(tables: Iterable[pd.DataFrame], *, points: int) -> pd.DataFrame:
    """Accuracy-rejection curves (:func:`reliquant.compare.accuracy_rejection_curve`) of
    every score per data set and condition, at the rejected fractions ``j / points``,
    ``j = 0..points-1`` (the curve's value at the largest ``k / n`` not above each),
    columns of :data:`CURVE_SCHEMA`."""
    if points < 2:
        raise ValueError(f"points must be >= 2; got {points}")
    grid = np.arange(points) / points
    out = []
    for dataset, condition, rows in _by_condition(tables):
        correct = rows["correct"].to_numpy()
        n = len(rows)
        k = np.minimum(np.floor(grid * n + 1e-9).astype(np.int64), n - 1)
        for s in score_columns(rows):
            _, acc = accuracy_rejection_curve(rows[s].to_numpy(), correct)
            out.append(pd.DataFrame({"dataset": dataset, "condition": condition, "score": s,
                                     "family": family_of(s), "rejected": grid,
                                     "accuracy": acc[k]}))  # fmt: skip
    return pd.concat(out, ignore_index=True)[CURVE_SCHEMA.names]
