"""Filters and resampling: OpenCV anchors, reflect-101 borders, exact area averages."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.pmnist import fused as F
from reliquant.pmnist import kernels as K
from reliquant.pmnist.fused import compiled as FC

N = 28


def r101(i: int, n: int = N) -> int:
    """Reflect-101 index: ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ..."""
    while i < 0 or i >= n:
        i = -i if i < 0 else 2 * (n - 1) - i
    return i


def test_even_kernel_anchor_reaches_up_and_left() -> None:
    """k = 2 box on a single bright pixel at (10, 10): output rows/cols 10 and 11 light up."""
    x = np.zeros((1, N, N))
    x[0, 10, 10] = 1.0
    y = K.box_filter(K.box_filter(x, 2, 1), 2, 2)[0]
    assert set(zip(*np.nonzero(y), strict=True)) == {(10, 10), (10, 11), (11, 10), (11, 11)}


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_box_filter_and_correlate_match_explicit_reflect_101(k: int, seed: int) -> None:
    """``y[i] = sum_j w[j] x[r101(i + j - k//2)]`` written out, for a box and random weights."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, N, N))
    w = rng.uniform(0.1, 1.0, size=k)
    want_box = np.zeros_like(x)
    want_w = np.zeros_like(x)
    for i in range(N):
        for j in range(k):
            src = r101(i + j - k // 2)
            want_box[:, i, :] += x[:, src, :] / k
            want_w[:, :, i] += w[j] * x[:, :, src]
    np.testing.assert_allclose(K.box_filter(x, k, axis=1), want_box, atol=1e-12)
    np.testing.assert_allclose(K.correlate_axis(x, w, axis=2), want_w, atol=1e-12)


def test_gaussian_kernel_is_opencv_formula() -> None:
    g = K.gaussian_kernel(5, 1.0)
    raw = [math.exp(-((i - 2) ** 2) / 2.0) for i in range(5)]
    np.testing.assert_allclose(g, np.array(raw) / sum(raw), rtol=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60))
def test_area_matrix_rows_are_averages(src: int, dst: int) -> None:
    a = K.area_matrix(src, dst)
    np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-12)
    assert (a >= 0).all()
    # constant input stays constant, and total mass is preserved: sum over rows = dst / src per column
    np.testing.assert_allclose(a.sum(axis=0) * src / dst, 1.0, atol=1e-12)


def test_resample_axis_is_the_matrix_product_and_batch_independent() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, N, N))
    a = K.area_matrix(N, 9)
    y = K.resample_axis(x, a, axis=1)
    np.testing.assert_allclose(y, np.einsum("oj,njc->noc", a, x), atol=1e-12)
    # each image's bytes are the same alone as in the batch
    for i in range(len(x)):
        np.testing.assert_array_equal(K.resample_axis(x[i : i + 1], a, axis=1)[0], y[i])


@given(st.integers(-(N - 1), N - 1), st.sampled_from([1, 2]))
def test_shift_axis_is_an_exact_reflect_101_tap(offset: int, axis: int) -> None:
    """``y[i] = x[r101(i + offset)]`` along ``axis``: a copy, bit for bit."""
    x = np.random.default_rng(offset + 100).normal(size=(2, N, N))
    y = K.shift_axis(x, offset, axis=axis)
    want = np.stack([np.take(x, r101(i + offset), axis=axis) for i in range(N)], axis=axis)
    np.testing.assert_array_equal(y, want)
    assert [int(v) for v in K.reflect101(np.arange(-3, N + 3), N)] == [
        r101(i) for i in range(-3, N + 3)
    ]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, N), st.integers(1, N - 1), st.integers(0, 2**32 - 1))
def test_compiled_filters_are_scipys_bit_for_bit(k: int, kw: int, seed: int) -> None:
    """The compiled column filters of the fused pipeline replicate scipy's line sums exactly:
    the box's running sum for every size, correlate1d's symmetric, antisymmetric and general
    paths (random, symmetric and antisymmetric weights)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, N)) * rng.uniform(0.01, 100)
    y = np.empty((N, N))
    FC._box_down(x, y, k, np.empty(N))
    np.testing.assert_array_equal(y, K.box_filter(x[None], k, axis=1)[0])
    w = rng.uniform(-1, 1, size=kw)
    half = rng.uniform(0.1, 1, size=kw // 2 + 1)
    sym = np.concatenate([half, half[-2::-1]])
    anti = np.concatenate([half[:-1], [half[-1]], -half[-2::-1]])
    for weights in (w, w / w.sum(), sym, anti):
        FC._corr_down(x, y, weights, F.symmetry(weights))
        np.testing.assert_array_equal(y, K.correlate_axis(x[None], weights, axis=1)[0])
    assert F.symmetry(sym) == 1
    assert F.symmetry(anti) == (1 if anti.size == 1 else -1)
