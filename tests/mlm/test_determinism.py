"""Tests of reliquant.mlm.determinism: CPU kernel pinning makes CNN training bit-identical
whatever CPU capability the environment asks for (a stand-in for AVX2 vs AVX-512 machines)."""

from __future__ import annotations

import json
import logging
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from reliquant.mlm import determinism as det

REPO = Path(__file__).resolve().parents[2]
X86_64 = platform.machine().lower() in {"x86_64", "amd64"}
AVX2 = frozenset({"avx2", "fma", "sse4_1"})
AVX512 = AVX2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq"}


@pytest.fixture
def clean_env(monkeypatch):
    """No pinning variables and no override in the environment."""
    for name in (*det.PINNED_VARIABLES, det.OVERRIDE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(det, "_pinned", None)
    return monkeypatch


def test_pinned_environment_per_level():
    assert det.pinned_environment("avx2") == {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_CBWR": "COMPATIBLE",
    }
    assert det.pinned_environment("default")["ATEN_CPU_CAPABILITY"] == "default"
    assert det.pinned_environment("avx512", "AVX2")["MKL_CBWR"] == "AVX2"
    with pytest.raises(ValueError, match="one of"):
        det.pinned_environment("sse2")


def test_resolve_level_default_override_and_fallback(clean_env, caplog):
    assert det.DEFAULT_LEVEL == "avx2"
    assert det.resolve_level(flags=AVX512) == "avx2"
    assert det.resolve_level("AVX512", flags=AVX512) == "avx512"
    clean_env.setenv(det.OVERRIDE_ENV, "default")
    assert det.resolve_level(flags=AVX512) == "default"
    clean_env.setenv(det.OVERRIDE_ENV, "native")
    assert det.resolve_level(flags=AVX512) is None
    clean_env.setenv(det.OVERRIDE_ENV, "sse9")
    with pytest.raises(ValueError, match=det.OVERRIDE_ENV):
        det.resolve_level(flags=AVX512)
    clean_env.delenv(det.OVERRIDE_ENV)
    # a CPU without AVX2 falls back to "default" with a warning; avx512 asked for explicitly
    # on a CPU without it is an error (its kernels would crash)
    with caplog.at_level(logging.WARNING, logger="reliquant.mlm.determinism"):
        assert det.resolve_level(flags=frozenset({"sse4_1", "avx"})) == "default"
    assert "lacks AVX2" in caplog.text
    with pytest.raises(RuntimeError, match="AVX-512"):
        det.resolve_level("avx512", flags=AVX2)


def test_cpu_flags_reads_proc_cpuinfo_format(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: X\nflags\t\t: fpu sse2 avx2 fma\n\n")
    assert det.cpu_flags(info) == {"fpu", "sse2", "avx2", "fma"}
    assert det.cpu_flags(tmp_path / "missing") is None


@pytest.mark.skipif(not X86_64, reason="pinning applies to x86-64 only")
def test_pinning_after_an_unpinned_torch_import_raises(clean_env):
    import torch  # noqa: F401  (ATen has read its capability: too late to pin)

    with pytest.raises(RuntimeError, match="before anything imports torch"):
        det.pin_cpu_kernels()
    assert det.pinned_level() is None
    assert "NOT pinned" in det.describe_cpu_kernels()
    # "native" pins nothing, so it is accepted whatever torch runs
    assert not det.pin_cpu_kernels("native").pinned


# One training run in a fresh process: pin (or not), then import torch, train the project's CNN
# for 256 SGD steps (2,000 synthetic 28x28 images, batch 64, 8 epochs, 1 thread), score 512
# held-out images, and print the kernels used and the hashes of the weights and the scores.
WORKER = r"""
import hashlib, json, os, sys

if sys.argv[1] == "pinned":
    from reliquant.mlm.determinism import pin_cpu_kernels

    pin_cpu_kernels()

import numpy as np
import torch

from reliquant.mlm import cnn
from reliquant.mlm.determinism import describe_cpu_kernels
from reliquant.mlm.inference import predict_softmax

rng = np.random.default_rng(2024)
templates = np.kron(rng.random((10, 7, 7)) > 0.5, np.ones((4, 4))) * 180.0
labels = rng.permutation(np.arange(2512) % 10)
noise = rng.normal(30.0, 45.0, (2512, 28, 28))
images = np.clip(templates[labels] + noise, 0, 255).astype(np.uint8)
result = cnn.train_cnn(
    images[:2000], labels[:2000], epochs=8, lr=0.05, batch_size=64, seed=7, threads=1,
    progress=False,
)
weights = hashlib.sha256()
for name, tensor in result.model.state_dict().items():
    weights.update(name.encode())
    weights.update(tensor.numpy().tobytes())
probs = predict_softmax(result.model, images[2000:], batch_size=128, device="cpu")
probs_299 = predict_softmax(result.model, images[2000:], batch_size=299, device="cpu")
print(json.dumps({
    "capability": str(torch.backends.cpu.get_cpu_capability()),
    "env": {k: os.environ.get(k) for k in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR")},
    "kernels": describe_cpu_kernels(),
    "weights": weights.hexdigest(),
    "scores": hashlib.sha256(probs.tobytes()).hexdigest(),
    "batch_invariant": bool(np.array_equal(probs, probs_299)),
    "loss": float(result.log["loss"].iloc[-1]),
    "accuracy": float((probs.argmax(1) == labels[2000:]).mean()),
}))
"""

#: What a machine of each kind sets, as far as one process can pretend: ATen's capability,
#: oneDNN's ISA cap and MKL's instruction cap (MKL ignores the last on non-Intel CPUs).
MACHINES = {
    "default": {
        "ATEN_CPU_CAPABILITY": "default",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
        "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
    },
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    },
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512"},
}


def _run_worker(script: Path, mode: str, machine: dict[str, str]) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in (*det.PINNED_VARIABLES, det.OVERRIDE_ENV, "MKL_ENABLE_INSTRUCTIONS")
    }
    env.update(machine, RELIQUANT_NO_PROGRESS="1")
    out = subprocess.run(
        [sys.executable, str(script), mode],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not X86_64, reason="pinning applies to x86-64 only")
