"""The gradient of the CNN's first convolution (one input channel, 3x3, padding 1) on the CPU,
compiled, with the values oneDNN gives.

In a training step of :class:`reliquant.mlm.cnn.MnistCNN` the weight gradient of ``conv1``
took about 28 % of the time (3.4 of 12 ms on the 2-core development machine): oneDNN's
kernel is built for many input channels, and this layer has one. The gradient of weight
``(c, kh, kw)`` and of bias ``c`` are sums over the batch's output positions, which the pinned
oneDNN kernel (:mod:`reliquant.mlm.determinism`) accumulates one position at a time, images
in order, then rows, then columns, from zero:

    dW[c, kh, kw] = fma(dy[n, c, h, w], x[n, h + kh - 1, w + kw - 1], dW[c, kh, kw])
    db[c]         = db[c] + dy[n, c, h, w]

(each a fused multiply-add, a single rounding; taps on the zero padding add ``dy * 0``, which
changes no sum that starts at +0). :func:`weight_grad` computes exactly that in a numba kernel
(LLVM's vector ``fma`` intrinsic: FMA instructions on every CPU the project pins to), the 16
channels of a position in one vector, so the values are bit-identical.

That this is oneDNN's order is checked, not assumed: the first backward pass of each input
shape (and thread count) computes both and compares them bit for bit; where they differ (another oneDNN build or
CPU level) the layer keeps PyTorch's gradient, with a warning. The forward pass is
``F.conv2d`` itself. ``tests/mlm/test_first_conv.py`` compares gradients with PyTorch's on
random and edge-case inputs, and the training tests compare trained weights.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from torch import nn
from torch.nn import functional as F

__all__ = ["CHANNELS", "first_conv", "handles", "weight_grad"]

log = logging.getLogger("reliquant.mlm.first_conv")

#: Output channels the kernel handles (those of ``MnistCNN.conv1``): the width of its
#: vector fused multiply-add (:func:`_fma16`).
CHANNELS = 16


@intrinsic
def _fma16(typingctx, dst, dst_off, src, src_off, v):
    """``dst[dst_off + k] = fma(src[src_off + k], v, dst[dst_off + k])`` for ``k < 16`` (flat
    float32 arrays, ``v`` float32): sixteen fused multiply-adds (one rounding each) as one
    LLVM vector ``llvm.fma.v16f32``, whatever the vector width of the CPU (numba does not
    vectorise a scalar ``fma`` loop itself)."""
    sig = types.void(dst, dst_off, src, src_off, types.float32)

    def codegen(context, builder, signature, args):
        d = context.make_array(signature.args[0])(context, builder, args[0])
        s = context.make_array(signature.args[2])(context, builder, args[2])
        f32 = ir.FloatType()
        vec = ir.VectorType(f32, CHANNELS)
        pd = builder.bitcast(builder.gep(d.data, [args[1]]), vec.as_pointer())
        ps = builder.bitcast(builder.gep(s.data, [args[3]]), vec.as_pointer())
        lane0 = builder.insert_element(
            ir.Constant(vec, ir.Undefined), args[4], ir.Constant(ir.IntType(32), 0)
        )
        splat = builder.shuffle_vector(
            lane0,
            ir.Constant(vec, ir.Undefined),
            ir.Constant(ir.VectorType(ir.IntType(32), CHANNELS), [0] * CHANNELS),
        )
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec] * 3), f"llvm.fma.v{CHANNELS}f32"
        )
        acc = builder.load(pd, align=4)
        builder.store(builder.call(fma, [builder.load(ps, align=4), splat, acc]), pd, align=4)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def weight_grad(xp: np.ndarray, dy: np.ndarray, acc: np.ndarray) -> None:  # pragma: no cover
    """Add to ``acc`` ``(10 C,)`` float32 the weight gradients (taps ``t = kh * 3 + kw`` at
    ``acc[t C : (t + 1) C]``) and the bias gradient (``acc[9 C:]``) of a 3x3 convolution of
    the zero-padded one-channel images ``xp`` ``(n, H + 2, W + 2)`` for the output gradient
    ``dy`` ``(n, H W C)`` (channels-last), in oneDNN's order (module docstring): each
    ``(tap, channel)`` sum runs over the positions in order (image, row, column), one FMA per
    position; the bias adds ``fma(dy, 1, .)``, which is ``dy + .`` rounded once. Sums are
    independent of one another, so an image's positions are visited once per kernel row,
    the 16 channels of a position in one vector."""
    n_img, hp, wp = xp.shape
    height, width = hp - 2, wp - 2
    one = np.float32(1.0)
    for i in range(n_img):
        img = xp[i]
        g = dy[i]
        for kh in range(3):
            base = 3 * kh * CHANNELS
            for h in range(height):
                row = img[h + kh]
                for j in range(width):
                    off = (h * width + j) * CHANNELS
                    _fma16(acc, base, g, off, row[j])
                    _fma16(acc, base + CHANNELS, g, off, row[j + 1])
                    _fma16(acc, base + 2 * CHANNELS, g, off, row[j + 2])
        for p in range(height * width):
            _fma16(acc, 9 * CHANNELS, g, p * CHANNELS, one)


def handles(conv: nn.Conv2d, x: torch.Tensor) -> bool:
    """Whether :func:`first_conv` may compute ``conv(x)``'s weight gradient in the kernel:
    a CPU float32 3x3 convolution of one-channel images into :data:`CHANNELS` channels,
    stride 1, padding 1, no dilation or groups, zero padding, with a bias, its input needing
    no gradient."""
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.dim() == 4
        and x.shape[1] == 1
        and x.shape[0] > 0
        and not x.requires_grad
        and conv.in_channels == 1
        and conv.out_channels == CHANNELS
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


def _compiled_grads(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dW (C, 1, 3, 3), db (C,))`` from :func:`weight_grad`."""
    n, _, height, width = x.shape
    xp = np.zeros((n, height + 2, width + 2), dtype=np.float32)
    xp[:, 1:-1, 1:-1] = x.detach().reshape(n, height, width).numpy()
    # channels-last: a position's C values side by side (ATen's vectorised transpose)
    nhwc = dy.detach().permute(0, 2, 3, 1).contiguous().reshape(n, -1).numpy()
    acc = np.zeros(10 * CHANNELS, dtype=np.float32)
    weight_grad(xp, nhwc, acc)
    dw = np.ascontiguousarray(acc[: 9 * CHANNELS].reshape(9, CHANNELS).T).reshape(CHANNELS, 1, 3, 3)
    return torch.from_numpy(dw), torch.from_numpy(acc[9 * CHANNELS :].copy())


