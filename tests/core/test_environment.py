"""The pinned environment (requirements.lock against pyproject.toml, envs/*.yaml and the running
interpreter) and the per-run environment record (results/environment.json)."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
import sys
import tomllib
from collections.abc import Iterable

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version
from workflow_helpers import REPO

from reliquant.core.environment import (
    canonical_name,
    environment_record,
    installed_versions,
    lock_differences,
    read_lock,
    requirement_name,
    slurm_record,
    thread_counts,
)

LOCK = REPO / "requirements.lock"
#: The optional-dependency groups the lock is compiled with (its header names them too).
LOCKED_EXTRAS = ("test", "slurm", "bench", "install", "docs")
#: The groups the README's test command installs (``bench`` is for bench/pmnist.py only,
#: ``docs`` for the documentation site; ``install`` is uv, which pip installs first and which
#: then installs the rest).
INSTALLED_EXTRAS = ("test", "slurm", "install")


def declared_requirements(extras: Iterable[str] = LOCKED_EXTRAS) -> list[str]:
    """pyproject.toml's dependencies plus the given extras, as PEP 508 strings."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    groups = project["optional-dependencies"]
    return [*project["dependencies"], *(r for extra in extras for r in groups[extra])]


def requirement_closure(roots: Iterable[str]) -> set[str]:
    """Canonical names of ``roots`` and all they require, transitively, as installed here.

    Follows each installed distribution's Requires-Dist whose marker holds on this interpreter
    (with the extras asked of it, e.g. ``snakemake[reports]``). A requirement that is not
    installed stays in the set but is not followed.
    """
    wanted = [Requirement(text) for text in roots]
    seen: set[tuple[str, frozenset[str]]] = set()
    while wanted:
        requirement = wanted.pop()
        key = (canonical_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        for child in map(Requirement, requires):
            extras = key[1] or {""}
            if child.marker is None or any(child.marker.evaluate({"extra": e}) for e in extras):
                wanted.append(child)
    return {name for name, _ in seen}


def lock_parents(text: str) -> dict[str, set[str]]:
    """Each pinned package of a pip-compile lock and the packages its ``# via`` lines name."""
    parents: dict[str, set[str]] = {}
    name = None
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9_.\-]+)==", line)
        if pin:
            name = canonical_name(pin.group(1))
            parents[name] = set()
        elif (
            name
            and (via := re.match(r"^\s+#\s+(?:via\s+)?([A-Za-z0-9_.\-]+)", line))
            and via.group(1) != "via"
        ):
            parents[name].add(canonical_name(via.group(1)))
    return parents


def lock_closure_below_uninstalled(needed: set[str]) -> set[str]:
    """The pins the lock says are required, through its ``# via`` lines, by a needed package
    that is not installed here (an extra the README's test command does not install, e.g.
    ``docs``): its requirements cannot be read from installed metadata, so the lock's own
    record of them is followed instead."""
    parents = lock_parents(LOCK.read_text())
    installed = set(installed_versions())
    roots = {name for name in needed if name not in installed}
    found: set[str] = set()
    while True:
        more = {
            name for name, via in parents.items() if name not in found and via & (roots | found)
        }
        if not more:
            return found
        found |= more


# ------------------------------------------------------------------------------ the lock
def test_lock_pins_exactly_what_pyproject_requires():
    """No package missing, no stale pin: the lock is the closure of the declared requirements."""
    lock = read_lock(LOCK)
    needed = requirement_closure(declared_requirements())
    needed |= lock_closure_below_uninstalled(needed)
    assert sorted(needed - set(lock)) == [], "required but not pinned: re-run pip-compile"
    assert sorted(set(lock) - needed) == [], "pinned but required by nothing: re-run pip-compile"


def test_lock_satisfies_every_declared_specifier():
    lock = read_lock(LOCK)
    for text in declared_requirements():
        requirement = Requirement(text)
        pinned = lock[canonical_name(requirement.name)]
        assert requirement.specifier.contains(Version(pinned), prereleases=True), (text, pinned)


def test_installed_versions_equal_the_lock():
    """Install with the README's test command (uv from the lock, then `uv pip install
    --compile-bytecode -c requirements.lock -e '.[test]'`) to pass this:
    every locked package the installed extras need is installed at its pinned version (and
    so is the bench extra's, where it is installed)."""
    lock, installed = read_lock(LOCK), installed_versions()
    needed = requirement_closure(declared_requirements(INSTALLED_EXTRAS))
    wanted = {name: v for name, v in lock.items() if name in needed or name in installed}
    assert lock_differences(wanted, installed) == []


