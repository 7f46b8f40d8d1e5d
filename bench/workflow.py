"""The whole workflow, timed: wall time, job time per rule, the critical path, start-up vs work.

Each run makes a fresh copy of the repository in a temporary folder (the working tree's
files that git tracks or would track, i.e. not ignored, so uncommitted edits count; with
``--baseline REV``, ``git archive REV``; ``data/raw`` included, no results, no numba cache),
runs ``snakemake --cores N`` there (the smoke run adds ``--configfile tests/smoke.yaml``)
with ``PYTHONPATH=<copy>/src`` (the copy's library runs, not the installed one) and times
the command. Then :mod:`reliquant.core.runtimes` reads the copy's run: every job from the
Snakemake log, its start and end from Snakemake's metadata, its CPU seconds and peak RSS
from the exit record at the end of its own log (``getrusage``: Snakemake's ``benchmark:``
file samples them every 30 s after the first 15 s and misses the rest; empty for a
revision whose jobs write no exit record), and its start-up from its own log: from the
job's start to the log's first record (interpreter, Snakemake's script preamble, imports
with the numba kernels compiled or loaded at import, and what the script does before it
first logs, usually reading its first input, a model loaded before that included); the
rest is its work. The critical path is the longest chain of dependent jobs weighted by
their wall times: the floor of the run on any number of cores.

With ``--baseline REV`` each configuration runs on REV first, then on the working tree, on
the same machine in one command, and the report gives the ratios (before / after).

Standalone::

    python bench/workflow.py [--config default smoke] [--baseline REV] [--out DIR] [--cores 2]
                             [--docs-block results/docs/bench_workflow_timings.md]

writes ``DIR/workflow.md`` (the report) and ``DIR/workflow_jobs.parquet`` (one row per job
and run). Under Snakemake (rule ``bench_workflow``, part of ``snakemake --cores 2 bench``):
the default and the smoke configuration, the rule's threads as cores, no baseline. Run it
alone on an idle machine: any other load lengthens every job.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reliquant.core.benchmarks import headline_markdown, report_summary
from reliquant.core.io import write_frame, write_text
from reliquant.core.runtimes import RunSummary, job_table, rule_table, run_summary

#: The configurations a run can take: name -> extra Snakemake arguments.
CONFIGS = {"default": [], "smoke": ["--configfile", "tests/smoke.yaml"]}
#: The issue's targets (wall seconds on 2 cores), for the headline rows.
TARGETS = {"default": 240.0, "smoke": 90.0}
N_LONGEST = 5


@dataclass
class Run:
    """One timed run of the workflow in a fresh copy."""

    config: str
    tree: str  #: "working tree" or the baseline revision
    revision: str  #: what ran: a short commit hash, "+ edits" when the tree differed
    wall_s: float  #: the snakemake command, start to exit
    before_first_s: float  #: command start to the first job's start (parse, DAG, checks)
    jobs: pd.DataFrame  #: reliquant.core.runtimes.job_table
    summary: RunSummary
    cores: int


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def copy_working_tree(repo: Path, dest: Path) -> str:
    """Copy the files git tracks or would track (not ignored) from ``repo``'s working tree to
    ``dest``; return the revision ("<short hash>" or "<short hash> + edits")."""
    names = _git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in sorted(set(filter(None, names.split("\0")))):
        src = repo / name
        if not src.exists() and not src.is_symlink():  # deleted or moved, not yet committed
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name, follow_symlinks=False)
    dirty = bool(_git(repo, "status", "--porcelain", "--untracked-files=normal"))
    return _git(repo, "rev-parse", "--short", "HEAD") + (" + edits" if dirty else "")


def copy_revision(repo: Path, rev: str, dest: Path) -> str:
    """Extract ``git archive rev`` into ``dest`` (git's state is not touched); return the
    revision's short hash."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=repo, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return _git(repo, "rev-parse", "--short", rev)


def snakemake_executable() -> str:
    """The ``snakemake`` beside this Python (the venv's or the conda env's), else on PATH."""
    beside = Path(sys.executable).parent / "snakemake"
    return str(beside) if beside.exists() else (shutil.which("snakemake") or "snakemake")


def run_workflow(copy: Path, config: str, cores: int) -> tuple[float, float]:
    """Run the workflow in ``copy``; return ``(wall seconds, POSIX start)``. Raises with the
    output's tail when Snakemake fails."""
    env = dict(os.environ, RELIQUANT_NO_PROGRESS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(copy / "src"), env.get("PYTHONPATH")]))
    cmd = [snakemake_executable(), "--cores", str(cores), *CONFIGS[config]]
    print(f"[bench/workflow] {config}: {' '.join(cmd[1:])} in {copy}", file=sys.stderr, flush=True)
    with open(copy / "bench_snakemake.out", "w", encoding="utf-8") as out:
        epoch, start = time.time(), time.perf_counter()
        proc = subprocess.run(cmd, cwd=copy, env=env, stdout=out, stderr=subprocess.STDOUT)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = (copy / "bench_snakemake.out").read_text(encoding="utf-8")[-6000:]
        raise RuntimeError(f"snakemake failed ({proc.returncode}) in {copy}:\n{tail}")
    return wall, epoch


