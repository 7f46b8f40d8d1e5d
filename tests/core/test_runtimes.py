"""A finished run's times (reliquant.core.runtimes): the Snakemake log parsed into jobs, the
DAG from their files, the critical path (checked against a brute-force longest path), the
metadata times, start-up vs work, sums per rule."""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
import math
import random
from pathlib import Path

import pandas as pd
import pytest

from reliquant.core.runtimes import (
    JOB_COLUMNS,
    Job,
    critical_path,
    first_record_time,
    job_dependencies,
    job_table,
    latest_snakemake_log,
    parse_snakemake_log,
    read_benchmark,
    read_metadata_times,
    rule_table,
    run_summary,
)

LOG = """\
Building DAG of jobs...
Job stats:
job      count
-----  -------
make         2
use          1
all          1
total        4

Select jobs to execute...
Execute 2 jobs...
[Wed Nov 25 21:02:33 2026]
localrule make:
    input: data/raw/a.csv
    output: results/a.parquet, results/a.md (pipe)
    log: logs/t/make_a.log
    jobid: 2
    benchmark: benchmarks/t/make_a.tsv
    reason: Missing output files: results/a.parquet
    wildcards: name=a
    threads: 2
    resources: tmpdir=/tmp, runtime=5
[Wed Nov 25 21:02:33 2026]
rule make:
    output: results/b.parquet
    log: logs/t/make_b.log
    jobid: 3
    benchmark: benchmarks/t/make_b.tsv
    wildcards: name=b
    resources: tmpdir=/tmp
[Wed Nov 25 21:02:35 2026]
Finished jobid: 2 (Rule: make)
1 of 4 steps (25%) done
[Wed Nov 25 21:02:36 2026]
Finished jobid: 3 (Rule: make)
2 of 4 steps (50%) done
Select jobs to execute...
[Wed Nov 25 21:02:36 2026]
localrule use:
    input: results/a.parquet, results/b.parquet, results/dir/inner.txt
    output: results/c.parquet, results/dir
    log: logs/t/use.log
    jobid: 1
    reason: Input files updated by another job
    resources: tmpdir=/tmp
[Wed Nov 25 21:02:40 2026]
Finished jobid: 1 (Rule: use)
[Wed Nov 25 21:02:40 2026]
localrule all:
    input: results/c.parquet
    jobid: 0
[Wed Nov 25 21:02:40 2026]
Finished jobid: 0 (Rule: all)
Complete log(s): /x/.snakemake/log/2026-11-25T210232.snakemake.log
"""


def _epoch(text: str) -> float:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S").timestamp()


def test_parse_snakemake_log_reads_each_job_block():
    jobs = {j.jobid: j for j in parse_snakemake_log(LOG)}
    assert sorted(jobs) == [0, 1, 2, 3]
    make_a = jobs[2]
    assert make_a.rule == "make"
    assert make_a.inputs == ("data/raw/a.csv",)
    assert make_a.outputs == ("results/a.parquet", "results/a.md")  # annotation dropped
    assert make_a.log == ("logs/t/make_a.log",)
    assert make_a.benchmark == "benchmarks/t/make_a.tsv"
    assert make_a.wildcards == "name=a"
    assert make_a.threads == 2
    assert make_a.label == "t/make_a"
    assert make_a.started == _epoch("2026-11-25 21:02:33")
    assert make_a.finished == _epoch("2026-11-25 21:02:35")
    assert jobs[3].rule == "make" and jobs[3].inputs == () and jobs[3].threads == 1
    assert jobs[3].finished == _epoch("2026-11-25 21:02:36")
    assert jobs[1].benchmark is None and jobs[1].label == "use"
    assert jobs[0].outputs == () and jobs[0].rule == "all"


def test_label_without_benchmark_names_rule_and_wildcards():
    assert Job(1, "infer", wildcards="partition=fog").label == "infer[partition=fog]"


def test_a_retried_job_keeps_its_last_announcement():
    retry = LOG.replace("    jobid: 3\n", "    jobid: 2\n")
    jobs = parse_snakemake_log(retry)
    assert [j.outputs for j in jobs if j.jobid == 2] == [("results/b.parquet",)]


def test_job_dependencies_follow_files_and_directory_outputs():
    jobs = [
        Job(1, "make", inputs=("data/raw/x.csv",), outputs=("results/x.parquet",)),
        Job(2, "dir", outputs=("results/parts",)),
        Job(3, "use", inputs=("results/x.parquet", "./results/parts/p1.parquet")),
        Job(4, "alone", inputs=("README.md",), outputs=("results/alone.md",)),
    ]
    deps = job_dependencies(jobs)
    assert deps == {1: set(), 2: set(), 3: {1, 2}, 4: set()}


