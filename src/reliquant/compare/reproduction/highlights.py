"""The compare topic's markdown: the report pages and the generated blocks of the README and
``docs/compare.md`` (:mod:`reliquant.core.docs`), all built from the run's tables.

Blocks (:func:`highlight_blocks`): ``readme_compare`` (the README's headline table: per data
set, the best robustness and the best uncertainty score under shift, their paired difference
with its interval, the verdict), ``compare_cases`` (per data set and case: accuracy, the best
score, the best of each family) and ``compare_hybrid`` (the hybrid's weights per data set
and condition).

Public API: :func:`headline_table`, :func:`cases_table`, :func:`hybrid_markdown`,
:func:`auarc_markdown`, :func:`highlight_blocks`.
"""

from __future__ import annotations

import math

import pandas as pd

from reliquant.compare.reproduction.tables import DATASET_TITLES

__all__ = [
    "auarc_markdown",
    "cases_table",
    "headline_table",
    "highlight_blocks",
    "hybrid_markdown",
]

_VERDICT = {
    "robustness": "robustness better",
    "uncertainty": "uncertainty better",
    "undecided": "undecided",
}


def _title(dataset: str) -> str:
    return DATASET_TITLES.get(dataset, dataset)


def _diff(diff: float, low: float, high: float) -> str:
    return f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]"


def headline_table(contrast: pd.DataFrame) -> str:
    """Per data set: its shifted predictions' accuracy, the best robustness and uncertainty
    scores (AU-ARC), their paired difference with its interval and the verdict, and the same
    difference in distribution; then how many data sets the claim holds on."""
    lines = [
        "| data set | under shift: accuracy | best robustness (AU-ARC) "
        "| best uncertainty (AU-ARC) | RQ - UQ [95 % CI] | verdict | clean: RQ - UQ [95 % CI] |",
        "|---|---:|---|---|---|---|---|",
    ]
    shifted = contrast[contrast["condition"] == "shifted"]
    clean = contrast[contrast["condition"] == "clean"].set_index("dataset")
    holds = 0
    for r in shifted.itertuples(index=False):
        v = r.verdict
        holds += v == "robustness"
        c = clean.loc[r.dataset] if r.dataset in clean.index else None
        in_dist = "–" if c is None else _diff(c["diff"], c["diff_ci_low"], c["diff_ci_high"])
        lines.append(
            f"| {_title(r.dataset)} | {r.accuracy:.3f} | {r.best_rq} ({r.auarc_rq:.3f}) "
            f"| {r.best_uq} ({r.auarc_uq:.3f}) | {_diff(r.diff, r.diff_ci_low, r.diff_ci_high)} | {_VERDICT[v]} | {in_dist} |"
        )
    lines += [
        "",
        f"Robustness flags unreliable predictions better than uncertainty under shift on "
        f"{holds} of {len(shifted)} data sets (the interval above 0).",
    ]
    return "\n".join(lines) + "\n"


def cases_table(auarc: pd.DataFrame) -> str:
    """Per data set and case: predictions, accuracy, the best score overall and the best of
    each family, with their AU-ARC."""
    lines = [
        "| data set | case | n | accuracy | best score (AU-ARC) | best robustness "
        "| best uncertainty |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for (dataset, case), rows in auarc.groupby(["dataset", "case"], sort=False):
        best = rows.loc[rows["auarc"].idxmax()]
        fam = {}
        for family in ("robustness", "uncertainty"):
            f = rows[rows["family"] == family]
            fam[family] = (
                "–" if f.empty else
                f"{f.loc[f['auarc'].idxmax(), 'score']} ({f['auarc'].max():.3f})"
            )  # fmt: skip
        lines.append(
            f"| {_title(dataset)} | {case} | {int(best['n'])} | {best['accuracy']:.3f} "
            f"| {best['score']} ({best['auarc']:.3f}) | {fam['robustness']} "
            f"| {fam['uncertainty']} |"
        )
    return "\n".join(lines) + "\n"


def _num(x: float, fmt: str = "+.2f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def hybrid_markdown(hybrid: pd.DataFrame) -> str:
    """The hybrid per data set and condition: its two inputs and weights, the relative
    importance of robustness, the held-out AU-ARC of the hybrid and of each input."""
    lines = [
        "| data set | condition | robustness input | uncertainty input | w_RQ | w_UQ "
        "| importance of RQ | AU-ARC hybrid | AU-ARC RQ | AU-ARC UQ |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in hybrid.itertuples(index=False):
        if r.note:
            lines.append(f"| {_title(r.dataset)} | {r.condition} | {r.note} | | | | | | | |")
            continue
        lines.append(
            f"| {_title(r.dataset)} | {r.condition} | {r.rq_score} | {r.uq_score} "
            f"| {_num(r.weight_rq)} | {_num(r.weight_uq)} | {_num(r.importance_rq, '.2f')} "
            f"| {_num(r.auarc_hybrid, '.3f')} | {_num(r.auarc_rq, '.3f')} "
            f"| {_num(r.auarc_uq, '.3f')} |"
        )
    return "\n".join(lines) + "\n"


def auarc_markdown(auarc: pd.DataFrame, contrast: pd.DataFrame) -> str:
    """The report page: the headline table, then every score's AU-ARC with its interval and
    paired difference to the best score, per data set and case."""
    lines = ["# Which score to trust: AU-ARC of every score", "", "## Under shift, per data set",
             "", headline_table(contrast), "## Every case", ""]  # fmt: skip
    for (dataset, case), rows in auarc.groupby(["dataset", "case"], sort=False):
        first = rows.iloc[0]
        lines += [
            f"### {_title(dataset)}: {case} ({first['condition']}, n = {int(first['n'])}, "
            f"accuracy {first['accuracy']:.3f})",
            "",
            "| rank | score | family | AU-ARC [95 % CI] | minus best [95 % CI] |",
            "|---:|---|---|---|---|",
        ]
        for r in rows.sort_values(["rank", "score"]).itertuples(index=False):
            lines.append(
                f"| {r.rank} | {r.score} | {r.family} | {r.auarc:.4f} [{r.ci_low:.4f}, "
                f"{r.ci_high:.4f}] | {r.diff_vs_best:+.4f} [{r.diff_ci_low:+.4f}, "
                f"{r.diff_ci_high:+.4f}] |"
            )
        lines.append("")
    return "\n".join(lines)


def highlight_blocks(
    auarc: pd.DataFrame, contrast: pd.DataFrame, hybrid: pd.DataFrame
) -> dict[str, str]:
    """The generated blocks of the README and docs/compare.md (module docstring)."""
    return {
        "readme_compare": headline_table(contrast),
        "compare_cases": cases_table(auarc),
        "compare_hybrid": hybrid_markdown(hybrid),
    }