def timed_run(
    repo: Path, config: str, cores: int, baseline: str | None, parent: Path | None, keep: bool
) -> Run:
    """One run in a fresh copy (of ``baseline`` when given, else of the working tree)."""
    copy = Path(tempfile.mkdtemp(prefix=f"reliquant-bench-{config}-", dir=parent))
    try:
        if baseline:
            revision = copy_revision(repo, baseline, copy)
        else:
            revision = copy_working_tree(repo, copy)
        wall, epoch = run_workflow(copy, config, cores)
        jobs = job_table(copy, origin=epoch)
    finally:
        if keep:
            print(f"[bench/workflow] kept {copy}", file=sys.stderr)
        else:
            shutil.rmtree(copy, ignore_errors=True)
    before = float(jobs["start_s"].min()) if len(jobs) else float("nan")
    tree = f"baseline {baseline}" if baseline else "working tree"
    summary = run_summary(jobs)
    print(f"[bench/workflow] {config} ({tree}): {wall:.1f} s wall", file=sys.stderr, flush=True)
    return Run(config, tree, revision, wall, before, jobs, summary, cores)


# ------------------------------------------------------------------------------ report
def _s(value: float) -> str:
    return "" if pd.isna(value) else f"{value:,.1f}"


def _mb(value: float) -> str:
    return "" if pd.isna(value) else f"{value:,.0f}"


def _pct(value: float) -> str:
    return "" if pd.isna(value) else f"{100 * value:.0f} %"


def machine() -> str:
    """The CPU model and the number of CPUs this process may use."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {usable} CPUs usable, {platform.system()} {platform.release()}"


def busy_share(run: Run) -> float:
    """Share of the cores' time (wall x cores) that jobs used (a job counts its threads,
    at most the cores)."""
    threads = run.jobs["threads"].clip(upper=run.cores)
    return float((run.jobs["wall_s"] * threads).sum() / (run.wall_s * run.cores))


def path_and_walls(summary: RunSummary) -> tuple[list[str], list[float]]:
    """The critical path's job labels and their wall times."""
    return summary.critical_path, summary.critical_walls


def critical_chain(summary: RunSummary) -> str:
    """The critical path as ``a (1.0 s) -> b (2.0 s) = 3.0 s``."""
    steps = " → ".join(f"`{j}` ({w:,.1f} s)" for j, w in zip(*path_and_walls(summary), strict=True))
    return f"{steps} = **{summary.critical_s:,.1f} s**"


