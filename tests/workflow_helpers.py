"""Helpers for the workflow tests: run Snakemake in a copy of the repository."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from reliquant.core.io import write_table

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")

#: What a run needs from the repository (everything else is generated).
COPIED = [
    "Snakefile",
    "config.yaml",
    "pyproject.toml",
    "workflow",
    "scripts",
    "envs",
    "data",
    "tests/smoke.yaml",
    "src",
    "README.md",  # rule docs_check compares the pages' generated blocks with the run
    "docs",
]


def copy_repo(dest: Path) -> Path:
    """Copy the workflow's sources (not results) into ``dest`` and return it."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def snakemake(
    workdir: Path, *args: str, check: bool = True, timeout: float = 1800
) -> subprocess.CompletedProcess:
    """Run the venv's snakemake in ``workdir``; return the completed process."""
    env = dict(os.environ, RELIQUANT_NO_PROGRESS="1", PYTHONHASHSEED="0")
    proc = subprocess.run(
        [SNAKEMAKE, *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
        )
    return proc


def planned_jobs(output: str) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry run into {rule: count} (empty: nothing to do)."""
    if "Nothing to be done" in output:
        return {}
    jobs: dict[str, int] = {}
    in_table = False
    for line in output.splitlines():
        if line.startswith("Job stats:"):
            in_table, jobs = True, {}
            continue
        if in_table:
            match = re.match(r"^(\S+)\s+(\d+)$", line.strip())
            if match and match.group(1) != "total":
                jobs[match.group(1)] = int(match.group(2))
            elif line.strip().startswith("total"):
                in_table = False
    return jobs


@contextlib.contextmanager
def edited(path: Path, text: str):
    """Replace ``path``'s text for the duration of the block, then restore text and mtime.

    Restoring the modification time matters: Snakemake plans a rule again when its script is
    newer than the outputs, so a test that only restored the text would leak a planned job
    into every later test on the same working copy.
    """
    original = path.read_text()
    stat = path.stat()
    try:
        path.write_text(text)
        yield
    finally:
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def touch_outputs(workdir: Path, *args: str) -> list[str]:
    """Mark every output of the workflow done without running a job; return the outputs.

    Each output of ``snakemake --summary`` is created empty (a path without a suffix is a
    ``directory()`` output: created as a folder), then ``snakemake --touch --forceall``
    records every job's metadata (its params, the ``code`` digest among them) and orders the
    modification times as a run would (without ``--forceall``, the jobs whose outputs already
    look up to date would be left without metadata, so no params change would rerun them). A dry run afterwards plans only what an edit since then reruns: the
    rerun triggers tested in seconds instead of a full run.
    """
    proc = snakemake(workdir, "--summary", *args)
    outputs = [line.split("\t")[0] for line in proc.stdout.splitlines()[1:] if "\t" in line]
    for output in outputs:
        path = workdir / output
        if path.suffix == ".parquet":  # a valid (empty) file with its digest, not a damaged one
            path.parent.mkdir(parents=True, exist_ok=True)
            write_table(pa.table({"touched": pa.array([], pa.int8())}), path)
        elif path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        else:
            path.mkdir(parents=True, exist_ok=True)
    snakemake(workdir, "--touch", "--forceall", "--cores", "1", *args)
    return outputs
