"""Content digests of parquet intermediates: any change after the write is caught at read.

Page checksums catch a flipped bit in a data page; a flipped bit in the footer can rename or
retype a column or drop rows and still parse. The digest recorded at write
(``reliquant.digest``) closes that gap: every read either raises an error naming the file
or returns exactly what was written.
"""

from __future__ import annotations

import io
import logging
import os
import time
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.core.io import (
    DIGEST_KEY,
    DamagedFileError,
    damaged_outputs,
    open_parquet,
    read_frame,
    read_table,
    read_table_file,
    remove_damaged_outputs,
    seal_zip,
    table_digest,
    table_file_columns,
    table_file_rows,
    verify_zip_seal,
    write_frame,
    write_row_groups,
    write_table,
    zip_seal_problem,
)

#: A small stats-like table (the pmnist stats hold a string, small ints, floats, a
#: fixed-size histogram and a digest string), as the workflow writes it.
STATS_SCHEMA = pa.schema(
    [
        ("corruption", pa.string()),
        ("level", pa.uint8()),
        ("n_images", pa.int32()),
        ("mean_intensity", pa.float64()),
        ("histogram", pa.list_(pa.float64(), 4)),
        ("sha256", pa.string()),
    ]
)


def _stats_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "corruption": ["fog", "fog", "fog"],
            "level": [0, 1, 2],
            "n_images": [100, 100, 98],
            "mean_intensity": [33.5, 40.25, 51.0],
            "histogram": [np.array([0.5, 0.25, 0.125, 0.125])] * 3,
            "sha256": ["ab12", "cd34", "ef56"],
        }
    )


@pytest.fixture
def stats_file(tmp_path):
    path = tmp_path / "stats.parquet"
    write_frame(_stats_frame(), path, STATS_SCHEMA)
    return path


