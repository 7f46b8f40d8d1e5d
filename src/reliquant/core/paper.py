"""The one mechanism that sets a paper's numbers beside ours and checks its claims.

Every topic (``nbc``, ``trees``, ``mlm``) keeps the numbers its paper states in one config
key, ``<topic>.paper`` (thresholds of its claims included), and turns them into rows of two
kinds through its own ``reliquant.<topic>.paper`` module:

* a *comparison* (:class:`Comparison`): a number the paper states and the same quantity from
  our run; the difference is ``ours - paper_value``;
* a *claim* (:class:`Claim`): a sentence the paper asserts and whether it holds in our run,
  decided from the data.

Each topic's ``<topic>_paper`` rule writes them with :data:`COMPARISON_SCHEMA` /
:data:`CLAIM_SCHEMA` (plus machine-dependent notes such as runtime ratios, which stay out of
parquet: :func:`notes_markdown`). The cross-paper summary only assembles those tables
(:func:`render_summary`); paper titles live here, in :data:`PAPER_TITLES`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = [
    "CLAIM_SCHEMA",
    "COMPARISON_SCHEMA",
    "PAPER_TITLES",
    "Claim",
    "Comparison",
    "PaperTables",
    "claim_frame",
    "claim_lines",
    "comparison_frame",
    "comparison_lines",
    "format_pair",
    "notes_markdown",
    "paper_number",
    "paper_section",
    "picked_lines",
    "read_notes",
    "render_summary",
]

#: Section titles of the summary, keyed by the paper files in shared/papers (index: README).
PAPER_TITLES: dict[str, str] = {
    "000": "Robustness quantification for Naive Bayes (paper 000)",
    "001": "Probabilistic robustness of tree ensembles, first version (paper 001)",
    "002": "Probabilistic robustness of tree ensembles, revised (paper 002)",
    "004": "Misclassification Likelihood Matrix (paper 004)",
    "beyond": "Beyond the papers: which reliability score to trust",
}

COMPARISON_SCHEMA = pa.schema(
    [
        ("paper", pa.string()),
        ("quantity", pa.string()),
        ("paper_value", pa.float64()),
        ("ours", pa.float64()),
        ("difference", pa.float64()),
        ("unit", pa.string()),
        ("note", pa.string()),
    ]
)
CLAIM_SCHEMA = pa.schema(
    [
        ("paper", pa.string()),
        ("claim", pa.string()),
        ("holds", pa.bool_()),
        ("evidence", pa.string()),
        ("rule", pa.string()),
    ]
)


@dataclass(frozen=True)
class Comparison:
    """One number the paper reports next to ours (``paper_value`` may be NaN: not stated)."""

    paper: str
    quantity: str
    paper_value: float
    ours: float
    unit: str = ""
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and whether our run supports it: ``rule`` says when it holds, with
    the thresholds in force (from the topic's ``paper`` config), e.g. "holds if 1 to 3 of 10
    class means move by more than 1e-08"."""

    paper: str
    claim: str
    holds: bool
    evidence: str
    rule: str


@dataclass(frozen=True)
class PaperTables:
    """What every topic's ``paper_tables(...)`` returns (one shape for every paper module).

    ``comparison`` and ``claims`` are frames of :data:`COMPARISON_SCHEMA` /
    :data:`CLAIM_SCHEMA` (run-independent: they go to parquet); ``notes`` is the markdown of
    machine-dependent notes (:func:`notes_markdown`, read back by :func:`read_notes`);
    ``summary`` is an optional per-topic summary page (markdown), ``""`` when the topic has
    none.
    """

    comparison: pd.DataFrame
    claims: pd.DataFrame
    notes: str
    summary: str = ""


def comparison_frame(rows: Iterable[Comparison]) -> pd.DataFrame:
    """DataFrame of comparisons with ``difference = ours - paper_value``."""
    frame = pd.DataFrame(
        [asdict(r) for r in rows],
        columns=[f.name for f in COMPARISON_SCHEMA if f.name != "difference"],
    )
    frame["paper_value"] = frame["paper_value"].astype(float)
    frame["ours"] = frame["ours"].astype(float)
    frame["difference"] = frame["ours"] - frame["paper_value"]
    return frame[COMPARISON_SCHEMA.names]


def claim_frame(rows: Iterable[Claim]) -> pd.DataFrame:
    """DataFrame of claims (columns of :data:`CLAIM_SCHEMA`)."""
    return pd.DataFrame([asdict(r) for r in rows], columns=CLAIM_SCHEMA.names).astype(
        {"holds": bool}
    )


