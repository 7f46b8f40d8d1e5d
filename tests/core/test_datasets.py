"""Raw data: IDX parsing, checksum verification, MNIST loading, Pima and Iris tables."""

from __future__ import annotations

import gzip
import shutil
import struct

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import RAW

from reliquant.core.datasets import (
    MNIST_RAW_FILES,
    MNIST_TEST_CLASS_COUNTS,
    ChecksumError,
    IdxFormatError,
    iris_table,
    load_mnist,
    load_mnist_split,
    mnist_table,
    pima_table,
    read_idx,
    read_manifest,
    verify_manifest,
)
from reliquant.core.io import write_table


def _write_idx(path, array: np.ndarray, magic: int, gz: bool = True) -> None:
    header = struct.pack(">ii", magic, array.shape[0])
    if array.ndim == 3:
        header += struct.pack(">ii", *array.shape[1:])
    opener = gzip.open if gz else open
    with opener(path, "wb") as handle:
        handle.write(header + array.astype(np.uint8).tobytes())


@pytest.mark.parametrize("gz", [True, False])
def test_read_idx_roundtrip_synthetic(tmp_path, gz):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(7, 3, 5), dtype=np.uint8)
    labels = rng.integers(0, 10, size=7, dtype=np.uint8)
    _write_idx(tmp_path / "i.idx", images, 2051, gz)
    _write_idx(tmp_path / "l.idx", labels, 2049, gz)
    np.testing.assert_array_equal(read_idx(tmp_path / "i.idx"), images)
    np.testing.assert_array_equal(read_idx(tmp_path / "l.idx"), labels)


def test_read_idx_rejects_bad_magic_and_truncation(tmp_path):
    bad = tmp_path / "bad.idx"
    bad.write_bytes(struct.pack(">ii", 1234, 1) + b"\x00")
    with pytest.raises(IdxFormatError, match="magic number 1234"):
        read_idx(bad)
    short = tmp_path / "short.idx"
    short.write_bytes(struct.pack(">ii", 2049, 5) + b"\x00\x01")
    with pytest.raises(IdxFormatError, match="promises 5 bytes"):
        read_idx(short)


def test_official_mnist_shapes_dtypes_and_counts(raw_dir):
    mnist = raw_dir / "mnist"
    train_x = read_idx(mnist / "train-images-idx3-ubyte.gz")
    train_y = read_idx(mnist / "train-labels-idx1-ubyte.gz")
    test_x = read_idx(mnist / "t10k-images-idx3-ubyte.gz")
    test_y = read_idx(mnist / "t10k-labels-idx1-ubyte.gz")
    assert train_x.shape == (60_000, 28, 28) and train_x.dtype == np.uint8
    assert test_x.shape == (10_000, 28, 28) and test_x.dtype == np.uint8
    assert train_y.shape == (60_000,) and test_y.shape == (10_000,)
    # Label counts published with MNIST: 5,923 zeros in training, 980 in test.
    assert np.bincount(train_y, minlength=10)[0] == 5_923
    assert np.bincount(test_y, minlength=10).tolist() == [
        980,
        1135,
        1032,
        1010,
        982,
        892,
        958,
        1028,
        974,
        1009,
    ]
    # the constant the configuration's sizes are checked against, before any data is read
    assert tuple(np.bincount(test_y, minlength=10).tolist()) == MNIST_TEST_CLASS_COUNTS
    assert train_x.max() == 255 and train_x.min() == 0


def test_mnist_parquet_roundtrip(tmp_path):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(11, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=11, dtype=np.uint8)
    table = mnist_table(images, labels)
    write_table(table, tmp_path / "m.parquet", table.schema)
    back_x, back_y = load_mnist_split(tmp_path / "m.parquet")
    np.testing.assert_array_equal(back_x, images)
    np.testing.assert_array_equal(back_y, labels)
    assert pq.read_schema(tmp_path / "m.parquet").field("index").type == "int32"


def _fake_mnist(root, sizes: dict[str, int], seed: int = 0) -> dict[str, tuple]:
    """Raw IDX files of small fake splits under root/data/raw/mnist; their arrays."""
    raw = root / "data" / "raw" / "mnist"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    arrays = {}
    for split, n in sizes.items():
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        images_name, labels_name = MNIST_RAW_FILES[split]
        _write_idx(raw / images_name, images, 2051)
        _write_idx(raw / labels_name, labels, 2049)
        arrays[split] = (images, labels)
    return arrays