def _flip(fd: int, bit: int) -> None:
    """Flip one bit of the open file ``fd`` in place (a second call flips it back)."""
    byte = os.pread(fd, 1, bit // 8)[0]
    os.pwrite(fd, bytes([byte ^ (1 << (bit % 8))]), bit // 8)


def _same(got: pa.Table, ref: pa.Table) -> bool:
    """Equal values, types and schema metadata (a list's child field name is not content:
    Arrow's type equality ignores it, and a parquet round trip renames it itself)."""
    return got.equals(ref) and got.schema.metadata == ref.schema.metadata


# ----------------------------------------------------------------------------- bit flips
@pytest.mark.slow
def test_every_flipped_bit_is_caught_or_harmless(stats_file):
    """The acceptance test of the damaged-intermediate bullet of issue 22: flip each bit of a
    small intermediate in turn; every read either raises an error naming the file or returns
    the table as written (a flip in statistics or unused metadata). Without the digest, 156
    flips of a 5.7 kB stats file were read back with other column names, types or rows."""
    ref = read_table(stats_file)
    reference_frame = read_frame(stats_file)
    n_bits = stats_file.stat().st_size * 8
    caught = harmless = 0
    silent, unnamed = [], []
    start = time.perf_counter()
    logging.disable(logging.CRITICAL)  # one log line per read otherwise
    fd = os.open(stats_file, os.O_RDWR)
    try:
        for bit in range(n_bits):
            _flip(fd, bit)
            try:
                got = read_table(stats_file)
            except DamagedFileError as err:
                caught += 1
                if not str(err).startswith(str(stats_file)):
                    unnamed.append(bit)
            else:
                if _same(got, ref):
                    harmless += 1
                else:
                    silent.append(bit)
            finally:
                _flip(fd, bit)
    finally:
        os.close(fd)
        logging.disable(logging.NOTSET)
    assert silent == [], f"bits {silent[:20]} ({len(silent)}) were read back changed"
    assert unnamed == [], f"bits {unnamed[:20]}: errors that do not name the file"
    assert caught + harmless == n_bits and caught > n_bits // 2
    assert read_frame(stats_file).equals(reference_frame)  # flipped back: intact again
    print(
        f"{n_bits} flips: {caught} caught, {harmless} harmless, {time.perf_counter() - start:.1f} s"
    )


def test_flipped_bits_in_a_streamed_read_raise_before_the_last_batch(stats_file):
    """open_parquet().iter_batches: a stride of flips over the whole file, read one row at a
    time; a damaged file never yields its last batch (the error comes instead)."""
    ref = read_table(stats_file)
    n_bits = stats_file.stat().st_size * 8
    silent = []
    logging.disable(logging.CRITICAL)
    fd = os.open(stats_file, os.O_RDWR)
    try:
        for bit in range(0, n_bits, 7):
            _flip(fd, bit)
            batches = []
            try:
                for batch in open_parquet(stats_file).iter_batches(batch_size=1):
                    batches.append(batch)
            except DamagedFileError as err:
                assert str(stats_file) in str(err)
                assert len(batches) < ref.num_rows  # the last batch was held back
            else:
                got = pa.Table.from_batches(batches)
                if not got.equals(ref):
                    silent.append(bit)
            finally:
                _flip(fd, bit)
    finally:
        os.close(fd)
        logging.disable(logging.NOTSET)
    assert silent == []


def _tampered(tmp_path, rows: int = 30) -> tuple:
    """A partition-like file whose data parse cleanly but differ from its digest record: what a
    footer flip that changes a value's meaning looks like to the reader."""
    schema = pa.schema([("level", pa.uint8()), ("value", pa.float64())])
    groups = [
        pa.table({"level": np.full(10, lv, np.uint8), "value": np.arange(10.0) + lv})
        for lv in range(rows // 10)
    ]
    good = tmp_path / "good.parquet"
    write_row_groups(groups, good, schema)
    record = pq.ParquetFile(good).metadata.metadata[DIGEST_KEY.encode()]
    changed = [g.set_column(1, "value", pa.array(g.column("value").to_numpy() * 2)) for g in groups]
    bad = tmp_path / "bad.parquet"
    with pq.ParquetWriter(bad, schema, compression="zstd", write_page_checksum=True) as writer:
        for table in changed:
            writer.write_table(table, row_group_size=10)
        writer.add_key_value_metadata({DIGEST_KEY: record.decode()})
    return good, bad, pa.concat_tables(groups)


def test_a_streamed_read_of_a_tampered_file_raises_at_its_end(tmp_path):
    good, bad, table = _tampered(tmp_path)
    streamed = open_parquet(good).iter_batches(batch_size=10)
    assert pa.Table.from_batches(list(streamed)).equals(table)
    seen = []
    with pytest.raises(DamagedFileError, match=r"bad\.parquet: column 'value' differs"):
        for batch in open_parquet(bad).iter_batches(batch_size=10):
            seen.append(batch.num_rows)
    assert seen == [10, 10]  # every batch but the last
    with pytest.raises(DamagedFileError, match=r"bad\.parquet: column 'value' differs"):
        read_table(bad)
    with pytest.raises(DamagedFileError, match=r"bad\.parquet"):
        open_parquet(bad).read(columns=["value"])
    # a column that was not changed reads fine, alone
    assert read_table(bad, columns=["level"]).equals(table.select(["level"]))
    with pytest.raises(ValueError, match="verify it"):
        open_parquet(good).read_row_group(0)


# ------------------------------------------------------------------------------ truncation
@pytest.mark.parametrize("keep", [0, 1, 4, 8, 100, -200, -9, -8, -4, -1])
def test_a_truncated_file_is_caught_by_every_reader_and_by_the_footer_check(stats_file, keep):
    data = stats_file.read_bytes()
    stats_file.write_bytes(data[:keep] if keep >= 0 else data[: len(data) + keep])
    for read in (read_table, read_frame, open_parquet):
        with pytest.raises(DamagedFileError, match=rf"^{stats_file}: "):
            read(stats_file)
    assert list(damaged_outputs([stats_file])) == [stats_file]


# -------------------------------------------------------------------------------- roundtrip
def test_write_then_read_returns_the_content_unchanged(tmp_path, stats_file):
    """Only metadata is added: the table equals what pyarrow itself reads back, the frame
    equals what was written, and equal tables still give byte-equal files."""
    frame = _stats_frame()
    got = read_frame(stats_file)
    pd.testing.assert_frame_equal(got, frame, check_dtype=False)
    assert got.dtypes.tolist() == pq.read_table(stats_file).to_pandas().dtypes.tolist()
    table = read_table(stats_file)
    assert table.equals(pq.read_table(stats_file))
    assert DIGEST_KEY.encode() not in (table.schema.metadata or {})
    again = tmp_path / "again.parquet"
    write_frame(frame, again, STATS_SCHEMA)
    assert again.read_bytes() == stats_file.read_bytes()
    streamed = open_parquet(stats_file).iter_batches(batch_size=2, columns=["level", "sha256"])
    assert pa.Table.from_batches(list(streamed)).equals(table.select(["level", "sha256"]))
    assert table_file_rows(stats_file) == 3


def test_filters_and_schema_read_as_before(tmp_path):
    frame = pd.DataFrame({"test_index": np.arange(20) % 5, "x": np.arange(20.0)})
    path = tmp_path / "f.parquet"
    write_frame(frame, path)
    got = read_table(path, columns=["x"], filters=[("test_index", "==", 3)])
    assert got.column_names == ["x"] and got.column("x").to_pylist() == [3.0, 8.0, 13.0, 18.0]
    assert got.equals(pq.read_table(path, columns=["x"], filters=[("test_index", "==", 3)]))
    dnf = [[("test_index", "==", 1)], [("x", ">", 16.0)]]
    assert read_table(path, filters=dnf).equals(pq.read_table(path, filters=dnf))
    expression = pc.field("test_index") == 4
    assert read_table(path, columns=["x"], filters=expression).column("x").to_pylist() == [
        4.0,
        9.0,
        14.0,
        19.0,
    ]
    schema = pa.schema([("x", pa.float32())])
    assert read_table(path, schema=schema).schema.field("x").type == pa.float32()
    with pytest.raises(ValueError, match=r"has no columns \['nope'\]"):
        read_table(path, columns=["nope"])


def test_a_file_without_a_digest_is_refused_unless_it_is_a_users_table(tmp_path, caplog):
    path = tmp_path / "old.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(path)
    for read in (read_table, read_frame, open_parquet):
        with pytest.raises(DamagedFileError, match=r"old\.parquet: no reliquant\.digest record"):
            read(path)
    with caplog.at_level(logging.WARNING, logger="reliquant.io"):
        assert read_table_file(path)["a"].tolist() == [1, 2]
        assert read_table(path, require_digest=False).num_rows == 2
        assert table_file_columns(path) == ["a"] and table_file_rows(path) == 2
    # a user's own table: no warning about a record the project never asked them to write
    assert "reliquant.digest" not in caplog.text
    assert list(damaged_outputs([path])) == [path]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=5)), min_size=1, max_size=12),
    st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), min_size=1, max_size=12),
    st.integers(1, 5),
)
@pytest.mark.slow
def test_the_digest_does_not_depend_on_batching_or_representation(strings, ints, size):
    n = min(len(strings), len(ints))
    table = pa.table(
        {
            "s": pa.array(strings[:n], pa.string()),
            "i": pa.array(ints[:n], pa.int64()),
            "l": pa.array(
                [[v] * (k % 3) if v is not None else None for k, v in enumerate(ints[:n])],
                pa.list_(pa.int64()),
            ),
        }
    )
    whole = table_digest(table)
    rechunked = pa.Table.from_batches(table.combine_chunks().to_batches(max_chunksize=size))
    assert table_digest(rechunked) == whole
    wide = table.cast(
        pa.schema([("s", pa.large_string()), ("i", pa.int64()), ("l", pa.large_list(pa.int64()))])
    )
    assert table_digest(wide) == whole
    encoded = table.set_column(0, "s", table.column("s").dictionary_encode())
    assert table_digest(encoded) == whole
    if n > 1:
        changed = table.set_column(1, "i", pa.array(ints[1:n] + ints[:1], pa.int64()))
        if changed.column("i").to_pylist() != table.column("i").to_pylist():
            assert table_digest(changed) != whole


