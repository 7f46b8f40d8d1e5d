"""A job's exit record (reliquant.core.runlog.exit_record) against the kernel's own count of
the same process, read by its parent with wait4, and as the workflow benchmark reads it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from reliquant.core.runtimes import read_exit_record

# A job as our scripts are: start_job after the imports, then work on two threads (CPU of
# every thread must count) and a 200 MB buffer touched page by page, then exit or raise.
JOB = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    from reliquant.core.runlog import start_job

    log = start_job(sys.argv[1], "job")
    buffer = np.ones(200 * 2**20 // 8)  # 200 MB, every page written

    def burn():
        end = time.thread_time() + 0.4
        while time.thread_time() < end:
            pass

    threads = [threading.Thread(target=burn) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.info("done")
    if sys.argv[2] == "raise":
        raise RuntimeError("the job failed")
    """
)


def _run_job(tmp_path, how: str):
    """Run JOB in a child; its log's exit record and the kernel's rusage of that child."""
    log = tmp_path / "logs" / "job.log"
    env = {**os.environ, "RELIQUANT_NO_PROGRESS": "1"}
    child = subprocess.Popen(
        [sys.executable, "-c", JOB, str(log), how], env=env, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, read_exit_record(log), usage, log


@pytest.mark.parametrize("how", ["exit", "raise"])
def test_the_exit_record_is_the_kernels_count_of_the_job(tmp_path, how):
    code, record, usage, log = _run_job(tmp_path, how)
    assert code == (0 if how == "exit" else 1)
    assert record is not None, log.read_text()
    kernel_cpu = usage.ru_utime + usage.ru_stime
    # both threads' 0.4 s and the interpreter's start-up; written just before the process
    # ends, so at most the interpreter's teardown below the parent's count
    assert record["cpu_s"] >= 0.8
    assert kernel_cpu - 0.5 <= record["cpu_s"] <= kernel_cpu + 0.002
    assert 200 <= record["max_rss_mb"] <= usage.ru_maxrss / 1024 + 0.1
    # the last line of the log, after the job's own records
    lines = log.read_text().splitlines()
    assert "done" in lines[-2] and "usage at exit" in lines[-1]


def test_a_log_without_an_exit_record_reads_as_none(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("2026-11-25 21:02:33,600 INFO x: read\n")
    assert read_exit_record(log) is None
    assert read_exit_record(tmp_path / "missing.log") is None