def _torch_grads(
    x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """PyTorch's weight and bias gradients (what autograd computes for ``F.conv2d``)."""
    _, dw, db = torch.ops.aten.convolution_backward(
        dy, x, weight, [weight.shape[0]], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [False, True, True],
    )  # fmt: skip
    return dw, db


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(
        a.contiguous().view(torch.int32), b.contiguous().view(torch.int32)
    )


#: Per input shape and thread count: whether the kernel gave PyTorch's gradients bit for bit
#: (checked once).
_CHECKED: dict[tuple, bool] = {}


class _FirstConv(torch.autograd.Function):
    """``F.conv2d`` forward; weight and bias gradients from :func:`weight_grad`."""

    @staticmethod
    def forward(ctx, x, weight, bias):  # noqa: D102
        ctx.save_for_backward(x, weight)
        return F.conv2d(x, weight, bias, padding=1)

    @staticmethod
    def backward(ctx, dy):  # noqa: D102
        x, weight = ctx.saved_tensors
        # oneDNN's order may change with the shape and the thread count: checked per pair
        key = (*x.shape, torch.get_num_threads())
        ok = _CHECKED.get(key)
        if ok:
            dw, db = _compiled_grads(x, dy)
        elif ok is False:
            dw, db = _torch_grads(x, weight, dy)
        else:
            dw, db = _torch_grads(x, weight, dy)
            got_w, got_b = _compiled_grads(x, dy)
            _CHECKED[key] = _same_bits(got_w, dw) and _same_bits(got_b, db)
            if not _CHECKED[key]:
                log.warning(
                    "the compiled first-convolution gradient differs from PyTorch's for input "
                    "shape and threads %s; using PyTorch's",
                    key,
                )
        return None, dw, db


def first_conv(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)``, whose weight and bias gradients come from :func:`weight_grad` where
    :func:`handles` allows and a gradient is wanted; the values and the gradients are
    PyTorch's, bit for bit (module docstring)."""
    if (
        torch.is_grad_enabled()
        and (conv.weight.requires_grad or conv.bias.requires_grad)
        and handles(conv, x)
    ):
        return _FirstConv.apply(x, conv.weight, conv.bias)
    return conv(x)