def _brute_force(durations: dict, deps: dict) -> float:
    """The longest path by enumerating every chain (each a sequence of distinct jobs, each
    waiting for the one before)."""
    best = 0.0
    nodes = list(durations)
    for r in range(1, len(nodes) + 1):
        for chain in itertools.permutations(nodes, r):
            if all(chain[i] in deps[chain[i + 1]] for i in range(r - 1)):
                best = max(best, sum(durations[n] for n in chain))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_critical_path_equals_brute_force_longest_path(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 7)
    durations = {f"j{i}": rng.choice([0.0, rng.uniform(0, 10)]) for i in range(n)}
    # a random DAG: edges only from lower to higher index, listed in shuffled order
    deps = {f"j{i}": {f"j{k}" for k in range(i) if rng.random() < 0.4} for i in range(n)}
    order = list(durations)
    rng.shuffle(order)
    shuffled = {k: durations[k] for k in order}
    path, length = critical_path(shuffled, deps)
    assert length == pytest.approx(_brute_force(durations, deps))
    assert sum(durations[k] for k in path) == pytest.approx(length)
    assert all(path[i] in deps[path[i + 1]] for i in range(len(path) - 1))


def test_critical_path_edge_cases():
    assert critical_path({}, {}) == ([], 0.0)
    # NaN counts as 0; unknown dependencies and self-loops are ignored
    path, length = critical_path({"a": math.nan, "b": 2.0}, {"b": ["a", "x", "b"]})
    assert path == ["a", "b"] and length == 2.0
    with pytest.raises(ValueError, match="cycle"):
        critical_path({"a": 1.0, "b": 1.0}, {"a": ["b"], "b": ["a"]})


def test_critical_path_of_a_long_chain_needs_no_recursion():
    n = 5000
    path, length = critical_path({i: 1.0 for i in range(n)}, {i: [i - 1] for i in range(1, n)})
    assert path == list(range(n)) and length == n


