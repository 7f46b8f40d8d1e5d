"""The compiled weight and bias gradients of the CNN's second convolution against PyTorch's
(oneDNN's): bit for bit, the input gradient, the fallback, training."""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch
from torch import nn

from reliquant.mlm import second_conv

from . import conv_kernel_checks as checks

C_IN, C_OUT = second_conv.IN_CHANNELS, second_conv.OUT_CHANNELS


@pytest.fixture(autouse=True)
def _one_thread():
    """The kernel serves one-thread training (as the workflow's ``mlm.threads: 1``)."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _conv(seed: int) -> nn.Conv2d:
    torch.manual_seed(seed)
    return nn.Conv2d(C_IN, C_OUT, kernel_size=3, padding=1)


# Under the pinned kernels (as every workflow job runs; a fresh process, since pinning must
# precede the torch import): weight and bias gradients of several shapes and inputs (ReLU-like
# exact zeros, negative values, -0.0, a zero image, a zero output gradient, products that
# underflow to -0.0 so that each sum's sign shows whether a padding tap was added) compared
# bit for bit with convolution_backward, and the input gradient asked for alone with the one
# of the full call; the first-use check (a batch of one image, whose sums oneDNN orders
# otherwise, and images of 1 or 2 rows, for which oneDNN adds the padding taps, go to
# PyTorch's gradients); two epochs of training with the kernel against PyTorch's own
# gradient. Run natively (AVX-512 here) and compiled for an AVX2-only CPU.
PINNED_WORKER = (
    checks.PINNED_PRELUDE
    + r"""
with torch.no_grad():  # inference does not load the kernel
    cnn.build_cnn()(torch.zeros(2, 1, 28, 28))
out["inference_loads_it"] = "reliquant.mlm.second_conv" in sys.modules
from reliquant.mlm import second_conv as sc

out["tile"] = [sc._LANES, sc._OUTPUTS]
out["grads"], out["values"] = [], 0
for case, (n, h, w) in enumerate([(64, 14, 14), (32, 14, 14), (7, 14, 14), (3, 5, 9),
                                  (2, 14, 14), (2, 7, 3), (4, 14, 14)]):
    gen = torch.Generator().manual_seed(case)
    x = torch.randn(n, 16, h, w, generator=gen) * (1e3 if case == 2 else 1.0)
    dy = torch.randn(n, 32, h, w, generator=gen)
    if case in (0, 2):  # ReLU-like inputs: exact zeros
        x = x.clamp_min(0.0)
    x[0] = 0.0
    dy[-1, :, -1] = -0.0
    if case in (4, 5):  # every product underflows to -0.0; a padding tap would add +0.0
        x.fill_(-1e-30)
        dy.fill_(1e-30)
    if case == 6:
        dy.zero_()
    torch.manual_seed(n)
    weight = nn.Conv2d(16, 32, 3, padding=1).weight.detach()
    want_x, want_w, want_b = torch_grads(x, weight, dy, True)
    got_w, got_b = sc._compiled_grads(x, dy)
    got_x = input_grad(x, weight, dy)
    out["grads"].append(same(got_w, want_w) and same(got_b, want_b) and same(got_x, want_x))
    out["values"] += want_w.numel() + want_b.numel() + want_x.numel()