def test_an_unsupported_type_fails_at_write(tmp_path):
    table = pa.table({"u": pa.array([{"a": 1}], pa.map_(pa.string(), pa.int64()))})
    with pytest.raises(TypeError, match="no content digest"):
        write_table(table, tmp_path / "m.parquet")
    assert not (tmp_path / "m.parquet").exists()


# --------------------------------------------------------------- damaged files in a workspace
def test_only_the_given_outputs_are_checked_and_the_damaged_ones_removed(tmp_path, caplog):
    results = tmp_path / "results"
    (results / "a").mkdir(parents=True)
    good = results / "a" / "good.parquet"
    write_frame(_stats_frame(), good, STATS_SCHEMA)
    short = results / "a" / "short.parquet"
    short.write_bytes(good.read_bytes()[:-100])
    empty = results / "empty.parquet"
    empty.write_bytes(b"")
    old = results / "old.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(old)
    model = results / "model.pt"
    model.write_bytes(b"PK not a sealed archive")
    notes = results / "notes.md"  # a suffix without a check
    notes.write_text("| a |")
    export = results / "my_export.parquet"  # a user's: not an output, never passed
    pd.DataFrame({"a": [1]}).to_parquet(export)
    outputs = [good, short, empty, old, model, notes, results / "missing.parquet"]
    with caplog.at_level(logging.WARNING, logger="reliquant.io"):
        removed = remove_damaged_outputs(outputs)
    assert sorted(removed) == sorted([short, empty, old, model])
    assert "no PAR1" in removed[short] and "no reliquant.digest" in removed[old]
    assert "not sealed" in removed[model]
    assert good.exists() and notes.exists() and export.exists()
    assert not short.exists() and not empty.exists() and not old.exists()
    assert f"removed {short}" in caplog.text
    assert remove_damaged_outputs(outputs) == {}


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