def _write_metadata(root: Path, output: str, start: float, end: float, chunk: int = 0) -> None:
    name = base64.urlsafe_b64encode(output.encode()).decode()
    parts = [name] if not chunk else [name[i : i + chunk] for i in range(0, len(name), chunk)]
    path = root.joinpath(*["@" + p for p in parts[:-1]], parts[-1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rule": "r", "starttime": start, "endtime": end}))


def test_read_metadata_times_decodes_names_also_split_into_folders(tmp_path):
    _write_metadata(tmp_path, "results/a.parquet", 10.0, 12.5)
    _write_metadata(tmp_path, "results/" + "long_" * 30 + ".parquet", 1.0, 2.0, chunk=20)
    (tmp_path / "garbage").write_text("not json")
    times = read_metadata_times(tmp_path)
    assert times == {
        "results/a.parquet": (10.0, 12.5),
        "results/" + "long_" * 30 + ".parquet": (1.0, 2.0),
    }
    assert read_metadata_times(tmp_path / "missing") == {}


def test_read_benchmark_takes_the_last_row(tmp_path):
    path = tmp_path / "b.tsv"
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    path.write_text(
        header + "1.0\t0:00:01\t5\t1\t1\t1\t0\t0\t1\t0.5\n2.5\t0:00:02\t-\t1\t1\t1\t0\t0\t1\t2\n"
    )
    got = read_benchmark(path)
    assert got["s"] == 2.5 and got["cpu_time"] == 2.0 and math.isnan(got["max_rss"])


def test_first_record_time_skips_lines_without_a_stamp(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("Traceback?\n2026-11-25 21:02:34,250 INFO reliquant.io: read x\n")
    assert first_record_time(log) == pytest.approx(_epoch("2026-11-25 21:02:34") + 0.25)
    (tmp_path / "empty.log").write_text("")
    assert first_record_time(tmp_path / "empty.log") is None
    assert first_record_time(tmp_path / "missing.log") is None


def _fake_run(root: Path) -> float:
    """The run of LOG in ``root``: metadata, benchmarks, job logs. Returns its t0."""
    t0 = _epoch("2026-11-25 21:02:33")
    (root / ".snakemake" / "log").mkdir(parents=True)
    (root / ".snakemake" / "log" / "2026-11-25T210232.snakemake.log").write_text(LOG)
    (root / ".snakemake" / "log" / "2026-11-24T010101.snakemake.log").write_text("older")
    meta = root / ".snakemake" / "metadata"
    for out, start, end in [
        ("results/a.parquet", t0 + 0.1, t0 + 2.1),
        ("results/a.md", t0 + 0.1, t0 + 2.1),
        ("results/b.parquet", t0 + 0.2, t0 + 3.2),
        ("results/c.parquet", t0 + 3.3, t0 + 7.3),
    ]:
        _write_metadata(meta, out, start, end)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for name, s, rss, cpu in [("make_a", 2.0, 100, 1.5), ("make_b", 3.0, 300, 2.5)]:
        (root / "benchmarks" / "t").mkdir(parents=True, exist_ok=True)
        (root / "benchmarks" / "t" / f"{name}.tsv").write_text(
            header + f"{s}\t0:00:0{int(s)}\t{rss}\t1\t1\t1\t0\t0\t1\t{cpu}\n"
        )
    (root / "logs" / "t").mkdir(parents=True)
    (root / "logs" / "t" / "make_a.log").write_text(
        "2026-11-25 21:02:33,600 INFO x: read\n"
        "2026-11-25 21:02:35,000 INFO reliquant.job: usage at exit: cpu 1.750 s "
        "(user 1.500 s, system 0.250 s), peak rss 123.4 MB\n"
    )
    (root / "logs" / "t" / "make_b.log").write_text("")  # no record: no start-up
    (root / "logs" / "t" / "use.log").write_text("2026-11-25 21:02:34,300 INFO x: read\n")
    return t0


def test_job_table_joins_log_metadata_benchmarks_and_job_logs(tmp_path):
    t0 = _fake_run(tmp_path)
    assert latest_snakemake_log(tmp_path).name.startswith("2026-11-25")
    jobs = job_table(tmp_path, origin=t0).set_index("jobid")
    assert list(jobs.reset_index().columns) == JOB_COLUMNS
    assert list(jobs.index) == [2, 3, 1]  # by start; rule all (no outputs) left out
    assert jobs.loc[2, "wall_s"] == pytest.approx(2.0)
    assert jobs.loc[2, "start_s"] == pytest.approx(0.1)
    assert jobs.loc[2, "startup_s"] == pytest.approx(0.5)
    assert jobs.loc[2, "work_s"] == pytest.approx(1.5)
    # CPU and peak memory from the log's exit record, not the benchmark file's samples
    assert jobs.loc[2, ["bench_s", "cpu_s", "max_rss_mb"]].tolist() == [2.0, 1.75, 123.4]
    assert math.isnan(jobs.loc[3, "cpu_s"]) and math.isnan(jobs.loc[3, "max_rss_mb"])
    assert math.isnan(jobs.loc[3, "startup_s"]) and math.isnan(jobs.loc[3, "work_s"])
    # the job's first record comes before its metadata start: clipped to 0, not negative
    assert jobs.loc[1, "startup_s"] == 0.0 and jobs.loc[1, "wall_s"] == pytest.approx(4.0)
    assert math.isnan(jobs.loc[1, "bench_s"])
    assert jobs.loc[1, "depends_on"] == [2, 3]
    assert jobs.loc[1, "job"] == "use"


def test_job_table_without_metadata_uses_the_log_stamps(tmp_path):
    _fake_run(tmp_path)
    for path in (tmp_path / ".snakemake" / "metadata").iterdir():
        path.unlink()
    jobs = job_table(tmp_path).set_index("jobid")
    assert jobs.loc[2, "wall_s"] == 2.0 and jobs.loc[1, "wall_s"] == 4.0
    assert jobs.loc[2, "start_s"] == 0.0 and jobs.loc[1, "end_s"] == 7.0


def test_rule_table_and_run_summary(tmp_path):
    t0 = _fake_run(tmp_path)
    jobs = job_table(tmp_path, origin=t0)
    rules = rule_table(jobs)
    assert rules["rule"].tolist() == ["make", "use"]
    make = rules.iloc[0]
    assert make["jobs"] == 2 and make["wall_s"] == pytest.approx(5.0)
    assert make["startup_s"] == pytest.approx(0.5) and make["work_s"] == pytest.approx(1.5)
    # make_b has no exit record: no partial sum that would read as the rule's whole
    assert math.isnan(make["cpu_s"]) and math.isnan(make["max_rss_mb"])
    assert make["longest_s"] == pytest.approx(3.0)
    assert make["startup_share"] == pytest.approx(0.1)
    assert rules["wall_s"].sum() == pytest.approx(jobs["wall_s"].sum())
    summary = run_summary(jobs)
    assert summary.n_jobs == 3
    assert summary.job_s == pytest.approx(9.0)
    assert summary.critical_path == ["t/make_b", "use"]
    assert summary.critical_s == pytest.approx(7.0)
    assert summary.critical_walls == pytest.approx([3.0, 4.0])
    assert summary.span_s == pytest.approx(7.2)
    assert summary.startup_s == pytest.approx(0.5)


def test_rule_table_sums_per_rule_on_random_jobs():
    rng = random.Random(3)
    frame = pd.DataFrame(
        {
            "rule": [rng.choice("abc") for _ in range(40)],
            "wall_s": [rng.uniform(1, 5) for _ in range(40)],
            "startup_s": [rng.uniform(0, 1) for _ in range(40)],
            "cpu_s": [rng.uniform(0, 5) for _ in range(40)],
            "max_rss_mb": [rng.uniform(100, 900) for _ in range(40)],
        }
    )
    frame["work_s"] = frame["wall_s"] - frame["startup_s"]
    rules = rule_table(frame).set_index("rule")
    for rule, group in frame.groupby("rule"):
        assert rules.loc[rule, "wall_s"] == pytest.approx(group["wall_s"].sum())
        assert rules.loc[rule, "jobs"] == len(group)
    assert list(rules["wall_s"]) == sorted(rules["wall_s"], reverse=True)
