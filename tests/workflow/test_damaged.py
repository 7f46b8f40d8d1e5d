"""A damaged output of the workflow is rebuilt by a real run, not read and not an error forever;
nothing else is ever touched, and a dry run changes nothing.

When a real run starts, workflow/rules/common.smk (rebuild_damaged_outputs, its onstart
handler) checks the outputs of the run's jobs that are not planned to run; one that no reader
would accept (reliquant.core.io.damaged_outputs) is deleted and the run plans its job, and the
jobs after it, again. A user's own file under results/ (a table exported there, a custom
case's input) is not an output of any job: it is never checked or removed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
import yaml
from sklearn.ensemble import RandomForestClassifier
from workflow_helpers import copy_repo, planned_jobs, snakemake

from reliquant.core.io import read_frame, read_table_file, write_frame

SMOKE = ("--configfile", "tests/smoke.yaml", "overlay.yaml")
#: One nbc cell: nbc_distributions writes DISTS, which the cell's job reads.
DISTS = "results/nbc/distributions.parquet"
CELL = "results/nbc/curves/n25_g0.parquet"
#: A user's own files under results/: an export, and the samples of a custom case.
EXPORT = "results/my_export.parquet"
SAMPLES = "results/my_samples.parquet"


def _user_files(work: Path) -> dict:
    """Write a user's export and a custom trees case whose samples live under results/
    (both by pandas: no reliquant digest record); return the config overlay."""
    x = np.arange(40.0)
    frame = pd.DataFrame({"a": np.sin(x), "b": np.cos(x), "c": (x / 7).round(2)})
    (work / "results").mkdir(parents=True, exist_ok=True)
    frame.assign(score=frame.sum(axis=1)).to_parquet(work / EXPORT)
    frame.iloc[:4].to_parquet(work / SAMPLES)
    (work / "my").mkdir(exist_ok=True)
    model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0)
    sio.dump(model.fit(frame.to_numpy(), (frame["a"] > 0).astype(int)), work / "my/forest.skops")
    case = {
        "name": "in_results",
        "kind": "trees",
        "model": "my/forest.skops",
        "samples": SAMPLES,
        "columns": ["a", "b", "c"],
        "noise": {"variance": 0.1},
        "time_budget": 0.2,
        "seed": 3,
    }
    overlay = {"custom": [case]}
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    return overlay


def _tree_state(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``root``: size, mtime, SHA-256. Python's bytecode caches and
    Snakemake's own state (.snakemake/: a dry run saves its file-listing cache there) aside."""
    state = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not {"__pycache__", ".snakemake"} & set(path.relative_to(root).parts):
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns, digest)
    return state


@pytest.mark.workflow
def test_a_dry_run_changes_no_file(tmp_path):
    """snakemake -n with a damaged output of a rule (a truncated parquet table, a model that
    is not sealed), a user's export under results/ and a custom case reading its samples
    from results/: every file of the repository keeps its bytes and modification time,
    and the plan holds the custom case."""
    work = copy_repo(tmp_path / "work")
    _user_files(work)
    iris = work / "results/data/iris.parquet"
    write_frame(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), iris)
    iris.write_bytes(iris.read_bytes()[:-20])  # a truncated write (power loss, full disk)
    (work / "results/mlm").mkdir(parents=True)
    (work / "results/mlm/cnn.pt").write_bytes(b"not a sealed model")
    before = _tree_state(work)
    for args in ((), ("results/data/iris.parquet",)):
        proc = snakemake(work, "-n", *args, *SMOKE)
        assert "removed" not in proc.stderr, proc.stderr[-2000:]
        assert _tree_state(work) == before, args
        plan = planned_jobs(proc.stdout)
        if not args:
            assert plan.get("custom_trees") == 1 and plan.get("mlm_train") == 1, plan


@pytest.mark.workflow
def test_a_real_run_rebuilds_a_damaged_output_and_never_touches_a_users_file(tmp_path, monkeypatch):
    """A real run: a custom case reading its samples from results/ runs, and a user's export
    there survives it. A truncated intermediate (nbc_distributions's table) whose reader
    runs is deleted when the run starts, rebuilt, and equals the first build."""
    work = copy_repo(tmp_path / "work")
    monkeypatch.setenv("PYTHONPATH", str(work / "src"))
    _user_files(work)
    user = {name: (work / name).read_bytes() for name in (EXPORT, SAMPLES)}
    targets = (CELL, "results/custom/in_results.parquet")
    first = snakemake(work, "--cores", "1", *targets, *SMOKE)
    assert "removed" not in first.stderr
    assert {name: (work / name).read_bytes() for name in user} == user
    scored = read_frame(work / "results/custom/in_results.parquet")
    assert len(scored) == len(read_table_file(work / SAMPLES)) == 4

    dists = work / DISTS
    built, curves = read_frame(dists), read_frame(work / CELL)
    dists.write_bytes(dists.read_bytes()[:-20])  # damaged after it was written
    (work / CELL).unlink()  # the cell's job runs again and would read it
    plan = planned_jobs(snakemake(work, "-n", *targets, *SMOKE).stdout)
    assert plan == {"nbc_cell": 1}, plan  # a dry run cannot tell (and must not look)
    rerun = snakemake(work, "--cores", "1", *targets, *SMOKE)
    assert f"removed {DISTS}" in rerun.stderr and "no PAR1" in rerun.stderr, rerun.stderr[-3000:]
    pd.testing.assert_frame_equal(read_frame(dists), built)
    pd.testing.assert_frame_equal(read_frame(work / CELL), curves)
    assert {name: (work / name).read_bytes() for name in user} == user
    assert planned_jobs(snakemake(work, "-n", *targets, *SMOKE).stdout) == {}
    os.utime(work / EXPORT)  # a user's file is not an output: nothing plans for it
    assert planned_jobs(snakemake(work, "-n", *targets, *SMOKE).stdout) == {}
