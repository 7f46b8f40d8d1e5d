"""Papers 001/002 beside our run: comparison rows and claims (built with reliquant.core.paper).

Every number the papers state and every threshold of their claims comes from the
``trees.paper`` config key, read with :func:`reliquant.core.paper.paper_number` (a missing key
is an error naming it). :func:`paper_tables` returns what rule ``trees_paper`` writes, as a
:class:`reliquant.core.paper.PaperTables`:

* ``comparison`` and ``claims``: run-independent comparisons and claims (parquet, collected by
  the cross-paper summary);
* ``summary``: ``summary.md``, those plus everything computed from wall-clock runtimes
  (Table 2);
* ``notes``: ``paper_notes.md``, the Pima best-matching cell and the Table 2 runtime ratios
  for the cross-paper summary.

The Pima comparison (:mod:`reliquant.trees.reproduction.pima_paper`, its names importable
from here too): :func:`pima_best_match` ranks the cells of the Pima
sensitivity table (:func:`reliquant.trees.reproduction.pima.pima`) by their distance to the
paper's Figure 4 numbers, :func:`pima_sensitivity_comparisons` compares the best one.

The Table 2 runtime ratios are computed once, by :func:`runtime_ratios`; the comparison rows
and the notes are both rendered from its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from reliquant.core.paper import (
    PAPER_TITLES,
    Claim,
    Comparison,
    PaperTables,
    claim_frame,
    comparison_frame,
    notes_markdown,
    paper_number,
    render_summary,
)
from reliquant.trees.reproduction.agreement import r2_score
from reliquant.trees.reproduction.pima_paper import (
    PIMA_MATCH_DISTANCES,
    pima_best_match,
    pima_cell_name,
    pima_comparisons,
    pima_match_distances,
    pima_match_sentence,
    pima_sensitivity_comparisons,
)

__all__ = [
    "MONTE_CARLO_NOTE",
    "NOT_RUN",
    "PIMA_MATCH_DISTANCES",
    "RUNTIME_METHODS",
    "RUNTIME_RATIOS",
    "TREE_PAPERS",
    "bounded_noise_claim",
    "draws_label",
    "faster_pruning_claim",
    "fully_robust",
    "mc_r2_claim",
    "method_name",
    "paper_tables",
    "pima_best_match",
    "pima_cell_name",
    "pima_comparisons",
    "pima_match_distances",
    "pima_match_sentence",
    "pima_sensitivity_comparisons",
    "pruning_claim",
    "ratio_lines",
    "runtime_comparisons",
    "runtime_ratios",
    "summary_markdown",
    "table1_comparisons",
    "table3_comparisons",
]

#: The tree papers, in the order of results/trees/summary.md.
TREE_PAPERS = ("002", "001")
#: Table 2 methods: runtime column -> (name, ``trees.paper`` key of the paper's seconds).
#: The paper's Monte Carlo seconds are compared with ours of the same kind of implementation
#: as our box grid: both compiled (numba; :mod:`reliquant.trees.grid_kernel` and the kernel of
#: :mod:`reliquant.trees.monte_carlo` whose estimates fill the tables). ``monte_carlo_numpy``
#: (numpy sampling + the model's predict) is timed for reference.
RUNTIME_METHODS: dict[str, tuple[str, str | None]] = {
    "all_boxes": ("all boxes", "table2_all_boxes_median_s"),
    "pruned_boxes": ("99 % boxes", "table2_pruned_median_s"),
    "monte_carlo": ("Monte Carlo", "table2_mc_s"),
    "monte_carlo_numpy": ("Monte Carlo, numpy + predict", None),
    "engine": ("exact engine", None),
}
#: How a number of a method this run skipped is shown (never as ``nan``).
NOT_RUN = "not run in this configuration"
#: Table 2 runtime ratios (numerator, denominator), medians over samples.
RUNTIME_RATIOS = (
    ("all_boxes", "pruned_boxes"),
    ("all_boxes", "monte_carlo"),
    ("monte_carlo", "engine"),
    ("monte_carlo_numpy", "engine"),
    ("monte_carlo_numpy", "monte_carlo"),
    ("all_boxes", "engine"),
)
#: What the Monte Carlo names of the runtime rows mean (summary.md and paper_notes.md).
MONTE_CARLO_NOTE = (
    "Monte Carlo: plain draws, estimate = share of draws with the sample's label, on the "
    "compiled kernel (the estimates of Tables 2 and 3); the box grids are compiled too, so "
    "the paper's Monte Carlo seconds and its all boxes / Monte Carlo ratio are compared with "
    "these (like with like). Monte Carlo, numpy + predict: the same estimator with numpy "
    "sampling and the ensemble's predict, for reference."
)


def _number(paper: Mapping[str, Any], key: str) -> Any:
    return paper_number(paper, key, "trees")


def draws_label(n: int) -> str:
    """``10^6`` for a power of ten, else the number with thousands separators."""
    k = int(round(np.log10(n))) if n > 0 else 0
    return f"10^{k}" if n > 0 and 10**k == n else f"{n:,}"


def method_name(method: str, mc_draws: int) -> str:
    """A Table 2 method's name; Monte Carlo with the draws of the configuration in force."""
    name = RUNTIME_METHODS[method][0]
    return f"{name} ({draws_label(mc_draws)} draws)" if method.startswith("monte_carlo") else name


