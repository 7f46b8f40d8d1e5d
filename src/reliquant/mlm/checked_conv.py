"""A 3x3 convolution (stride 1, padding 1) whose weight and bias gradients come from a
compiled kernel, checked bit for bit against PyTorch's (oneDNN's) at first use.

:mod:`reliquant.mlm.first_conv` and :mod:`reliquant.mlm.second_conv` compute the weight and
bias gradients of the CNN's two convolutions in numba kernels that add the same terms in
oneDNN's order. That the order is oneDNN's is checked, not assumed: a
:class:`GradientCheck` computes both at the first backward pass of each input shape and
torch thread count (oneDNN's order may change with either), compares them bit for bit
(:func:`same_bits`: ``-0.0`` differs from ``+0.0``, NaN payloads count), also on a probe of
that shape whose products all underflow to ``-0.0`` (only then does it show whether the taps
on the zero padding are added: oneDNN skips them, but adds them for images of fewer than 3
rows), and from then on uses the kernel's gradients where all were equal and PyTorch's,
with a warning, where not.
The input gradient and the forward pass stay PyTorch's (:func:`input_grad`, ``F.conv2d``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "PROBE",
    "GradientCheck",
    "checked_conv3x3",
    "handles_conv3x3",
    "input_grad",
    "same_bits",
    "torch_grads",
    "wants_parameter_grads",
]

#: The magnitude of the padding probe's inputs (:meth:`GradientCheck.grads`): their products
#: underflow to zero in float32.
PROBE = 1e-30

#: ``compiled(x, dy) -> (dW, db)``: a kernel's weight and bias gradients.
Compiled = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two float32 tensors have the same shape and the same bits everywhere."""
    return a.shape == b.shape and torch.equal(
        a.contiguous().view(torch.int32), b.contiguous().view(torch.int32)
    )


def torch_grads(
    x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor, want_x: bool = False
) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
    """PyTorch's gradients ``(dx or None, dW, db)`` of ``F.conv2d(x, weight, bias,
    padding=1)`` for the output gradient ``dy``: what autograd computes (one
    ``convolution_backward`` call)."""
    return torch.ops.aten.convolution_backward(
        dy, x, weight, [weight.shape[0]], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [want_x, True, True],
    )  # fmt: skip


def input_grad(x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """PyTorch's input gradient alone (``convolution_backward`` asked for it only; whether
    that gives the bits of the full call is part of :meth:`GradientCheck.grads`' check)."""
    dx, _, _ = torch.ops.aten.convolution_backward(
        dy, x, weight, [weight.shape[0]], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [True, False, False],
    )  # fmt: skip
    return dx


def handles_conv3x3(conv: nn.Conv2d, x: torch.Tensor, in_channels: int, out_channels: int) -> bool:
    """Whether ``conv(x)`` is a CPU float32 3x3 convolution of ``in_channels`` into
    ``out_channels`` channels, stride 1, padding 1, no dilation or groups, zero padding, with
    a bias, of a non-empty batch ``x`` ``(n, in_channels, H, W)``."""
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.dim() == 4
        and x.shape[1] == in_channels
        and x.shape[0] > 0
        and x.shape[2] > 0
        and x.shape[3] > 0
        and conv.in_channels == in_channels
        and conv.out_channels == out_channels
        and conv.kernel_size == (3, 3)
        and conv.stride == (1, 1)
        and conv.padding == (1, 1)
        and conv.dilation == (1, 1)
        and conv.groups == 1
        and conv.padding_mode == "zeros"
        and conv.bias is not None
        and conv.weight.dtype == torch.float32
        and conv.weight.device.type == "cpu"
    )


def wants_parameter_grads(conv: nn.Conv2d) -> bool:
    """Whether autograd records ``conv``: gradients enabled, its weight or bias wanting one."""
    return torch.is_grad_enabled() and (
        conv.weight.requires_grad or (conv.bias is not None and conv.bias.requires_grad)
    )


