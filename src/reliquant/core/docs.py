"""Numbers in the README and ``docs/*.md`` that come from a run are generated, never copied.

A page marks each generated part with a named block::

    <!-- generated: trees_results (edit the generator, not this block) -->
    | quantity | paper | ours |
    ...
    <!-- end generated: trees_results -->

The workflow writes each block's content to ``results/docs/<name>.md`` (the topics'
``highlights`` modules build it from the run's tables), ``rule docs_check`` lists every
block whose text differs from the run (``results/docs_check.md``, also in the report), and
``python -m reliquant.core.docs sync README.md docs/*.md`` rewrites the blocks from the run.

Public API: :func:`find_blocks`, :func:`fill_blocks`, :func:`stale_blocks`,
:func:`check_markdown`, :func:`run_timings`, :func:`main`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reliquant.core.io import write_text

__all__ = [
    "BLOCK_DIR",
    "Block",
    "DOC_FIGURES",
    "RUN_TIMINGS",
    "TIMING_SUFFIX",
    "begin_marker",
    "check_markdown",
    "end_marker",
    "fill_blocks",
    "find_blocks",
    "main",
    "merge_blocks",
    "read_contents",
    "run_timings",
    "stale_blocks",
    "stale_figures",
]

#: Folder of the generated block files, relative to the repository root.
BLOCK_DIR = Path("results/docs")
#: Blocks whose name ends so hold runtimes: they differ between machines and runs, so a
#: difference is reported, not counted as stale.
TIMING_SUFFIX = "_timings"
_BEGIN = re.compile(r"^<!-- generated: ([a-z0-9_]+) \(edit the generator, not this block\) -->$")
_END = re.compile(r"^<!-- end generated: ([a-z0-9_]+) -->$")
_ANY_MARKER = re.compile(r"^<!-- (end )?generated")


@dataclass(frozen=True)
class Block:
    """One generated block of a page: its name and the line span of its content."""

    name: str
    start: int  #: index of the first content line (after the opening marker)
    stop: int  #: index of the closing marker line


def begin_marker(name: str) -> str:
    """The opening marker line of block ``name``."""
    return f"<!-- generated: {name} (edit the generator, not this block) -->"


def end_marker(name: str) -> str:
    """The closing marker line of block ``name``."""
    return f"<!-- end generated: {name} -->"


def find_blocks(text: str, source: str = "<text>") -> list[Block]:
    """The generated blocks of a markdown page, in order.

    Raises ``ValueError`` naming ``source`` and the line for a malformed marker, a block
    that is not closed, nested or mismatched blocks, or a name used twice on one page.
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    open_name, open_line = None, 0
    for i, line in enumerate(lines):
        begin, end = _BEGIN.match(line), _END.match(line)
        if not (begin or end):
            if _ANY_MARKER.match(line):
                raise ValueError(f"{source}:{i + 1}: malformed generated-block marker: {line!r}")
            continue
        if begin:
            if open_name is not None:
                raise ValueError(
                    f"{source}:{i + 1}: block {begin.group(1)!r} opens inside block "
                    f"{open_name!r} (opened on line {open_line + 1})"
                )
            open_name, open_line = begin.group(1), i
        else:
            if open_name != end.group(1):
                raise ValueError(
                    f"{source}:{i + 1}: 'end generated: {end.group(1)}' does not close "
                    + (f"block {open_name!r}" if open_name else "any open block")
                )
            if any(b.name == open_name for b in blocks):
                raise ValueError(f"{source}:{open_line + 1}: block {open_name!r} appears twice")
            blocks.append(Block(open_name, open_line + 1, i))
            open_name = None
    if open_name is not None:
        raise ValueError(f"{source}:{open_line + 1}: block {open_name!r} is never closed")
    return blocks


def _content(lines: list[str], block: Block) -> str:
    return "\n".join(lines[block.start : block.stop])


def fill_blocks(text: str, contents: Mapping[str, str], source: str = "<text>") -> str:
    """``text`` with every block's content replaced by ``contents[name]`` (trailing newlines
    trimmed). A timing block without content keeps its text; any other block without content
    raises a ``KeyError`` naming ``source`` and the block."""
    lines = text.split("\n")
    out: list[str] = []
    last = 0
    for block in find_blocks(text, source):
        if block.name not in contents and block.name.endswith(TIMING_SUFFIX):
            continue  # runtimes of a run that did not happen here (e.g. the benchmarks): kept
        if block.name not in contents:
            raise KeyError(f"{source}:{block.start}: no generated content for block {block.name!r}")
        out += lines[last : block.start]
        out += contents[block.name].rstrip("\n").split("\n")
        last = block.stop
    out += lines[last:]
    return "\n".join(out)


