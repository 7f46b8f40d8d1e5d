"""Tests of reliquant.mlm.inference: batching invariance, agreement with a direct forward, devices."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from reliquant.core.io import write_frame, write_table
from reliquant.mlm import cnn, inference


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
    p1 = inference.predict_softmax(model, images[:40], batch_size=1, device="cpu")
    p512 = inference.predict_softmax(model, images, batch_size=512, device="cpu")
    assert p1.dtype == np.float32 and p1.shape == (40, 10)
    np.testing.assert_array_equal(p1, p512[:40])  # bit-equal: every pass is padded
    np.testing.assert_allclose(p512.sum(1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("channels_last", [True, False])
def test_scores_do_not_depend_on_batch_size(model, images, channels_last):
    """mlm.infer.batch_size is a speed setting (not a rule param): the scores are bit-equal
    whatever it is, short last batches (600 = 2 x 299 + 2) and tiny batches included."""
    with torch.random.fork_rng(devices=[]):
        torch.set_num_threads(1)
        ref = inference.predict_softmax(
            model, images, batch_size=512, device="cpu", channels_last=channels_last
        )
        for batch_size in (2, 64, 299, 2048):
            got = inference.predict_softmax(
                model, images, batch_size=batch_size, device="cpu", channels_last=channels_last
            )
            np.testing.assert_array_equal(got, ref, err_msg=f"batch_size={batch_size}")
        for n in (1, 2, 3):  # a batch of n images is padded, not scored by other kernels
            got = inference.predict_softmax(
                model, images[:n], batch_size=512, device="cpu", channels_last=channels_last
            )
            np.testing.assert_array_equal(got, ref[:n], err_msg=f"{n} image(s)")


# In a fresh process with the workflow's pinned CPU kernels (MKL's COMPATIBLE branch): the
# softmax of the project's CNN for 600 images at each thread count and batch size, and whether
# each equals the batch-128 scores of the same thread count (in both layouts).
MANY_THREADS_WORKER = r"""
import json, sys

from reliquant.mlm.determinism import pin_cpu_kernels

pin_cpu_kernels()

import numpy as np
import torch

from reliquant.mlm import cnn, inference

torch.manual_seed(11)
model = cnn.build_cnn().eval()
images = np.random.default_rng(0).integers(0, 256, (600, 28, 28), dtype=np.uint8)
same = {}
for threads in (1, 8, 16):
    torch.set_num_threads(threads)
    for layout in (True, False):
        ref = inference.predict_softmax(model, images, 128, "cpu", channels_last=layout)
        for batch_size in (1, 64, 299, 512, 2048):
            got = inference.predict_softmax(model, images, batch_size, "cpu", channels_last=layout)
            same[f"{threads} threads, channels_last={layout}, batch {batch_size}"] = bool(
                np.array_equal(got, ref)
            )
        for start in (3, 299):  # where the passes are cut
            got = inference.predict_softmax(model, images[start:], 64, "cpu", channels_last=layout)
            same[f"{threads} threads, channels_last={layout}, from row {start}"] = bool(
                np.array_equal(got, ref[start:])
            )
