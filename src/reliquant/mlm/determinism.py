"""Bit-identical CNN training and inference across x86-64 CPUs: pin the CPU kernels.

PyTorch's CPU maths comes from three libraries that each pick their kernels by the CPU they
run on, and kernels of different vector widths sum floats in different orders:

- ATen (elementwise ops, reductions, log-softmax, NLL, the SGD update) dispatches by
  ``ATEN_CPU_CAPABILITY`` (``default``, ``avx2``, ``avx512``), read once when torch is imported;
  ``torch.backends.cpu.get_cpu_capability()`` reports the choice.
- oneDNN (the convolutions) JIT-compiles for the best ISA up to ``ONEDNN_MAX_CPU_ISA``.
- MKL (the fully connected layers, ``sgemm``) dispatches by ISA *and* by CPU vendor;
  ``MKL_CBWR`` (conditional numerical reproducibility) fixes its code branch. Only the
  ``COMPATIBLE`` branch gives the same bits on Intel and non-Intel CPUs (``AVX2`` falls back to
  the automatic branch on AMD), so that is the one pinned.

Training amplifies last-bit differences: the same seed gave test accuracy 98.42 % on an
AVX-512 machine and 98.41 % on an AVX2-only one. :func:`pin_cpu_kernels` sets the three
variables to a level every supported CPU has (:data:`DEFAULT_LEVEL`, ``avx2``), then imports
torch and checks that ATen took the setting. It must run before anything imports torch, so a
workflow script calls it first thing::

    from reliquant.mlm.determinism import pin_cpu_kernels

    pin_cpu_kernels()

The level can be overridden with the environment variable ``RELIQUANT_CPU_CAPABILITY``
(``avx2``, ``default``, ``avx512``, or ``native`` to pin nothing). A machine without AVX2 and
FMA falls back to ``default`` with a logged warning (bit-identical among such machines, not
with AVX2 ones). The pinned variables replace any values already in the environment.

Bit-identity also needs the same thread count (``mlm.threads``; ``train_cnn(threads=...)``),
the same torch/MKL/oneDNN build (``requirements.lock``) and deterministic algorithms (on
while :func:`reliquant.mlm.cnn.train_cnn` trains). CUDA runs are not affected by the pinning
and are not bit-identical to CPU runs.

This module does not import torch at import time.
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "MKL_BRANCH",
    "NATIVE",
    "OVERRIDE_ENV",
    "PINNED_VARIABLES",
    "REQUIRED_FLAGS",
    "KernelPin",
    "cpu_flags",
    "describe_cpu_kernels",
    "full_precision_cuda",
    "pin_cpu_kernels",
    "pinned_environment",
    "pinned_level",
    "resolve_level",
]

log = logging.getLogger("reliquant.mlm.determinism")

#: Environment variable that overrides the pinned level.
OVERRIDE_ENV = "RELIQUANT_CPU_CAPABILITY"
#: Level pinned unless overridden: every x86-64 CPU the project supports has AVX2 and FMA.
DEFAULT_LEVEL = "avx2"
#: Override value that pins nothing (each library uses the best kernels of the CPU).
NATIVE = "native"
#: MKL code branch (``MKL_CBWR``): the only one that is bit-identical across CPU vendors.
MKL_BRANCH = "COMPATIBLE"

#: Per level: ATen's ``ATEN_CPU_CAPABILITY``, oneDNN's ``ONEDNN_MAX_CPU_ISA``.
LEVELS: dict[str, tuple[str, str]] = {
    "default": ("default", "SSE41"),
    "avx2": ("avx2", "AVX2"),
    "avx512": ("avx512", "AVX512_CORE"),
}
#: ``/proc/cpuinfo`` flags a level needs (ATen's own test for its AVX2 / AVX512 kernels).
REQUIRED_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "avx2": ("avx2", "fma"),
    "avx512": ("avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"),
}
#: The variables :func:`pin_cpu_kernels` sets.
PINNED_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR")

_X86_64 = {"x86_64", "amd64"}


@dataclass(frozen=True)
class KernelPin:
    """What :func:`pin_cpu_kernels` did.

    ``level``: the pinned level (``None``: nothing pinned); ``env``: the variables it set;
    ``capability``: ``torch.backends.cpu.get_cpu_capability()`` after the import.
    """

    level: str | None
    env: dict[str, str]
    capability: str

    @property
    def pinned(self) -> bool:
        return self.level is not None


#: Set by a successful :func:`pin_cpu_kernels` in this process.
_pinned: KernelPin | None = None


def pinned_environment(level: str, mkl_branch: str = MKL_BRANCH) -> dict[str, str]:
    """The environment variables that pin ``level`` (a key of :data:`LEVELS`)."""
    if level not in LEVELS:
        raise ValueError(f"CPU level must be one of {sorted(LEVELS)}; got {level!r}")
    aten, onednn = LEVELS[level]
    return {"ATEN_CPU_CAPABILITY": aten, "ONEDNN_MAX_CPU_ISA": onednn, "MKL_CBWR": mkl_branch}


def cpu_flags(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> frozenset[str] | None:
    """The CPU's feature flags from ``/proc/cpuinfo`` (Linux), or ``None`` where unreadable."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None


