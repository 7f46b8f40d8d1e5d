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

(each a fused multiply-add, a single rounding), for the taps inside the image only: oneDNN
skips the taps on the zero padding (adding ``dy * 0 = +0.0`` would turn a sum that underflowed
to ``-0.0`` into ``+0.0``). :func:`weight_grad` computes exactly that in a numba kernel
(LLVM's vector ``fma`` intrinsic: FMA instructions on every CPU the project pins to), the 16
channels of a position in one vector, so the values are bit-identical.

That this is oneDNN's order is checked, not assumed: the first backward pass of each input
shape (and thread count) computes both and compares them bit for bit; where they differ
(another oneDNN build or CPU level, a batch of one image), or where they differ on a probe
whose products all underflow to ``-0.0`` (images of fewer than 3 rows, for which oneDNN adds
the padding taps), the layer keeps PyTorch's gradient, with a warning
(:mod:`reliquant.mlm.checked_conv`). The forward pass is
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

from reliquant.mlm.checked_conv import (
    GradientCheck,
    checked_conv3x3,
    handles_conv3x3,
    wants_parameter_grads,
)

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
def weight_grad(x: np.ndarray, dy: np.ndarray, acc: np.ndarray) -> None:  # pragma: no cover
    """Add to ``acc`` ``(10 C,)`` float32 the weight gradients (taps ``t = kh * 3 + kw`` at
    ``acc[t C : (t + 1) C]``) and the bias gradient (``acc[9 C:]``) of a 3x3 convolution
    (padding 1) of the one-channel images ``x`` ``(n, H, W)`` for the output gradient ``dy``
    ``(n, H W C)`` (channels-last), in oneDNN's order (module docstring): each ``(tap,
    channel)`` sum runs over the positions in order (image, row, column), one FMA per
    position whose tap lies inside the image (the taps on the padding are skipped); the bias
    adds ``fma(dy, 1, .)``, which is ``dy + .`` rounded once. Sums are independent of one
    another, so an image's positions are visited once per kernel row, the 16 channels of a
    position in one vector."""
    n_img, height, width = x.shape
    one = np.float32(1.0)
    left, mid, right = 0, CHANNELS, 2 * CHANNELS  # offsets of the taps kw = 0, 1, 2
    for i in range(n_img):
        img = x[i]
        g = dy[i]
        for kh in range(3):
            base = 3 * kh * CHANNELS
            # the output rows whose input row h + kh - 1 lies inside the image
            for h in range(max(0, 1 - kh), min(height, height + 1 - kh)):
                row = img[h + kh - 1]
                off = h * width * CHANNELS
                _fma16(acc, base + mid, g, off, row[0])  # column 0: no tap kw = 0
                if width > 1:
                    _fma16(acc, base + right, g, off, row[1])
                    for j in range(1, width - 1):
                        off += CHANNELS
                        _fma16(acc, base + left, g, off, row[j - 1])
                        _fma16(acc, base + mid, g, off, row[j])
                        _fma16(acc, base + right, g, off, row[j + 1])
                    off += CHANNELS  # the last column: no tap kw = 2
                    _fma16(acc, base + left, g, off, row[width - 2])
                    _fma16(acc, base + mid, g, off, row[width - 1])
        for p in range(height * width):
            _fma16(acc, 9 * CHANNELS, g, p * CHANNELS, one)


def handles(conv: nn.Conv2d, x: torch.Tensor) -> bool:
    """Whether :func:`first_conv` may compute ``conv(x)``'s weight gradient in the kernel:
    a CPU float32 3x3 convolution of one-channel images into :data:`CHANNELS` channels,
    stride 1, padding 1, no dilation or groups, zero padding, with a bias
    (:func:`reliquant.mlm.checked_conv.handles_conv3x3`), its input needing no gradient."""
    return not x.requires_grad and handles_conv3x3(conv, x, 1, CHANNELS)


def _compiled_grads(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dW (C, 1, 3, 3), db (C,))`` from :func:`weight_grad`."""
    n, _, height, width = x.shape
    images = x.detach().reshape(n, height, width).contiguous().numpy()
    # channels-last: a position's C values side by side (ATen's vectorised transpose)
    nhwc = dy.detach().permute(0, 2, 3, 1).contiguous().reshape(n, -1).numpy()
    acc = np.zeros(10 * CHANNELS, dtype=np.float32)
    weight_grad(images, nhwc, acc)
    dw = np.ascontiguousarray(acc[: 9 * CHANNELS].reshape(9, CHANNELS).T).reshape(CHANNELS, 1, 3, 3)
    return torch.from_numpy(dw), torch.from_numpy(acc[9 * CHANNELS :].copy())


#: The kernel's gradients, checked at the first backward pass of each input shape and thread
#: count.
_CHECK = GradientCheck("first-convolution", _compiled_grads, log)


def first_conv(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)``, whose weight and bias gradients come from :func:`weight_grad` where
    :func:`handles` allows and a gradient is wanted; the values and the gradients are
    PyTorch's, bit for bit (module docstring)."""
    if wants_parameter_grads(conv) and handles(conv, x):
        return checked_conv3x3(conv, x, _CHECK)
    return conv(x)