def test_load_mnist_reads_raw_files_then_the_workflows_parquet(tmp_path):
    """Before the workflow ran: the raw IDX files. Once every split asked for is converted:
    the parquet files (written here with other pixels, to see which source was read)."""
    raw = _fake_mnist(tmp_path, {"train": 7, "test": 5})
    xtr, ytr, xte, yte = load_mnist(tmp_path)
    for got, want in zip((xtr, ytr, xte, yte), (*raw["train"], *raw["test"]), strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.uint8
    x, _ = load_mnist(tmp_path, ("test",))
    np.testing.assert_array_equal(x, raw["test"][0])

    parquet = tmp_path / "results" / "data"
    parquet.mkdir(parents=True)
    converted = {split: (255 - x, y) for split, (x, y) in raw.items()}
    table = mnist_table(*converted["test"])
    write_table(table, parquet / "mnist_test.parquet", table.schema)
    xtr, _, xte, _ = load_mnist(tmp_path)  # train not converted yet: raw files for both
    np.testing.assert_array_equal(xte, raw["test"][0])
    xte, yte = load_mnist(tmp_path, ["test"])  # the one split asked for is converted
    np.testing.assert_array_equal(xte, converted["test"][0])
    np.testing.assert_array_equal(yte, converted["test"][1])

    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    (parquet / "mnist_test.parquet").rename(elsewhere / "mnist_test.parquet")
    xte, _ = load_mnist(tmp_path, ["test"], parquet_dir=elsewhere)
    np.testing.assert_array_equal(xte, converted["test"][0])
    xte, _ = load_mnist("/nonexistent", ["test"], raw_dir=tmp_path / "data" / "raw" / "mnist")
    np.testing.assert_array_equal(xte, raw["test"][0])
    with pytest.raises(ValueError, match="unknown MNIST split"):
        load_mnist(tmp_path, ["validation"])


def test_load_mnist_of_the_vendored_files_equals_read_idx(raw_dir):
    x, y = load_mnist(raw_dir.parent.parent, ["test"], parquet_dir=raw_dir / "absent")
    assert x.shape == (10_000, 28, 28) and y.shape == (10_000,)
    np.testing.assert_array_equal(y, read_idx(raw_dir / "mnist" / "t10k-labels-idx1-ubyte.gz"))


def test_manifest_verifies_vendored_files(raw_dir):
    verified = verify_manifest(raw_dir / "checksums.tsv")
    assert set(verified["path"]) == {e.path for e in read_manifest(raw_dir / "checksums.tsv")}
    assert len(verified) == 19  # 4 MNIST files, Pima, 14 tabular benchmarks


def _copy_raw(raw_dir, tmp_path):
    dest = tmp_path / "raw"
    shutil.copytree(raw_dir, dest)
    return dest


def test_corrupted_byte_names_file_and_both_digests(raw_dir, tmp_path):
    raw = _copy_raw(raw_dir, tmp_path)
    target = raw / "mnist" / "t10k-labels-idx1-ubyte.gz"
    data = bytearray(target.read_bytes())
    data[100] ^= 0xFF
    target.write_bytes(bytes(data))
    entry = {e.path: e for e in read_manifest(raw / "checksums.tsv")}[
        "mnist/t10k-labels-idx1-ubyte.gz"
    ]
    with pytest.raises(ChecksumError) as err:
        verify_manifest(raw / "checksums.tsv")
    message = str(err.value)
    assert "t10k-labels-idx1-ubyte.gz" in message
    assert entry.sha256 in message
    assert "found" in message and message.split("found ")[1].strip() != entry.sha256


def test_missing_file_without_download_is_named(raw_dir, tmp_path):
    raw = _copy_raw(raw_dir, tmp_path)
    (raw / "pima" / "diabetes.csv").unlink()
    with pytest.raises(ChecksumError, match=r"pima/diabetes\.csv is missing"):
        verify_manifest(raw / "checksums.tsv", allow_download=True)


def test_pima_table_matches_documented_counts(raw_dir):
    frame = pima_table(raw_dir / "pima" / "diabetes.csv").to_pandas()
    assert frame.shape == (768, 9)
    assert int(frame["Outcome"].sum()) == 268
    zero_any = (frame[["Glucose", "BloodPressure", "BMI"]] == 0).any(axis=1)
    assert int(zero_any.sum()) == 44


def test_iris_table_matches_sklearn():
    from sklearn.datasets import load_iris

    frame = iris_table().to_pandas()
    bunch = load_iris()
    np.testing.assert_array_equal(frame.iloc[:, :4].to_numpy(), bunch.data)
    np.testing.assert_array_equal(frame["target"].to_numpy(), bunch.target)
    assert frame["target_name"].iloc[-1] == "virginica"


# ------------------------------------------------------------------- bad Pima files
def _pima_with(tmp_path, line: int, column: str, value: str, encoding_bytes: bytes | None = None):
    """The vendored Pima CSV with one cell replaced (line counted with the header as 1)."""
    src = (RAW / "pima" / "diabetes.csv").read_text().splitlines()
    header = src[0].split(",")
    cells = src[line - 1].split(",")
    cells[header.index(column)] = value
    src[line - 1] = ",".join(cells)
    data = ("\n".join(src) + "\n").encode()
    if encoding_bytes is not None:
        data = data.replace(value.encode(), encoding_bytes, 1)
    path = tmp_path / "diabetes.csv"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("line", "column", "value"),
    [
        (5, "Outcome", "7"),
        (9, "Glucose", "-50"),
        (3, "BMI", "abc"),
        (4, "Age", "31.5"),
        (6, "Insulin", ""),
    ],
)
def test_pima_out_of_range_names_line_column_and_value(tmp_path, line, column, value):
    from reliquant.core.datasets import pima_table

    path = _pima_with(tmp_path, line, column, value)
    with pytest.raises(ValueError, match=rf"line {line}, column {column}: value '{value}'"):
        pima_table(path)


def test_pima_non_utf8_names_the_line(tmp_path):
    from reliquant.core.datasets import pima_table

    path = _pima_with(tmp_path, 12, "Age", "XX", encoding_bytes=b"\xff\xfe")
    with pytest.raises(ValueError, match="line 12 is not valid UTF-8"):
        pima_table(path)
