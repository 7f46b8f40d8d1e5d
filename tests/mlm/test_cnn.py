"""Tests of reliquant.mlm.cnn: architecture, normalisation, deterministic training, save/load."""

from __future__ import annotations

import io
import os
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from reliquant.core.io import DamagedFileError, file_sha256
from reliquant.mlm import cnn

RAW = Path(__file__).resolve().parents[2] / "data" / "raw" / "mnist"


def test_parameter_count_matches_paper_and_hand_count():
    model = cnn.build_cnn()
    by_hand = (
        (1 * 9 * 16 + 16)  # conv1
        + (16 * 9 * 32 + 32)  # conv2
        + (32 * 7 * 7 * 128 + 128)  # fc1
        + (128 * 10 + 10)  # fc2
    )
    assert cnn.count_parameters(model) == by_hand == cnn.N_PARAMETERS == 206_922


def test_forward_gives_log_probabilities():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = cnn.build_cnn().eval()
    x = cnn.normalise_images(np.random.default_rng(0).integers(0, 256, (7, 28, 28), np.uint8))
    with torch.inference_mode():
        out = model(x)
    assert out.shape == (7, 10)
    np.testing.assert_allclose(out.exp().sum(1).numpy(), 1.0, rtol=1e-6)


def test_normalisation_is_torchvision_mean_half_std_half():
    u = np.arange(256, dtype=np.uint8).reshape(1, 16, 16).repeat(1, 0)
    u = np.pad(u, ((0, 0), (6, 6), (6, 6)))
    x = cnn.normalise_images(u)
    assert x.shape == (1, 1, 28, 28) and x.dtype == torch.float32
    want = (u.astype(np.float32) / np.float32(255) - np.float32(0.5)) / np.float32(0.5)
    np.testing.assert_array_equal(x[:, 0].numpy(), want)
    assert x.min() == -1.0 and x.max() == 1.0
    with pytest.raises(ValueError, match="uint8"):
        cnn.normalise_images(np.zeros((2, 28, 28), np.float32))


def _mnist_subset(n_train: int, n_test: int):
    from reliquant.core.datasets import read_idx

    if not (RAW / "train-images-idx3-ubyte.gz").exists():
        pytest.skip("vendored MNIST not present")
    xi = read_idx(RAW / "train-images-idx3-ubyte.gz")
    yi = read_idx(RAW / "train-labels-idx1-ubyte.gz")
    return xi[:n_train], yi[:n_train], xi[-n_test:], yi[-n_test:]


@pytest.mark.slow
def test_tiny_training_is_deterministic_and_learns(tmp_path):
    x, y, xt, yt = _mnist_subset(400, 400)
    kw = dict(epochs=4, lr=0.1, batch_size=16, seed=3, test_images=xt, test_labels=yt, threads=1)
    a = cnn.train_cnn(x, y, progress=False, **kw)
    b = cnn.train_cnn(x, y, progress=False, **kw)
    for (na, pa), (nb, pb) in zip(
        a.model.state_dict().items(), b.model.state_dict().items(), strict=True
    ):
        assert na == nb
        assert torch.equal(pa, pb), na
    assert a.log.equals(b.log)
    assert list(a.log.columns) == ["epoch", "loss", "train_accuracy", "test_accuracy"]
    assert list(a.log["epoch"]) == [1, 2, 3, 4]
    # the loss falls and 400 images are enough for a clearly better-than-chance model
    assert a.log["loss"].iloc[-1] < a.log["loss"].iloc[0]
    assert a.log["test_accuracy"].iloc[-1] > 0.75  # 0.87 on the reference machine
    # a different seed gives a different model
    c = cnn.train_cnn(x, y, epochs=1, lr=0.05, batch_size=32, seed=4, threads=1, progress=False)
    assert not torch.equal(c.model.fc2.weight, a.model.fc2.weight)
    # global torch RNG state is untouched by training
    state = torch.get_rng_state()
    cnn.train_cnn(x[:64], y[:64], epochs=1, seed=0, threads=1, progress=False)
    assert torch.equal(state, torch.get_rng_state())
    # save / load round trip
    path = tmp_path / "m" / "cnn.pt"
    cnn.save_model(a.model, path)
    loaded = cnn.load_model(path)
    xb = cnn.normalise_images(xt[:50])
    with torch.inference_mode():
        assert torch.equal(loaded(xb), a.model.eval()(xb))


