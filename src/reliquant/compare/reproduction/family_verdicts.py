"""The paper's robustness score against the best score of each comparator family (issue 44).

Per data set and condition (its representative case,
:func:`reliquant.compare.reproduction.cases.condition_case`, as the headline), the first
declared paper score ``a`` (``compare.comparisons.<data set>.paper``) meets, for each
comparator family ``F`` of :data:`reliquant.compare.COMPARATOR_FAMILIES` but robustness
(probability, logit, feature distance, ensemble) with at least one score in the data set's
table, the score ``b_F`` of ``F`` with the largest mean AU-ARC over splits on the
**validation** parts; judged on the **test** parts, as :func:`headline_table` judges its
comparator:

    d_s = AU-ARC_s(a) - AU-ARC_s(b_F) on split s's test part,  mean d with its t-interval,

the two-sided t-test's p-value Holm-adjusted over **every row of the table** (all data sets,
conditions and families), the verdict ``robustness`` / ``uncertainty`` / ``undecided`` at
``1 - confidence`` (:func:`reliquant.compare.family_verdict`); a pair that ranks the test
predictions identically on every split says ``identical ranking`` and is not tested. Every
score of a family in the table is a candidate (the families are fixed in
:data:`reliquant.compare.SCORE_COMPARATOR_FAMILY`, before the data are seen); the headline
metric is AU-ARC (``compare.evaluation.metric``).

**The account** (:func:`family_account`): per data set and condition, the headline's verdict
(the paper score against the declared uncertainty score picked on the validation parts,
``results/compare/headline.parquet``) beside the verdict against the best of each family,
and whether the stronger comparators change it (and by how much: the largest change of the
mean difference). :func:`family_blocks` makes the generated blocks ``compare_families``
(docs/compare.md) and ``readme_families`` (the README's line).

Public API: :data:`FAMILY_VERDICT_SCHEMA`, :data:`VERDICT_FAMILIES`, :func:`family_table`,
:func:`family_markdown`, :func:`family_account`, :func:`family_blocks`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.compare import COMPARATOR_FAMILIES, comparator_family
from reliquant.compare.reproduction.cases import condition_case
from reliquant.compare.reproduction.contrasts import HEADLINE_SCHEMA, holm_verdicts
from reliquant.compare.reproduction.tables import (
    CONDITIONS,
    DATASET_TITLES,
    score_columns,
    split_grid_score,
)
from reliquant.compare.verdict import identical_ranking, paired_t

__all__ = [
    "FAMILY_VERDICT_SCHEMA",
    "VERDICT_FAMILIES",
    "family_account",
    "family_blocks",
    "family_markdown",
    "family_table",
]

#: The comparator families the paper's score meets, in report order.
VERDICT_FAMILIES = tuple(f for f in COMPARATOR_FAMILIES if f != "robustness")

_TAIL = HEADLINE_SCHEMA.names[HEADLINE_SCHEMA.names.index("n_splits") :]
FAMILY_VERDICT_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("condition", pa.string()),
        ("case", pa.string()),
        ("paper_score", pa.string()),
        ("family", pa.string()),
        ("comparator", pa.string()),
        ("comparator_validation_auarc", pa.float64()),
    ]
    + [HEADLINE_SCHEMA.field(n) for n in _TAIL]
)


def _part(split: pd.DataFrame, key: tuple[str, str, str], part: str) -> pd.DataFrame:
    """AU-ARC of one part of one (dataset, case, condition): splits x scores."""
    dataset, case, condition = key
    rows = split[(split["dataset"] == dataset) & (split["case"] == case)
                 & (split["condition"] == condition) & (split["part"] == part)]  # fmt: skip
    return rows.pivot(index="split", columns="score", values="auarc")


def family_table(
    tables: Sequence[pd.DataFrame],
    split: pd.DataFrame,
    comparisons: Mapping[str, Any],
    *,
    confidence: float,
) -> pd.DataFrame:
    """The paper's score against the best of each comparator family (module docstring),
    ``tables`` with every grid score at its chosen scale, ``split`` their
    :func:`split_auarc`. Columns: :data:`FAMILY_VERDICT_SCHEMA`."""
    out = []
    for frame in tables:
        dataset = str(frame["dataset"].iloc[0])
        names = score_columns(frame)
        a = comparisons[dataset]["paper"][0]
        for condition in CONDITIONS:
            case = condition_case(frame, condition)
            if case is None:
                continue
            key = (dataset, case, condition)
            val, test = _part(split, key, "validation"), _part(split, key, "test")
            rows = frame[(frame["condition"] == condition) & (frame["part"] == "test")]
            for family in VERDICT_FAMILIES:
                members = [s for s in names if comparator_family(split_grid_score(s)[0]) == family]
                if not members:
                    continue
                means = val[members].mean()
                b = max(members, key=lambda s: means[s])  # the first listed on a tie
                d = (test[a] - test[b]).to_numpy()
                row = {"dataset": dataset, "condition": condition, "case": case,
                       "paper_score": a, "family": family, "comparator": b,
                       "comparator_validation_auarc": float(means[b]), "n_splits": d.size,
                       "auarc_a": float(test[a].mean()), "auarc_b": float(test[b].mean()),
                       **paired_t(d, confidence), "verdict": ""}  # fmt: skip
                if all(identical_ranking(g[a].to_numpy(), g[b].to_numpy())
                       for _, g in rows.groupby("split", sort=False)):  # fmt: skip
                    row["p_value"] = float("nan")
                    row["verdict"] = "identical ranking"
                out.append(row)
    table = pd.DataFrame(out)
    holm_verdicts(table, confidence=confidence)
    return table[FAMILY_VERDICT_SCHEMA.names]


def _title(dataset: str) -> str:
    return DATASET_TITLES.get(dataset, dataset)


def _num(value: float, fmt: str = ".3f") -> str:
    return "n/a" if not np.isfinite(value) else format(value, fmt)


def family_markdown(families: pd.DataFrame) -> str:
    """The family table as markdown: per data set, condition and family the paper score and
    the family's best score (AU-ARC on the test parts), the difference with its t-interval,
    Holm's p and the verdict; then, per family, on how many shifted data sets the paper's
    score is better and worse."""
    lines = [
        "| data set | condition | family | paper score (AU-ARC) | best of family (AU-ARC) "
        "| paper - best [t-interval] | Holm p | verdict |",
        "|---|---|---|---|---|---|---:|---|",
    ]
    for r in families.itertuples(index=False):
        lines.append(
            f"| {_title(r.dataset)} | {r.condition} | {r.family} "
            f"| {r.paper_score} ({r.auarc_a:.3f}) | {r.comparator} ({r.auarc_b:.3f}) "
            f"| {r.diff_mean:+.3f} [{_num(r.ci_low, '+.3f')}, {_num(r.ci_high, '+.3f')}] "
            f"| {_num(r.p_holm, '.3g')} | {r.verdict} |"
        )
    lines.append("")
    shifted = families[families["condition"] == "shifted"]
    for family in VERDICT_FAMILIES:
        rows = shifted[shifted["family"] == family]
        if rows.empty:
            continue
        better = int((rows["verdict"] == "robustness").sum())
        worse = int((rows["verdict"] == "uncertainty").sum())
        lines.append(
            f"- {family}: under shift the paper's score is better on {better} and worse on "
            f"{worse} of {len(rows)} data sets."
        )
    return "\n".join(lines) + "\n"


def family_account(families: pd.DataFrame, headline: pd.DataFrame) -> pd.DataFrame:
    """Per data set and condition of ``headline``: its verdict and mean difference, the
    verdicts against each family's best (``family: verdict``), ``changed`` (the verdict
    against some family's best differs from the headline's, counting only families whose
    best is another score than the headline's comparator: the same comparison can read
    otherwise only through Holm over the larger table) and ``largest_shift``: the largest
    ``|diff_mean(family) - diff_mean(headline)|`` over the families (AU-ARC points)."""
    out = []
    for h in headline.itertuples(index=False):
        rows = families[(families["dataset"] == h.dataset) & (families["condition"] == h.condition)]
        verdicts = {r.family: r.verdict for r in rows.itertuples(index=False)}
        other = rows[rows["comparator"] != h.comparator]
        shift = (rows["diff_mean"] - h.diff_mean).abs()
        out.append({"dataset": h.dataset, "condition": h.condition,
                    "headline_comparator": h.comparator, "headline_verdict": h.verdict,
                    "headline_diff": float(h.diff_mean), "families": verdicts,
                    "changed": bool((other["verdict"] != h.verdict).any()),
                    "largest_shift": float(shift.max()) if len(shift) else float("nan")})  # fmt: skip
    return pd.DataFrame(out)


def _account_markdown(account: pd.DataFrame, families: pd.DataFrame) -> str:
    lines = ["Data set by data set, the headline's verdict (the paper score against its declared "
             "uncertainty comparator) and whether the stronger comparators change it:", ""]  # fmt: skip
    for dataset, rows in account.groupby("dataset", sort=False):
        parts = []
        for r in rows.itertuples(index=False):
            others = families[
                (families["dataset"] == dataset) & (families["condition"] == r.condition)
            ]
            against = ", ".join(
                f"{o.family} ({o.comparator}): {o.verdict}, {o.diff_mean:+.3f}"
                + (" (the headline's comparison; Holm over the larger table)"
                   if o.comparator == r.headline_comparator and o.verdict != r.headline_verdict
                   else "")
                for o in others.itertuples(index=False))  # fmt: skip
            state = (f"**changed** (the mean difference moves by up to {r.largest_shift:.3f})"
                     if r.changed else "unchanged")  # fmt: skip
            parts.append(f"{r.condition}: headline {r.headline_verdict} against "
                         f"{r.headline_comparator} ({r.headline_diff:+.3f}); {against}; {state}")  # fmt: skip
        lines.append(f"- **{_title(dataset)}**: " + "; ".join(parts) + ".")
    return "\n".join(lines) + "\n"


def _readme_line(families: pd.DataFrame) -> str:
    shifted = families[families["condition"] == "shifted"]
    parts = []
    for family in VERDICT_FAMILIES:
        rows = shifted[shifted["family"] == family]
        if len(rows):
            parts.append(f"{family} {int((rows['verdict'] == 'robustness').sum())} better / "
                         f"{int((rows['verdict'] == 'uncertainty').sum())} worse of {len(rows)}")  # fmt: skip
    return ("Against the best score of each comparator family (the failure-detection field's: "
            "DOCTOR, the maximum logit and energy, the trust score, Mahalanobis and k-NN "
            "distances), picked on the validation parts, under shift the paper's robustness "
            "score is: " + "; ".join(parts) + " data sets (Holm over the family table, "
            "[docs/compare.md](docs/compare.md#against-the-fields-comparators)).\n")  # fmt: skip


def family_blocks(families: pd.DataFrame, headline: pd.DataFrame) -> dict[str, str]:
    """The generated blocks ``compare_families`` (the family table, its per-family counts
    and :func:`family_account` in words) and ``readme_families`` (one line of counts)."""
    account = family_account(families, headline)
    return {"compare_families": family_markdown(families) + "\n" + _account_markdown(account, families),
            "readme_families": _readme_line(families)}  # fmt: skip
