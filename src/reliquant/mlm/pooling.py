"""2x2 max pooling of the paper's CNN on the CPU, compiled, with the gradient PyTorch gives.

``F.max_pool2d(x, 2)`` takes about a third of a CPU training step of
:class:`reliquant.mlm.cnn.MnistCNN` (ATen's pooling kernel for NCHW float32 is slow at these
shapes). :func:`max_pool_2x2` computes the same values and gradients in a numba kernel:

- **forward**: each output ``y[m, i, j] = max`` of the window ``x[m, 2i:2i+2, 2j:2j+2]``,
  scanned in row-major order and replaced when ``v > best`` or ``v`` is NaN, the rule of
  ATen's ``cpu_max_pool`` (so ties keep the first position, a NaN wins and the last NaN
  is the one kept); the position is remembered (0..3). The kernel folds every horizontal
  pair of the whole array in one vectorised pass, then each window's two pairs (the rule is
  associative, :func:`pool_forward`): a training step of batch 64 on one thread went from
  20.8 ms to 16.4 ms (the windows one at a time took 4.7 ms of it, the pairs 2.2 ms);
- **backward**: ``dx`` is zero except at each window's remembered position, where it is
  ``0.0 + dy[m, i, j]`` (ATen's ``max_pool2d_with_indices_backward`` accumulates into zeros;
  ``0.0 + -0.0`` is ``+0.0``, so the sign of a zero gradient matches too).

A maximum rounds nothing and each input position receives at most one gradient, so both
are bit-identical to ATen's (the tests compare them on inputs full of ties, zeros, NaN and
infinities, and the training tests compare trained weights). Inputs the kernel does not
handle (not on the CPU, not float32, not contiguous NCHW, odd sides) go to ``F.max_pool2d``.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit
from torch.nn import functional as F

__all__ = ["max_pool_2x2", "pool_forward", "pool_backward"]


@njit(cache=True)
def _pair_maxima(flat: np.ndarray, best: np.ndarray, pos: np.ndarray) -> None:  # pragma: no cover
    """Fold each horizontal pair ``(flat[2p], flat[2p + 1])`` with the window rule: ``best[p]``
    is ``flat[2p + 1]`` when it is greater or NaN, else ``flat[2p]``; ``pos[p]`` is 1 or 0.
    One flat loop over the whole array (a row has an even number of columns, so no pair
    straddles two rows), which vectorises."""
    for p in range(best.size):
        a = flat[2 * p]
        b = flat[2 * p + 1]
        take = (b > a) | (b != b)
        best[p] = b if take else a
        pos[p] = np.uint8(1) if take else np.uint8(0)


@njit(cache=True)
def pool_forward(x: np.ndarray, out: np.ndarray, arg: np.ndarray) -> None:  # pragma: no cover
    """Fill ``out`` ``(M, H/2, W/2)`` with the 2x2 window maxima of ``x`` ``(M, H, W)``
    (C-contiguous) and ``arg`` (uint8) with each maximum's position in the window (0..3,
    row-major).

    ATen scans a window ``(a, b; c, d)`` in the order ``a, b, c, d`` and replaces the best
    when ``v > best`` or ``v`` is NaN. That fold is associative: ``fold(a, b, c, d) =
    combine(fold(a, b), fold(c, d))`` with the same rule in ``combine``, value and position
    (without NaN both give the first maximum, as a tie never replaces; with NaN both give the
    last NaN, as a NaN always replaces and nothing replaces a NaN). So the kernel folds every
    horizontal pair in one flat, vectorised pass (:func:`_pair_maxima`), then combines each
    window's top pair with its bottom pair (position ``2 +`` the bottom pair's): 2x faster
    than a loop over windows at the CNN's shapes, bit for bit the same.
    """
    m_count, h, w = out.shape
    pairs = m_count * 2 * h * w
    best = np.empty(pairs, dtype=x.dtype)
    pos = np.empty(pairs, dtype=np.uint8)
    _pair_maxima(x.reshape(-1), best, pos)
    two = np.uint8(2)
    for m in range(m_count):
        for i in range(h):
            top = (m * h + i) * 2 * w  # the pairs of row 2i; row 2i + 1's follow them
            out_row, arg_row = out[m, i], arg[m, i]
            for j in range(w):
                upper = best[top + j]
                lower = best[top + w + j]
                take = (lower > upper) | (lower != lower)
                out_row[j] = lower if take else upper
                arg_row[j] = (pos[top + w + j] | two) if take else pos[top + j]


@njit(cache=True)
def pool_backward(grad: np.ndarray, arg: np.ndarray, dx: np.ndarray) -> None:  # pragma: no cover
    """Fill ``dx`` ``(M, H, W)`` with zeros plus ``grad`` ``(M, H/2, W/2)`` at the positions
    in ``arg`` (``0.0 + g``, as ATen's accumulation into zeros)."""
    m_count, h, w = grad.shape
    zero = dx.dtype.type(0.0)
    for m in range(m_count):
        for r in range(2 * h):
            for c in range(2 * w):
                dx[m, r, c] = zero
        for i in range(h):
            for j in range(w):
                k = arg[m, i, j]
                dx[m, 2 * i + k // 2, 2 * j + k % 2] = zero + grad[m, i, j]


class _MaxPool2x2(torch.autograd.Function):
    """Autograd wrapper of :func:`pool_forward` / :func:`pool_backward` (NCHW float32, CPU)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # noqa: D102
        n, c, h, w = x.shape
        flat = x.detach().reshape(n * c, h, w).numpy()
        out = np.empty((n * c, h // 2, w // 2), dtype=np.float32)
        arg = np.empty(out.shape, dtype=np.uint8)
        pool_forward(flat, out, arg)
        ctx.save_for_backward(torch.from_numpy(arg))
        ctx.input_shape = (n, c, h, w)
        return torch.from_numpy(out).view(n, c, h // 2, w // 2)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # noqa: D102
        (arg,) = ctx.saved_tensors
        n, c, h, w = ctx.input_shape
        g = grad.contiguous().reshape(n * c, h // 2, w // 2).numpy()
        dx = np.empty((n * c, h, w), dtype=np.float32)
        pool_backward(g, arg.numpy(), dx)
        return torch.from_numpy(dx).view(n, c, h, w)


def _kernel_handles(x: torch.Tensor) -> bool:
    """Whether :func:`max_pool_2x2` computes ``x`` in the kernel (else ``F.max_pool2d``)."""
    return (
        x.device.type == "cpu"
        and x.dtype == torch.float32
        and x.dim() == 4
        and x.is_contiguous()
        and x.shape[2] % 2 == 0
        and x.shape[3] % 2 == 0
        and x.numel() > 0
    )


def max_pool_2x2(x: torch.Tensor) -> torch.Tensor:
    """``F.max_pool2d(x, 2)``, values and gradient bit for bit; compiled on the CPU.

    ``x``: activations ``(n, c, h, w)``. CPU float32 contiguous NCHW with even ``h`` and
    ``w`` runs :func:`pool_forward` (and :func:`pool_backward` for the gradient); anything else
    calls ``F.max_pool2d(x, 2)``.
    """
    if _kernel_handles(x):
        return _MaxPool2x2.apply(x)
    return F.max_pool2d(x, 2)
