"""The compare topic's markdown: the report pages and the generated blocks of the README and
``docs/compare.md`` (:mod:`reliquant.core.docs`), all built from the run's tables.

Blocks (:func:`highlight_blocks`): ``readme_compare`` (the README's headline table: per data
set and condition, the paper's robustness score minus its comparator, mean paired AU-ARC
difference over splits with its t-interval, Holm-adjusted p and the verdict),
``compare_declared`` (every declared comparison), ``compare_rule`` (paper 000's own rule on
every data set and case), ``compare_cases`` (per data set and case: accuracy and the mean
AU-ARC of every score over splits, the share of tied predictions), ``compare_noise`` (AU-ARC
against the noise scale of every grid score, the scale chosen on the validation parts) and
``compare_hybrid`` (the hybrid over splits).

Public API: :func:`headline_markdown`, :func:`declared_markdown`, :func:`rule_markdown`,
:func:`cases_table`, :func:`noise_markdown`, :func:`hybrid_markdown`, :func:`auarc_markdown`,
:func:`highlight_blocks`.
"""

from __future__ import annotations

import math

import pandas as pd

from reliquant.compare.reproduction.evaluation import pooled_case
from reliquant.compare.reproduction.tables import DATASET_TITLES

__all__ = [
    "auarc_markdown",
    "cases_table",
    "declared_markdown",
    "headline_markdown",
    "highlight_blocks",
    "hybrid_markdown",
    "noise_markdown",
    "rule_markdown",
]

_VERDICT = {
    "robustness": "robustness better",
    "uncertainty": "uncertainty better",
    "undecided": "undecided",
    "identical ranking": "identical ranking",
}


def _title(dataset: str) -> str:
    return DATASET_TITLES.get(dataset, dataset)


