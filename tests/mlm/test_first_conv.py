"""The compiled gradient of the CNN's first convolution against PyTorch's (oneDNN's):
weight and bias gradients bit for bit, the fallback, training."""

from __future__ import annotations

import json
import logging
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from reliquant.mlm import first_conv


def _bits(t: torch.Tensor) -> np.ndarray:
    """The float32 bit patterns (so that -0.0 differs from 0.0)."""
    return t.detach().contiguous().numpy().view(np.uint32)


def _conv(seed: int) -> nn.Conv2d:
    torch.manual_seed(seed)
    return nn.Conv2d(1, first_conv.CHANNELS, kernel_size=3, padding=1)


# Under the pinned kernels (as every workflow job runs; a fresh process, since pinning must
# precede the torch import): gradients of several shapes and scales, with exact zeros, -0.0
# and a zero image, compared bit for bit with convolution_backward; and two epochs of
# training with the kernel against PyTorch's own gradient. (A batch of one image is not
# among them: oneDNN sums its bias gradient in another order, so the check at its first
# backward pass sends it to PyTorch's gradient.)
PINNED_WORKER = r"""
import json
from reliquant.mlm.determinism import pin_cpu_kernels

pin_cpu_kernels()
import numpy as np
import torch
from torch import nn

from reliquant.mlm import cnn, first_conv

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)
bits = lambda t: t.detach().contiguous().numpy().view(np.uint32)
out = {"grads": []}
for n, h, w, scale in [(2, 28, 28, 1.0), (7, 28, 28, 1e3), (64, 28, 28, 1.0), (32, 28, 28, 1.0),
                       (3, 5, 9, 1e-3), (2, 1, 1, 1.0)]:
    gen = torch.Generator().manual_seed(n * 1000 + h)
    x = torch.randn(n, 1, h, w, generator=gen) * scale
    x[0] = 0.0
    dy = torch.randn(n, first_conv.CHANNELS, h, w, generator=gen)
    dy[-1, :, -1] = -0.0
    torch.manual_seed(n)
    conv = nn.Conv2d(1, first_conv.CHANNELS, 3, padding=1)
    want_w, want_b = first_conv._torch_grads(x, conv.weight.detach(), dy)
    got_w, got_b = first_conv._compiled_grads(x, dy)
    out["grads"].append(bool(np.array_equal(bits(got_w), bits(want_w))
                             and np.array_equal(bits(got_b), bits(want_b))))
rng = np.random.default_rng(0)
images = rng.integers(0, 256, size=(500, 28, 28), dtype=np.uint8)
images[:, :6] = 0
labels = rng.integers(0, 10, size=500).astype(np.uint8)
train = lambda: cnn.train_cnn(images, labels, epochs=2, batch_size=64, seed=3, threads=1,
                              progress=False).model.state_dict()
first_conv._CHECKED.clear()
weights = train()
out["checked"] = sorted([list(k), v] for k, v in first_conv._CHECKED.items())
cnn._first_conv = lambda conv, x: conv(x)
ref = train()
out["training_equal"] = all(np.array_equal(bits(weights[k]), bits(ref[k])) for k in weights)
print(json.dumps(out))
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="pinning: x86-64 only")
def test_pinned_gradients_and_training_are_pytorchs_bit_for_bit(tmp_path):
    """With the CPU kernels pinned, the kernel's weight and bias gradients equal PyTorch's in
    every bit for every shape, training uses the kernel (both batch sizes checked and kept)
    and its weights equal those of PyTorch's own gradient."""
    script = tmp_path / "worker.py"
    script.write_text(PINNED_WORKER)
    env = dict(os.environ, RELIQUANT_NO_PROGRESS="1")
    env.pop("RELIQUANT_CPU_CAPABILITY", None)
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["grads"] == [True] * 6
    assert out["checked"] == [[[52, 1, 28, 28, 1], True], [[64, 1, 28, 28, 1], True]]
    assert out["training_equal"]


def test_autograd_gives_the_values_and_gradients_of_conv2d():
    """Through autograd (the path training takes): the output is ``conv(x)``'s and the
    parameters' gradients are those of plain ``conv(x)``, at the first (checked) call and
    the later ones: the kernel's where it matched PyTorch's (pinned kernels), PyTorch's
    where it did not (this test process is not pinned)."""
    gen = torch.Generator().manual_seed(5)
    conv = _conv(1)
    first_conv._CHECKED.clear()
    for _ in range(3):
        x = torch.randn(16, 1, 28, 28, generator=gen)
        dy = torch.randn(16, first_conv.CHANNELS, 28, 28, generator=gen)
        grads = []
        for forward in (lambda t: first_conv.first_conv(conv, t), conv):
            conv.zero_grad(set_to_none=True)
            y = forward(x)
            y.backward(dy)
            grads.append((y, conv.weight.grad.clone(), conv.bias.grad.clone()))
        for got, want in zip(grads[0], grads[1], strict=True):
            assert np.array_equal(_bits(got), _bits(want))
    assert set(first_conv._CHECKED) == {(16, 1, 28, 28, torch.get_num_threads())}


def test_a_kernel_that_differs_falls_back_to_pytorch(monkeypatch, caplog):
    """If the kernel's gradient differed from PyTorch's on the first backward pass of a shape,
    the layer warns and keeps PyTorch's gradients (as for another oneDNN or CPU level)."""
    conv = _conv(2)
    first_conv._CHECKED.clear()
    real = first_conv._compiled_grads

    def off_by_one_ulp(x, dy):
        dw, db = real(x, dy)
        return torch.nextafter(dw, torch.full_like(dw, np.inf)), db

    monkeypatch.setattr(first_conv, "_compiled_grads", off_by_one_ulp)
    x = torch.randn(4, 1, 28, 28)
    dy = torch.randn(4, first_conv.CHANNELS, 28, 28)
    with caplog.at_level(logging.WARNING, logger="reliquant.mlm.first_conv"):
        for _ in range(2):
            conv.zero_grad(set_to_none=True)
            first_conv.first_conv(conv, x).backward(dy)
    assert "using PyTorch's" in caplog.text
    key = (4, 1, 28, 28, torch.get_num_threads())
    assert list(first_conv._CHECKED.items()) == [(key, False)]
    want_w, want_b = first_conv._torch_grads(x, conv.weight.detach(), dy)
    assert np.array_equal(_bits(conv.weight.grad), _bits(want_w))
    assert np.array_equal(_bits(conv.bias.grad), _bits(want_b))


def test_layers_and_inputs_it_does_not_handle_take_conv():
    """Other layers, inputs needing a gradient, float64, no gradient wanted: ``conv(x)``."""
    x = torch.randn(2, 1, 8, 8)
    assert first_conv.handles(_conv(0), x)
    assert not first_conv.handles(nn.Conv2d(1, 8, 3, padding=1), x)
    assert not first_conv.handles(nn.Conv2d(1, 16, 3, padding=0), x)
    assert not first_conv.handles(nn.Conv2d(1, 16, 3, padding=1, bias=False), x)
    assert not first_conv.handles(_conv(0), x.double())
    assert not first_conv.handles(_conv(0), x.clone().requires_grad_())
    conv = _conv(3)
    with torch.no_grad():
        assert torch.equal(first_conv.first_conv(conv, x), conv(x))
    xg = x.clone().requires_grad_()
    first_conv.first_conv(conv, xg).sum().backward()
    assert xg.grad is not None and xg.grad.shape == x.shape
    assert torch.equal(
        first_conv.first_conv(conv, x), F.conv2d(x, conv.weight, conv.bias, padding=1)
    )
