"""The weight and bias gradients of the CNN's second convolution (16 -> 32 channels, 3x3,
padding 1) on the CPU, compiled, with the values oneDNN gives.

In a CPU training step of :class:`reliquant.mlm.cnn.MnistCNN` oneDNN's backward pass of
``conv2`` takes about 3 ms for a batch of 64, of which the input gradient takes 1.25 ms and
the weight and bias gradients the rest. Those are sums over the batch's output positions
``p = (n, h, w)``, which the pinned oneDNN kernel (:mod:`reliquant.mlm.determinism`)
accumulates one position at a time, images in order, then rows, then columns, from zero:

    dW[o, c, kh, kw] = fma(dy[n, o, h, w], x[n, c, h + kh - 1, w + kw - 1], dW[o, c, kh, kw])
    db[o]            = db[o] + dy[n, o, h, w]

(each a fused multiply-add, a single rounding), for the taps inside the image only: oneDNN
skips the taps on the zero padding (adding ``dy * 0`` would turn a sum of ``-0.0`` into
``+0.0``). :func:`weight_grad` computes exactly these sums in a numba kernel whose
accumulators stay in vector registers: for a pair of output channels ``o`` it holds the
``2 x 9`` vectors ``dW[o, :, kh, kw]`` (the 16 input channels side by side) for a whole image
and adds, per position, ``fma(x[n, :, h + kh - 1, w + kw - 1], dy[n, o, h, w], .)`` (each
image copied once to channels-last layout; ``dy`` is read as it comes). Every sum still runs
over the positions in oneDNN's order with one FMA each, so the values are bit-identical;
only which independent sums share a vector differs. (An AVX2-only CPU gets vectors of 8
channels and one output channel at a time, so the accumulators fit its 16 registers; same
sums, same bits.)

The kernel runs on one thread and serves one-thread training (the workflow's
``mlm.threads: 1``); with more torch threads the layer is plain ``conv`` (oneDNN's parallel
gradient is faster). The input gradient stays oneDNN's (``convolution_backward`` asked for it
alone gives the same bits as the full call), and so does the forward pass (``F.conv2d``).
That the order is oneDNN's is checked, not assumed: the first backward pass of each input
shape (and thread count) computes both and compares them bit for bit, also on a probe whose
products all underflow to ``-0.0``; where they differ (another oneDNN build or CPU level, a
batch of one image, whose sums oneDNN orders otherwise, images of fewer than 3 rows, for which
oneDNN adds the padding taps) the layer keeps PyTorch's gradients, with a warning
(:mod:`reliquant.mlm.checked_conv`).
``tests/mlm/test_second_conv.py`` compares gradients with PyTorch's on random and edge-case
inputs, and trained weights.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from llvmlite import binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils, config
from numba.extending import intrinsic
from torch import nn

from reliquant.mlm.checked_conv import (
    GradientCheck,
    checked_conv3x3,
    handles_conv3x3,
    wants_parameter_grads,
)

__all__ = ["IN_CHANNELS", "OUT_CHANNELS", "handles", "second_conv", "weight_grad"]

log = logging.getLogger("reliquant.mlm.second_conv")

#: Input channels the kernel handles (those of ``MnistCNN.conv2``).
IN_CHANNELS = 16
#: Output channels the kernel handles.
OUT_CHANNELS = 32


def _tile() -> tuple[int, int]:
    """``(lanes, outputs)``: input channels per vector and output channels per pass, so that
    the ``outputs x 9`` accumulator vectors stay in registers: 32 with AVX-512, 16 with AVX2,
    as numba compiles for (the host CPU, or ``NUMBA_CPU_FEATURES``). Fixed when the kernel
    compiles (numba caches one build per CPU)."""
    features = config.CPU_FEATURES
    if features is None:
        features = llvm.get_host_cpu_features().flatten()
    if "+avx512f" in features.split(","):
        return 16, 2
    return 8, 1


_LANES, _OUTPUTS = _tile()


@intrinsic
def _image_block(typingctx, acc, acc_off, xp, x_off, dy, dy_off, bias, b_off, height, width):
    """For one image and :data:`_OUTPUTS` output channels ``k``, over its positions ``(h,
    w)`` in row-major order: ``acc[acc_off + (k 9 + t) C + c] = fma(xp[x_off + ((h + kh) (W
    + 2) + w + kw) C + c], dy[dy_off + k H W + h W + w], .)`` for the taps ``t = kh 3 + kw``
    inside the image (not on the padding: first and last rows and columns skip theirs) and
    :data:`_LANES` channels ``c`` (``C`` = :data:`IN_CHANNELS`), and ``bias[b_off + k] +=
    dy[...]``. The accumulators are loaded once, kept in registers (LLVM promotes the
    ``alloca``s) and stored at the end. Flat float32 arrays, offsets in elements; ``xp`` is
    the zero-padded channels-last input ``(H + 2, W + 2, C)`` of the image, ``dy`` its NCHW
    output gradient."""
    sig = types.void(acc, acc_off, xp, x_off, dy, dy_off, bias, b_off, height, width)

    def codegen(context, builder, signature, args):
        acc_a, xp_a, dy_a, bias_a = (
            context.make_array(signature.args[i])(context, builder, args[i]) for i in (0, 2, 4, 6)
        )
        acc_off_v, x_off_v, dy_off_v, b_off_v = (
            context.cast(builder, args[i], signature.args[i], types.intp) for i in (1, 3, 5, 7)
        )
        h_count = context.cast(builder, args[8], signature.args[8], types.intp)
        w_count = context.cast(builder, args[9], signature.args[9], types.intp)
        intp = context.get_value_type(types.intp)
        f32 = ir.FloatType()
        vec = ir.VectorType(f32, _LANES)
        chans = ir.Constant(intp, IN_CHANNELS)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec] * 3), f"llvm.fma.v{_LANES}f32"
        )

        def vec_ptr(base, offset):
            return builder.bitcast(builder.gep(base, [offset]), vec.as_pointer())

        def splat(value):
            lane0 = builder.insert_element(
                ir.Constant(vec, ir.Undefined), value, ir.Constant(ir.IntType(32), 0)
            )
            mask = ir.Constant(ir.VectorType(ir.IntType(32), _LANES), [0] * _LANES)
            return builder.shuffle_vector(lane0, ir.Constant(vec, ir.Undefined), mask)

        acc_base = builder.gep(acc_a.data, [acc_off_v])
        bias_base = builder.gep(bias_a.data, [b_off_v])
        # accumulators in entry-block allocas: promoted to registers by mem2reg
        slots, bias_slots = [], []
        for k in range(_OUTPUTS):
            for t in range(9):
                slot = cgutils.alloca_once(builder, vec)
                off = ir.Constant(intp, (k * 9 + t) * IN_CHANNELS)
                builder.store(builder.load(vec_ptr(acc_base, off), align=4), slot)
                slots.append(slot)
            slot = cgutils.alloca_once(builder, f32)
            builder.store(builder.load(builder.gep(bias_base, [ir.Constant(intp, k)])), slot)
            bias_slots.append(slot)
        plane = builder.mul(h_count, w_count)
        row_len = builder.add(w_count, ir.Constant(intp, 2))
        one = ir.Constant(intp, 1)

        def position(h, w, rows, cols):
            """The sums of position ``(h, w)`` for the taps ``kh in rows``, ``kw in cols``."""
            pos = builder.add(builder.add(dy_off_v, builder.mul(h, w_count)), w)
            grads = []
            for k in range(_OUTPUTS):
                at = builder.add(pos, builder.mul(plane, ir.Constant(intp, k)))
                grads.append(builder.load(builder.gep(dy_a.data, [at])))
            spl = [splat(g) for g in grads]
            for kh in rows:
                row = builder.mul(builder.add(h, ir.Constant(intp, kh)), row_len)
                for kw in cols:
                    cell = builder.add(row, builder.add(w, ir.Constant(intp, kw)))
                    xv = builder.load(
                        vec_ptr(xp_a.data, builder.add(x_off_v, builder.mul(cell, chans))),
                        align=4,
                    )
                    for k in range(_OUTPUTS):
                        slot = slots[k * 9 + kh * 3 + kw]
                        builder.store(builder.call(fma, [xv, spl[k], builder.load(slot)]), slot)
            for k in range(_OUTPUTS):
                slot = bias_slots[k]
                builder.store(builder.fadd(builder.load(slot), grads[k]), slot)

        def image_row(h, rows):
            """Row ``h`` left to right; the taps on the zero padding are skipped."""
            last = builder.sub(w_count, one)
            with builder.if_else(builder.icmp_signed("==", w_count, one)) as (single, several):
                with single:
                    position(h, ir.Constant(intp, 0), rows, (1,))
                with several:
                    position(h, ir.Constant(intp, 0), rows, (1, 2))
                    with cgutils.for_range(builder, last, start=one) as loop:
                        position(h, loop.index, rows, (0, 1, 2))
                    position(h, last, rows, (0, 1))

        last = builder.sub(h_count, one)
        with builder.if_else(builder.icmp_signed("==", h_count, one)) as (single, several):
            with single:
                image_row(ir.Constant(intp, 0), (1,))
            with several:
                image_row(ir.Constant(intp, 0), (1, 2))
                with cgutils.for_range(builder, last, start=one) as loop:
                    image_row(loop.index, (0, 1, 2))
                image_row(last, (0, 1))
        for k in range(_OUTPUTS):
            for t in range(9):
                off = ir.Constant(intp, (k * 9 + t) * IN_CHANNELS)
                builder.store(builder.load(slots[k * 9 + t]), vec_ptr(acc_base, off), align=4)
            builder.store(
                builder.load(bias_slots[k]), builder.gep(bias_base, [ir.Constant(intp, k)])
            )
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def weight_grad(
    x: np.ndarray, dy: np.ndarray, acc: np.ndarray, bias: np.ndarray
) -> None:  # pragma: no cover
    """Add to ``acc`` ``(O, 9, C)`` float32 the weight gradients (``acc[o, kh 3 + kw, c]`` for
    ``W[o, c, kh, kw]``) and to ``bias`` ``(O,)`` the bias gradients of a 3x3 convolution
    (``C`` = :data:`IN_CHANNELS` in, ``O`` = :data:`OUT_CHANNELS` out, padding 1) of the input
    ``x`` ``(n, C, H, W)`` for the output gradient ``dy`` ``(n, O, H, W)``, in oneDNN's order
    (module docstring): each sum runs over the positions in order (image, row, column), one
    FMA per position and tap inside the image; the bias adds ``dy``. All arrays
    C-contiguous. Each image is first copied to a channels-last buffer ``(H + 2, W + 2, C)``
    (a border that is never read), so that a position's 16 input channels lie side by
    side."""
    n_img, _, height, width = x.shape
    hp, wp = height + 2, width + 2
    xp = np.zeros((hp, wp, IN_CHANNELS), dtype=np.float32)
    x_flat = xp.reshape(-1)
    dy_flat = dy.reshape(-1)
    acc_flat = acc.reshape(-1)
    spare = np.zeros(OUT_CHANNELS, dtype=np.float32)  # bias sums of the 2nd lane block
    for i in range(n_img):
        img = x[i]
        for h in range(height):
            for w in range(width):
                for c in range(IN_CHANNELS):
                    xp[h + 1, w + 1, c] = img[c, h, w]
        for o in range(0, OUT_CHANNELS, _OUTPUTS):
            dy_off = (i * OUT_CHANNELS + o) * height * width
            for c in range(0, IN_CHANNELS, _LANES):
                _image_block(
                    acc_flat,
                    o * 9 * IN_CHANNELS + c,
                    x_flat,
                    c,
                    dy_flat,
                    dy_off,
                    bias if c == 0 else spare,
                    o,
                    height,
                    width,
                )


def handles(conv: nn.Conv2d, x: torch.Tensor) -> bool:
    """Whether :func:`second_conv` may compute ``conv(x)``'s weight gradient in the kernel:
    a CPU float32 3x3 convolution of :data:`IN_CHANNELS` into :data:`OUT_CHANNELS`
    channels, stride 1, padding 1, no dilation or groups, zero padding, with a bias
    (:func:`reliquant.mlm.checked_conv.handles_conv3x3`)."""
    return handles_conv3x3(conv, x, IN_CHANNELS, OUT_CHANNELS)


def _compiled_grads(x: torch.Tensor, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(dW (O, C, 3, 3), db (O,))`` from :func:`weight_grad`."""
    acc = np.zeros((OUT_CHANNELS, 9, IN_CHANNELS), dtype=np.float32)
    bias = np.zeros(OUT_CHANNELS, dtype=np.float32)
    weight_grad(x.detach().contiguous().numpy(), dy.detach().contiguous().numpy(), acc, bias)
    dw = np.ascontiguousarray(acc.transpose(0, 2, 1)).reshape(OUT_CHANNELS, IN_CHANNELS, 3, 3)
    return torch.from_numpy(dw), torch.from_numpy(bias)


#: The kernel's gradients, checked at the first backward pass of each input shape and thread
#: count.
_CHECK = GradientCheck("second-convolution", _compiled_grads, log)


def second_conv(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)``, whose weight and bias gradients come from :func:`weight_grad` where
    :func:`handles` allows, a gradient is wanted and torch runs one thread (the kernel runs
    one; oneDNN's two-thread gradient is faster); the values and the gradients are
    PyTorch's, bit for bit (module docstring)."""
    if torch.get_num_threads() == 1 and wants_parameter_grads(conv) and handles(conv, x):
        return checked_conv3x3(conv, x, _CHECK)
    return conv(x)
