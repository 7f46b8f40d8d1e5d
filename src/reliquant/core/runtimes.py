"""Where a finished Snakemake run spent its time: per job, per rule, on the critical path.

A run leaves three records in its working directory, and this module reads them (nothing
is re-run, Snakemake is not imported):

* the run's log, ``.snakemake/log/<date>.snakemake.log``: every job's id, rule, input,
  output, log, benchmark, wildcards and threads (:func:`parse_snakemake_log`). The inputs
  against the other jobs' outputs give the DAG (:func:`job_dependencies`);
* Snakemake's metadata, ``.snakemake/metadata/``: per output file, the start and end time of
  the job that wrote it, in float seconds (:func:`read_metadata_times`); a job's wall time is
  its end minus its start;
* each job's ``benchmark:`` file (``s``; :func:`read_benchmark`) and its own log, whose
  first timestamped record (:func:`first_record_time`) ends the job's **start-up** and whose
  last, written at the job's exit (:func:`reliquant.core.runlog.exit_record`), holds its CPU
  time and peak resident memory (:func:`read_exit_record`). Snakemake's own ``cpu_time`` and
  ``max_rss`` are not used: it samples the process tree every 30 s after the first 15 s, so
  it misses what a job does after its last sample (a 37 s job of 39 CPU seconds read 14.7).

Start-up vs work. A job's start-up is the time from its start (Snakemake's metadata) to the
first record in its log: the Python interpreter, Snakemake's script preamble, the script's
imports (torch, numba kernels compiled or loaded from their cache at import, pyarrow...) and
whatever it does before it first logs. Every script sets up logging right after its imports
and first logs the first input it has read (``read results/...``), so the start-up also holds
that first read, and a model loaded before it; the rest of the job is its work. A job whose
log has no timestamped record has no start-up (NaN).

The critical path (:func:`critical_path`) is the longest chain of dependent jobs, each
weighted by its wall time: no schedule on any number of cores finishes the run sooner.

Public API: :class:`Job`, :func:`parse_snakemake_log`, :func:`job_dependencies`,
:func:`critical_path`, :func:`read_metadata_times`, :func:`read_benchmark`,
:func:`first_record_time`, :func:`read_exit_record`, :func:`job_table`, :func:`rule_table`,
:func:`run_summary`, :class:`RunSummary`, :func:`latest_snakemake_log`.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import os
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pandas as pd

from reliquant.core.runlog import EXIT_PATTERN

__all__ = [
    "JOB_COLUMNS",
    "Job",
    "RunSummary",
    "critical_path",
    "first_record_time",
    "job_dependencies",
    "job_table",
    "latest_snakemake_log",
    "parse_snakemake_log",
    "read_benchmark",
    "read_exit_record",
    "read_metadata_times",
    "rule_table",
    "run_summary",
]

_K = TypeVar("_K", bound=Hashable)

#: "[Wed Nov 25 21:02:33 2026]": the line Snakemake writes before each job start and finish.
_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
#: "rule x:", "localrule x:", "checkpoint x:", "localcheckpoint x:" opens a job's block.
_RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
_ITEM = re.compile(r"^    (\w+): (.*)$")
_FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)")
#: A file's annotation in the log, e.g. "results/x (pipe)" or "(before update)".
_ANNOTATION = re.compile(r" \([a-z][a-z :,]*\)$")
#: The first timestamp of a job log's record: logging's default "%(asctime)s" format.
_RECORD = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")


@dataclass
class Job:
    """One job of a run, as the run's Snakemake log announces it.

    ``started`` and ``finished`` are the log's whole-second stamps (POSIX seconds, local
    time), a fallback for runs without Snakemake's metadata; NaN when absent.
    """

    jobid: int
    rule: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    log: tuple[str, ...] = ()
    benchmark: str | None = None
    wildcards: str = ""
    threads: int = 1
    started: float = math.nan
    finished: float = math.nan

    @property
    def label(self) -> str:
        """A short unique name: the benchmark file's ``<topic>/<name>`` (as in the README's
        job times), else ``rule[wildcards]``, else the rule."""
        if self.benchmark:
            path = Path(self.benchmark)
            return f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem
        return f"{self.rule}[{self.wildcards}]" if self.wildcards else self.rule


def _files(value: str) -> tuple[str, ...]:
    return tuple(_ANNOTATION.sub("", f.strip()) for f in value.split(", ") if f.strip())


def _stamp(text: str) -> float:
    return dt.datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y").timestamp()


def parse_snakemake_log(text: str) -> list[Job]:
    """The jobs of a Snakemake run from its log (``.snakemake/log/*.snakemake.log``).

    Parameters
    ----------
    text
        The log's text (Snakemake 8 and 9 format: a ``[date]`` line, then ``rule name:`` or
        ``localrule name:`` and its indented ``input:``, ``output:``, ``log:``, ``jobid:``,
        ``benchmark:``, ``wildcards:``, ``threads:`` lines; ``Finished jobid: N (Rule: r)``
        after a ``[date]`` line when the job ends).

    Returns
    -------
    list of Job
        In the order the jobs started; a job announced twice (a retry) keeps its last
        announcement. File annotations such as ``(pipe)`` are dropped.
    """
    jobs: dict[int, Job] = {}
    stamp = math.nan
    current: dict[str, str] | None = None
    rule = ""

    def close() -> None:
        if current is not None and "jobid" in current:
            job = Job(
                jobid=int(current["jobid"]),
                rule=rule,
                inputs=_files(current.get("input", "")),
                outputs=_files(current.get("output", "")),
                log=_files(current.get("log", "")),
                benchmark=current.get("benchmark") or None,
                wildcards=current.get("wildcards", ""),
                threads=int(current.get("threads", 1)),
                started=float(current["_started"]),
            )
            jobs.pop(job.jobid, None)
            jobs[job.jobid] = job

    for line in text.splitlines():
        item = _ITEM.match(line) if current is not None else None
        if item:
            current[item.group(1)] = item.group(2).strip()
            continue
        close()
        current = None
        if match := _STAMP.match(line.strip()):
            stamp = _stamp(match.group(1))
        elif match := _RULE.match(line.strip()):
            rule, current = match.group(1), {"_started": str(stamp)}
        elif (match := _FINISHED.match(line.strip())) and int(match.group(1)) in jobs:
            jobs[int(match.group(1))].finished = stamp
    close()
    return list(jobs.values())


def job_dependencies(jobs: Sequence[Job]) -> dict[int, set[int]]:
    """Each job's direct upstream jobs: those that wrote one of its inputs (job id -> ids).

    An input written by no job of the run (raw data, a file from an earlier run) adds no
    dependency; an input inside a ``directory()`` output counts as that output.
    """
    producer: dict[str, int] = {}
    for job in jobs:
        for out in job.outputs:
            producer[os.path.normpath(out)] = job.jobid
    deps: dict[int, set[int]] = {}
    for job in jobs:
        found = set()
        for path in job.inputs:
            path = os.path.normpath(path)
            while path not in producer and os.path.dirname(path) not in ("", path):
                path = os.path.dirname(path)  # a file inside a directory() output
            if path in producer and producer[path] != job.jobid:
                found.add(producer[path])
        deps[job.jobid] = found
    return deps


def critical_path(
    durations: Mapping[_K, float], deps: Mapping[_K, Iterable[_K]]
) -> tuple[list[_K], float]:
    """The longest chain of dependent jobs, each weighted by its duration.

    Parameters
    ----------
    durations
        Job -> its duration (seconds; NaN counts as 0).
    deps
        Job -> the jobs it waits for (jobs missing from ``durations`` are ignored; a job
        missing from ``deps`` waits for none).

    Returns
    -------
    tuple
        ``(path, length)``: the jobs from the first to the last, and the sum of their
        durations. Ties go to the job listed first in ``durations``. Empty: ``([], 0.0)``.

    Raises
    ------
    ValueError
        When the dependencies hold a cycle.
    """
    order = list(durations)
    weight = {k: 0.0 if math.isnan(float(durations[k])) else float(durations[k]) for k in order}
    ups = {k: [d for d in deps.get(k, ()) if d in weight and d != k] for k in order}
    best: dict[_K, float] = {}
    via: dict[_K, _K | None] = {}
    state: dict[_K, int] = {}  # 1: on the stack, 2: done

    for root in order:  # iterative depth-first search: no recursion limit on long chains
        stack = [(root, iter(ups[root]))]
        if state.get(root) == 2:
            continue
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is not None:
                if state.get(child) == 1:
                    raise ValueError(f"the dependencies hold a cycle through {child!r}")
                if state.get(child) != 2:
                    state[child] = 1
                    stack.append((child, iter(ups[child])))
                continue
            stack.pop()
            prev = max(ups[node], key=lambda d: best[d], default=None)
            best[node] = weight[node] + (best[prev] if prev is not None else 0.0)
            via[node] = prev
            state[node] = 2
    if not order:
        return [], 0.0
    end = max(order, key=lambda k: best[k])
    path: list[_K] = []
    node: _K | None = end
    while node is not None:
        path.append(node)
        node = via[node]
    return path[::-1], best[end]


def _metadata_id(path: Path, root: Path) -> str:
    """The file a metadata record belongs to: Snakemake names the record by the url-safe
    base64 of the path, split into folders (each but the last prefixed with ``@``) when long."""
    parts = [p[1:] if p.startswith("@") else p for p in path.relative_to(root).parts]
    return base64.urlsafe_b64decode("".join(parts)).decode()


def read_metadata_times(metadata_dir: str | os.PathLike) -> dict[str, tuple[float, float]]:
    """Output file -> ``(starttime, endtime)`` of the job that wrote it (POSIX seconds), from
    Snakemake's metadata folder (``.snakemake/metadata``); records without times are left out."""
    root = Path(metadata_dir)
    times: dict[str, tuple[float, float]] = {}
    if not root.is_dir():
        return times
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        try:
            name = _metadata_id(path, root)
            record = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        start, end = record.get("starttime"), record.get("endtime")
        if isinstance(start, int | float) and isinstance(end, int | float):
            times[os.path.normpath(name)] = (float(start), float(end))
    return times


def read_benchmark(path: str | os.PathLike) -> dict[str, float]:
    """A Snakemake ``benchmark:`` file's last row: ``s`` (wall seconds), ``cpu_time`` and
    ``max_rss`` (MB), NaN where a column is missing or not measured ("-")."""
    frame = pd.read_csv(path, sep="\t")
    row = frame.iloc[-1] if len(frame) else pd.Series(dtype=float)
    return {
        key: float(pd.to_numeric(row.get(key, math.nan), errors="coerce"))
        for key in ("s", "cpu_time", "max_rss")
    }


def first_record_time(log_path: str | os.PathLike) -> float | None:
    """POSIX seconds (local time) of the first timestamped record of a job's log (the
    ``logging`` default ``%(asctime)s``, millisecond resolution), or None."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if match := _RECORD.match(line):
                    stamp = dt.datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S")
                    return stamp.timestamp() + int(match.group(2)) / 1000
    except OSError:
        return None
    return None


def read_exit_record(log_path: str | os.PathLike) -> dict[str, float] | None:
    """``{"cpu_s", "max_rss_mb"}`` from the last exit record of a job's log
    (:func:`reliquant.core.runlog.exit_record`), or None when the log has none (a job that
    is not one of our scripts, one killed before it could write it, a revision before it)."""
    found = None
    try:
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if match := EXIT_PATTERN.search(line.rstrip("\n")):
                    found = {"cpu_s": float(match["cpu"]), "max_rss_mb": float(match["rss"])}
    except OSError:
        return None
    return found


def latest_snakemake_log(workdir: str | os.PathLike) -> Path:
    """The newest ``.snakemake/log/*.snakemake.log`` of a working directory."""
    logs = sorted((Path(workdir) / ".snakemake" / "log").glob("*.snakemake.log"))
    if not logs:
        raise FileNotFoundError(f"no Snakemake log in {workdir}/.snakemake/log")
    return logs[-1]


#: Columns of :func:`job_table`, one row per job.
JOB_COLUMNS = [
    "jobid",
    "job",
    "rule",
    "wildcards",
    "threads",
    "start_s",
    "end_s",
    "wall_s",
    "startup_s",
    "work_s",
    "bench_s",
    "cpu_s",
    "max_rss_mb",
    "depends_on",
]


def job_table(workdir: str | os.PathLike, origin: float | None = None) -> pd.DataFrame:
    """One row per job of the finished run in ``workdir`` (:data:`JOB_COLUMNS`).

    Parameters
    ----------
    workdir
        The run's working directory (its ``.snakemake/``, ``benchmarks/`` and ``logs/``).
    origin
        POSIX seconds that ``start_s`` and ``end_s`` count from (e.g. when the ``snakemake``
        command started); default: the first job's start.

    Returns
    -------
    pandas.DataFrame
        ``start_s``/``end_s``/``wall_s``: Snakemake's metadata times of the job's first
        output (else the log's whole-second stamps, else the benchmark's ``s`` for the
        wall time); ``startup_s``: start to the first record of the job's log (module
        docstring), ``work_s`` the rest; ``bench_s``: the benchmark file's ``s``;
        ``cpu_s``, ``max_rss_mb``: the log's exit record (NaN without one); ``depends_on``:
        ids of the jobs it waited for. Jobs without outputs (the target rule ``all``) are
        left out. Sorted by start.
    """
    root = Path(workdir)
    jobs = [j for j in parse_snakemake_log(latest_snakemake_log(root).read_text()) if j.outputs]
    times = read_metadata_times(root / ".snakemake" / "metadata")
    deps = job_dependencies(jobs)
    rows = []
    for job in jobs:
        start, end = next(
            (times[o] for o in map(os.path.normpath, job.outputs) if o in times),
            (job.started, job.finished),
        )
        bench = {"s": math.nan, "cpu_time": math.nan, "max_rss": math.nan}
        if job.benchmark and (root / job.benchmark).is_file():
            bench = read_benchmark(root / job.benchmark)
        wall = end - start
        if math.isnan(wall):
            wall = bench["s"]
        first = first_record_time(root / job.log[0]) if job.log else None
        usage = (read_exit_record(root / job.log[0]) if job.log else None) or {
            "cpu_s": math.nan,
            "max_rss_mb": math.nan,
        }
        startup = first - start if first is not None and not math.isnan(start) else math.nan
        if not math.isnan(startup):
            startup = min(max(startup, 0.0), wall)  # log stamps are local, ms resolution
        rows.append(
            {
                "jobid": job.jobid,
                "job": job.label,
                "rule": job.rule,
                "wildcards": job.wildcards,
                "threads": job.threads,
                "start": start,
                "end": end,
                "wall_s": wall,
                "startup_s": startup,
                "work_s": wall - startup,
                "bench_s": bench["s"],
                "cpu_s": usage["cpu_s"],
                "max_rss_mb": usage["max_rss_mb"],
                "depends_on": sorted(deps[job.jobid]),
            }
        )
    frame = pd.DataFrame(rows, columns=[*JOB_COLUMNS, "start", "end"])
    if origin is None:
        origin = frame["start"].min() if len(frame) else 0.0
    frame["start_s"] = frame.pop("start") - origin
    frame["end_s"] = frame.pop("end") - origin
    frame = frame.sort_values(["start_s", "jobid"], kind="stable").reset_index(drop=True)
    return frame[JOB_COLUMNS]


def _sum_if_complete(values: pd.Series) -> float:
    """The sum of ``values``, NaN if any is NaN."""
    return float(values.sum()) if values.notna().all() else math.nan


def _max_if_complete(values: pd.Series) -> float:
    """The largest of ``values``, NaN if any is NaN."""
    return float(values.max()) if values.notna().all() else math.nan


def rule_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """Job time per rule from a :func:`job_table`: jobs, summed ``wall_s``, ``startup_s``,
    ``work_s`` and ``cpu_s``, the start-up's share of the wall time, the longest job and the
    largest ``max_rss_mb``; the rules with the most job time first. A rule's ``cpu_s`` and
    ``max_rss_mb`` are NaN unless every one of its jobs has them (a partial sum would read
    as the whole)."""
    grouped = jobs.groupby("rule", sort=False)
    table = pd.DataFrame(
        {
            "jobs": grouped.size(),
            "wall_s": grouped["wall_s"].sum(),
            "startup_s": grouped["startup_s"].sum(min_count=1),
            "work_s": grouped["work_s"].sum(min_count=1),
            "cpu_s": grouped["cpu_s"].agg(_sum_if_complete),
            "longest_s": grouped["wall_s"].max(),
            "max_rss_mb": grouped["max_rss_mb"].agg(_max_if_complete),
        }
    )
    table["startup_share"] = table["startup_s"] / table["wall_s"].where(table["wall_s"] > 0)
    table = table.reset_index().sort_values(["wall_s", "rule"], ascending=[False, True])
    return table.reset_index(drop=True)


@dataclass
class RunSummary:
    """What a run's jobs add up to (:func:`run_summary`)."""

    n_jobs: int
    job_s: float  #: summed wall time of the jobs
    startup_s: float  #: summed start-up of the jobs (jobs without one left out)
    span_s: float  #: from the first job's start to the last job's end
    critical_s: float  #: the critical path's length
    critical_path: list[str] = field(default_factory=list)  #: its jobs' labels, in order
    critical_walls: list[float] = field(default_factory=list)  #: their wall times


def run_summary(jobs: pd.DataFrame) -> RunSummary:
    """Totals and the critical path of a :func:`job_table` (weights: each job's ``wall_s``)."""
    durations = dict(zip(jobs["jobid"], jobs["wall_s"], strict=True))
    deps = dict(zip(jobs["jobid"], jobs["depends_on"], strict=True))
    path, length = critical_path(durations, deps)
    label = dict(zip(jobs["jobid"], jobs["job"], strict=True))
    span = float(jobs["end_s"].max() - jobs["start_s"].min()) if len(jobs) else 0.0
    return RunSummary(
        n_jobs=len(jobs),
        job_s=float(jobs["wall_s"].sum()),
        startup_s=float(jobs["startup_s"].sum()),
        span_s=span,
        critical_s=length,
        critical_path=[label[j] for j in path],
        critical_walls=[float(durations[j]) for j in path],
    )