"""
    + checks.first_use_snippet("second_conv", "second_conv", 16, 32, x_grad=True)
    + checks.training_snippet("second_conv", "_second_conv")
)

#: numba compiling for an AVX2-only CPU (16 vector registers: the 8-lane tile).
AVX2 = {
    "NUMBA_CPU_NAME": "haswell",
    "NUMBA_CPU_FEATURES": "+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+f16c,+fma,+fxsr,+lzcnt,"
    "+mmx,+movbe,+popcnt,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave",
}


def _avx512() -> bool:
    from llvmlite import binding

    return "+avx512f" in binding.get_host_cpu_features().flatten().split(",")


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="pinning: x86-64 only")
@pytest.mark.parametrize("target", ["native", "avx2"])
@pytest.mark.slow
def test_pinned_gradients_and_training_are_pytorchs_bit_for_bit(tmp_path, target):
    """With the CPU kernels pinned, the kernel's weight and bias gradients and the input
    gradient asked for alone equal PyTorch's full backward call in every bit for every
    case; the first-use check refuses a batch of one image and images of 1 and 2 rows,
    whose gradients stay PyTorch's; training uses the kernel (both batch sizes checked and
    kept) and its weights equal those of PyTorch's own gradient; inference does not import
    the module. Also for the AVX2 build (in its own numba cache)."""
    env = dict(AVX2, NUMBA_CACHE_DIR=str(tmp_path / "numba")) if target == "avx2" else {}
    out = checks.run_pinned(tmp_path / "worker.py", PINNED_WORKER, env)
    assert out["tile"] == ([16, 2] if target == "native" and _avx512() else [8, 1])
    assert not out["inference_loads_it"]
    assert out["grads"] == [True] * 7
    assert out["values"] == 7 * (4608 + 32) + 16 * (109 * 196 + 3 * 45 + 2 * 21)
    checks.check_first_use_and_training(out, C_IN)


def test_autograd_gives_the_values_and_gradients_of_conv2d():
    """Through autograd (the path training takes): the output is ``conv(x)``'s and the
    parameters' and input's gradients are those of plain ``conv(x)``, at the first (checked)
    call and the later ones: the kernel's where it matched PyTorch's (pinned kernels),
    PyTorch's where it did not (this test process is not pinned)."""
    checks.check_autograd(
        second_conv.second_conv, second_conv, _conv(1), (8, C_IN, 14, 14), x_grad=True
    )


def test_the_input_needs_no_gradient():
    """An input that needs no gradient gets none; the parameters get conv's gradients."""
    conv = _conv(4)
    x = torch.randn(3, C_IN, 6, 6)
    dy = torch.randn(3, C_OUT, 6, 6)
    second_conv._CHECK.results.clear()
    grads = []
    for forward in (lambda t: second_conv.second_conv(conv, t), conv):
        conv.zero_grad(set_to_none=True)
        forward(x).backward(dy)
        grads.append((conv.weight.grad.clone(), conv.bias.grad.clone()))
    assert x.grad is None
    for got, want in zip(grads[0], grads[1], strict=True):
        assert np.array_equal(checks.bits(got), checks.bits(want))


def test_a_kernel_that_differs_falls_back_to_pytorch(monkeypatch, caplog):
    """If the kernel's gradient differed from PyTorch's on the first backward pass of a shape,
    the layer warns and keeps PyTorch's gradients (as for another oneDNN or CPU level)."""
    x = torch.randn(4, C_IN, 14, 14).requires_grad_()
    checks.check_fallback(second_conv.second_conv, second_conv, _conv(2), x, monkeypatch, caplog)


def test_layers_and_inputs_it_does_not_handle_take_conv():
    """Other layers, float64, no gradient wanted, more than one thread: ``conv(x)``."""
    x = torch.randn(2, C_IN, 8, 8)
    assert second_conv.handles(_conv(0), x)
    assert not second_conv.handles(nn.Conv2d(C_IN, 8, 3, padding=1), x)
    assert not second_conv.handles(nn.Conv2d(8, C_OUT, 3, padding=1), x[:, :8])
    assert not second_conv.handles(nn.Conv2d(C_IN, C_OUT, 3, padding=0), x)
    assert not second_conv.handles(nn.Conv2d(C_IN, C_OUT, 3, padding=1, stride=2), x)
    assert not second_conv.handles(nn.Conv2d(C_IN, C_OUT, 3, padding=1, bias=False), x)
    assert not second_conv.handles(_conv(0), x.double())
    assert not second_conv.handles(_conv(0), x[:0])
    conv = _conv(3)
    with torch.no_grad():
        assert torch.equal(second_conv.second_conv(conv, x), conv(x))
    conv.requires_grad_(False)
    assert second_conv.second_conv(conv, x).grad_fn is None
    conv.requires_grad_(True)
    assert type(second_conv.second_conv(conv, x).grad_fn).__name__ == "_CheckedConv3x3Backward"
    torch.set_num_threads(2)
    assert type(second_conv.second_conv(conv, x).grad_fn).__name__ == "ConvolutionBackward0"