print(json.dumps(same))
"""


@pytest.mark.slow
def test_cpu_scores_do_not_depend_on_batch_size_at_many_threads(tmp_path):
    """With the pinned kernels and 8 or more threads, MKL splits the fully connected layer's
    sums among its threads for some row counts (64 and 304 rows: 1-2 ulp apart; seen on a
    16-core Xeon, and here with 8 and 16 threads on any core count), so every CPU pass has
    CPU_FORWARD_ROWS rows: the scores do not depend on the batch size at any thread count."""
    script = tmp_path / "worker.py"
    script.write_text(MANY_THREADS_WORKER)
    env = dict(os.environ, RELIQUANT_NO_PROGRESS="1")
    out = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    same = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(same) == 3 * 2 * 7
    assert all(same.values()), [case for case, ok in same.items() if not ok]


def test_pass_rows_are_fixed_on_the_cpu_and_follow_the_batch_size_on_a_gpu():
    assert {inference.pass_rows(b, "cpu") for b in (1, 64, 128, 299, 4096)} == {
        inference.CPU_FORWARD_ROWS
    }
    assert inference.pass_rows(299, "cuda") == inference.forward_rows(299) == 304
    assert inference.pass_rows(4096, torch.device("cuda:0")) == 4096


def test_forward_rows_pad_to_a_multiple_of_eight():
    """Every pass has a multiple of 8 rows: with MKL's COMPATIBLE branch (pinned by
    reliquant.mlm.determinism) row counts that are not multiples of 4 round differently."""
    assert inference.FORWARD_ROW_MULTIPLE == 8
    want = {1: 32, 2: 32, 32: 32, 33: 40, 64: 64, 299: 304, 512: 512, 2048: 2048}
    assert {b: inference.forward_rows(b) for b in want} == want


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


def test_score_image_file_matches_predict_softmax_for_both_layouts(model, images, tmp_path):
    """An MNIST split and a two-level partition, scored chunk by chunk, equal one in-memory
    predict_softmax call row for row; chunk size and limit change nothing else."""

    from reliquant.core.datasets import mnist_table
    from reliquant.pmnist.reproduction import partitions as perturbed_mnist

    x = images[:50]
    labels = np.arange(50, dtype=np.uint8) % 10
    split = tmp_path / "split.parquet"
    write_table(mnist_table(x, labels), split)
    part = tmp_path / "part.parquet"
    order = np.arange(50)[::-1]  # stored sorted by test_index
    perturbed_mnist.write_partition(
        part,
        [perturbed_mnist.level_table(x[order], labels[order], order, "fog", lv) for lv in (1, 2)],
    )
    direct = inference.predict_softmax(model, x, device="cpu")

    a = inference.score_image_file(model, split, chunk_rows=7, device="cpu")
    assert list(a["corruption"].unique()) == ["none"] and set(a["level"]) == {0}
    np.testing.assert_array_equal(a["index"], np.arange(50))
    np.testing.assert_array_equal(a["label"], labels)
    np.testing.assert_allclose(a[[f"p{c}" for c in range(10)]].to_numpy(), direct, atol=1e-6)
    np.testing.assert_array_equal(a["prediction"], direct.argmax(1))
    big = inference.score_image_file(model, split, chunk_rows=1000, device="cpu")
    np.testing.assert_allclose(big[[f"p{c}" for c in range(10)]], direct, atol=1e-6)

    seen = []
    b = inference.score_image_file(model, part, chunk_rows=16, limit=70, on_chunk=seen.append)
    assert len(b) == 70 and sum(seen) == 70 and max(seen) <= 16
    assert list(b["level"][:50]) == [1] * 50 and set(b["corruption"]) == {"fog"}
    np.testing.assert_allclose(b[[f"p{c}" for c in range(10)]][:50], direct, atol=1e-6)
    assert len(inference.score_image_file(model, part, limit=0)) == 0


def test_score_image_file_names_the_file_without_image_columns(model, tmp_path):
    import pandas as pd

    bad = tmp_path / "bad.parquet"
    write_frame(pd.DataFrame({"index": [0], "label": [1]}), bad)
    with pytest.raises(ValueError, match=r"bad\.parquet.*\['image'\]"):
        inference.score_image_file(model, bad)


@pytest.mark.slow
def test_file_scores_do_not_depend_on_chunk_rows_or_batch_size(model, images, tmp_path):
    """mlm.infer.chunk_rows and batch_size are speed settings (read from the config, not rule
    params): the scored table is bit-equal whatever they are, tiny chunks included."""
    import pandas as pd

    from reliquant.core.datasets import mnist_table

    x = images[:200]
    path = tmp_path / "split.parquet"
    write_table(mnist_table(x, np.arange(200, dtype=np.uint8) % 10), path)
    ref = inference.score_image_file(model, path, chunk_rows=20_000, batch_size=512, device="cpu")
    for chunk_rows, batch_size in [(1, 32), (3, 2), (7, 64), (64, 7), (199, 2048)]:
        got = inference.score_image_file(
            model, path, chunk_rows=chunk_rows, batch_size=batch_size, device="cpu"
        )
        pd.testing.assert_frame_equal(got, ref, check_exact=True, obj=f"{chunk_rows}/{batch_size}")


def test_a_replaced_partition_is_caught_by_its_corruption(model, images, tmp_path):
    """zoom_blur images copied over brightness.parquet (or an MNIST split in a partition's
    place) stop the scoring with the file named, instead of being scored as brightness."""

    from reliquant.core.datasets import mnist_table
    from reliquant.pmnist.reproduction import partitions as perturbed_mnist

    x, labels, order = images[:20], np.arange(20, dtype=np.uint8) % 10, np.arange(20)
    part = tmp_path / "brightness.parquet"
    perturbed_mnist.write_partition(
        part, [perturbed_mnist.level_table(x, labels, order, "zoom_blur", lv) for lv in (1, 2)]
    )
    ok = inference.score_image_file(model, part, chunk_rows=8, corruption="zoom_blur")
    assert len(ok) == 40
    with pytest.raises(ValueError, match=r"brightness\.parquet: rows from 0 on hold .*'zoom_blur'"):
        inference.score_image_file(model, part, chunk_rows=8, corruption="brightness")
    split = tmp_path / "split.parquet"
    write_table(mnist_table(x, labels), split)
    with pytest.raises(ValueError, match=r"split\.parquet: expected a Perturbed MNIST partition"):
        inference.score_image_file(model, split, corruption="fog")


def _tiny_model():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 3)).eval()


def test_any_module_with_preprocess_gives_its_softmax():
    """A custom module on (n, 12) float input: the softmax of its logits, whatever the batch."""
    model = _tiny_model()
    x = np.random.default_rng(1).normal(size=(50, 12)).astype(np.float32)
    with torch.inference_mode():
        direct = torch.softmax(model(torch.from_numpy(x)), dim=-1).numpy()
    p = inference.predict_softmax(model, x, batch_size=512, preprocess=torch.from_numpy)
    assert p.dtype == np.float32 and p.shape == (50, 3)
    np.testing.assert_allclose(p, direct, rtol=1e-6, atol=1e-7)
    for batch_size in (1, 7, 16):
        pb = inference.predict_softmax(model, x, batch_size=batch_size, preprocess=torch.from_numpy)
        np.testing.assert_array_equal(pb, p)  # bit-equal: every pass has the same rows


def test_custom_module_output_feeds_the_mlm():
    from reliquant.mlm import misclassification_likelihood

    model = _tiny_model()
    rng = np.random.default_rng(2)
    x = rng.normal(size=(90, 12)).astype(np.float32)
    p = inference.predict_softmax(model, x, batch_size=32, preprocess=torch.from_numpy)
    labels = np.arange(90) % 3
    result = misclassification_likelihood(p, labels, refine=False)
    likelihood = np.asarray(result.likelihood)
    assert likelihood.shape == (3, 3)
    off = ~np.eye(3, dtype=bool)  # the diagonal is undefined (NaN) by construction
    assert np.isfinite(likelihood[off]).all()
    np.testing.assert_allclose(np.nansum(likelihood, axis=1), 1.0, rtol=1e-9)


def test_custom_module_rejects_bad_preprocess_and_outputs():
    model = _tiny_model()
    x = np.zeros((4, 12), np.float32)
    with pytest.raises(TypeError, match="torch.Tensor"):
        inference.predict_softmax(model, x, preprocess=lambda b: b)
    with pytest.raises(ValueError, match="outputs"):
        inference.predict_softmax(model, x, preprocess=torch.from_numpy, outputs="probs")
    with pytest.raises(ValueError, match="preprocess="):
        inference.predict_softmax(model, x)  # the default preprocess wants MNIST images


def _brute_max_pool2(x: np.ndarray) -> np.ndarray:
    """2x2 max pooling, stride 2, by a loop over the four window positions (numpy)."""
    out = np.full((*x.shape[:2], x.shape[2] // 2, x.shape[3] // 2), -np.inf, dtype=x.dtype)
    for dy in (0, 1):
        for dx in (0, 1):
            window = x[:, :, dy::2, dx::2]
            out = np.where(np.isnan(window) | (window > out), window, out)
    return out


def test_pooled_forward_pools_like_max_pool2d():
    """The pooling of pooled_forward (via the model's own layers) equals F.max_pool2d and a
    brute-force loop, ties, signed zeros and NaN included."""
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, (6, 16, 28, 28)).astype(np.float32)  # many ties
    x[0, 0, :2, :2] = [[-0.0, 0.0], [0.0, -0.0]]
    x[1, 2, 4, 5] = np.nan
    t = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)

    class Probe(torch.nn.Module):  # conv1 that returns x: the first pooling of t
        def forward(self, _):
            return t

    seen = {}

    class Seen(Exception):
        pass

    class Stop(torch.nn.Module):  # conv2 that records its input: relu(pool(t))
        def forward(self, pooled):
            seen["pooled"] = pooled
            raise Seen

    model = cnn.build_cnn()
    model.conv1, model.conv2 = Probe(), Stop()
    with pytest.raises(Seen):
        inference.pooled_forward(model, t)
    got = torch.nn.functional.relu(torch.from_numpy(_brute_max_pool2(x))).numpy()
    want = torch.nn.functional.relu(torch.nn.functional.max_pool2d(t, 2)).numpy()
    np.testing.assert_array_equal(seen["pooled"].numpy(), want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", [11, 12])
def test_pooled_forward_is_bit_identical_to_the_model(seed, images):
    """pooled_forward and MnistCNN.forward give the same float32 bits (channels-last, CPU),
    blank and saturated images (constant activations: ties in every window) included."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = cnn.build_cnn().eval().to(memory_format=torch.channels_last)
    x = cnn.normalise_images(images[:64]).contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        want = model(x).numpy()
        got = inference.pooled_forward(model, x).numpy()
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    # and through predict_softmax: the model's own forward, exp'd, bit for bit
    probs = inference.predict_softmax(model, images[:64], batch_size=64, device="cpu")
    np.testing.assert_array_equal(probs, torch.from_numpy(want).exp().numpy())


def test_a_changed_forward_is_used_instead_of_pooled_forward(model, images, monkeypatch, caplog):
    """If MnistCNN.forward no longer matches pooled_forward (a changed architecture), the
    first-batch check notices and predict_softmax scores with the model's own forward."""

    def avg_pool_forward(self, x):
        F = torch.nn.functional
        x = F.relu(F.avg_pool2d(self.conv1(x), 2))
        x = F.relu(F.avg_pool2d(self.conv2(x), 2))
        return F.log_softmax(self.fc2(F.relu(self.fc1(torch.flatten(x, 1)))), dim=1)

    monkeypatch.setattr(cnn.MnistCNN, "forward", avg_pool_forward)
    with caplog.at_level("WARNING", logger="reliquant.mlm.inference"):
        got = inference.predict_softmax(model, images[:100], batch_size=32, device="cpu")
    assert "differs from MnistCNN.forward" in caplog.text
    probs = []
    with torch.inference_mode():
        for start in range(0, 100, 32):
            batch = images[:100][start : start + 32]
            padded = np.concatenate([batch, np.zeros((32 - len(batch), 28, 28), np.uint8)])
            x = cnn.normalise_images(padded).contiguous(memory_format=torch.channels_last)
            probs.append(model(x).exp()[: len(batch)].numpy())
    np.testing.assert_array_equal(got, np.concatenate(probs))


def test_score_image_table_is_the_frame_and_writes_the_same_file(model, images, tmp_path):
    """score_image_table holds score_image_file's rows; written with write_table it gives the
    file write_frame gives for the frame (same content, same bytes)."""
    import pyarrow.parquet as pq

    from reliquant.core.datasets import mnist_table
    from reliquant.core.io import read_table
    from reliquant.mlm.softmax import SOFTMAX_SCHEMA
    from reliquant.pmnist.reproduction import partitions as perturbed_mnist

    x, labels, order = images[:60], np.arange(60, dtype=np.uint8) % 10, np.arange(60)
    split = tmp_path / "split.parquet"
    write_table(mnist_table(x, labels), split)
    part = tmp_path / "fog.parquet"
    perturbed_mnist.write_partition(
        part, [perturbed_mnist.level_table(x, labels, order, "fog", lv) for lv in (1, 2, 3)]
    )
    for path, kw in [(split, {}), (part, {"corruption": "fog"}), (part, {"limit": 130})]:
        table = inference.score_image_table(model, path, chunk_rows=25, batch_size=16, **kw)
        frame = inference.score_image_file(model, path, chunk_rows=25, batch_size=16, **kw)
        assert table.schema == SOFTMAX_SCHEMA
        assert all(c.num_chunks == 1 for c in table.columns)
        write_table(table, tmp_path / "a.parquet", SOFTMAX_SCHEMA)
        write_frame(frame, tmp_path / "b.parquet", SOFTMAX_SCHEMA)
        assert read_table(tmp_path / "a.parquet").equals(read_table(tmp_path / "b.parquet"))
        assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
        assert pq.read_metadata(tmp_path / "a.parquet").num_rows == len(frame)
    empty = inference.score_image_table(model, part, limit=0)
    assert empty.num_rows == 0 and empty.schema == SOFTMAX_SCHEMA


def test_score_image_table_checks_the_forward_once_per_file(model, images, tmp_path, monkeypatch):
    """The first-batch check (model(x) beside pooled_forward) runs once per file, not once per
    chunk, and the rows equal predict_softmax of the whole array."""
    from reliquant.core.datasets import mnist_table

    x, labels = images[:90], np.arange(90, dtype=np.uint8) % 10
    path = tmp_path / "split.parquet"
    write_table(mnist_table(x, labels), path)
    calls = []
    own_forward = cnn.MnistCNN.forward

    def counted(self, xb):
        calls.append(len(xb))
        return own_forward(self, xb)

    monkeypatch.setattr(cnn.MnistCNN, "forward", counted)
    table = inference.score_image_table(model, path, chunk_rows=20, batch_size=8, device="cpu")
    assert len(calls) == 1  # five chunks, one check
    want = inference.predict_softmax(model, x, batch_size=8, device="cpu")
    got = np.stack([table.column(f"p{c}").to_numpy() for c in range(10)], axis=1)
    np.testing.assert_array_equal(got, want)