def test_pinned_training_is_bit_identical_whatever_capability_is_asked_for(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    native = det._native_capability()  # ATen's own choice for this CPU, nothing requested
    if native not in ("AVX2", "AVX512"):
        pytest.skip(f"ATen runs {native} kernels here: nothing to compare")
    kinds = ["default", "avx2"] + (["avx512"] if native == "AVX512" else [])
    level = det.resolve_level(det.DEFAULT_LEVEL)  # the workers see no override
    want_env = det.pinned_environment(level)

    pinned = {kind: _run_worker(script, "pinned", MACHINES[kind]) for kind in kinds}
    unpinned = {kind: _run_worker(script, "unpinned", MACHINES[kind]) for kind in kinds}
    for kind in kinds:
        p, u = pinned[kind], unpinned[kind]
        print(
            f"asked {kind:8s} pinned: {p['capability']:7s} {p['weights'][:12]} "
            f"{p['scores'][:12]} acc {p['accuracy']:.3f} | unpinned: {u['capability']:7s} "
            f"{u['weights'][:12]} {u['scores'][:12]} acc {u['accuracy']:.3f}"
        )

    # the environment really asked for different kernels: unpinned runs took them
    for kind in kinds:
        assert unpinned[kind]["capability"] == kind.upper()
    # the pinning took effect in every pinned process, whatever was asked for
    for kind, run in pinned.items():
        assert run["capability"] == want_env["ATEN_CPU_CAPABILITY"].upper(), kind
        assert run["env"] == want_env, kind
        assert f"pinned to {level}" in run["kernels"], kind
        assert run["batch_invariant"], kind  # scores do not depend on the inference batch size
    # and the pinned runs are bit-identical: weights after 256 SGD steps and their scores
    assert len({run["weights"] for run in pinned.values()}) == 1
    assert len({run["scores"] for run in pinned.values()}) == 1
    assert all(run["accuracy"] > 0.5 for run in pinned.values())  # it did learn
    # without the pinning the same seed gives different weights (else the test would prove
    # nothing): at least ATen's default kernels round differently from its AVX2 ones
    assert len({run["weights"] for run in unpinned.values()}) > 1


def test_full_precision_cuda_turns_tf32_off_and_restores_the_callers_settings():
    import torch

    before = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = True, True
    try:
        with pytest.raises(RuntimeError, match="inside"), det.full_precision_cuda():
            assert not torch.backends.cudnn.allow_tf32
            assert not torch.backends.cuda.matmul.allow_tf32
            raise RuntimeError("inside")
        assert torch.backends.cudnn.allow_tf32 and torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before
