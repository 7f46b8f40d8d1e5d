"""The compiled gradient of the CNN's first convolution against PyTorch's (oneDNN's):
weight and bias gradients bit for bit (also where every sum underflows to -0.0, which shows
whether the taps on the zero padding are added), the first-use check and its fallback,
training."""

from __future__ import annotations

import platform

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from reliquant.mlm import first_conv

from . import conv_kernel_checks as checks


def _conv(seed: int) -> nn.Conv2d:
    torch.manual_seed(seed)
    return nn.Conv2d(1, first_conv.CHANNELS, kernel_size=3, padding=1)


# Under the pinned kernels (as every workflow job runs; a fresh process, since pinning must
# precede the torch import): gradients of several shapes and scales, with exact zeros, -0.0
# and a zero image, and inputs whose products all underflow to -0.0 (oneDNN skips the taps
# on the zero padding, so every weight gradient stays -0.0; adding dy * 0 would make some
# +0.0), compared bit for bit with convolution_backward; the first-use check (a batch of one
# image, whose bias gradient oneDNN sums in another order, and images of 1 or 2 rows, for
# which oneDNN adds the padding taps, go to PyTorch's gradient); two epochs of training with
# the kernel against PyTorch's own gradient.
PINNED_WORKER = (
    checks.PINNED_PRELUDE
    + r"""
from reliquant.mlm import first_conv

out["grads"] = []
for case, (n, h, w, scale) in enumerate([
    (2, 28, 28, 1.0), (7, 28, 28, 1e3), (64, 28, 28, 1.0), (32, 28, 28, 1.0), (3, 5, 9, 1e-3),
    (2, 1, 1, 1.0), (64, 28, 28, 1.0), (32, 28, 28, 1.0), (3, 5, 9, 1.0), (2, 3, 1, 1.0),
]):
    gen = torch.Generator().manual_seed(n * 1000 + h)
    x = torch.randn(n, 1, h, w, generator=gen) * scale
    x[0] = 0.0
    dy = torch.randn(n, first_conv.CHANNELS, h, w, generator=gen)
    dy[-1, :, -1] = -0.0
    if case >= 6:  # every product underflows to -0.0; a padding tap would add +0.0
        x.fill_(-1e-30)
        dy.fill_(1e-30)
    torch.manual_seed(n)
    conv = nn.Conv2d(1, first_conv.CHANNELS, 3, padding=1)
    _, want_w, want_b = torch_grads(x, conv.weight.detach(), dy)
    got_w, got_b = first_conv._compiled_grads(x, dy)
    out["grads"].append(same(got_w, want_w) and same(got_b, want_b))
"""
    + checks.first_use_snippet("first_conv", "first_conv", 1, first_conv.CHANNELS, x_grad=False)
    + checks.training_snippet("first_conv", "_first_conv")
)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="pinning: x86-64 only")
@pytest.mark.slow
def test_pinned_gradients_and_training_are_pytorchs_bit_for_bit(tmp_path):
    """With the CPU kernels pinned, the kernel's weight and bias gradients equal PyTorch's in
    every bit for every case, underflowing ones included; the first-use check refuses a
    batch of one image and images of 1 and 2 rows, whose gradients stay PyTorch's; training
    uses the kernel (both batch sizes checked and kept) and its weights equal those of
    PyTorch's own gradient."""
    out = checks.run_pinned(tmp_path / "worker.py", PINNED_WORKER)
    assert out["grads"] == [True] * 10
    checks.check_first_use_and_training(out, 1)


def test_autograd_gives_the_values_and_gradients_of_conv2d():
    """Through autograd (the path training takes): the output is ``conv(x)``'s and the
    parameters' gradients are those of plain ``conv(x)``, at the first (checked) call and
    the later ones: the kernel's where it matched PyTorch's (pinned kernels), PyTorch's
    where it did not (this test process is not pinned)."""
    checks.check_autograd(
        first_conv.first_conv, first_conv, _conv(1), (16, 1, 28, 28), x_grad=False
    )


def test_a_kernel_that_differs_falls_back_to_pytorch(monkeypatch, caplog):
    """If the kernel's gradient differed from PyTorch's on the first backward pass of a shape,
    the layer warns and keeps PyTorch's gradients (as for another oneDNN or CPU level)."""
    x = torch.randn(4, 1, 28, 28)
    checks.check_fallback(first_conv.first_conv, first_conv, _conv(2), x, monkeypatch, caplog)


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
