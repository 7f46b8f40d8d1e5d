"""Filters and resampling on float image batches, with the authors' OpenCV conventions.

Every function works along one axis of a float64 batch (shape ``(n, 28, 28)``, axes 1 and 2
the rows and columns), so 2-D filters are two 1-D passes. Conventions (checked by
``tests/pmnist/test_kernels.py`` and, through the corruptions, by the per-pixel references of
``tests/pmnist/test_corruptions.py``):

* borders are reflect-101 (``d c b | a b c d | c b a``; ``scipy.ndimage`` mode ``mirror``);
* a kernel of size ``k`` is anchored at ``k // 2``: output pixel ``i`` reads input pixels
  ``i - k//2 .. i - k//2 + k - 1`` (even ``k`` reaches one pixel further up/left);
* area resampling is the exact box-overlap average (OpenCV's INTER_AREA when shrinking).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "area_matrix",
    "box_filter",
    "correlate_axis",
    "gaussian_kernel",
    "reflect101",
    "resample_axis",
    "shift_axis",
]


def box_filter(x: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Mean of ``k`` neighbours along ``axis``: ``y[i] = mean(x[i - k//2 .. i - k//2 + k - 1])``.

    Reflect-101 border (scipy ``mirror``); even ``k`` anchored at ``k // 2`` like OpenCV.
    """
    if k == 1:
        return x.copy()
    import scipy.ndimage as ndi  # here: the workflow's jobs run the compiled pipeline only

    return ndi.uniform_filter1d(x, size=k, axis=axis, mode="mirror")


def correlate_axis(x: np.ndarray, weights: np.ndarray, axis: int) -> np.ndarray:
    """``y[i] = sum_j w[j] x[i + j - len(w)//2]`` along ``axis``, reflect-101 border."""
    import scipy.ndimage as ndi  # here: the workflow's jobs run the compiled pipeline only

    return ndi.correlate1d(x, np.asarray(weights, dtype=np.float64), axis=axis, mode="mirror")


def reflect101(i: np.ndarray, n: int) -> np.ndarray:
    """Reflect-101 index map into ``0 .. n-1`` (``-1 -> 1``, ``n -> n - 2``); overhang < n."""
    i = np.abs(np.asarray(i))
    return np.where(i >= n, 2 * (n - 1) - i, i)


def shift_axis(x: np.ndarray, offset: int, axis: int) -> np.ndarray:
    """``y[i] = x[i + offset]`` along ``axis``, reflect-101 border (a copy; exact, no arithmetic).

    A one-tap correlation whose tap sits ``offset`` pixels from the anchor: ``offset = -1``
    moves the content one pixel towards higher indices.
    """
    n = x.shape[axis]
    return np.take(x, reflect101(np.arange(n) + offset, n), axis=axis)


def gaussian_kernel(ksize: int, sigma: float) -> np.ndarray:
    """OpenCV's ``getGaussianKernel``: ``g_i = exp(-(i - (ksize-1)/2)^2 / (2 sigma^2))``, sum 1."""
    i = np.arange(ksize, dtype=np.float64) - (ksize - 1) / 2.0
    g = np.exp(-(i**2) / (2.0 * sigma**2))
    return g / g.sum()


def area_matrix(src: int, dst: int) -> np.ndarray:
    """``(dst, src)`` matrix of area resampling: row ``o`` averages the input over ``[o s, (o+1) s)``.

    With ``s = src / dst``, ``A[o, j] = |[j, j+1) ∩ [o s, (o+1) s)| / s`` (box overlap), so
    each row sums to 1. This is OpenCV's INTER_AREA when shrinking; when enlarging
    (``dst > src``) it stays the exact box average (OpenCV switches to bilinear there).
    """
    s = src / dst
    a = np.zeros((dst, src), dtype=np.float64)
    for o in range(dst):
        lo, hi = o * s, (o + 1) * s
        for j in range(int(math.floor(lo)), min(src, int(math.ceil(hi)))):
            a[o, j] = max(0.0, min(hi, j + 1) - max(lo, j)) / s
    return a


def resample_axis(x: np.ndarray, matrix: np.ndarray, axis: int) -> np.ndarray:
    """``y[..., o, ...] = sum_j matrix[o, j] x[..., j, ...]`` along ``axis`` (sparse matrix).

    Elementwise sums in a fixed order (not BLAS), so that each image's bytes do not depend
    on the batch it is in.
    """
    x = np.moveaxis(x, axis, -1)
    out = np.zeros((*x.shape[:-1], matrix.shape[0]), dtype=np.float64)
    for o in range(matrix.shape[0]):
        for j in np.flatnonzero(matrix[o]):
            out[..., o] += matrix[o, j] * x[..., j]
    return np.moveaxis(out, -1, axis)