def _num(x: float, fmt: str = "+.3f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _interval(mean: float, low: float, high: float) -> str:
    return f"{_num(mean)} [{_num(low)}, {_num(high)}]"


def headline_markdown(headline: pd.DataFrame) -> str:
    """Per data set and condition: the paper score and its comparator (picked on validation
    parts), their mean AU-ARC on the test parts, the difference with its t-interval over
    splits, the Holm-adjusted p and the verdict; then how many data sets the claim holds on."""
    lines = [
        "| data set | condition | splits | accuracy | paper score (AU-ARC) "
        "| comparator (AU-ARC) | paper - comparator [95 % t-interval] | Holm p | verdict |",
        "|---|---|---:|---:|---|---|---|---:|---|",
    ]
    for r in headline.itertuples(index=False):
        lines.append(
            f"| {_title(r.dataset)} | {r.condition} | {r.n_splits} | {r.accuracy:.3f} "
            f"| {r.paper_score} ({r.auarc_a:.3f}) | {r.comparator} ({r.auarc_b:.3f}) "
            f"| {_interval(r.diff_mean, r.ci_low, r.ci_high)} | {_num(r.p_holm, '.3g')} "
            f"| {_VERDICT[r.verdict]} |"
        )
    shifted = headline[headline["condition"] == "shifted"]
    holds = int((shifted["verdict"] == "robustness").sum())
    worse = int((shifted["verdict"] == "uncertainty").sum())
    lines += [
        "",
        f"Under shift, the paper's robustness score flags unreliable predictions better than "
        f"its comparator on {holds} of {len(shifted)} data sets and worse on {worse} "
        "(Holm-adjusted over the table's rows).",
    ]
    return "\n".join(lines) + "\n"


def declared_markdown(declared: pd.DataFrame, *, per_condition: bool = False) -> str:
    """Every declared comparison per data set and case: score a minus score b, mean AU-ARC
    difference over splits with its t-interval, Holm-adjusted p (over every row of the table),
    verdict. ``per_condition``: only the case that stands for each condition (its one case,
    or its cases pooled where there are several)."""
    if per_condition and len(declared):
        keep = []
        for (_, condition), rows in declared.groupby(["dataset", "condition"], sort=False):
            cases = list(dict.fromkeys(rows["case"]))
            pooled = pooled_case(condition)
            keep.append(rows[rows["case"] == (pooled if pooled in cases else cases[0])])
        declared = pd.concat(keep)
    lines = [
        "| data set | case | a | b | a - b [95 % t-interval] | Holm p | verdict |",
        "|---|---|---|---|---|---:|---|",
    ]
    for r in declared.itertuples(index=False):
        a = r.score_a if r.role_a == "paper" else f"{r.score_a} (log-ratio)"
        lines.append(
            f"| {_title(r.dataset)} | {r.case} | {a} | {r.score_b} "
            f"| {_interval(r.diff_mean, r.ci_low, r.ci_high)} | {_num(r.p_holm, '.3g')} "
            f"| {_VERDICT[r.verdict]} |"
        )
    return "\n".join(lines) + "\n"


def rule_markdown(contrast: pd.DataFrame) -> str:
    """Paper 000's rule per data set and case: the best paper robustness and the best
    uncertainty score by mean AU-ARC over splits (picked on the data judged), the mean
    difference, its standard error and the verdict beyond z standard errors."""
    lines = [
        "| data set | case | splits | best robustness (AU-ARC) | best uncertainty (AU-ARC) "
        "| mean difference ± se | verdict |",
        "|---|---|---:|---|---|---|---|",
    ]
    for r in contrast.itertuples(index=False):
        lines.append(
            f"| {_title(r.dataset)} | {r.case} | {r.n_splits} | {r.best_rq} ({r.auarc_rq:.3f}) "
            f"| {r.best_uq} ({r.auarc_uq:.3f}) | {_num(r.diff_mean, '+.4f')} ± "
            f"{_num(r.diff_se, '.4f')} | {_VERDICT[r.verdict]} (z = {r.z:g}) |"
        )
    return "\n".join(lines) + "\n"


def cases_table(auarc: pd.DataFrame) -> str:
    """Per data set and case (all predictions of each split): splits, predictions per split,
    accuracy, and every score's mean AU-ARC over splits, best first, with its mean share of
    tied predictions."""
    sub = auarc[auarc["part"] == "all"]
    lines = [
        "| data set | case | splits | n per split | accuracy "
        "| mean AU-ARC over splits, best first (tied predictions) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for (dataset, case), rows in sub.groupby(["dataset", "case"], sort=False):
        per_split = rows.drop_duplicates("split")
        means = rows.groupby("score", sort=False)[["auarc", "tied"]].mean()
        means = means.sort_values("auarc", ascending=False)
        scores = ", ".join(f"{v.Index} {v.auarc:.3f} ({v.tied:.0%})" for v in means.itertuples())
        lines.append(
            f"| {_title(dataset)} | {case} | {len(per_split)} | {per_split['n'].mean():.0f} "
            f"| {per_split['accuracy'].mean():.3f} | {scores} |"
        )
    return "\n".join(lines) + "\n"


def hybrid_markdown(hybrid: pd.DataFrame) -> str:
    """The hybrid per data set and condition over splits: its inputs, AU-ARC, gain over the
    better input and importance of robustness (mean and t-interval), share of splits with a
    gain."""
    lines = [
        "| data set | condition | robustness input | uncertainty input | splits fitted "
        "| AU-ARC hybrid | gain over the better input [95 % t] | splits with a gain "
        "| importance of RQ [95 % t] |",
        "|---|---|---|---|---:|---:|---|---:|---|",
    ]
    for r in hybrid.itertuples(index=False):
        if r.note:
            lines.append(f"| {_title(r.dataset)} | {r.condition} | {r.note} | | | | | | |")
            continue
        lines.append(
            f"| {_title(r.dataset)} | {r.condition} | {r.rq_score} | {r.uq_score} "
            f"| {r.n_fitted} of {r.n_splits} | {_num(r.auarc_hybrid, '.3f')} "
            f"| {_interval(r.gain_mean, r.gain_ci_low, r.gain_ci_high)} "
            f"| {_num(r.gain_positive, '.0%')} "
            f"| {_num(r.importance_mean, '.2f')} [{_num(r.importance_ci_low, '.2f')}, "
            f"{_num(r.importance_ci_high, '.2f')}] |"
        )
    return "\n".join(lines) + "\n"


def noise_markdown(noise: pd.DataFrame) -> str:
    """Per data set, grid score, noise scale and condition: the mean AU-ARC over splits on the
    validation and the test parts, the share of tied predictions, and which scale was chosen
    (on the validation parts)."""
    lines = [
        "| data set | score | scale | condition | AU-ARC validation | AU-ARC test | tied | chosen |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    for r in noise.itertuples(index=False):
        lines.append(
            f"| {_title(r.dataset)} | {r.score} | {r.scale:g} | {r.condition} "
            f"| {r.auarc_validation:.3f} | {r.auarc_test:.3f} | {r.tied:.0%} "
            f"| {'yes' if r.chosen else ''} |"
        )
    return "\n".join(lines) + "\n"


def auarc_markdown(
    auarc: pd.DataFrame, headline: pd.DataFrame, declared: pd.DataFrame, contrast: pd.DataFrame
) -> str:
    """The report page: the headline, every declared comparison, paper 000's rule, and the
    mean AU-ARC of every score per data set and case."""
    return "\n".join(
        [
            "# Which score to trust: robustness against uncertainty over splits",
            "",
            "## The paper's score against its comparator",
            "",
            headline_markdown(headline),
            "## Every declared comparison",
            "",
            declared_markdown(declared),
            "## Paper 000's rule (best of each family, picked on the data judged)",
            "",
            rule_markdown(contrast),
            "## Every case",
            "",
            cases_table(auarc),
        ]
    )


def highlight_blocks(
    auarc: pd.DataFrame,
    headline: pd.DataFrame,
    declared: pd.DataFrame,
    contrast: pd.DataFrame,
    hybrid: pd.DataFrame,
    noise: pd.DataFrame,
) -> dict[str, str]:
    """The generated blocks of the README and docs/compare.md (module docstring)."""
    return {
        "compare_noise": noise_markdown(noise),
        "readme_compare": headline_markdown(headline),
        "compare_declared": declared_markdown(declared, per_condition=True),
        "compare_rule": rule_markdown(contrast),
        "compare_cases": cases_table(auarc),
        "compare_hybrid": hybrid_markdown(hybrid),
    }
