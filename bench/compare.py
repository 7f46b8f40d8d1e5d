"""Benchmark: memory and time of ``compare_scores`` (AU-ARC with bootstrap intervals) as the
number of predictions grows, optionally against an earlier revision side by side.

    python bench/compare.py [--n 100000 1000000] [--n-boot 1000] [--scores 2]
                            [--baseline REV] [--mem-limit-gb 6] [--out results/bench/compare.md]

Each measurement runs in a fresh child process (nothing cached, its own peak) limited to
``--mem-limit-gb`` of address space, so that an implementation that needs more fails at once
with ``MemoryError`` instead of swapping a shared machine. Per run: wall time of one
``compare_scores`` call (``time.perf_counter``), the peak of its allocations (``tracemalloc``:
numpy arrays included) and the child's peak resident memory (``getrusage``, imports
included). The data: ``n`` predictions, correct with probability 0.7, and ``--scores`` noisy
scores of their correctness (one rounded to two decimals, so that the tie path is measured).

With ``--baseline REV`` the module ``reliquant/compare/comparison.py`` of ``REV`` (``git
show``) runs first on the same data and seed, then the working tree's; the report says
whether the two tables are identical (bit for bit).

The compare jobs' job time (:func:`job_times`): the ``s`` (wall seconds) of every
``benchmarks/compare/*.tsv`` the **last run** left (the named targets, not in the default
run, keep theirs under ``benchmarks/named/``, so they never count), summed against
``compare.bench.target_job_seconds`` (the topic's budget: 3 minutes of job time on 2 cores). Nothing is rerun: run the workflow first
(``snakemake --cores 2``), then ``snakemake --cores 2 --forcerun bench_compare bench``.

As the Snakemake rule ``bench_compare`` (rule ``bench`` collects its headline rows) the
settings come from ``compare.bench`` of the workflow's config; standalone from the options.
"""

import argparse
import importlib.util
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
MODULE = "src/reliquant/compare/comparison.py"