def run_section(run: Run) -> list[str]:
    """One run's section: totals, the longest jobs, the critical path, time per rule."""
    s, jobs = run.summary, run.jobs
    longest = jobs.sort_values("wall_s", ascending=False).head(N_LONGEST)
    lines = [
        f"## {run.config} run, {run.tree} ({run.revision})",
        "",
        f"- wall time: **{run.wall_s:,.1f} s** (`snakemake --cores {run.cores}`, start to exit; "
        f"{run.before_first_s:,.1f} s before the first job starts)",
        f"- {s.n_jobs} jobs, **{s.job_s:,.1f} s** of job time, of which {s.startup_s:,.1f} s "
        f"start-up ({_pct(s.startup_s / s.job_s if s.job_s else float('nan'))}); "
        f"cores busy {_pct(busy_share(run))} of the wall time",
        f"- critical path ({len(s.critical_path)} jobs): {critical_chain(s)}",
        "",
        f"The {N_LONGEST} longest jobs:",
        "",
        "| job | wall s | start-up s | work s | CPU s | peak RSS MB | started at s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for _, j in longest.iterrows():
        lines.append(
            f"| {j['job']} | {_s(j['wall_s'])} | {_s(j['startup_s'])} | {_s(j['work_s'])} "
            f"| {_s(j['cpu_s'])} | {_mb(j['max_rss_mb'])} | {_s(j['start_s'])} |"
        )
    lines += [
        "",
        "<details><summary>Job time per rule (start-up: from the job's start to its log's "
        "first record)</summary>",
        "",
        "| rule | jobs | job time s | start-up s | work s | start-up share | longest s "
        "| CPU s | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for _, r in rule_table(jobs).iterrows():
        lines.append(
            f"| {r['rule']} | {r['jobs']} | {_s(r['wall_s'])} | {_s(r['startup_s'])} "
            f"| {_s(r['work_s'])} | {_pct(r['startup_share'])} | {_s(r['longest_s'])} "
            f"| {_s(r['cpu_s'])} | {_mb(r['max_rss_mb'])} |"
        )
    return lines + ["", "</details>", ""]


def _ratio(before: float, after: float) -> str:
    return f"{before / after:.2f}x" if after > 0 else ""


def report(runs: list[Run], cores: int, baseline: str | None) -> str:
    """The markdown report of every run, its overview table and its headline rows."""
    lines = [
        "# Workflow benchmark",
        "",
        f"Command: `python bench/workflow.py --config {' '.join(dict.fromkeys(r.config for r in runs))}"
        + (f" --baseline {baseline}" if baseline else "")
        + f" --cores {cores}` (or `snakemake --cores {cores} results/bench/workflow.md`). "
        f"Machine: {machine()}. Each run: a fresh copy of the repository (no results, no "
        "caches), `snakemake --cores N` in it; job times from Snakemake's metadata, "
        "start-up from each job's start to its log's first record (bench/workflow.py).",
        "",
        "| run | revision | wall s | jobs | job time s | start-up s | critical path s "
        "| cores busy |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r.config}, {r.tree} | {r.revision} | **{_s(r.wall_s)}** | {r.summary.n_jobs} "
            f"| {_s(r.summary.job_s)} | {_s(r.summary.startup_s)} | {_s(r.summary.critical_s)} "
            f"| {_pct(busy_share(r))} |"
        )
    by = {(r.config, r.tree == "working tree"): r for r in runs}
    headline = []
    for config in dict.fromkeys(r.config for r in runs):
        after, before = by.get((config, True)), by.get((config, False))
        measured = (
            f"{after.wall_s:,.0f} s wall on {after.cores} cores, {after.summary.job_s:,.0f} s "
            f"of job time, critical path {after.summary.critical_s:,.0f} s"
        )
        if before is not None:
            lines += [
                "",
                f"{config}: before ({before.revision}) / after ({after.revision}): wall "
                f"{_ratio(before.wall_s, after.wall_s)}, job time "
                f"{_ratio(before.summary.job_s, after.summary.job_s)}, start-up "
                f"{_ratio(before.summary.startup_s, after.summary.startup_s)}, critical path "
                f"{_ratio(before.summary.critical_s, after.summary.critical_s)}.",
            ]
            measured += f" (before: {before.wall_s:,.0f} s, {_ratio(before.wall_s, after.wall_s)})"
        headline.append(
            (
                f"Workflow: {config} run from a fresh copy, `snakemake --cores {after.cores}`",
                measured,
                f"<= {TARGETS[config]:.0f} s" if config in TARGETS else "",
            )
        )
        if config == runs[0].config:  # the first configuration's longest jobs, critical path
            longest = after.jobs.sort_values("wall_s", ascending=False).head(N_LONGEST)
            s = after.summary
            headline += [
                (
                    f"Workflow: {config} run, the {N_LONGEST} longest jobs",
                    ", ".join(f"{j} {w:,.0f} s" for j, w in longest[["job", "wall_s"]].values),
                    "(context)",
                ),
                (
                    f"Workflow: {config} run, critical path (jobs by wall time)",
                    " → ".join(f"{j} {w:,.0f} s" for j, w in zip(*path_and_walls(s), strict=True))
                    + f" = {s.critical_s:,.0f} s",
                    "(context)",
                ),
            ]
    lines.append("")
    for r in runs:
        lines += run_section(r)
    return "\n".join(lines) + "\n" + headline_markdown(headline)


def jobs_frame(runs: list[Run]) -> pd.DataFrame:
    """Every run's jobs in one table, with the run's configuration, tree and revision."""
    frames = [
        r.jobs.assign(config=r.config, tree=r.tree, revision=r.revision, run_wall_s=r.wall_s)
        for r in runs
    ]
    frame = pd.concat(frames, ignore_index=True)
    front = ["config", "tree", "revision", "run_wall_s"]
    return frame[front + [c for c in frame.columns if c not in front]]


def main(
    configs: list[str],
    out_md: Path,
    out_jobs: Path,
    cores: int = 2,
    baseline: str | None = None,
    repo: Path | None = None,
    workdir: Path | None = None,
    keep: bool = False,
    docs_block: Path | None = None,
) -> str:
    """Time each configuration (on ``baseline`` first, when given, then the working tree);
    write the report to ``out_md``, the jobs to ``out_jobs`` and, when given, its short form
    (:func:`reliquant.core.benchmarks.report_summary`) to ``docs_block`` (the README's generated block
    ``bench_workflow_timings``, which rule ``bench`` also writes); return the report."""
    repo = Path(repo or Path(__file__).resolve().parents[1])
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise ValueError(f"unknown configuration(s) {unknown}: choose from {sorted(CONFIGS)}")
    if baseline:
        _git(repo, "rev-parse", "--verify", f"{baseline}^{{commit}}")  # fail before any run
    runs = []
    for config in configs:
        for rev in [baseline, None] if baseline else [None]:
            runs.append(timed_run(repo, config, cores, rev, workdir, keep))
    text = report(runs, cores, baseline)
    write_text(text, out_md)
    write_frame(jobs_frame(runs), out_jobs)
    if docs_block is not None:
        write_text(report_summary(text), docs_block)
    return text


if __name__ == "__main__":
    if "snakemake" in globals():  # rule bench_workflow: the default and smoke runs
        from reliquant.core.runlog import start_job

        smk = snakemake  # noqa: F821
        start_job(smk.log[0], "bench")
        main(
            list(smk.params.configs),
            Path(smk.output.md),
            Path(smk.output.jobs),
            cores=smk.threads,
            repo=Path(smk.scriptdir).parent,
        )
    else:
        parser = argparse.ArgumentParser(
            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        parser.add_argument(
            "--config", nargs="+", default=["default"], choices=sorted(CONFIGS), dest="configs"
        )
        parser.add_argument("--baseline", help="a git revision to time first (before/after)")
        parser.add_argument("--out", type=Path, default=Path("results/bench"), help="folder")
        parser.add_argument("--cores", type=int, default=2)
        parser.add_argument("--workdir", type=Path, help="where the copies go (default: $TMPDIR)")
        parser.add_argument("--keep", action="store_true", help="keep the copies")
        parser.add_argument(
            "--docs-block",
            type=Path,
            help="also write the report as the README's generated block "
            "(results/docs/bench_workflow_timings.md; then python -m reliquant.core.docs sync)",
        )
        args = parser.parse_args()
        sys.stdout.write(
            main(
                args.configs,
                args.out / "workflow.md",
                args.out / "workflow_jobs.parquet",
                args.cores,
                args.baseline,
                workdir=args.workdir,
                keep=args.keep,
                docs_block=args.docs_block,
            )
        )
