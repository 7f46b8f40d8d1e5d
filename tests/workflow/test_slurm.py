"""The workflow on SLURM: the profiles' submitted resources, and the smoke configuration on a real
one-node cluster (``.ci/slurm-cluster``) with outputs equal to a local run's.

The cluster tests are marked ``slurm`` (``pytest -m slurm`` runs just them). They skip, with the
script's reason, where this machine cannot run SLURM (not root, no apt-get); the environment
variable ``RELIQUANT_SLURM_TESTS`` overrides that: ``require`` fails instead of skipping (CI),
``skip`` skips them (CI runs them in a stage of its own, after the README's test command).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from snakemake_executor_plugin_slurm.submit_string import get_submit_command
from snakemake_executor_plugin_slurm.utils import set_gres_string
from workflow_helpers import REPO, SNAKEMAKE, copy_repo, planned_jobs

CLUSTER = REPO / ".ci" / "slurm-cluster"
#: Exit status of `.ci/slurm-cluster check` when this machine cannot run SLURM.
CANNOT_RUN = 3
SMOKE = ["--configfile", "tests/smoke.yaml"]
LOCAL_PROFILE = ["--profile", "workflow/profiles/slurm-local"]
#: Rules that run on a GPU node of a real cluster.
GPU_RULES = {"mlm_train", "mlm_infer"}
#: A user's thread override, which the CPU request must follow.
EXTRA_THREADS = ("--set-threads", "mlm_train=3")
#: `Job 3 has been submitted with SLURM jobid 17 (log: /.../rule_x/17.log).`
SUBMITTED = re.compile(r"Job \d+ has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.")


# ------------------------------------------------------------------------------ helpers
def run_snakemake(workdir: Path, *args: str, timeout: float = 3000) -> subprocess.CompletedProcess:
    """Snakemake in ``workdir`` with that copy's library first on the path (also in SLURM jobs,
    which inherit the environment)."""
    env = dict(
        os.environ,
        RELIQUANT_NO_PROGRESS="1",
        PYTHONHASHSEED="0",
        PYTHONPATH=str(workdir / "src"),
    )
    return subprocess.run(
        [SNAKEMAKE, *args], cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
    )


def assert_ok(proc: subprocess.CompletedProcess) -> str:
    """The run's whole output; fails with its tail when it exited non-zero."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{out[-8000:]}"
    return out


def job_blocks(output: str) -> list[dict]:
    """Each job a Snakemake run or dry run printed: rule, threads and resources."""
    jobs: list[dict] = []
    for line in output.splitlines():
        head = re.match(r"^(?:local)?rule (\w+):$", line)
        if head:
            jobs.append({"rule": head.group(1), "threads": 1, "resources": {}})
        elif jobs and (m := re.match(r"^\s+threads: (\d+)$", line)):
            jobs[-1]["threads"] = int(m.group(1))
        elif jobs and (m := re.match(r"^\s+resources: (.*)$", line)):
            pairs = (item.split("=", 1) for item in m.group(1).split(", "))
            jobs[-1]["resources"] = {key: _number(value) for key, value in pairs}
    return jobs