@pytest.mark.slow
def test_accuracy_does_not_depend_on_the_evaluation_batch():
    """The per-epoch test accuracy is scored 256 rows at a time: every row's logits equal
    those of one pass over all rows (and of other batch sizes) bit for bit, so the training
    log does not depend on the evaluation batch."""
    x, y, xt, yt = _mnist_subset(200, 1000)
    model = cnn.train_cnn(x, y, epochs=1, lr=0.1, batch_size=16, seed=5, threads=1).model
    xb = cnn.normalise_images(xt)
    with torch.inference_mode():
        whole = model.eval()(xb)
        for batch in (256, 128, 1000 // 8 * 8, 2048):
            parts = torch.cat([model(xb[i : i + batch]) for i in range(0, len(xb), batch)])
            assert torch.equal(parts.view(torch.int32), whole.view(torch.int32)), batch
    labels = torch.tensor(yt, dtype=torch.long)  # a copy: the split's array is read-only
    expected = float((whole.argmax(1) == labels).double().mean())
    assert cnn._accuracy(model, xb, labels) == expected


def test_train_rejects_bad_arguments():
    x = np.zeros((10, 28, 28), np.uint8)
    with pytest.raises(ValueError, match="labels must lie"):
        cnn.train_cnn(x, np.full(10, 12), epochs=1, progress=False)
    with pytest.raises(ValueError, match="epochs"):
        cnn.train_cnn(x, np.zeros(10, int), epochs=0, progress=False)


def test_a_diverging_training_stops_naming_the_learning_rate_and_keeps_the_old_model(tmp_path):
    """mlm.train.lr: 1e9 trained to a NaN loss and failed writing its log table ("1 null
    values"), naming no key. The training now stops after the first epoch whose loss is not
    finite, naming the key, before any model exists; the previous model file is untouched."""
    rng = np.random.default_rng(40)
    x, y = rng.integers(0, 256, (64, 28, 28), dtype=np.uint8), rng.integers(0, 10, 64)
    previous = tmp_path / "cnn.pt"
    cnn.save_model(cnn.build_cnn(), previous)
    digest = file_sha256(previous)
    kw = dict(epochs=3, batch_size=32, threads=1, progress=False, lr_name="mlm.train.lr")
    with pytest.raises(ValueError) as err:
        cnn.train_cnn(x, y, lr=1e9, **kw)
    assert re.fullmatch(
        r"training diverged: the mean loss of epoch [12] \((nan|inf)\) is not finite; lower the "
        r"learning rate mlm\.train\.lr = 1000000000\.0 \(the paper's is 0\.01\)",
        str(err.value),
    ), err.value
    assert file_sha256(previous) == digest
    assert np.isfinite(cnn.train_cnn(x, y, lr=0.01, **kw).log["loss"]).all()


def test_load_model_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no CNN weights"):
        cnn.load_model(tmp_path / "missing.pt")
    torch.save({"w": torch.zeros(3)}, tmp_path / "bad.pt")
    with pytest.raises(DamagedFileError, match=r"bad\.pt: truncated or not sealed"):
        cnn.load_model(tmp_path / "bad.pt")  # not written by save_model
    with pytest.raises(ValueError, match="MnistCNN"):
        cnn.load_model(tmp_path / "bad.pt", require_seal=False)


def _record_offset(raw: bytes, name: str) -> tuple[int, int]:
    """Where the bytes of zip record ``name`` start in ``raw``, and their size."""
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(name)
    header = info.header_offset
    start = header + 30 + int.from_bytes(raw[header + 26 : header + 28], "little")
    return start + int.from_bytes(raw[header + 28 : header + 30], "little"), info.file_size


def test_one_flipped_bit_in_an_fc1_weight_is_caught_naming_the_file(tmp_path):
    """The attack on results/mlm/cnn.pt: one bit of one fc1 weight flipped in place and the
    modification time updated. torch.load alone reads the changed weight without a word;
    load_model (every workflow read) refuses the file, naming it and saying what to do."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(11)
        model = cnn.build_cnn()
    path = tmp_path / "results" / "mlm" / "cnn.pt"
    cnn.save_model(model, path)
    raw = bytearray(path.read_bytes())
    weights = model.fc1.weight.detach().numpy()
    record = next(
        info.filename
        for info in zipfile.ZipFile(path).infolist()
        if info.file_size == weights.nbytes
    )
    start, size = _record_offset(bytes(raw), record)
    assert bytes(raw[start : start + size]) == weights.tobytes()  # the fc1 weights, found
    index = int(np.argmin(np.abs(weights.ravel() - 0.0112)))
    raw[start + 4 * index + 2] ^= 0x10  # a mantissa bit of that float32 (little-endian)
    path.write_bytes(bytes(raw))
    os.utime(path)
    silently = torch.load(path, map_location="cpu", weights_only=True)["fc1.weight"].numpy()
    changed = np.flatnonzero(silently.ravel() != weights.ravel())
    assert changed.tolist() == [index]  # the unverified read: one weight differs, no error
    with pytest.raises(DamagedFileError) as err:
        cnn.load_model(path)
    assert str(err.value).startswith(f"{path}: content SHA-256")
    assert "delete it" in str(err.value) and "snakemake rebuilds it" in str(err.value)


def test_a_sealed_model_is_still_a_plain_state_dict(tmp_path):
    """cnn.pt stays a state dict anyone can torch.load and load_state_dict, and a user can
    hand it back as mlm.model (load_model_file, checked by its SHA-256, no seal needed)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(12)
        model = cnn.build_cnn()
    path = tmp_path / "cnn.pt"
    cnn.save_model(model, path)
    state = torch.load(path, map_location="cpu", weights_only=True)
    plain = cnn.MnistCNN()
    plain.load_state_dict(state)
    for name, tensor in model.state_dict().items():
        assert torch.equal(plain.state_dict()[name], tensor), name
    again = cnn.load_model_file(path, file_sha256(path))
    assert torch.equal(again.fc1.weight, model.fc1.weight)


def test_save_model_bytes_do_not_depend_on_the_temporary_name(tmp_path):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        model = cnn.build_cnn()
    cnn.save_model(model, tmp_path / "a.pt")
    cnn.save_model(model, tmp_path / "b" / "other_name.pt")
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b" / "other_name.pt").read_bytes()


def test_training_markdown_sets_the_last_epoch_beside_the_paper():
    import pandas as pd

    log = pd.DataFrame(
        {
            "epoch": np.array([1, 2], np.int32),
            "loss": [0.5, 0.2],
            "train_accuracy": [0.9, 0.95],
            "test_accuracy": [0.91, 0.96],
        }
    )
    text = cnn.training_markdown(log, 3000, 2, {"train_accuracy": 0.9838, "test_accuracy": 0.9846})
    assert text.startswith("# CNN training (3000 images, 2 epochs)")
    row = next(line for line in text.splitlines() if "test accuracy (after" in line)
    assert "0.9600" in row and "0.9846" in row
    assert text.count("\n| ") >= 2 + 2  # both tables, one row per epoch