def _fmt(value: float, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if value != 0 and (abs(value) >= 1e4 or abs(value) < 1e-3):
        return f"{value:.{max(digits - 1, 3)}g}"
    return f"{value:.{digits}g}"


def format_pair(paper_value: float, ours: float) -> tuple[str, str]:
    """The paper's number and ours with enough significant digits (4 to 10) that two different
    numbers never print alike and neither rounds by more than a tenth of their difference:
    0.999896 beside 0.9999 prints as 0.999896, and 0.999988 as 0.99999, not 1."""
    for digits in range(4, 11):
        a, b = _fmt(paper_value, digits), _fmt(ours, digits)
        if paper_value == ours or not (np.isfinite(paper_value) and np.isfinite(ours)):
            return a, b
        gap = 0.1 * abs(paper_value - ours)
        if a != b and abs(float(a) - paper_value) <= gap and abs(float(b) - ours) <= gap:
            return a, b
    return a, b


def comparison_lines(table: pd.DataFrame) -> list[str]:
    """Markdown table of comparison rows (:data:`COMPARISON_SCHEMA`): quantity, the paper's
    number and ours (:func:`format_pair`), difference, unit, note."""
    lines = [
        "| quantity | paper | ours | difference | unit | note |",
        "|---|---:|---:|---:|---|---|",
    ]
    for row in table.itertuples(index=False):
        cells = [row.quantity, *format_pair(row.paper_value, row.ours)]
        cells += [_fmt(row.difference), row.unit, row.note]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


def picked_lines(comparisons: pd.DataFrame, picks: Sequence[tuple[str, str]]) -> list[str]:
    """A short markdown table (quantity, paper, ours) of the comparison rows named in
    ``picks`` (quantity -> label to print), in that order. A row this run did not produce
    (a smaller configuration) prints "not in this run"; a ValueError names a duplicated one."""
    lines = ["| quantity | paper | ours |", "|---|---:|---:|"]
    for quantity, label in picks:
        rows = comparisons[comparisons["quantity"] == quantity]
        if len(rows) > 1:
            raise ValueError(f"comparison row {quantity!r} appears {len(rows)} times")
        if not len(rows):
            lines.append(f"| {label} | – | not in this run |")
            continue
        row = rows.iloc[0]
        lines.append(f"| {label} | " + " | ".join(format_pair(row.paper_value, row.ours)) + " |")
    return lines


def claim_lines(claims: pd.DataFrame) -> list[str]:
    """Markdown bullets of claim rows (:data:`CLAIM_SCHEMA`), each marked as holding or not."""
    return [
        f"- **{'holds' if row.holds else 'does not hold'}**: {row.claim} ({row.evidence}; {row.rule})"
        for row in claims.itertuples(index=False)
    ]


def paper_section(
    comparisons: pd.DataFrame, claims: pd.DataFrame, key: str, extra: list[str] = ()
) -> list[str]:
    """Markdown lines of one paper's part of the summary: its comparison table (or a line
    saying it has none), ``extra`` lines, and its claims."""
    lines: list[str] = []
    table = comparisons[comparisons["paper"] == key]
    if not len(table):
        lines.append("The paper states no number our run reproduces; its claims follow.")
    else:
        lines += comparison_lines(table)
    if extra:
        lines += ["", *extra]
    paper_claims = claims[claims["paper"] == key]
    if len(paper_claims):
        lines += ["", "Claims:", "", *claim_lines(paper_claims)]
    return lines


def render_summary(
    comparisons: pd.DataFrame,
    claims: pd.DataFrame,
    papers: Mapping[str, str] = PAPER_TITLES,
    extra: dict[str, list[str]] | None = None,
) -> str:
    """Markdown with, per paper (in the order of ``papers``: key -> title), a table of
    reported vs our numbers, any ``extra`` markdown lines, and the claims marked as
    holding or not."""
    lines = ["# reliquant: the papers' numbers beside ours", ""]
    lines.append(
        "Generated by the workflow (`rule report_summary`) from this run's results. "
        "`difference` is ours minus the paper's; runtimes are machine-dependent and "
        "are compared as ratios."
    )
    for key, title in papers.items():
        lines += ["", f"## {title}", ""]
        lines += paper_section(comparisons, claims, key, (extra or {}).get(key, []))
    return "\n".join(lines) + "\n"


def paper_number(paper: Mapping[str, Any], key: str, topic: str) -> Any:
    """``paper[key]`` of the ``<topic>.paper`` config section, or a KeyError naming the key."""
    if key not in paper:
        raise KeyError(
            f"config key {topic}.paper.{key} is missing (the paper's numbers and claim "
            f"thresholds live there; present: {', '.join(sorted(paper)) or 'none'})"
        )
    return paper[key]


_NOTE_MARK = re.compile(r"^<!-- paper (\w+) -->$")


def notes_markdown(notes: Mapping[str, list[str]]) -> str:
    """Markdown lines to add under papers' sections of the summary (paper -> lines).

    Used for machine-dependent numbers (runtime ratios) that stay out of the parquet tables;
    :func:`read_notes` reads the text back.
    """
    lines: list[str] = []
    for paper, body in notes.items():
        if paper not in PAPER_TITLES:
            raise ValueError(f"unknown paper {paper!r}; known: {sorted(PAPER_TITLES)}")
        lines += [f"<!-- paper {paper} -->", *body]
    return "\n".join(lines) + "\n"


def read_notes(text: str) -> dict[str, list[str]]:
    """Inverse of :func:`notes_markdown`."""
    notes: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        mark = _NOTE_MARK.match(line)
        if mark:
            current = notes.setdefault(mark.group(1), [])
        elif current is not None:
            current.append(line)
    return notes