def make_data(n: int, n_scores: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``n_scores`` scores of ``n`` predictions and their correctness (module docstring)."""
    from reliquant.core.seeding import block_rng

    rng = block_rng(0, "bench_compare", n)
    correct = rng.random(n) < 0.7
    scores = {f"s{j}": correct + rng.normal(0.0, 1.0 + j, n) for j in range(n_scores)}
    scores["s0"] = np.round(scores["s0"], 2)
    return scores, correct


def child(spec: dict) -> dict:
    """One measurement (runs in the child process); ``spec``: n, n_boot, scores, source."""
    limit = int(spec["mem_limit_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from reliquant.core.benchmarks import peak_rss_mb, traced_memory_peak

    if spec["source"]:
        loader = importlib.util.spec_from_file_location("baseline_comparison", spec["source"])
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        from reliquant.compare import comparison as module
    scores, correct = make_data(spec["n"], spec["scores"])
    out = {"traced_mb": float("nan"), "seconds": float("nan"), "table": None, "error": ""}
    with traced_memory_peak() as peak:
        start = time.perf_counter()
        try:
            table = module.compare_scores(scores, correct, n_boot=spec["n_boot"], seed=0)
            out["seconds"] = time.perf_counter() - start
            out["table"] = table[["auarc", "ci_low", "ci_high", "diff_ci_low"]].to_numpy().tolist()
        except MemoryError as err:
            out["error"] = f"MemoryError: {err}"
    out["traced_mb"] = peak.mb
    out["rss_mb"] = peak_rss_mb()
    return out


def measure(n: int, n_boot: int, n_scores: int, source: str | None, mem_limit_gb: float) -> dict:
    """Run :func:`child` in a fresh interpreter and return what it printed."""
    spec = {"n": n, "n_boot": n_boot, "scores": n_scores, "source": source,
            "mem_limit_gb": mem_limit_gb}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])


def baseline_source(rev: str, folder: Path) -> str:
    """The comparison module of git revision ``rev``, written to a file in ``folder``."""
    text = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{MODULE}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    path = folder / "baseline_comparison.py"
    path.write_text(text)
    return str(path)


def cell(run: dict) -> tuple[str, str, str]:
    if run["error"]:
        return run["error"].split(" for an array")[0], "-", f"{run['rss_mb']:.0f}"
    return f"{run['seconds']:.1f}", f"{run['traced_mb']:.1f}", f"{run['rss_mb']:.0f}"


def job_times(folder: Path) -> list[tuple[str, float]]:
    """``(job, s)`` of every benchmark record in ``folder`` (``benchmarks/compare``; the named
    targets write theirs to ``benchmarks/named/compare``), by name; ``s`` of its last row
    (:func:`reliquant.core.runtimes.read_benchmark`)."""
    from reliquant.core.runtimes import read_benchmark

    return [(path.stem, read_benchmark(path)["s"]) for path in sorted(folder.glob("*.tsv"))]


def job_time_section(folder: Path, target: float) -> tuple[list[str], tuple[str, str, str]]:
    """The report's lines on the last run's compare jobs and its headline row."""
    jobs = job_times(folder)
    total = sum(s for _, s in jobs)
    lines = [
        "",
        f"## The compare jobs' job time (the last run's records in `{folder}`)",
        "",
        "Read from each job's `benchmark:` file as the last run left it (nothing rerun; a job "
        "not run since an edit keeps its older record). The named targets (the log-ratio and "
        "dynamic-selection protocols, the resolution study) are not in the default run and "
        "keep their records under `benchmarks/named/`.",
        "",
        "| job | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {job} | {s:.1f} |" for job, s in jobs]
    lines.append(f"| **total ({len(jobs)} jobs)** | **{total:.1f}** |")
    measured = f"{total:.0f} s of job time ({len(jobs)} jobs)" if jobs else "no records (run first)"
    row = ("compare: the default run's compare jobs, last run", measured, f"<= {target:g} s")
    return lines, row


def main(
    sizes: list[int],
    n_boot: int,
    n_scores: int,
    baseline: str | None,
    limit: float,
    *,
    jobs_folder: Path | None = None,
    target_job_seconds: float | None = None,
) -> str:
    """Measure every size (baseline first when given) and return the markdown report; with
    ``jobs_folder``, the compare jobs' job time against ``target_job_seconds`` and the
    headline rows (:func:`reliquant.core.benchmarks.headline_markdown`)."""
    lines = [
        "# Benchmark: compare_scores (bootstrap AU-ARC intervals)",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy "
        f"{np.__version__}. n_boot = {n_boot}, {n_scores} scores, seed 0, each run in a fresh "
        f"process limited to {limit:g} GiB of address space.",
        "",
        "| predictions | code | seconds | peak traced MB | peak RSS MB | table equal to baseline |",
        "|---:|---|---:|---:|---:|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        source = baseline_source(baseline, Path(tmp)) if baseline else None
        for n in sizes:
            before = measure(n, n_boot, n_scores, source, limit) if baseline else None
            after = measure(n, n_boot, n_scores, None, limit)
            if before is not None:
                lines.append(f"| {n:,} | {baseline} | " + " | ".join(cell(before)) + " | |")
            same = "" if before is None else (
                "n/a" if before["table"] is None else str(before["table"] == after["table"])
            )  # fmt: skip
            lines.append(f"| {n:,} | working tree | " + " | ".join(cell(after)) + f" | {same} |")
            print(lines[-1], flush=True)
    if jobs_folder is None:
        return "\n".join(lines) + "\n"
    from reliquant.core.benchmarks import headline_markdown

    job_lines, job_row = job_time_section(jobs_folder, float(target_job_seconds))
    largest = after["error"] or f"{after['seconds']:.1f} s, peak RSS {after['rss_mb']:.0f} MB"
    rows = [
        (
            f"compare: compare_scores, {sizes[-1]:,} predictions, n_boot = {n_boot}",
            largest,
            f"within {limit:g} GiB",
        ),
        job_row,
    ]
    return "\n".join([*lines, *job_lines, "", headline_markdown(rows)])


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:  # one measurement (measure)
    print(json.dumps(child(json.loads(sys.argv[2]))))
elif __name__ == "__main__" and "snakemake" in globals():
    from reliquant.core.io import write_text
    from reliquant.core.runlog import start_job

    start_job(snakemake.log[0], "compare")  # noqa: F821
    bench = snakemake.config["compare"]["bench"]  # noqa: F821
    report = main(
        bench["n"], bench["n_boot"], bench["scores"], None, bench["mem_limit_gb"],
        jobs_folder=Path("benchmarks/compare"), target_job_seconds=bench["target_job_seconds"],
    )  # fmt: skip
    write_text(report, snakemake.output[0])  # noqa: F821
elif __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--scores", type=int, default=2)
    parser.add_argument("--baseline", help="a git revision measured first (before/after)")
    parser.add_argument("--mem-limit-gb", type=float, default=6.0)
    parser.add_argument("--out", help="also write the report here (atomically)")
    parser.add_argument(
        "--jobs", type=Path, help="also sum the job times of this run's benchmarks/compare"
    )
    parser.add_argument("--target-job-seconds", type=float, default=180.0)
    args = parser.parse_args()
    report = main(
        args.n, args.n_boot, args.scores, args.baseline, args.mem_limit_gb,
        jobs_folder=args.jobs, target_job_seconds=args.target_job_seconds,
    )  # fmt: skip
    print(report)
    if args.out:
        from reliquant.core.io import write_text

        write_text(report, args.out)