def test_lock_header_names_this_python_and_the_compile_command():
    header = LOCK.read_text().split("\n\n")[0]
    python = re.search(r"autogenerated by pip-compile with Python (\d+\.\d+)", header)
    assert python and python.group(1) == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert "pip-compile" in header and "pyproject.toml" in header
    assert all(f"--extra={extra}" in header for extra in LOCKED_EXTRAS)


@pytest.mark.parametrize(
    "name, package", [("core", "-e ../"), ("torch", "-e ../"), ("bench", "-e ../[bench]")]
)
def test_conda_envs_install_the_locked_versions(name, package):
    """envs/*.yaml take every package from PyPI under the lock: conda gives only Python."""
    env = yaml.safe_load((REPO / "envs" / f"{name}.yaml").read_text())
    deps = env["dependencies"]
    conda = sorted(d for d in deps if isinstance(d, str))
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    python = f"python={sys.version_info.major}.{sys.version_info.minor}"
    assert conda == ["pip", python]
    assert pip == ["-c ../requirements.lock", package]
    assert (REPO / "envs" / "../requirements.lock").resolve() == LOCK.resolve()


# ------------------------------------------------------------------- the parsing helpers
def test_read_lock_parses_pins_and_ignores_comments(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text(
        "#\n# header\n#\nNumPy==2.4.6\n    # via scipy\nruamel.yaml==0.18.6 ; python_version < '4'\n"
        "typing_extensions==4.12.2 \\\n    --hash=sha256:00\n--find-links /x\n"
    )
    assert read_lock(lock) == {
        "numpy": "2.4.6",
        "ruamel-yaml": "0.18.6",
        "typing-extensions": "4.12.2",
    }


def test_lock_differences_names_missing_and_different_versions():
    lock = {"numpy": "2.4.6", "torch": "2.14.1", "tqdm": "4.67.1"}
    installed = {"numpy": "2.4.6", "torch": "2.15.0", "extra-tool": "1.0"}
    assert lock_differences(lock, installed) == [
        "torch: pinned 2.14.1, installed 2.15.0",
        "tqdm: pinned 4.67.1, not installed",
    ]


def test_requirement_names_are_canonical():
    assert requirement_name("scikit_learn>=1.4") == "scikit-learn"
    assert requirement_name("snakemake-executor-plugin-slurm>=1.0") == (
        "snakemake-executor-plugin-slurm"
    )
    assert requirement_name("Foo.Bar[baz]; python_version>'3'") == "foo-bar"
    with pytest.raises(ValueError):
        requirement_name(">=1.0")


def test_closure_follows_extras_and_markers():
    """pytest needs pluggy (always) and not colorama (Windows only) here."""
    names = requirement_closure(["pytest"])
    assert {"pytest", "pluggy", "iniconfig"} <= names
    if sys.platform != "win32":
        assert "colorama" not in names


# -------------------------------------------------------------------- environment.json
def test_environment_record_is_json_and_complete():
    record = json.loads(json.dumps(environment_record(job_threads=3)))
    assert set(record) == {"platform", "cpu_capability", "threads", "slurm", "packages"}
    assert record["packages"]["torch"] == metadata.version("torch")
    assert record["cpu_capability"] in {"DEFAULT", "VSX", "ZVECTOR", "AVX2", "AVX512", "SVE256"}
    threads = record["threads"]
    assert threads["job_threads"] == 3
    assert 1 <= threads["usable_cpus"] <= threads["cpu_count"]
    assert threads["torch_intra_op"] >= 1
    assert record["platform"]["python"] == sys.version.split()[0]


def test_thread_counts_report_the_torch_setting():
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert thread_counts()["torch_intra_op"] == 1
    finally:
        torch.set_num_threads(before)


def test_slurm_record_reads_the_job_variables(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert slurm_record()["SLURM_JOB_ID"] is None
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURMD_NODENAME", "node7")
    record = slurm_record()
    assert record["SLURM_JOB_ID"] == "42" and record["SLURMD_NODENAME"] == "node7"
