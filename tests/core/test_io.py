"""Atomic writers and the image column codec."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from reliquant.core.io import (
    IMAGE_LAYOUT_VERSION,
    arrow_to_images,
    atomic_path,
    image_type,
    images_to_arrow,
    read_table,
    write_frame,
    write_table,
    write_text,
)


def test_failed_write_leaves_nothing(tmp_path):
    dest = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError), atomic_path(dest) as tmp:
        tmp.write_bytes(b"partial")
        raise RuntimeError("boom")
    assert not dest.exists()
    assert list(tmp_path.iterdir()) == []


def test_failed_overwrite_keeps_previous_content(tmp_path):
    dest = tmp_path / "out.txt"
    write_text("old", dest)
    with pytest.raises(ValueError), atomic_path(dest) as tmp:
        tmp.write_text("new")
        raise ValueError("stop")
    assert dest.read_text() == "old"


def test_schema_mismatch_is_named(tmp_path):
    schema = pa.schema([("a", pa.int32()), ("b", pa.float64())])
    with pytest.raises(ValueError, match=r"missing columns \['b'\].*unexpected columns \['c'\]"):
        write_frame(pd.DataFrame({"a": [1], "c": [2.0]}), tmp_path / "x.parquet", schema)
    assert not (tmp_path / "x.parquet").exists()


def test_write_table_casts_to_schema_and_is_deterministic(tmp_path):
    schema = pa.schema([("a", pa.int16()), ("b", pa.float32())])
    frame = pd.DataFrame({"b": [1.5, 2.5], "a": [1, 2]})
    write_frame(frame, tmp_path / "1.parquet", schema)
    write_frame(frame, tmp_path / "2.parquet", schema)
    assert pq.read_schema(tmp_path / "1.parquet").names == ["a", "b"]
    assert pq.read_schema(tmp_path / "1.parquet").field("a").type == pa.int16()
    assert (tmp_path / "1.parquet").read_bytes() == (tmp_path / "2.parquet").read_bytes()


@settings(max_examples=25, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(0, 6), st.just(28), st.just(28))))
def test_image_codec_roundtrip(images):
    np.testing.assert_array_equal(arrow_to_images(images_to_arrow(images), 28), images)


def test_image_codec_rejects_wrong_dtype():
    with pytest.raises(ValueError, match="uint8 array of shape"):
        images_to_arrow(np.zeros((2, 28, 28), dtype=np.float32))


def test_image_codec_through_parquet_chunks(tmp_path):
    images = np.arange(3 * 28 * 28, dtype=np.uint64).astype(np.uint8).reshape(3, 28, 28)
    table = pa.table({"image": images_to_arrow(images)})
    write_table(pa.concat_tables([table, table]), tmp_path / "i.parquet")
    back = arrow_to_images(pq.read_table(tmp_path / "i.parquet").column("image"))
    np.testing.assert_array_equal(back, np.concatenate([images, images]))


def test_image_column_is_one_fixed_size_value_per_image():
    """Layout 2: fixed_size_binary(784), each value an image's bytes in row-major order."""
    images = np.arange(2 * 28 * 28, dtype=np.uint64).astype(np.uint8).reshape(2, 28, 28)
    column = images_to_arrow(images)
    assert IMAGE_LAYOUT_VERSION == 2
    assert column.type == image_type(28) == pa.binary(784)
    assert column.to_pylist() == [img.tobytes() for img in images]
    # a slice and several chunks decode to the same images
    np.testing.assert_array_equal(arrow_to_images(column.slice(1, 1)), images[1:])
    chunked = pa.chunked_array([column.slice(0, 1), column.slice(1, 1)])
    np.testing.assert_array_equal(arrow_to_images(chunked), images)
    assert arrow_to_images(images_to_arrow(images[:0])).shape == (0, 28, 28)


def test_image_codec_refuses_the_old_layout_naming_the_file(tmp_path):
    """A file of layout 1 (fixed_size_list<uint8>[784]) is refused with what to do."""
    images = np.ones((2, 28, 28), dtype=np.uint8)
    old = pa.FixedSizeListArray.from_arrays(pa.array(images.reshape(-1)), 784)
    write_table(pa.table({"image": old}), tmp_path / "old.parquet")
    column = read_table(tmp_path / "old.parquet").column("image")
    with pytest.raises(ValueError, match=r"old\.parquet: image column .* layout before version 2"):
        arrow_to_images(column, source=tmp_path / "old.parquet")
    with pytest.raises(ValueError, match="expected an image column of type"):
        arrow_to_images(images_to_arrow(images), side=27)
    with pytest.raises(ValueError, match="missing images"):
        arrow_to_images(pa.array([b"x" * 784, None], type=pa.binary(784)))


# ------------------------------------------------------------------------------- integrity
def _corrupt_byte(path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))


def test_every_flipped_bit_in_the_data_pages_is_caught_on_read(tmp_path):
    """Page checksums: no flipped bit inside a data page is read back silently."""
    from reliquant.core.io import read_table

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=2000), "b": rng.integers(0, 9, size=2000)})
    dest = tmp_path / "t.parquet"
    write_frame(frame, dest)
    meta = pq.ParquetFile(dest).metadata
    column = meta.row_group(0).column(0)
    start = min(o for o in (column.dictionary_page_offset, column.data_page_offset) if o)
    end = start + column.total_compressed_size
    offsets = np.linspace(start + 20, end - 1, 12).astype(int)  # past the page header
    silent = []
    for offset in offsets:
        copy = tmp_path / f"c{offset}.parquet"
        copy.write_bytes(dest.read_bytes())
        _corrupt_byte(copy, int(offset))
        try:
            back = read_table(copy).to_pandas()
        except (OSError, pa.ArrowException):
            continue
        if not back.equals(frame):
            silent.append(int(offset))
    assert silent == [], f"corruption at offsets {silent} was read back silently"


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    dest = tmp_path / "out.parquet"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    stale = tmp_path / f".out.parquet.w{int(gone.stdout)}-{host}.abc12345.parquet"
    stale.write_bytes(b"half-written by a killed job")
    other = tmp_path / f".other.parquet.w{int(gone.stdout)}-{host}.abc12345.parquet"  # stays
    other.write_bytes(b"x")
    write_frame(pd.DataFrame({"a": [1, 2]}), dest)
    assert not stale.exists()
    assert other.exists()
    assert pd.read_parquet(dest)["a"].tolist() == [1, 2]


def test_writes_and_reads_are_logged_with_a_digest(tmp_path, caplog):
    import hashlib
    import logging

    from reliquant.core.io import read_frame

    dest = tmp_path / "x.parquet"
    with caplog.at_level(logging.INFO, logger="reliquant.io"):
        write_frame(pd.DataFrame({"a": [1.0, 2.0]}), dest)
        read_frame(dest)
    digest = hashlib.sha256(dest.read_bytes()).hexdigest()
    assert f"wrote {dest}: 2 rows" in caplog.text
    assert digest in caplog.text
    assert f"read {dest}: 2 rows" in caplog.text
