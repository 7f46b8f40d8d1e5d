"""Config mlm.model: the CNN read from a user's state dict (reliquant.mlm.cnn.load_model_file,
rule mlm_model_file) instead of trained by rule mlm_train."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from workflow_helpers import REPO, copy_repo, planned_jobs, snakemake

from reliquant.core.io import read_frame, write_frame
from reliquant.mlm import cnn, inference
from reliquant.mlm.softmax import P_COLUMNS


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """A freshly built CNN, its state dict saved by torch.save, and the file's SHA-256."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        model = cnn.build_cnn().eval()
    path = tmp_path_factory.mktemp("weights") / "my_cnn.pt"
    torch.save(model.state_dict(), path)
    return model, path, cnn.file_sha256(path)


def test_sha256_matches_hashlib(weights):
    import hashlib

    _, path, digest = weights
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_loaded_state_dict_gives_identical_predictions(weights):
    model, path, digest = weights
    loaded = cnn.load_model_file(path, digest.upper())  # digest case does not matter
    images = np.random.default_rng(0).integers(0, 256, (70, 28, 28), dtype=np.uint8)
    expected = inference.predict_softmax(model, images, batch_size=32, device="cpu")
    got = inference.predict_softmax(loaded, images, batch_size=32, device="cpu")
    np.testing.assert_array_equal(got, expected)


def test_sha256_mismatch_names_the_path_and_both_digests(weights):
    _, path, digest = weights
    wrong = "0" * 64
    with pytest.raises(ValueError) as err:
        cnn.load_model_file(path, wrong)
    message = str(err.value)
    assert str(path) in message and digest in message and wrong in message


def test_wrong_architecture_names_the_path(tmp_path):
    other = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 3))
    path = tmp_path / "other.pt"
    torch.save(other.state_dict(), path)
    with pytest.raises(ValueError, match="does not hold MnistCNN weights") as err:
        cnn.load_model_file(path, cnn.file_sha256(path))
    assert str(path) in str(err.value)


def test_not_a_torch_file_names_the_path(tmp_path):
    path = tmp_path / "junk.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="does not hold MnistCNN weights") as err:
        cnn.load_model_file(path, cnn.file_sha256(path))
    assert str(path) in str(err.value)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        cnn.load_model_file(tmp_path / "missing.pt", "0" * 64)


def test_external_training_log_fits_the_schema(tmp_path):
    frame = cnn.external_training_log()
    write_frame(frame, tmp_path / "log.parquet", cnn.EXTERNAL_TRAINING_LOG_SCHEMA)
    back = read_frame(tmp_path / "log.parquet")
    assert len(back) == 1 and back["test_accuracy"].isna().all()
    assert "Not trained here" in cnn.external_model_markdown("x.pt", "ab" * 32)


def test_saved_copy_equals_save_model_bytes(weights, tmp_path):
    """What rule mlm_model_file writes as results/mlm/cnn.pt is what save_model writes for
    the same weights, and holds the file's tensors unchanged."""
    _, path, digest = weights
    direct = cnn.MnistCNN()
    direct.load_state_dict(torch.load(path, weights_only=True))
    cnn.save_model(cnn.load_model_file(path, digest), tmp_path / "a.pt")
    cnn.save_model(direct, tmp_path / "b.pt")
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()
    state = torch.load(io.BytesIO((tmp_path / "a.pt").read_bytes()), weights_only=True)
    original = torch.load(path, weights_only=True)
    assert set(state) == set(original)
    assert all(torch.equal(state[k], original[k]) for k in state)


def _overlay(tmp_path, model: dict) -> str:
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump({"mlm": {"model": model}}))
    return str(path)


