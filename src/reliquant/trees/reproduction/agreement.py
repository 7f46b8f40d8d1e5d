"""How well two robustness estimates agree (papers 001/002, Section 5): R^2 and summaries.

* :func:`r2_score` - the coefficient of determination the papers report.
* :func:`r2_by_group` - R^2 within groups of a table.
* :func:`mc_agreement` - Table 3: exact vs Monte Carlo (and vs the 99 % grid) per setting.
* :func:`robustness_summary` - the numbers of Figure 4 of 002 (min, max, count above).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = [
    "TABLE3_SCHEMA",
    "TABLE3_SETTING",
    "mc_agreement",
    "r2_by_group",
    "r2_score",
    "robustness_summary",
]


def r2_score(reference: np.ndarray, estimate: np.ndarray) -> float:
    """Coefficient of determination of ``estimate`` against ``reference`` (papers 001/002,
    Section 5.1: "equivalent to the interpretation of the R^2-score in a linear regression"):

        R^2 = 1 - sum_j (r_j - e_j)^2 / sum_j (r_j - mean(r))^2

    (scikit-learn's ``r2_score(reference, estimate)``). Returns 1.0 when the estimate equals a
    constant reference exactly and NaN when the reference is constant but the estimate is not.
    """
    r = np.asarray(reference, dtype=np.float64).reshape(-1)
    e = np.asarray(estimate, dtype=np.float64).reshape(-1)
    if r.shape != e.shape or r.size == 0:
        raise ValueError(f"need two equal-length non-empty vectors; got {r.shape}, {e.shape}")
    ss_res = float(np.sum((r - e) ** 2))
    ss_tot = float(np.sum((r - r.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else float("nan")
    return 1.0 - ss_res / ss_tot


def r2_by_group(frame: pd.DataFrame, by: list[str], reference: str, estimate: str) -> pd.DataFrame:
    """R^2 of ``estimate`` against ``reference`` within each group of ``by`` (rows where
    either is NaN left out), with the largest absolute difference and the number of rows."""
    out = []
    for key, g in frame.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        ok = g[[reference, estimate]].notna().all(axis=1)
        gg = g[ok]
        out.append(
            {
                **dict(zip(by, key, strict=True)),
                "n": int(len(gg)),
                "r2": r2_score(gg[reference], gg[estimate]) if len(gg) else np.nan,
                "max_abs_diff": float(np.max(np.abs(gg[reference] - gg[estimate])))
                if len(gg)
                else np.nan,
            }
        )
    return pd.DataFrame(out)


#: Settings of Table 3: one row of :func:`mc_agreement` per combination.
TABLE3_SETTING = ["size", "depth", "variance"]
TABLE3_SCHEMA = pa.schema(
    [
        ("size", pa.int32()),
        ("depth", pa.int32()),
        ("variance", pa.float64()),
        ("n", pa.int32()),
        ("r2", pa.float64()),
        ("max_abs_diff", pa.float64()),
        ("n_grid", pa.int32()),
        ("r2_grid_mc", pa.float64()),
        ("max_abs_diff_grid_mc", pa.float64()),
        ("frac_in_ci", pa.float64()),
        ("accuracy", pa.float64()),
    ]
)


def mc_agreement(per_sample: pd.DataFrame) -> pd.DataFrame:
    """Table 3 of paper 002 from the per-sample rows of every (size, depth, variance):
    ``r2``/``max_abs_diff``/``n`` of the Monte Carlo estimate against the exact robustness,
    the same against the 99 % grid where it was enumerated (``r2_grid_mc``, ``n_grid``), the
    share of samples whose exact value lies in the Monte Carlo 95 % interval
    (``frac_in_ci``) and the model's test accuracy. Columns: :data:`TABLE3_SCHEMA`."""
    by = TABLE3_SETTING
    r2_mc = r2_by_group(per_sample, by, "robustness_exact", "mc_estimate")
    r2_grid = r2_by_group(per_sample, by, "robustness_pruned", "mc_estimate").rename(
        columns={"n": "n_grid", "r2": "r2_grid_mc", "max_abs_diff": "max_abs_diff_grid_mc"}
    )
    inside = (
        per_sample.assign(
            inside=(per_sample["robustness_exact"] >= per_sample["mc_ci_low"])
            & (per_sample["robustness_exact"] <= per_sample["mc_ci_high"])
        )
        .groupby(by, sort=True)["inside"]
        .mean()
        .rename("frac_in_ci")
        .reset_index()
    )
    acc = per_sample.groupby(["size", "depth"], sort=True)["accuracy"].first().reset_index()
    return r2_mc.merge(r2_grid, on=by).merge(inside, on=by).merge(acc, on=["size", "depth"])


def robustness_summary(robustness: np.ndarray, threshold: float) -> dict:
    """Figure 4 numbers: min, max and how many robustness values exceed ``threshold``."""
    r = np.asarray(robustness, dtype=np.float64)
    return {
        "n": int(r.size),
        "min": float(r.min()),
        "max": float(r.max()),
        "n_above": int(np.count_nonzero(r > threshold)),
    }
