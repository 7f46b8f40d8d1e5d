"""reliquant.core.temporaries: a temporary file is removed as "left by an interrupted write"
only when its writer is gone (issue 40: two ``snakemake --nolock`` runs in one tree, one
deleted the other's live temporary)."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from reliquant.core.io import read_frame, write_frame
from reliquant.core.temporaries import (
    STALE_AFTER_S,
    stale_temporaries,
    temporary_prefix,
    writer_gone,
)

#: A second writer of ``dest``: opens its temporary, says so, waits for a line on stdin,
#: then writes its rows and renames the temporary into place.
WRITER = """
import sys
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from reliquant.core.io import PARQUET_WRITE_OPTIONS, atomic_path, write_frame
dest = sys.argv[1]
with atomic_path(dest) as tmp:
    tmp.write_bytes(b"half-written")
    print(tmp, flush=True)
    sys.stdin.readline()
write_frame(pd.DataFrame({"a": [7, 8, 9]}), dest)
print("done", flush=True)
"""


def _start_writer(dest: Path) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(dest)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    tmp = Path(proc.stdout.readline().strip())
    assert tmp.exists() and tmp.parent == dest.parent, tmp
    return proc, tmp


def test_a_live_writers_temporary_survives_another_write_of_the_same_output(tmp_path):
    """Two runs write one output at once: the second's write keeps the first's temporary,
    and the first then finishes its own write."""
    dest = tmp_path / "out.parquet"
    proc, tmp = _start_writer(dest)
    try:
        assert tmp.name.startswith(f".out.parquet.w{proc.pid}-")
        assert stale_temporaries(dest) == []
        write_frame(pd.DataFrame({"a": [1, 2]}), dest)  # this process writes meanwhile
        assert tmp.exists(), "the live writer's temporary was removed"
        assert read_frame(dest)["a"].tolist() == [1, 2]
    finally:
        out, _ = proc.communicate("\n", timeout=60)
    assert proc.returncode == 0 and out.strip() == "done"
    assert read_frame(dest)["a"].tolist() == [7, 8, 9]
    assert not tmp.exists()


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    dest = tmp_path / "out.parquet"
    proc, tmp = _start_writer(dest)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert tmp.exists()  # SIGKILL: no clean-up ran
    assert stale_temporaries(dest) == [tmp]
    write_frame(pd.DataFrame({"a": [1, 2]}), dest)
    assert not tmp.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


def test_temporaries_of_other_hosts_and_untagged_ones_go_only_when_old(tmp_path):
    """A writer on another host (a shared file system) cannot be asked whether it runs: its
    temporary is stale only once nothing wrote it for STALE_AFTER_S."""
    dest = tmp_path / "t.md"
    other_host = tmp_path / ".t.md.w4242-00000000.abcd_123.md"
    untagged = tmp_path / ".t.md.k3j4h5g6.md"  # a writer of before the tags
    other_output = tmp_path / ".t.md.html.w1-00000000.abcdefgh.html"  # t.md.html's
    for path in (other_host, untagged, other_output):
        path.write_text("x")
    assert stale_temporaries(dest) == []
    old = time.time() - STALE_AFTER_S - 60
    for path in (other_host, untagged, other_output):
        os.utime(path, (old, old))
    assert stale_temporaries(dest) == sorted([other_host, untagged])
    # this process's own temporaries are live, however old
    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    assert temporary_prefix(dest) == f".t.md.w{os.getpid()}-{host}."
    assert not writer_gone(os.getpid(), host, 1e9)