def _native_capability() -> str:
    """ATen's capability on this CPU when nothing is requested (a torch import in a child)."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1].upper()


def _supported(level: str, flags: frozenset[str] | None) -> bool:
    """Whether this CPU runs ``level``'s kernels (``flags`` unknown: ask torch)."""
    if level == "default":
        return True
    if flags is None:
        native = _native_capability()
        return native == level.upper() or native == "AVX512"
    return all(f in flags for f in REQUIRED_FLAGS[level])


def resolve_level(
    requested: str | None = None, flags: frozenset[str] | None | bool = True
) -> str | None:
    """The level to pin: ``requested``, else ``$RELIQUANT_CPU_CAPABILITY``, else ``avx2``.

    Returns ``None`` for ``native`` (pin nothing). ``flags``: the CPU's flags (``True``: read
    them with :func:`cpu_flags`; ``None``: unknown, ask torch in a child process). A level the
    CPU lacks falls back to ``default`` with a warning where it is ``avx2``, and raises
    ``RuntimeError`` where it was asked for explicitly as ``avx512`` (its kernels would crash).
    """
    if requested is None:
        requested = os.environ.get(OVERRIDE_ENV) or DEFAULT_LEVEL
    level = requested.strip().lower()
    if level == NATIVE:
        return None
    if level not in LEVELS:
        raise ValueError(
            f"{OVERRIDE_ENV} must be one of {sorted(LEVELS) + [NATIVE]}; got {requested!r}"
        )
    if flags is True:
        flags = cpu_flags()
    if _supported(level, flags):
        return level
    if level == "avx512":
        raise RuntimeError(
            f"CPU level avx512 was requested ({OVERRIDE_ENV}) but this CPU lacks AVX-512"
        )
    log.warning(
        "this CPU lacks AVX2/FMA: pinning the CPU kernels to 'default' instead of %r; results "
        "are bit-identical only with other machines pinned to 'default'",
        level,
    )
    return "default"