def test_dry_run_with_a_model_file_plans_no_training(weights, tmp_path):
    _, path, digest = weights
    overlay = _overlay(tmp_path, {"source": "file", "path": str(path), "sha256": digest})
    # --forceall: the whole plan, whatever results the checkout already holds
    default = planned_jobs(snakemake(REPO, "-n", "--forceall").stdout)
    proc = snakemake(REPO, "-n", "--forceall", "--configfile", overlay)
    jobs = planned_jobs(proc.stdout)
    assert "mlm_train" not in jobs
    assert jobs.get("mlm_model_file") == 1
    assert jobs["mlm_infer"] == default["mlm_infer"]
    assert jobs["mlm_paper"] == 1 and jobs["mlm_accuracy"] == 1
    assert sum(jobs.values()) == sum(default.values())


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ({"source": "file", "path": "x.pt"}, "sha256"),
        ({"source": "file", "path": "x.pt", "sha256": "xyz"}, "sha256"),
        ({"source": "download"}, "source"),
    ],
)
@pytest.mark.slow
def test_bad_model_config_fails_naming_the_key(tmp_path, model, expected):
    proc = snakemake(REPO, "-n", "--configfile", _overlay(tmp_path, model), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "invalid configuration" in out
    assert expected in out
    assert "Job stats" not in out


def test_paper_tables_run_on_the_not_trained_here_log(tmp_path):
    """Rules mlm_paper and mlm_accuracy read the training log: NaN accuracies pass through."""
    from mlm.test_paper import PAPER, _accuracy, _table1
    from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA
    from reliquant.mlm.reproduction.paper import paper_tables

    table1 = _table1([1e-14] * 5 + [1e-4] * 2 + [1e-14] * 3)
    log = cnn.external_training_log()
    tables = paper_tables(_accuracy(), log, table1, PAPER, "clean")
    comparisons, claims = tables.comparison, tables.claims
    ours = comparisons.set_index("quantity")["ours"]
    assert np.isnan(ours["CNN train accuracy (last epoch)"])
    assert np.isnan(ours["CNN test accuracy"])
    write_frame(comparisons, tmp_path / "c.parquet", COMPARISON_SCHEMA)
    write_frame(claims, tmp_path / "k.parquet", CLAIM_SCHEMA)


def test_accuracy_report_runs_on_the_not_trained_here_log():
    from mlm.test_paper import PAPER
    from reliquant.mlm.reproduction.accuracy import accuracy_report

    rng = np.random.default_rng(0)
    parts = []
    for name, levels in (("clean", [0]), ("brightness", range(1, 11)), ("fog", range(1, 11))):
        for level in levels:
            label = rng.integers(0, 10, 50)
            parts.append(
                pd.DataFrame(
                    {"label": label, "prediction": label, "corruption": name, "level": level}
                )
            )
    report = accuracy_report(
        pd.concat(parts, ignore_index=True), cnn.external_training_log(), PAPER, "clean"
    )
    assert report.comparison["ours"].isna().sum() == 2  # the two CNN accuracies


@pytest.mark.slow
def test_dry_run_with_a_missing_model_file_fails_naming_it(tmp_path):
    """No silent fallback to training when mlm.model.path does not exist."""
    missing = tmp_path / "nowhere.pt"
    overlay = _overlay(tmp_path, {"source": "file", "path": str(missing), "sha256": "a" * 64})
    proc = snakemake(REPO, "-n", "--configfile", overlay, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert str(missing) in out and "mlm.model.path" in out
    assert "Job stats" not in out


#: The direct computation, in a fresh process: the CPU kernels pinned and one torch thread,
#: as rule mlm_infer runs (scripts/mlm/mlm_infer.py), so the two must agree bit for bit.
_DIRECT = """
import sys
from reliquant.mlm.determinism import pin_cpu_kernels
pin_cpu_kernels()
import numpy as np, torch
from reliquant.core.io import arrow_to_images, read_table
from reliquant.mlm.cnn import load_model_file
from reliquant.mlm.inference import predict_softmax
torch.set_num_threads(1)
images_file, weights, digest, out = sys.argv[1:]
images = arrow_to_images(read_table(images_file, columns=["image"]).column("image"))
np.save(out, predict_softmax(load_model_file(weights, digest), images, device="cpu"))
"""


@pytest.mark.workflow
def test_workflow_scores_the_file_weights_and_never_trains(weights, tmp_path, monkeypatch):
    """A real run of rule mlm_model_file on tests/smoke.yaml up to the MNIST test set's softmax
    (the smallest targets that show it: the CNN file, its log and one inference job; the
    whole mlm target also needs a trained network for the centroids)."""
    _, path, digest = weights
    work = copy_repo(tmp_path / "w")
    monkeypatch.setenv("PYTHONPATH", str(work / "src"))
    (work / "mine").mkdir()
    shutil.copy2(path, work / "mine" / "cnn.pt")
    model = {"source": "file", "path": "mine/cnn.pt", "sha256": digest}
    (work / "model.yaml").write_text(yaml.safe_dump({"mlm": {"model": model}}))
    overlays = ("--configfile", "tests/smoke.yaml", "model.yaml")
    targets = ("results/mlm/softmax/test.parquet", "results/mlm/training_log.md")
    proc = snakemake(work, "--cores", "2", *targets, *overlays)
    out = proc.stdout + proc.stderr
    assert "rule mlm_model_file:" in out and "rule mlm_infer:" in out
    assert "rule mlm_train:" not in out
    assert not (work / "logs/mlm/train.log").exists()
    assert not (work / "benchmarks/mlm/train.tsv").exists()
    assert "Not trained here" in (work / "results/mlm/training_log.md").read_text()

    # the workflow's softmax equals predict_softmax of the user's file on the same images
    mnist_test = work / "results/data/mnist_test.parquet"
    direct_file = tmp_path / "direct.npy"
    subprocess.run(
        [sys.executable, "-c", _DIRECT, str(mnist_test), str(path), digest, str(direct_file)],
        check=True, env={**os.environ, "PYTHONPATH": str(work / "src")},
    )  # fmt: skip
    direct = np.load(direct_file)
    scored = read_frame(work / "results/mlm/softmax/test.parquet")
    assert len(scored) == len(direct) == 10_000
    np.testing.assert_array_equal(scored[P_COLUMNS].to_numpy(), direct)
    np.testing.assert_array_equal(scored["prediction"], direct.argmax(axis=1))
    labels = read_frame(mnist_test, columns=["label"])["label"]
    np.testing.assert_array_equal(scored["label"], labels)

    # a wrong digest stops a real run before any job, naming the key and the path
    (work / "bad.yaml").write_text(yaml.safe_dump({"mlm": {"model": dict(model, sha256="0" * 64)}}))
    proc = snakemake(work, "--cores", "2", "mlm", "--configfile", "tests/smoke.yaml", "bad.yaml",
                     check=False)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "mlm.model.sha256" in out and "mlm.model.path mine/cnn.pt" in out, out[-3000:]
    assert digest in out and "0" * 64 in out
    assert "Job stats" not in out and "rule " not in out
