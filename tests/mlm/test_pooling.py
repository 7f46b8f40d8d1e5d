"""The compiled 2x2 max pooling against ATen's ``F.max_pool2d``: values, gradients, training."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

from reliquant.mlm import cnn, pooling


def _bits(t: torch.Tensor) -> np.ndarray:
    """The float32 bit patterns (so that -0.0 differs from 0.0 and NaN equals NaN)."""
    return t.detach().contiguous().numpy().view(np.uint32)


def _both(x: torch.Tensor, grad: torch.Tensor):
    """Values and input gradients of the kernel and of ATen on the same input and dy."""
    out = []
    for pool in (pooling.max_pool_2x2, lambda t: F.max_pool2d(t, 2)):
        xr = x.clone().requires_grad_()
        y = pool(xr)
        y.backward(grad)
        out.append((y, xr.grad))
    return out


SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.0, np.inf, -np.inf, np.nan], dtype=np.float32)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 3),
    c=st.integers(1, 3),
    h=st.sampled_from([2, 4, 6, 28]),
    w=st.sampled_from([2, 4, 8, 14]),
    seed=st.integers(0, 2**32 - 1),
)
def test_values_and_gradients_are_atens_bit_for_bit(n, c, h, w, seed):
    """Ties, signed zeros, infinities and NaN in the windows (each value drawn from a small
    set, so most windows hold ties) and gradients with -0.0: every bit equal."""
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.choice(SPECIAL, size=(n, c, h, w)))
    grad = torch.from_numpy(rng.choice(SPECIAL[:5], size=(n, c, h // 2, w // 2)))
    (y, dx), (y_ref, dx_ref) = _both(x, grad)
    assert np.array_equal(_bits(y), _bits(y_ref))
    assert np.array_equal(_bits(dx), _bits(dx_ref))


def test_random_activations_match_and_fallback_paths_are_atens():
    """Continuous values at the CNN's shapes; odd sides, channels-last and float64 inputs
    take ``F.max_pool2d`` itself."""
    gen = torch.Generator().manual_seed(1)
    for shape in [(64, 16, 28, 28), (64, 32, 14, 14)]:
        x = torch.randn(shape, generator=gen)
        grad = torch.randn((shape[0], shape[1], shape[2] // 2, shape[3] // 2), generator=gen)
        (y, dx), (y_ref, dx_ref) = _both(x, grad)
        assert np.array_equal(_bits(y), _bits(y_ref)) and np.array_equal(_bits(dx), _bits(dx_ref))
    odd = torch.randn(2, 3, 7, 7, generator=gen)
    assert not pooling._kernel_handles(odd)
    assert not pooling._kernel_handles(
        torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    )
    assert not pooling._kernel_handles(torch.randn(2, 3, 8, 8, dtype=torch.float64))
    assert torch.equal(pooling.max_pool_2x2(odd), F.max_pool2d(odd, 2))


def test_works_under_inference_mode():
    x = torch.randn(4, 16, 28, 28)
    with torch.inference_mode():
        y = pooling.max_pool_2x2(x)
    assert torch.equal(y, F.max_pool2d(x, 2))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.slow
def test_training_gives_the_weights_atens_pooling_gives(monkeypatch, threads):
    """Two epochs on 512 images: the trained weights with the kernel and with ATen's pooling
    (the model before this kernel) are bit-identical, for 1 and 2 threads."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(512, 28, 28), dtype=np.uint8)
    images[:, :6] = 0  # uniform background rows: tied windows, as in MNIST
    labels = rng.integers(0, 10, size=512).astype(np.uint8)

    def train():
        res = cnn.train_cnn(images, labels, epochs=2, batch_size=64, seed=3, threads=threads)
        return res.model.state_dict(), res.log

    calls = []
    kernel = pooling.max_pool_2x2
    monkeypatch.setattr(pooling, "max_pool_2x2", lambda t: calls.append(1) or kernel(t))
    weights, log = train()
    assert len(calls) == 2 * 2 * (512 // 64)  # the kernel pooled every training step
    monkeypatch.setattr(pooling, "max_pool_2x2", lambda t: F.max_pool2d(t, 2))
    ref_weights, ref_log = train()
    assert weights.keys() == ref_weights.keys()
    for key in weights:
        assert np.array_equal(_bits(weights[key]), _bits(ref_weights[key])), key
    assert log.equals(ref_log)


def test_every_window_of_ties_zeros_and_two_nan_payloads_is_atens():
    """All 7**4 windows over {0, -0, 1, -1, inf, two NaN payloads}, one window per 2x2 block:
    the kernel folds the two horizontal pairs first and then combines them, which must keep
    ATen's row-major scan (the first maximum; the last NaN, payload and sign included)."""
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, np.nan, np.nan], dtype=np.float32)
    values.view(np.uint32)[5] = 0x7FC00001
    values.view(np.uint32)[6] = 0xFFC00002
    idx = np.stack(np.meshgrid(*[np.arange(7)] * 4, indexing="ij"), -1).reshape(-1, 4)
    windows = values[idx].reshape(-1, 2, 2)  # (a, b; c, d) in row-major order
    x = torch.from_numpy(np.ascontiguousarray(windows.reshape(1, -1, 2, 2)))
    grad = torch.from_numpy(
        np.linspace(1, 2, windows.shape[0], dtype=np.float32).reshape(1, -1, 1, 1)
    )
    (y, dx), (y_ref, dx_ref) = _both(x, grad)
    assert np.array_equal(_bits(y), _bits(y_ref))
    assert np.array_equal(_bits(dx), _bits(dx_ref))