class GradientCheck:
    """The weight and bias gradients of one compiled kernel, checked once per input shape and
    thread count, then trusted.

    Parameters
    ----------
    what
        The layer, for the warning (``"first-convolution"``).
    compiled
        ``compiled(x, dy) -> (dW, db)``: the kernel's gradients (replaceable, as in tests).
    log
        The logger that warns where the kernel differs.

    Attributes
    ----------
    results : dict[tuple, bool]
        Per ``(*x.shape, torch.get_num_threads())``: whether the kernel gave PyTorch's
        gradients bit for bit at its first backward pass.
    """

    def __init__(self, what: str, compiled: Compiled, log: logging.Logger) -> None:
        self.what = what
        self.compiled = compiled
        self.log = log
        self.results: dict[tuple, bool] = {}

    def grads(
        self, x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor, want_x: bool
    ) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
        """``(dx or None, dW, db)`` of ``F.conv2d(x, weight, bias, padding=1)`` for ``dy``,
        bit for bit PyTorch's: the kernel's ``dW, db`` (and :func:`input_grad`) for a checked
        and equal key, PyTorch's (:func:`torch_grads`) otherwise. The first pass of a key
        computes both (the input gradient also asked for alone, as later passes ask for it),
        and both on a probe of the same shape whose products all underflow to ``-0.0``
        (whether the taps on the zero padding are skipped as oneDNN does), and records
        whether every bit agreed."""
        # oneDNN's order may change with the shape and the thread count: checked per pair
        key = (*x.shape, torch.get_num_threads())
        ok = self.results.get(key)
        if ok:
            # the kernel first, while the output gradient is still in the cache
            dw, db = self.compiled(x, dy)
            return (input_grad(x, weight, dy) if want_x else None), dw, db
        dx, dw, db = torch_grads(x, weight, dy, want_x)
        if ok is None:
            got_w, got_b = self.compiled(x, dy)
            self.results[key] = (
                same_bits(got_w, dw)
                and same_bits(got_b, db)
                and (not want_x or same_bits(input_grad(x, weight, dy), dx))
                and self._same_on_padding_probe(x, weight, dy)
            )
            if not self.results[key]:
                self.log.warning(
                    "the compiled %s gradient differs from PyTorch's for input shape and "
                    "threads %s; using PyTorch's",
                    self.what,
                    key,
                )
        return dx, dw, db

    def _same_on_padding_probe(
        self, x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor
    ) -> bool:
        """Whether the kernel treats the zero padding as oneDNN does for this shape: with
        ``x = -1e-30`` and ``dy = 1e-30`` every product underflows to ``-0.0``, so each weight
        gradient is ``-0.0`` where only taps inside the image are added and ``+0.0`` where a
        tap on the padding (``dy * 0``) or none at all is (real data rarely shows that)."""
        probe_x = torch.full_like(x, -PROBE)
        probe_dy = torch.full_like(dy, PROBE)
        _, want_w, want_b = torch_grads(probe_x, weight, probe_dy)
        got_w, got_b = self.compiled(probe_x, probe_dy)
        return same_bits(got_w, want_w) and same_bits(got_b, want_b)


class _CheckedConv3x3(torch.autograd.Function):
    """``F.conv2d(x, weight, bias, padding=1)``; gradients from a :class:`GradientCheck`."""

    @staticmethod
    def forward(ctx, x, weight, bias, check):  # noqa: D102
        ctx.save_for_backward(x, weight)
        ctx.check = check
        return F.conv2d(x, weight, bias, padding=1)

    @staticmethod
    def backward(ctx, dy):  # noqa: D102
        x, weight = ctx.saved_tensors
        dx, dw, db = ctx.check.grads(x, weight, dy, ctx.needs_input_grad[0])
        return dx, dw, db, None


def checked_conv3x3(conv: nn.Conv2d, x: torch.Tensor, check: GradientCheck) -> torch.Tensor:
    """``conv(x)`` (``F.conv2d`` with padding 1: the same values) whose gradients come from
    ``check.grads`` in the backward pass. The caller has made sure that
    :func:`handles_conv3x3` holds for the kernel behind ``check``."""
    return _CheckedConv3x3.apply(x, conv.weight, conv.bias, check)