def test_a_sealed_zip_reads_as_before_and_any_flipped_bit_is_caught(tmp_path):
    """seal_zip writes the SHA-256 of the archive's bytes as its comment: zipfile reads the
    members unchanged, and one flipped bit anywhere (a member's data, a header, the central
    directory, the seal) or a truncation is reported, naming the file."""
    rng = np.random.default_rng(0)
    payload = rng.bytes(300)
    data = _zip_bytes({"a/data.pkl": b"x" * 50, "a/data/0": payload})
    sealed = seal_zip(data)
    assert seal_zip(data) == sealed and sealed[: len(data) - 2] == data[:-2]
    path = tmp_path / "m.pt"
    path.write_bytes(sealed)
    assert zip_seal_problem(path) is None
    verify_zip_seal(path)
    with zipfile.ZipFile(path) as archive:
        assert archive.read("a/data/0") == payload and archive.comment.startswith(b"reliquant")
    for bit in rng.choice(len(sealed) * 8, 300, replace=False):
        flipped = bytearray(sealed)
        flipped[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(flipped))
        assert zip_seal_problem(path) is not None, bit
        with pytest.raises(DamagedFileError, match=rf"^{path}: .*delete it"):
            verify_zip_seal(path)
    for cut in (0, 1, 30, len(sealed) // 2, len(sealed) - 1):
        path.write_bytes(sealed[:cut])
        assert zip_seal_problem(path) is not None, cut
    path.write_bytes(data)  # written without a seal
    assert "not sealed" in zip_seal_problem(path)
    with pytest.raises(ValueError, match="no archive comment"):
        seal_zip(sealed)
    with pytest.raises(ValueError, match="zip archive"):
        seal_zip(b"plain bytes")


def test_a_users_parquet_with_an_index_is_read_as_pandas_reads_it(tmp_path):
    """DataFrame.to_parquet() stores a non-default index as columns (``__index_level_0__``,
    or the index's name) that pandas restores as the index: they are no data columns."""
    base = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": ["a", "b", "c"]})
    frames = {
        "unnamed": base.set_axis([10, 20, 30]),
        "named": base.set_axis(pd.Index(["r1", "r2", "r3"], name="id")),
        "multi": base.set_axis(pd.MultiIndex.from_tuples([(1, "a"), (1, "b"), (2, "a")])),
        "range": base,
        "sliced": pd.concat([base, base]).iloc[::2],
    }
    for name, frame in frames.items():
        path = tmp_path / f"{name}.parquet"
        frame.to_parquet(path)
        expected = pd.read_parquet(path)
        assert table_file_columns(path) == ["x", "y"], name
        pd.testing.assert_frame_equal(read_table_file(path), expected)
        pd.testing.assert_frame_equal(read_table_file(path, columns=["y"]), expected[["y"]])
    # a plain pyarrow table (no pandas metadata) keeps every column
    pq.write_table(pa.table({"__index_level_0__": [1], "x": [2.0]}), tmp_path / "plain.parquet")
    assert table_file_columns(tmp_path / "plain.parquet") == ["__index_level_0__", "x"]
