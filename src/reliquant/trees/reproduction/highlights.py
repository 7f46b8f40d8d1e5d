"""The tree-robustness numbers the README and ``docs/trees.md`` quote, generated from the run.

Each function returns the markdown of one generated block (:mod:`reliquant.core.docs`):
``trees_results`` (papers 002 and 001: every number beside ours, the Pima note, the claims),
``trees_timings`` (Table 2 runtime ratios: machine-dependent; the README shows it too) and
``readme_trees`` (the README's short version). Inputs: the summary's comparison and
claim tables (:data:`reliquant.core.paper.COMPARISON_SCHEMA`, ``CLAIM_SCHEMA``), the trees
topic's notes (:func:`reliquant.core.paper.read_notes` of ``results/trees/paper_notes.md``)
and the Pima sensitivity table (``results/trees/pima_sensitivity.parquet``).
"""

from __future__ import annotations

import pandas as pd

from reliquant.core.paper import PAPER_TITLES, paper_section, picked_lines

__all__ = [
    "README_ROWS",
    "highlight_blocks",
    "readme_block",
    "results_block",
    "sensitivity_sentence",
    "timings_block",
]

#: README rows: comparison quantity -> label.
README_ROWS = (
    ("Table 1: R^2 all vs 99 % boxes", "Table 1 (Iris DT): R^2 all boxes vs 99 % boxes"),
    ("Table 1: max |all - 99 %|", "Table 1: largest all - 99 % difference"),
    ("Table 3: min R^2 exact vs MC (variance 0.0001)", "Table 3: min R^2 exact vs Monte Carlo"),
    ("Figure 4: Pima test accuracy", "Pima (Figure 4), default cell: test accuracy"),
    ("Figure 4: min robustness", "Pima, default cell: lowest robustness"),
    ("Figure 4: subjects above 0.99", "Pima, default cell: subjects above 0.99 (of 73)"),
    (
        "Figure 4, best-matching sensitivity cell: subjects above 0.99",
        "Pima, best-matching cell: subjects above 0.99",
    ),
)


def _split_notes(lines: list[str]) -> tuple[list[str], list[str]]:
    """(prose, table) lines of a notes section: runtime tables are machine-dependent."""
    table = [line for line in lines if line.startswith("|")]
    prose = [line for line in lines if line.strip() and not line.startswith("|")]
    return prose, table


def results_block(comparisons: pd.DataFrame, claims: pd.DataFrame, notes: dict) -> str:
    """Papers 002 and 001: comparison tables, the Pima note and the claims (no timings)."""
    lines: list[str] = []
    for key in ("002", "001"):
        prose, _ = _split_notes(notes.get(key, []))
        lines += [f"**{PAPER_TITLES[key]}**", ""]
        lines += paper_section(comparisons, claims, key, prose) + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


def timings_block(notes: dict) -> str:
    """Table 2 runtime ratios of this run (machine-dependent; compare ratios, not seconds)."""
    _, table = _split_notes(notes.get("002", []))
    return "\n".join(table) + "\n" if table else "Table 2 was not run in this configuration.\n"


def sensitivity_sentence(sensitivity: pd.DataFrame) -> str:
    """Per SNR reading, the range of subjects above 0.99 over the boosting rounds."""
    parts = []
    for reading, sub in sensitivity.groupby("reading", sort=False):
        lo, hi = int(sub["n_above"].min()), int(sub["n_above"].max())
        rounds = ", ".join(str(r) for r in sorted(sub["rounds"]))
        parts.append(f"the {reading} reading {lo} to {hi} (rounds {rounds})")
    n_test = int(sensitivity["n_test"].iloc[0])
    return (
        f"Subjects above 0.99 of {n_test} across the sensitivity table: " + "; ".join(parts) + "."
    )


def readme_block(comparisons: pd.DataFrame, sensitivity: pd.DataFrame) -> str:
    """The README's table of tree numbers beside the paper's, and the Pima sensitivity range."""
    lines = picked_lines(comparisons, README_ROWS)
    return "\n".join(lines) + "\n\n" + sensitivity_sentence(sensitivity) + "\n"


def highlight_blocks(
    comparisons: pd.DataFrame, claims: pd.DataFrame, notes: dict, sensitivity: pd.DataFrame
) -> dict[str, str]:
    """Every generated trees block, by name (``*_timings``: machine-dependent)."""
    return {
        "trees_results": results_block(comparisons, claims, notes),
        "trees_timings": timings_block(notes),
        "readme_trees": readme_block(comparisons, sensitivity),
    }