def pin_cpu_kernels(level: str | None = None, mkl_branch: str = MKL_BRANCH) -> KernelPin:
    """Pin ATen's CPU capability, oneDNN's ISA and MKL's code branch, then import torch.

    Call it before anything imports torch. ``level``: ``avx2`` (default), ``default``,
    ``avx512`` or ``native``; ``None`` reads ``$RELIQUANT_CPU_CAPABILITY``. On a machine
    that is not x86-64, or with ``native``, nothing is pinned. Where torch is already imported,
    the process must already run with the pinned settings (set in its environment before it
    started, or by an earlier call), else ``RuntimeError``: ATen has read its capability and
    cannot switch. After the import, checks that ATen took the requested capability.
    """
    global _pinned
    arch = platform.machine().lower()
    if arch not in _X86_64:
        log.info("CPU kernels not pinned: %s is not x86-64", arch)
        return KernelPin(None, {}, _capability_after_import())
    chosen = resolve_level(level)
    if chosen is None:
        log.info("CPU kernels not pinned (%s=%s)", OVERRIDE_ENV, NATIVE)
        return KernelPin(None, {}, _capability_after_import())
    env = pinned_environment(chosen, mkl_branch)
    if "torch" in sys.modules:
        problems = _mismatches(chosen, env)
        if problems:
            raise RuntimeError(
                "pin_cpu_kernels() was called after torch was imported, and this process does "
                f"not run with the pinned CPU kernels ({'; '.join(problems)}). Call it before "
                "anything imports torch, or start the process with "
                + " ".join(f"{k}={v}" for k, v in env.items())
                + f" (or {OVERRIDE_ENV}={NATIVE} to pin nothing)."
            )
    else:
        for name, value in env.items():
            old = os.environ.get(name)
            if old is not None and old.lower() != value.lower():
                log.warning("replacing %s=%s by %s=%s (CPU kernel pinning)", name, old, name, value)
            os.environ[name] = value
    capability = _capability_after_import()
    if capability != LEVELS[chosen][0].upper():
        wanted = env["ATEN_CPU_CAPABILITY"]
        raise RuntimeError(f"ATen runs {capability} kernels although ATEN_CPU_CAPABILITY={wanted}")
    _pinned = KernelPin(chosen, env, capability)
    log.info("CPU kernels pinned: %s", describe_cpu_kernels())
    return _pinned


def _capability_after_import() -> str:
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def _mismatches(level: str, env: dict[str, str]) -> list[str]:
    """How the running process differs from ``env`` (torch imported)."""
    problems = []
    capability = _capability_after_import()
    if capability != LEVELS[level][0].upper():
        problems.append(f"ATen runs {capability} kernels, wanted {LEVELS[level][0].upper()}")
    for name in ("ONEDNN_MAX_CPU_ISA", "MKL_CBWR"):
        have = os.environ.get(name)
        if have is None or have.lower() != env[name].lower():
            problems.append(f"{name} is {have!r}, wanted {env[name]!r}")
    return problems


def pinned_level() -> str | None:
    """The level this process's CPU kernels are pinned to, or ``None``.

    Pinned by :func:`pin_cpu_kernels` in this process, or started with the variables of a level
    in its environment and ATen running that level's capability (imports torch).
    """
    if _pinned is not None:
        return _pinned.level
    for level in LEVELS:
        if not _mismatches(level, pinned_environment(level)):
            return level
    return None


def describe_cpu_kernels() -> str:
    """One line for a log: ATen's capability, oneDNN's ISA cap, MKL's branch, pinned or not."""
    level = pinned_level()
    state = f"pinned to {level}" if level else f"NOT pinned ({OVERRIDE_ENV}, see docs/mlm.md)"
    return (
        f"ATen {_capability_after_import()}, ONEDNN_MAX_CPU_ISA="
        f"{os.environ.get('ONEDNN_MAX_CPU_ISA', 'unset')}, MKL_CBWR="
        f"{os.environ.get('MKL_CBWR', 'unset')}: {state}"
    )


@contextmanager
def full_precision_cuda() -> Iterator[None]:
    """Run CUDA convolutions and matrix products in full float32 inside the block.

    PyTorch lets cuDNN convolutions use TF32 (10-bit mantissa products) by default. On the
    paper's CNN that moved softmax outputs by up to 6.8e-4 from the pinned CPU results on an
    H200 (bench/mlm_device.py), 1.7e-6 with TF32 off; a score that thresholds probabilities
    should not move with the GPU's arithmetic, so training and inference turn it off
    (``torch.backends.cudnn.allow_tf32`` and ``torch.backends.cuda.matmul.allow_tf32``) and
    restore the caller's settings afterwards. CPU work is unaffected; torch is imported here.
    """
    import torch

    old = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old
