"""Atomic writers and the image column codec."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from reliquant.core.io import (
    arrow_to_images,
    atomic_path,
    images_to_arrow,
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
