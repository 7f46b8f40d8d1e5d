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

The contrasts (:func:`family_contrast` .. :func:`hybrid_table`, :func:`holm`) live in
:mod:`reliquant.compare.reproduction.contrasts`, the cases and conditions (:func:`pooled_case`,
:func:`condition_case`, :func:`case_order`) in :mod:`reliquant.compare.reproduction.cases`; every
name below is importable from here.

Public API: :data:`FAILURE_METRICS`, :data:`POOLED`, :func:`pooled_case`, :data:`VERDICTS`, :data:`SPLIT_AUARC_SCHEMA`,
:data:`CONTRAST_SCHEMA`, :data:`DECLARED_SCHEMA`, :data:`HEADLINE_SCHEMA`,
:data:`HYBRID_SCHEMA`, :data:`NOISE_SCHEMA`, :data:`CURVE_SCHEMA`, :data:`TWO_CLASS_EQUIVALENTS`,
:func:`case_order`, :func:`condition_case`,
:func:`paired_t`,
:func:`holm`, :func:`identical_ranking`, :func:`tied_share`, :func:`split_auarc`, :func:`family_contrast`,
:func:`declared_pairs`, :func:`declared_table`, :func:`headline_table`, :func:`hybrid_table`,
:func:`noise_table`, :func:`pick_noise`, :func:`curve_table`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.compare.failure_metrics import augrc, aurc, auroc_f, e_aurc
from reliquant.compare.rejection import auarc_rows
from reliquant.compare.reproduction.cases import (
    ALL_PARTS,
    POOLED,
    case_order,
    condition_case,
    pooled_case,
)
from reliquant.compare.reproduction.contrasts import (
    CONTRAST_SCHEMA,
    DECLARED_SCHEMA,
    HEADLINE_SCHEMA,
    HYBRID_SCHEMA,
    TWO_CLASS_EQUIVALENTS,
    VERDICTS,
    declared_pairs,
    declared_table,
    family_contrast,
    headline_table,
    holm,
    hybrid_table,
)
from reliquant.compare.reproduction.tables import (
    CONDITIONS,
    family_of,
    score_columns,
    split_grid_score,
)
from reliquant.compare.verdict import (
    curve_at,
    identical_ranking,
    paired_t,
    tied_share,
)

__all__ = [
    "FAILURE_METRICS",
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
        ("aurc", pa.float64()),
        ("e_aurc", pa.float64()),
        ("augrc", pa.float64()),
        ("auroc_f", pa.float64()),
        ("tied", pa.float64()),
    ]
)
#: The failure-detection metrics beside AU-ARC in :data:`SPLIT_AUARC_SCHEMA` (FD-Shifts'
#: definitions, :mod:`reliquant.compare.failure_metrics`; lower = better but ``auroc_f``).
FAILURE_METRICS = ("aurc", "e_aurc", "augrc", "auroc_f")
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


def _failure_metrics(s: np.ndarray, c: np.ndarray) -> dict[str, list[float]]:
    """:data:`FAILURE_METRICS` of every row of ``s`` (scores x predictions) on ``c``."""
    fns = {"aurc": aurc, "e_aurc": e_aurc, "augrc": augrc, "auroc_f": auroc_f}
    return {name: [fn(v, c) for v in s] for name, fn in fns.items()}


def split_auarc(tables: Iterable[pd.DataFrame], *, metrics: bool = True) -> pd.DataFrame:
    """AU-ARC of every score per data set, case (and :func:`pooled_case`), split and part
    (``all``, ``validation``, ``test``), and the share of its tied predictions
    (:func:`tied_share`): columns of :data:`SPLIT_AUARC_SCHEMA`. Ties are averaged exactly
    (:func:`reliquant.compare.auarc`). Beside it :data:`FAILURE_METRICS` as FD-Shifts
    defines them (one operating point per distinct score value, docs/compare.md); NaN with
    ``metrics=False`` (the noise-scale pick, which reads AU-ARC only). AU-ARC stays the
    metric every choice and verdict is made on (``compare.evaluation.metric``)."""
    out = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        names = score_columns(frame)
        fam = [family_of(s) for s in names]
        for case, condition, rows in _cases(frame):
            for split, srows in rows.groupby("split", sort=True):
                for part in (ALL_PARTS, "validation", "test"):
                    sub = srows if part == ALL_PARTS else srows[srows["part"] == part]
                    if sub.empty:
                        continue
                    c = sub["correct"].to_numpy()
                    s = sub[names].to_numpy(dtype=np.float64).T
                    values = auarc_rows(s, np.broadcast_to(c, s.shape))
                    extra = (_failure_metrics(s, c) if metrics
                             else dict.fromkeys(FAILURE_METRICS, np.nan))  # fmt: skip
                    out.append(pd.DataFrame({
                        "dataset": dataset, "case": case, "condition": condition,
                        "split": int(split), "part": part, "n": len(sub),
                        "accuracy": float(c.mean()), "score": names, "family": fam,
                        "auarc": values, **extra, "tied": [tied_share(v) for v in s],
                    }))  # fmt: skip
    return pd.concat(out, ignore_index=True)[SPLIT_AUARC_SCHEMA.names]


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
