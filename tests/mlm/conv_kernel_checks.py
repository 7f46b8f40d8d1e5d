"""What the tests of the compiled convolution gradients (``first_conv``, ``second_conv``)
share: bit patterns, the pinned worker process and its common parts, the autograd and
fallback checks against plain ``conv``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "PINNED_PRELUDE",
    "bits",
    "check_autograd",
    "check_fallback",
    "check_first_use_and_training",
    "first_use_snippet",
    "run_pinned",
    "training_snippet",
]


def bits(t: torch.Tensor) -> np.ndarray:
    """The float32 bit patterns (so that -0.0 differs from 0.0)."""
    return t.detach().contiguous().numpy().view(np.uint32)


#: A worker's start: CPU kernels pinned before torch is imported (as every workflow job
#: runs), one thread, deterministic algorithms, ``out`` (printed as JSON at the end),
#: ``bits`` and ``same``.
PINNED_PRELUDE = r"""
import json, sys
from reliquant.mlm.determinism import pin_cpu_kernels

pin_cpu_kernels()
import numpy as np
import torch
from torch import nn

from reliquant.mlm import cnn
from reliquant.mlm.checked_conv import input_grad, torch_grads

out = {}
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
bits = lambda t: t.detach().contiguous().numpy().view(np.uint32)
same = lambda a, b: bool(np.array_equal(bits(a), bits(b)))
"""


def first_use_snippet(module: str, layer: str, c_in: int, c_out: int, x_grad: bool) -> str:
    """Worker code: for shapes the first-use check must refuse (a batch of one image, images
    of 1 and 2 rows: the padding probe) and one it must accept, the layer ``module.layer``
    through autograd, three passes (layer, plain ``conv``, layer) on random data; records
    ``out["first_use"]`` (the check's results) and ``out["first_use_equal"]`` (every
    gradient of the layer equal to plain ``conv``'s, bit for bit)."""
    return rf"""
from reliquant.mlm import {module} as layer_module

conv = nn.Conv2d({c_in}, {c_out}, 3, padding=1)
layer_module._CHECK.results.clear()
out["first_use_equal"] = True
for n, h, w in [(1, 14, 14), (3, 2, 9), (3, 1, 1), (3, 9, 9)]:
    x = torch.randn(n, {c_in}, h, w).requires_grad_({x_grad})
    dy = torch.randn(n, {c_out}, h, w)
    got = []
    for forward in (lambda t: layer_module.{layer}(conv, t), conv,
                    lambda t: layer_module.{layer}(conv, t)):
        conv.zero_grad(set_to_none=True)
        x.grad = None
        forward(x).backward(dy)
        got.append([conv.weight.grad, conv.bias.grad] + ([x.grad] if {x_grad} else []))
    out["first_use_equal"] &= all(same(a, b) for g in got[::2] for a, b in zip(g, got[1]))
out["first_use"] = sorted([list(k), v] for k, v in layer_module._CHECK.results.items())
"""


def training_snippet(module: str, hook: str) -> str:
    """Worker code: two epochs of CNN training on 500 random images with the layer's kernel
    and with ``cnn.<hook>`` replaced by plain ``conv``; records ``out["checked"]`` (the
    kernel's first-use results) and ``out["training_equal"]`` (state_dicts bit for bit)."""
    return rf"""
from reliquant.mlm import {module} as trained_module

rng = np.random.default_rng(0)
images = rng.integers(0, 256, size=(500, 28, 28), dtype=np.uint8)
images[:, :6] = 0
labels = rng.integers(0, 10, size=500).astype(np.uint8)
train = lambda: cnn.train_cnn(images, labels, epochs=2, batch_size=64, seed=3, threads=1,
                              progress=False).model.state_dict()
trained_module._CHECK.results.clear()
weights = train()
out["checked"] = sorted([list(k), v] for k, v in trained_module._CHECK.results.items())
cnn.{hook} = lambda conv, x: conv(x)
ref = train()
out["training_equal"] = all(same(weights[k], ref[k]) for k in weights)
print(json.dumps(out))
"""


def run_pinned(script_path, script: str, env: dict[str, str] | None = None) -> dict:
    """Run the worker ``script`` (written to ``script_path``) in a fresh Python process (no
    progress bars, no CPU-capability override, ``env`` added); returns its JSON output."""
    script_path.write_text(script)
    full_env = dict(os.environ, RELIQUANT_NO_PROGRESS="1")
    full_env.pop("RELIQUANT_CPU_CAPABILITY", None)
    full_env.update(env or {})
    cmd = [sys.executable, str(script_path)]
    proc = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_first_use_and_training(out: dict, c_in: int) -> None:
    """The worker's first-use and training results (:func:`first_use_snippet`,
    :func:`training_snippet`): a batch of one image and images of 1 and 2 rows refused, 9x9
    images accepted, the layer's gradients plain ``conv``'s throughout; training checked and
    kept both batch sizes (64 and the last 52 of 500 images) and its weights equal those of
    PyTorch's own gradient."""
    side = 28 if c_in == 1 else 14
    assert out["first_use"] == [
        [[1, c_in, 14, 14, 1], False],
        [[3, c_in, 1, 1, 1], False],
        [[3, c_in, 2, 9, 1], False],
        [[3, c_in, 9, 9, 1], True],
    ]
    assert out["first_use_equal"]
    assert out["checked"] == [[[52, c_in, side, side, 1], True], [[64, c_in, side, side, 1], True]]
    assert out["training_equal"]


def check_autograd(
    layer: Callable[[nn.Conv2d, torch.Tensor], torch.Tensor],
    module: ModuleType,
    conv: nn.Conv2d,
    shape: tuple[int, int, int, int],
    x_grad: bool,
) -> None:
    """Three batches of ``shape`` through ``layer(conv, x)`` and plain ``conv(x)``: the output
    and the parameters' (and, with ``x_grad``, the input's) gradients equal in every bit, at
    the first (checked) call and the later ones; one key checked."""
    gen = torch.Generator().manual_seed(5)
    module._CHECK.results.clear()
    n, _, h, w = shape
    for _ in range(3):
        x = torch.randn(*shape, generator=gen).clamp_min(0.0).requires_grad_(x_grad)
        dy = torch.randn(n, conv.out_channels, h, w, generator=gen)
        grads = []
        for forward in (lambda t: layer(conv, t), conv):
            conv.zero_grad(set_to_none=True)
            x.grad = None
            y = forward(x)
            y.backward(dy)
            grads.append([y, conv.weight.grad.clone(), conv.bias.grad.clone()])
            grads[-1] += [x.grad.clone()] if x_grad else []
        for got, want in zip(grads[0], grads[1], strict=True):
            assert np.array_equal(bits(got), bits(want))
    assert set(module._CHECK.results) == {(*shape, torch.get_num_threads())}


def check_fallback(
    layer: Callable[[nn.Conv2d, torch.Tensor], torch.Tensor],
    module: ModuleType,
    conv: nn.Conv2d,
    x: torch.Tensor,
    monkeypatch,
    caplog,
) -> None:
    """A kernel one ulp off (weight and bias gradients in turn) on the first backward pass of
    a shape: the layer warns through ``module.log`` and keeps PyTorch's gradients, then and
    at the next pass."""
    real = module._CHECK.compiled
    dy = torch.randn(x.shape[0], conv.out_channels, *x.shape[2:])
    key = (*x.shape, torch.get_num_threads())
    for which in (0, 1):

        def off_by_one_ulp(x, dy, which=which):
            grads = list(real(x, dy))
            grads[which] = torch.nextafter(grads[which], torch.full_like(grads[which], np.inf))
            return tuple(grads)

        monkeypatch.setattr(module._CHECK, "compiled", off_by_one_ulp)
        module._CHECK.results.clear()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=module.log.name):
            for _ in range(2):
                conv.zero_grad(set_to_none=True)
                x.grad = None
                layer(conv, x).backward(dy)
        assert "using PyTorch's" in caplog.text
        assert list(module._CHECK.results.items()) == [(key, False)]
        params = (x, conv.weight, conv.bias) if x.requires_grad else (conv.weight, conv.bias)
        want = torch.autograd.grad(F.conv2d(x, conv.weight, conv.bias, padding=1), params, dy)
        for param, grad in zip(params, want, strict=True):
            assert np.array_equal(bits(param.grad), bits(grad))