def _medians(runtimes: pd.DataFrame) -> pd.Series:
    """Median seconds per method over the samples; NaN for a method the run did not time."""
    med = runtimes.median(numeric_only=True)
    return med.reindex(med.index.union(list(RUNTIME_METHODS)))


def _paper_seconds(paper: Mapping[str, Any], method: str) -> float:
    key = RUNTIME_METHODS[method][1]
    return float("nan") if key is None else float(_number(paper, key))


# --------------------------------------------------------------------------------------
# comparisons
# --------------------------------------------------------------------------------------
def table1_comparisons(table1: pd.DataFrame, paper: Mapping[str, Any]) -> list[Comparison]:
    """Table 1: R^2 between all boxes and the 99 % boxes, and their largest difference."""
    r2 = r2_score(table1["robustness_all"], table1["robustness_pruned"])
    return [
        Comparison(
            "002",
            "Table 1: R^2 all vs 99 % boxes",
            _number(paper, "table1_r2"),
            r2,
            "",
            f"paper: 'exceeding {_number(paper, 'table1_r2'):g}'",
        ),
        Comparison(
            "002",
            "Table 1: max |all - 99 %|",
            _number(paper, "table1_max_abs_diff"),
            float(table1["abs_diff"].max()),
            "",
            "paper: differences from the fifth decimal",
        ),
    ]


def runtime_ratios(
    runtimes: pd.DataFrame, paper: Mapping[str, Any], mc_draws: int
) -> list[Comparison]:
    """Table 2 runtime ratios of :data:`RUNTIME_RATIOS`, ours and the paper's (NaN where the
    paper gives no time), from the median seconds per method over the samples; a ratio whose
    method was skipped in this run (the all-boxes grid above its box limit, or a runtimes
    table without a method's column) is noted so."""
    med = _medians(runtimes)
    rows = []
    for num, den in RUNTIME_RATIOS:
        name = f"{method_name(num, mc_draws)} / {method_name(den, mc_draws)}"
        ours = float(med[num] / med[den])
        ratio = _paper_seconds(paper, num) / _paper_seconds(paper, den)
        note = "" if np.isfinite(ours) else NOT_RUN
        rows.append(Comparison("002", f"Table 2: {name} (median ratio)", ratio, ours, "x", note))
    return rows


def runtime_comparisons(
    runtimes: pd.DataFrame, ratios: list[Comparison], paper: Mapping[str, Any], mc_draws: int
) -> list[Comparison]:
    """Table 2 median seconds per sample of every method, then the ``ratios``."""
    med = _medians(runtimes)
    medians = [
        Comparison(
            "002",
            f"Table 2: median s/sample, {method_name(method, mc_draws)}",
            _paper_seconds(paper, method),
            float(med[method]),
            "s",
            NOT_RUN
            if not np.isfinite(med[method])
            else (
                "machine-dependent"
                if key
                else "numpy + predict, for reference; not in the paper"
                if method == "monte_carlo_numpy"
                else "not in the paper"
            ),
        )
        for method, (_, key) in RUNTIME_METHODS.items()
    ]
    return medians + ratios


