"""The software and hardware a run used, and the lock file its package versions are pinned in.

`environment_record` gathers what can change a result or its speed between two machines:
every installed package version, the CPU instruction set PyTorch dispatches to
(``torch.backends.cpu.get_cpu_capability()``, e.g. ``AVX2`` or ``AVX512``: kernels differ in
their floating-point summation order), the thread counts of every thread pool, the platform,
and the SLURM job the record was made in, if any. The workflow writes it to
``results/environment.json`` (rule ``report_environment``).

`read_lock`, `requirement_name` and `lock_differences` compare ``requirements.lock`` (compiled
by pip-compile from ``pyproject.toml``) with the declared requirements and with the running
environment (tests/core/test_environment.py).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import platform
import re
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "SLURM_VARIABLES",
    "THREAD_VARIABLES",
    "canonical_name",
    "cpu_capability",
    "environment_record",
    "installed_versions",
    "lock_differences",
    "platform_record",
    "read_lock",
    "requirement_name",
    "slurm_record",
    "thread_counts",
]

#: A pinned line of a pip-compile lock file: ``name==version`` (markers and comments after it).
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#\\]+)")
#: The project name at the start of a PEP 508 requirement string.
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
#: Environment variables that set or report thread counts.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "SLURM_CPUS_PER_TASK",
)
#: Environment variables that identify the SLURM job a record was made in.
SLURM_VARIABLES = ("SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURMD_NODENAME", "SLURM_CLUSTER_NAME")


def canonical_name(name: str) -> str:
    """A distribution name normalised as PEP 503 does: ``Foo_Bar.baz`` -> ``foo-bar-baz``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The canonical project name of a PEP 508 requirement (``"torch>=2.2"`` -> ``"torch"``)."""
    match = _REQUIREMENT_NAME.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return canonical_name(match.group(1))


def read_lock(path: str | os.PathLike) -> dict[str, str]:
    """The ``name -> version`` pins of a pip-compile lock file (canonical names)."""
    pins: dict[str, str] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[canonical_name(match.group(1))] = match.group(2)
    return pins


def installed_versions() -> dict[str, str]:
    """``name -> version`` of every distribution importable in this interpreter (canonical)."""
    versions: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            versions.setdefault(canonical_name(name), dist.version)
    return dict(sorted(versions.items()))


def lock_differences(lock: Mapping[str, str], installed: Mapping[str, str]) -> list[str]:
    """One line per locked package that is not installed at exactly its pinned version."""
    problems = []
    for name, pinned in sorted(lock.items()):
        have = installed.get(name)
        if have is None:
            problems.append(f"{name}: pinned {pinned}, not installed")
        elif have != pinned:
            problems.append(f"{name}: pinned {pinned}, installed {have}")
    return problems


def cpu_capability() -> str:
    """The CPU instruction set PyTorch's kernels dispatch to (``DEFAULT``, ``AVX2``, ...)."""
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def thread_counts(job_threads: int | None = None) -> dict[str, object]:
    """Every thread pool's size: Snakemake's job threads, PyTorch's, BLAS/OpenMP's, the CPUs.

    ``usable_cpus`` is the CPUs this process may run on (its affinity mask: what SLURM gave the
    job), ``cpu_count`` the machine's.
    """
    import torch
    from threadpoolctl import threadpool_info

    return {
        "job_threads": job_threads,
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "torch_intra_op": torch.get_num_threads(),
        "torch_inter_op": torch.get_num_interop_threads(),
        "threadpools": [
            {key: pool.get(key) for key in ("internal_api", "prefix", "version", "num_threads")}
            for pool in threadpool_info()
        ],
        "variables": {name: os.environ.get(name) for name in THREAD_VARIABLES},
    }


def platform_record() -> dict[str, str]:
    """Interpreter and operating system: what ``platform`` reports."""
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "node": platform.node(),
    }


def slurm_record() -> dict[str, str | None]:
    """The SLURM job this process runs in (every value ``None`` outside SLURM)."""
    return {name: os.environ.get(name) for name in SLURM_VARIABLES}


def environment_record(job_threads: int | None = None) -> dict[str, object]:
    """Everything above in one JSON-ready mapping (the content of results/environment.json)."""
    return {
        "platform": platform_record(),
        "cpu_capability": cpu_capability(),
        "threads": thread_counts(job_threads),
        "slurm": slurm_record(),
        "packages": installed_versions(),
    }