def _number(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def slurm_jobs(job_ids: list[str]) -> dict[str, dict]:
    """squeue's view of the given jobs (finished ones too: MinJobAge keeps them a day)."""
    proc = subprocess.run(
        ["squeue", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%k|%T|%C|%m|%l"],
        capture_output=True,
        text=True,
        check=True,
    )
    jobs = {}
    for line in proc.stdout.splitlines():
        job_id, comment, state, cpus, memory, limit = line.strip().split("|")
        rule = re.sub(r"_wildcards_.*$", "", comment.removeprefix("rule_"))
        jobs[job_id] = {
            "rule": rule,
            "state": state,
            "cpus": int(cpus),
            "mem_mb": memory_mb(memory),
            "minutes": limit_minutes(limit),
        }
    return jobs


def memory_mb(memory: str) -> int:
    """squeue's minimum memory (``2000M``, ``4G``) in MB."""
    scale = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2}
    return round(float(memory[:-1]) * scale[memory[-1]])


def limit_minutes(limit: str) -> int:
    """squeue's time limit (``[D-]HH:MM:SS`` or ``MM:SS``) in whole minutes."""
    days, _, clock = limit.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    seconds = sum(value * 60**power for power, value in enumerate(reversed(parts)))
    return (int(days or 0) * 86400 + seconds) // 60


def test_squeue_limits_are_read_in_minutes_and_mb():
    assert [limit_minutes(t) for t in ("30:00", "1:30:00", "2-00:00:00")] == [30, 90, 2880]
    assert [memory_mb(m) for m in ("2000M", "4G", "1.5G")] == [2000, 4096, 1536]


def parquet_files(results: Path) -> set[str]:
    return {str(p.relative_to(results)) for p in results.rglob("*.parquet")}


def assert_same_parquet(reference: Path, other: Path, names: set[str] | None = None) -> None:
    """Every parquet table under ``reference`` (or just ``names``) equals ``other``'s."""
    expected = parquet_files(reference) if names is None else names
    if names is None:
        assert parquet_files(other) == expected
    assert expected, f"no parquet files under {reference}"
    for name in sorted(expected):
        pd.testing.assert_frame_equal(
            pd.read_parquet(reference / name), pd.read_parquet(other / name), obj=name
        )


# ---------------------------------------------------- the real profile, without a cluster
@functools.cache
def submitted_resources(profile: str, *extra: str) -> list[dict]:
    """Every smoke job's threads and resources under ``profile``, as the SLURM executor sees
    them: a dry run with unlimited cores (a remote run does not clamp threads to local cores)."""
    args = ["-n", "--forceall", "--cores", "1024", "--profile", profile, *SMOKE, *extra]
    proc = run_snakemake(REPO, *args, timeout=600)
    jobs = [job for job in job_blocks(assert_ok(proc)) if job["rule"] != "all"]
    assert jobs, proc.stdout[-2000:]
    return jobs


class _Resources(dict):
    """A job's resources as the plugin reads them: ``.get(name)`` and ``.name``."""

    __getattr__ = dict.__getitem__


def sbatch_call(job: dict) -> str:
    """The sbatch command line the SLURM plugin builds for a dry-run job (its own functions)."""
    resources = _Resources(job["resources"])
    fake = SimpleNamespace(threads=job["threads"], resources=resources)
    params = {
        "run_uuid": "dry-run",
        "slurm_logfile": "slurm.log",
        "comment_str": f"rule_{job['rule']}",
        "account": f"-A {resources['slurm_account']}" if "slurm_account" in resources else "",
        "partition": f"-p {resources['slurm_partition']}",
        "workdir": ".",
    }
    return get_submit_command(fake, params) + set_gres_string(fake)


def sbatch_option(call: str, option: str) -> str | None:
    """The value of ``--option=value`` or ``--option value`` (or ``-o value``) in ``call``."""
    match = re.search(rf"(?:^|\s){re.escape(option)}[= ](\S+)", call)
    return match.group(1) if match else None


def test_slurm_profile_gives_every_job_the_cpus_its_threads_use():
    """Also when a user gives a rule more threads: the request follows them."""
    jobs = submitted_resources("workflow/profiles/slurm", *EXTRA_THREADS)
    for job in jobs:
        call = sbatch_call(job)
        assert sbatch_option(call, "--cpus-per-task") == str(job["threads"]), (job, call)
        assert sbatch_option(call, "--mem") == str(job["resources"]["mem_mb"]), call
        # the rule's own measured runtime (minutes) and memory, not the profile's defaults
        assert sbatch_option(call, "-t") == str(job["resources"]["runtime"]), call
        assert int(job["resources"]["runtime"]) >= 5 and int(job["resources"]["mem_mb"]) >= 1000
        assert sbatch_option(call, "-A") == "your_account", call
    assert {job["threads"] for job in jobs if job["rule"] == "mlm_train"} == {3}


def test_slurm_profile_sends_training_and_inference_to_a_gpu():
    jobs = submitted_resources("workflow/profiles/slurm", *EXTRA_THREADS)
    for job in jobs:
        call = sbatch_call(job)
        gpu = job["rule"] in GPU_RULES
        assert sbatch_option(call, "--gpus") == ("1" if gpu else None), call
        assert sbatch_option(call, "-p") == ("gpu" if gpu else "cpu"), call
    assert {job["rule"] for job in jobs} >= GPU_RULES


def test_local_profile_keeps_the_configured_threads():
    """The test cluster's profile asks for what a local run uses, so outputs can be equal."""
    profile = yaml.safe_load((REPO / "workflow/profiles/slurm-local/config.yaml").read_text())
    assert "set-threads" not in profile and "max-threads" not in profile
    for job in submitted_resources("workflow/profiles/slurm-local"):
        call = sbatch_call(job)
        assert sbatch_option(call, "--cpus-per-task") == str(job["threads"]), call
        assert sbatch_option(call, "--gpus") is None and sbatch_option(call, "-A") is None


# ---------------------------------------------------------------- a real one-node cluster
@pytest.fixture(scope="module")
def cluster():
    """The one-node cluster of .ci/slurm-cluster: started here unless already up, and then
    stopped here again."""
    mode = os.environ.get("RELIQUANT_SLURM_TESTS", "auto")
    if mode == "skip":
        pytest.skip("RELIQUANT_SLURM_TESTS=skip (CI runs these in its own SLURM stage)")
    check = subprocess.run(["bash", CLUSTER, "check"], capture_output=True, text=True)
    reason = (check.stdout + check.stderr).strip()
    if check.returncode == CANNOT_RUN:
        if mode == "require":
            pytest.fail(f"RELIQUANT_SLURM_TESTS=require, but {reason}")
        pytest.skip(reason)
    assert check.returncode == 0, reason
    was_running = subprocess.run(["bash", CLUSTER, "status"], capture_output=True).returncode == 0
    start = subprocess.run(["bash", CLUSTER, "start"], capture_output=True, text=True, timeout=900)
    assert start.returncode == 0, start.stdout + start.stderr
    yield
    if not was_running:
        subprocess.run(["bash", CLUSTER, "stop"], check=True, timeout=120)


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """One copy of the workflow's sources, so the local and the SLURM run use the same code."""
    return copy_repo(tmp_path_factory.mktemp("sources"))


@pytest.fixture(scope="module")
def local_smoke(cluster, sources, tmp_path_factory) -> Path:
    """The smoke configuration run locally: the reference for the SLURM run (made only where
    the cluster can run, so that a machine without SLURM skips at once)."""
    work = tmp_path_factory.mktemp("local") / "repo"
    shutil.copytree(sources, work)
    assert_ok(run_snakemake(work, "--cores", "2", *SMOKE))
    return work


@pytest.fixture(scope="module")
def slurm_smoke(cluster, sources, tmp_path_factory) -> tuple[Path, str]:
    """The smoke configuration run through the slurm-local profile: (copy, its output)."""
    work = tmp_path_factory.mktemp("slurm") / "repo"
    shutil.copytree(sources, work)
    out = assert_ok(run_snakemake(work, *LOCAL_PROFILE, *SMOKE))
    return work, out


@pytest.mark.slurm
def test_smoke_run_on_slurm_equals_the_local_run(local_smoke, slurm_smoke):
    work, _ = slurm_smoke
    assert_same_parquet(local_smoke / "results", work / "results")


@pytest.mark.slurm
def test_every_job_ran_as_a_slurm_job_with_its_threads_and_memory(slurm_smoke):
    work, out = slurm_smoke
    submitted = dict(SUBMITTED.findall(out))
    expected = {job["rule"]: job for job in job_blocks(out) if job["rule"] != "all"}
    planned = planned_jobs(out)
    planned.pop("all", None)
    assert len(submitted) == sum(planned.values()), (len(submitted), planned)
    seen = slurm_jobs(list(submitted))
    assert set(seen) == set(submitted)
    counts: dict[str, int] = {}
    for job_id, job in seen.items():
        assert job["state"] == "COMPLETED", (job_id, job)
        counts[job["rule"]] = counts.get(job["rule"], 0) + 1
        rule = expected[job["rule"]]
        assert job["cpus"] == rule["threads"], (job_id, job, rule)
        assert job["mem_mb"] == rule["resources"]["mem_mb"], (job_id, job, rule)
        assert job["minutes"] == rule["resources"]["runtime"], (job_id, job, rule)
        log = Path(submitted[job_id])
        assert log.name == f"{job_id}.log" and log.is_file(), log
        assert f"rule {job['rule']}:" in log.read_text(), log
    assert counts == planned


@pytest.mark.slurm
def test_a_cancelled_job_is_retried_or_fails_clearly_and_a_rerun_finishes(local_smoke, slurm_smoke):
    """scancel the CNN training mid-run: the profile's retry resubmits it (or the run stops
    naming the cancelled job); a rerun with the profile then finishes with equal outputs."""
    work, _ = slurm_smoke
    target = ["--forcerun", "mlm_train", "--until", "mlm_train", *LOCAL_PROFILE, *SMOKE]
    env = dict(os.environ, RELIQUANT_NO_PROGRESS="1", PYTHONHASHSEED="0")
    env["PYTHONPATH"] = str(work / "src")
    with subprocess.Popen(
        [SNAKEMAKE, *target],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as run:
        cancelled = cancel_when_running("rule_mlm_train", timeout=600)
        out, _ = run.communicate(timeout=1800)
    assert f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'" in out, out[-6000:]
    if run.returncode == 0:
        assert len(SUBMITTED.findall(out)) == 2, out[-6000:]  # the cancelled job and its retry
    rerun = assert_ok(run_snakemake(work, "--until", "mlm_train", *LOCAL_PROFILE, *SMOKE))
    if run.returncode == 0:
        assert "Nothing to be done" in rerun, rerun[-3000:]
    assert_same_parquet(local_smoke / "results", work / "results", {"mlm/training_log.parquet"})


def cancel_when_running(comment: str, timeout: float) -> str:
    """Wait until a job with this comment runs, give it two seconds, scancel it; its id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        proc = subprocess.run(
            ["squeue", "-h", "-t", "RUNNING", "-o", "%i|%k"], capture_output=True, text=True
        )
        for line in proc.stdout.split():
            job_id, job_comment = line.split("|")
            if job_comment == comment:
                time.sleep(2)
                subprocess.run(["scancel", job_id], check=True)
                return job_id
        time.sleep(0.5)
    raise AssertionError(f"no running job {comment} within {timeout} s")
