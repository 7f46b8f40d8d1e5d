"""retain_freed_memory: the page faults of a free/allocate loop, counted in a fresh process."""

import logging
import subprocess
import sys

import pytest

from reliquant.core import allocator
from reliquant.core.runlog import start_job

# Five 4 MiB blocks allocated, written and freed 40 times (204,800 pages written): with
# glibc's defaults the freed top of the heap exceeds the dynamic trim threshold and is unmapped
# each round, so its pages are faulted again (81,294 faults here); with the thresholds fixed
# the heap is reused (0 faults here).
LOOP = """
import resource, sys
import numpy as np
from reliquant.core.allocator import retain_freed_memory
if sys.argv[1] == "retain":
    assert retain_freed_memory()
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def step():
    blocks = [np.full(4 << 20, i, dtype=np.uint8) for i in range(5)]
    assert all(int(b[-1]) == i for i, b in enumerate(blocks))
step()
before = faults()
for _ in range(40):
    step()
print(faults() - before)
"""

needs_glibc = pytest.mark.skipif(allocator._glibc() is None, reason="C library is not glibc")


def _faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", LOOP, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout.split()[-1])


@needs_glibc
def test_retained_memory_is_not_faulted_again():
    pages = 40 * 5 * (4 << 20) // 4096
    default, retained = _faults("default"), _faults("retain")
    # the loop as written faults its pages again under glibc's defaults (the test can fail) ...
    assert default > pages // 10
    # ... and reuses them once the thresholds are fixed
    assert retained < pages // 100


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"mmap_threshold": allocator.MMAP_THRESHOLD + 1}, "mmap_threshold"),
        ({"mmap_threshold": -1}, "mmap_threshold"),
        ({"trim_threshold": 2**31}, "trim_threshold"),
    ],
)
def test_out_of_range_thresholds_are_refused_by_name(kwargs, name):
    with pytest.raises(ValueError, match=name):
        allocator.retain_freed_memory(**kwargs)


def test_not_glibc_changes_nothing(monkeypatch):
    monkeypatch.setattr(allocator, "_glibc", lambda: None)
    assert allocator.retain_freed_memory() is False


def test_start_job_logs_the_start_up_boundary(tmp_path):
    log_path = tmp_path / "logs" / "job.log"
    try:
        log = start_job(log_path, "nbc")
        assert log.name == "reliquant.nbc"
    finally:
        for handler in list(logging.getLogger("reliquant").handlers):
            handler.close()
            logging.getLogger("reliquant").removeHandler(handler)
    assert "logging started (imports done)" in log_path.read_text()