def stale_blocks(text: str, contents: Mapping[str, str], source: str = "<text>") -> list[str]:
    """Names of the blocks whose text differs from ``contents`` (or that have none, except
    timing blocks, which another run may generate)."""
    lines = text.split("\n")
    return [
        b.name
        for b in find_blocks(text, source)
        if (b.name not in contents and not b.name.endswith(TIMING_SUFFIX))
        or (b.name in contents and _content(lines, b) != contents[b.name].rstrip("\n"))
    ]


def merge_blocks(*groups: Mapping[str, str]) -> dict[str, str]:
    """One name -> content mapping from several generators; a ValueError names a block that
    two of them generate."""
    merged: dict[str, str] = {}
    for group in groups:
        for name, text in group.items():
            if name in merged:
                raise ValueError(f"generated block {name!r} comes from two generators")
            merged[name] = text
    return merged


def read_contents(folder: Path) -> dict[str, str]:
    """Block name -> content of every ``<name>.md`` in ``folder``."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(Path(folder).glob("*.md"))}


def check_markdown(pages: Sequence[Path], contents: Mapping[str, str]) -> str:
    """A markdown report: per page, each block and whether it matches this run."""
    lines = [
        "# Generated numbers in the README and docs",
        "",
        "Each block of the pages below is compared with what this run generates "
        "(`results/docs/<block>.md`). Refresh stale blocks with "
        "`python -m reliquant.core.docs sync README.md docs/*.md`.",
        "",
        "| page | block | state |",
        "|---|---|---|",
    ]
    n_stale = n_timing = 0
    for page in pages:
        text = Path(page).read_text(encoding="utf-8")
        stale = set(stale_blocks(text, contents, str(page)))
        for block in find_blocks(text, str(page)):
            state = "current"
            if block.name not in contents and block.name.endswith(TIMING_SUFFIX):
                state = "timings of another run (not generated here)"
            elif block.name not in contents:
                state = "**no generator**"
            elif block.name in stale and block.name.endswith(TIMING_SUFFIX):
                state = "other timings (machine-dependent)"
                n_timing += 1
            elif block.name in stale:
                state = "**stale**"
            n_stale += state.startswith("**")
            lines.append(f"| {page} | {block.name} | {state} |")
    lines += [
        "",
        f"{n_stale} block(s) differ from this run; {n_timing} timing block(s) hold another "
        "run's runtimes.",
    ]
    return "\n".join(lines) + "\n"


#: Figures the README shows, copied from a run by ``sync`` (page copy -> the run's figure).
DOC_FIGURES = {
    "docs/figures/nbc_mean_curves.png": "results/figures/nbc/mean_curves.png",
    "docs/figures/trees_pima_hist.png": "results/figures/trees/pima_hist.png",
    "docs/figures/pmnist_sample_grid.png": "results/figures/pmnist/sample_grid.png",
    "docs/figures/mlm_figure2.png": "results/figures/mlm/figure2_mlm.png",
    "docs/figures/mlm_figure5.png": "results/figures/mlm/figure5_accuracy_by_level.png",
    "docs/figures/compare_rejection_curves.png": "results/figures/compare/rejection_curves.png",
    "docs/figures/compare_forest.png": "results/figures/compare/forest.png",
    "docs/figures/compare_certified.png": "results/figures/compare/certified.png",
}


def stale_figures(run_root: Path, repo: Path = Path(".")) -> list[str]:
    """The docs figures whose bytes differ from the run's figure under ``run_root`` (a
    figure the run did not make is not listed)."""
    stale = []
    for copy, source in DOC_FIGURES.items():
        made = Path(run_root) / source
        page = Path(repo) / copy
        if made.exists() and (not page.exists() or page.read_bytes() != made.read_bytes()):
            stale.append(copy)
    return stale


#: The README block of job times, built from a run's ``benchmarks/`` folder by :func:`main`.
RUN_TIMINGS = "readme_run_timings"


def run_timings(bench_dir: Path, n_longest: int = 4, log_dir: Path | None = None) -> str | None:
    """A sentence on a run's jobs from Snakemake's ``benchmark:`` files under ``bench_dir``
    (one ``<topic>/<job>.tsv`` per job; the speed benchmarks ``bench*``, the users' ``custom``
    cases and the named targets outside the default run, which keep theirs under
    ``named/<topic>/``, excluded): how many, their summed wall seconds (the files' ``s``) and
    CPU seconds, and the longest. ``None`` when there are none.

    A job's CPU seconds come from the exit record of its log, ``<log_dir>/<topic>/<job>.log``
    (default ``log_dir``: ``logs/`` beside ``bench_dir``;
    :func:`reliquant.core.runtimes.read_exit_record`), not from the file's ``cpu_time``,
    which Snakemake samples every 30 s after the first 15 s and so undercounts (a 37 s job of
    39 CPU seconds read 14.7). Where a job has no such record the sentence says how many lack
    it rather than print a partial sum."""
    import pandas as pd

    from reliquant.core.runtimes import read_exit_record

    bench_dir = Path(bench_dir)
    log_dir = bench_dir.parent / "logs" if log_dir is None else Path(log_dir)
    rows = []
    for path in sorted(bench_dir.glob("*/*.tsv")):
        if path.stem.startswith("bench") or path.parent.name in ("custom", "named"):
            continue
        frame = pd.read_csv(path, sep="\t")
        if len(frame):
            usage = read_exit_record(log_dir / path.parent.name / f"{path.stem}.log")
            cpu = usage["cpu_s"] if usage else None
            rows.append((f"{path.parent.name}/{path.stem}", float(frame["s"].iloc[-1]), cpu))
    if not rows:
        return None
    rows.sort(key=lambda r: -r[1])
    longest = ", ".join(f"{name} {sec:.0f} s" for name, sec, _ in rows[:n_longest])
    missing = sum(r[2] is None for r in rows)
    if missing:
        cpu = f"CPU time not recorded for {missing} of them"
    else:
        cpu = f"{sum(r[2] for r in rows) / 60:.1f} CPU minutes"
    return (
        f"{len(rows)} jobs, {sum(r[1] for r in rows) / 60:.1f} minutes of job time in all "
        f"({cpu}); the longest: {longest}.\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reliquant.core.docs {sync,check} PAGE...``: rewrite or check the pages'
    generated blocks from ``--blocks`` (default ``results/docs``), the README's job times
    from ``--benchmarks`` (default ``benchmarks``) and the figures of :data:`DOC_FIGURES` from
    the run that wrote ``--blocks`` (paths relative to the working directory). ``check`` exits 1 when a block other than
    a timing block is stale."""
    parser = argparse.ArgumentParser(prog="python -m reliquant.core.docs")
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--blocks", type=Path, default=BLOCK_DIR)
    parser.add_argument(
        "--benchmarks",
        type=Path,
        default=Path("benchmarks"),
        help=f"a run's job benchmark files, for the block {RUN_TIMINGS}",
    )
    args = parser.parse_args(argv)
    run_root = args.blocks.resolve().parents[1]  # results/docs -> the run's folder
    contents = read_contents(args.blocks)
    timings = run_timings(args.benchmarks) if args.benchmarks.is_dir() else None
    if timings and contents:
        contents[RUN_TIMINGS] = timings
    if not contents:
        print(f"error: no generated blocks in {args.blocks}/ (run the workflow first)")
        return 2
    n_stale = 0
    for page in args.pages:
        text = page.read_text(encoding="utf-8")
        stale = stale_blocks(text, contents, str(page))
        n_stale += sum(not name.endswith(TIMING_SUFFIX) for name in stale)
        if args.command == "sync" and stale:
            write_text(fill_blocks(text, contents, str(page)), page)
        verb = "updated" if args.command == "sync" else "stale"
        print(
            f"{page}: {len(find_blocks(text, str(page)))} block(s), {verb}: {', '.join(stale) or 'none'}"
        )
    figures = stale_figures(run_root)
    for copy in figures if args.command == "sync" else []:
        shutil.copyfile(run_root / DOC_FIGURES[copy], copy)
    verb = "copied" if args.command == "sync" else "stale"
    print(f"docs figures {verb}: {', '.join(figures) or 'none'}")
    n_stale += len(figures) if args.command == "check" else 0
    return 1 if args.command == "check" and n_stale else 0


if __name__ == "__main__":
    sys.exit(main())