def ratio_lines(ratios: list[Comparison]) -> list[str]:
    """A markdown table of runtime ratios (``paper_notes.md`` of the cross-paper summary)."""

    def cell(v: float, missing: str) -> str:
        return missing if not np.isfinite(v) else f"{v:.3g}x"

    lines = ["| runtime ratio (Table 2, medians over samples) | paper | ours |", "|---|---:|---:|"]
    for r in ratios:
        name = r.quantity.removeprefix("Table 2: ").removesuffix(" (median ratio)")
        lines.append(f"| {name} | {cell(r.paper_value, '–')} | {cell(r.ours, 'not run')} |")
    return [*lines, "", MONTE_CARLO_NOTE]


def table3_comparisons(table3: pd.DataFrame, paper: Mapping[str, Any]) -> list[Comparison]:
    """Table 3: the smallest R^2 at the table's variance (the smallest of the sweep) and over
    the whole variance sweep."""
    base = table3[table3["variance"] == table3["variance"].min()]
    return [
        Comparison(
            "002",
            f"Table 3: min R^2 exact vs MC (variance {base['variance'].min():g})",
            _number(paper, "table3_r2_min"),
            float(base["r2"].min()),
            "",
            f"{len(base)} trees",
        ),
        Comparison(
            "002",
            "Table 3: min R^2 over the variance sweep",
            float("nan"),
            float(table3["r2"].min()),
            "",
            "paper: 'only observed minor differences'",
        ),
    ]


def fully_robust(iris_mixed: pd.DataFrame, tol: float) -> int:
    """Figure 5 of 001: samples with robustness 1, i.e. certified lower bound >= 1 - ``tol``."""
    return int((iris_mixed["lower"] >= 1.0 - tol).sum())


# --------------------------------------------------------------------------------------
# claims
# --------------------------------------------------------------------------------------
def pruning_claim(table1: pd.DataFrame, table2: pd.DataFrame, paper: Mapping[str, Any]) -> Claim:
    """002: the 99 % boxes change robustness by at most ``claim_pruning_max_abs_diff``
    (Tables 1 and 2; Table 2 where its all-boxes grid was enumerated)."""
    limit = _number(paper, "claim_pruning_max_abs_diff")
    d1 = float(table1["abs_diff"].max())
    ok = table2["robustness_all"].notna()
    d2 = float("nan")
    if ok.any():
        d2 = float(
            (table2.loc[ok, "robustness_all"] - table2.loc[ok, "robustness_pruned"]).abs().max()
        )
    points = f"{100 * limit:g} percentage point" + ("" if 100 * limit == 1 else "s")
    return Claim(
        "002",
        f"the 99 % boxes change robustness by at most {points}",
        bool(max(d1, d2 if np.isfinite(d2) else 0.0) <= limit),
        f"max |diff| Table 1 {d1:.2g}"
        + (f", Table 2 {d2:.2g}" if np.isfinite(d2) else ", Table 2 grid skipped"),
        f"holds if the largest |all - 99 %| over Tables 1 and 2 is <= {limit:g}",
    )


def mc_r2_claim(table3: pd.DataFrame, paper: Mapping[str, Any]) -> Claim:
    """002: R^2 between exact and Monte Carlo exceeds ``claim_mc_r2_above`` in every setting
    of Table 3 (its variance, the smallest of the sweep)."""
    above = _number(paper, "claim_mc_r2_above")
    r2_min = float(table3.loc[table3["variance"] == table3["variance"].min(), "r2"].min())
    return Claim(
        "002",
        f"R^2 between exact and Monte Carlo exceeds {above:g} in every Table 3 setting",
        bool(r2_min > above),
        f"min R^2 {r2_min:.6f}",
        f"holds if the smallest R^2 at the smallest variance is > {above:g}",
    )


def bounded_noise_claim(n_one: int, n_samples: int, paper: Mapping[str, Any]) -> Claim:
    """001: bounded noise gives "several" test samples robustness 1, several meaning at least
    ``claim_several_min``."""
    return Claim(
        "001",
        "bounded noise gives several test samples a robustness of exactly 1",
        bool(n_one >= _number(paper, "claim_several_min")),
        f"{n_one} of {n_samples}",
        f"holds if at least {_number(paper, 'claim_several_min')} samples have robustness 1",
    )


