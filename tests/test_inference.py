"""Tests of reliquant.inference: batching invariance, agreement with a direct forward, devices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reliquant import cnn, inference


@pytest.fixture(scope="module")
def model():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(11)
        return cnn.build_cnn().eval()


@pytest.fixture(scope="module")
def images():
    rng = np.random.default_rng(0)
    # random pixels plus a few blank and saturated images
    x = rng.integers(0, 256, (600, 28, 28), dtype=np.uint8)
    x[:5] = 0
    x[5:10] = 255
    return x


def test_batch_sizes_1_and_512_agree(model, images):
    p1 = inference.predict_softmax(model, images, batch_size=1, device="cpu")
    p512 = inference.predict_softmax(model, images, batch_size=512, device="cpu")
    assert p1.dtype == np.float32 and p1.shape == (600, 10)
    np.testing.assert_allclose(p1, p512, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(p512.sum(1), 1.0, rtol=1e-5)


def test_matches_direct_forward_in_default_layout(model, images):
    got = inference.predict_softmax(model, images[:100], batch_size=37, channels_last=True)
    with torch.inference_mode():
        want = model.to(memory_format=torch.contiguous_format)(
            cnn.normalise_images(images[:100])
        ).exp()
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-7)


def test_empty_input_gives_empty_output(model):
    out = inference.predict_softmax(model, np.zeros((0, 28, 28), np.uint8))
    assert out.shape == (0, 10)


def test_rejects_bad_images(model):
    with pytest.raises(ValueError, match="uint8"):
        inference.predict_softmax(model, np.zeros((3, 28, 28), np.float32))
    with pytest.raises(ValueError, match="batch_size"):
        inference.predict_softmax(model, np.zeros((3, 28, 28), np.uint8), batch_size=0)


def test_device_selection_falls_back_to_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert inference.select_device() == torch.device("cpu")
    assert inference.select_device("cuda") == torch.device("cpu")
    assert inference.select_device("cuda:1") == torch.device("cpu")
    assert inference.select_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="device"):
        inference.select_device("tpu")


def test_device_selection_prefers_cuda_when_present(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert inference.select_device() == torch.device("cuda")
    assert inference.select_device("cuda:0") == torch.device("cuda:0")
    assert inference.select_device("cuda:3") == torch.device("cpu")
    assert inference.select_device("cpu") == torch.device("cpu")