def faster_pruning_claim(runtimes: pd.DataFrame, paper: Mapping[str, Any]) -> list[Claim]:
    """002: the 99 % boxes are much faster than all boxes (Table 2), "much" meaning a median
    speed-up of at least ``claim_pruning_min_speedup``; none when a grid was skipped."""
    med = runtimes.median(numeric_only=True)
    if not (np.isfinite(med["all_boxes"]) and np.isfinite(med["pruned_boxes"])):
        return []
    least = float(_number(paper, "claim_pruning_min_speedup"))
    speedup = med["all_boxes"] / med["pruned_boxes"]
    return [
        Claim(
            "002",
            "the 99 % boxes are much faster than all boxes (Table 2)",
            bool(speedup >= least),
            f"median {med['all_boxes']:.3g} s vs {med['pruned_boxes']:.3g} s ({speedup:.3g}x)",
            f"holds if the median all-boxes time is at least {least:g}x the 99 % boxes' time",
        )
    ]


# --------------------------------------------------------------------------------------
# the outputs of rule trees_paper
# --------------------------------------------------------------------------------------
def summary_markdown(comparison: pd.DataFrame, claims: pd.DataFrame) -> str:
    """``results/trees/summary.md``: :func:`reliquant.core.paper.render_summary` for the two
    tree papers under this topic's own heading."""
    papers = {key: PAPER_TITLES[key] for key in TREE_PAPERS}
    body = render_summary(comparison, claims, papers).split("\n## ", 1)[1]
    head = (
        "# Tree robustness: the papers' numbers beside ours\n\n"
        "Generated by `rule trees_paper` from this run's results (papers 001/002). "
        "`difference` is ours minus the paper's; runtimes are machine-dependent (the paper "
        "used one core of a Xeon 6248), so compare them as ratios. " + MONTE_CARLO_NOTE + "\n\n## "
    )
    return head + body


def paper_tables(
    *,
    table1: pd.DataFrame,
    table2: pd.DataFrame,
    runtimes: pd.DataFrame,
    table3: pd.DataFrame,
    pima: pd.DataFrame,
    iris_mixed: pd.DataFrame,
    paper: Mapping[str, Any],
    iris_tol: float,
    mc_draws: int,
    pima_sensitivity: pd.DataFrame | None = None,
) -> PaperTables:
    """Every comparison and claim of papers 001/002 from this run's tables (``paper``: the
    ``trees.paper`` config section; ``iris_tol``: the Figure 5 engine tolerance; ``mc_draws``:
    Table 2's Monte Carlo draws, for the labels; ``pima_sensitivity``: the Pima sensitivity
    table, whose best-matching cell is compared and named in the notes). Numbers
    computed from wall-clock runtimes go to the markdown only: they differ between runs."""
    n_one = fully_robust(iris_mixed, iris_tol)
    pima_lines: list[str] = []
    default_note = ""
    if pima_sensitivity is not None:
        defaults = pima_sensitivity[pima_sensitivity["default"]]
        if len(defaults) == 1:
            default_note = f"default cell: {pima_cell_name(defaults.iloc[0])}"
        pima_lines = [
            "",
            "Pima (Figure 4): "
            + pima_match_sentence(pima_best_match(pima_sensitivity, paper), paper),
        ]
    comparisons = [
        *table1_comparisons(table1, paper),
        *table3_comparisons(table3, paper),
        *pima_comparisons(pima, paper, default_note),
        *(
            []
            if pima_sensitivity is None
            else pima_sensitivity_comparisons(pima_sensitivity, paper)
        ),
        Comparison(
            "001",
            "Figure 5: samples with robustness 1",
            float("nan"),
            n_one,
            "",
            "paper: 'several'",
        ),
    ]
    claims = [
        pruning_claim(table1, table2, paper),
        mc_r2_claim(table3, paper),
        bounded_noise_claim(n_one, len(iris_mixed), paper),
    ]
    ratios = runtime_ratios(runtimes, paper, mc_draws)
    timing = runtime_comparisons(runtimes, ratios, paper, mc_draws)
    summary = summary_markdown(
        comparison_frame(comparisons + timing),
        claim_frame(claims + faster_pruning_claim(runtimes, paper)),
    )
    return PaperTables(
        comparison=comparison_frame(comparisons),
        claims=claim_frame(claims),
        notes=notes_markdown({"002": [*pima_lines, "", *ratio_lines(ratios)]}),
        summary=summary,
    )
