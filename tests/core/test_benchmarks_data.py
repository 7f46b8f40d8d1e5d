"""The tabular benchmark sets: the authors' preprocessing, refusals, digests, the vendored files."""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import RAW

from reliquant.core.datasets import (
    BENCHMARK_CLASS,
    ChecksumError,
    benchmark_schema,
    read_benchmark_csv,
    read_manifest,
    verify_manifest,
)
from reliquant.core.io import read_frame, write_frame

TEXT_CSV = """\
"size","colour","weight","Class"
1.5,red,10,yes
2.0,blue,11,no
0.5,green,12,yes
3.25,blue,-13,maybe
"""


def test_text_feature_and_text_label_become_sorted_codes(tmp_path):
    path = tmp_path / "t.csv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(TEXT_CSV)
    frame = read_benchmark_csv(path)
    # by hand: colour categories blue < green < red, labels maybe < no < yes
    expected = pd.DataFrame(
        {
            "size": [1.5, 2.0, 0.5, 3.25],
            "colour": [2.0, 0.0, 1.0, 0.0],
            "weight": [10.0, 11.0, 12.0, -13.0],
            "class": np.array([2, 1, 2, 0], dtype=np.int64),
        }
    )
    pd.testing.assert_frame_equal(frame, expected)
    # the authors' reading: pandas defaults, pandas.Categorical(...).codes on text
    raw = pd.read_csv(path)
    assert (frame["colour"].to_numpy() == pd.Categorical(raw["colour"]).codes).all()
    assert (frame["class"].to_numpy() == pd.Categorical(raw["Class"]).codes).all()


def test_integer_labels_starting_at_one_are_shifted_to_zero(tmp_path):
    path = tmp_path / "ints.csv"
    path.write_text("a,b,label\n0.1,7,1\n0.2,8,3\n0.3,9,2\n0.4,10,3\n0.5,11,1\n")
    frame = read_benchmark_csv(path)
    assert list(frame.columns) == ["a", "b", "class"]
    assert frame["class"].dtype == np.int64 and frame["b"].dtype == np.float64
    raw = pd.read_csv(path)
    np.testing.assert_array_equal(frame["class"], raw["label"] - raw["label"].min())
    np.testing.assert_array_equal(frame[["a", "b"]].to_numpy(), raw[["a", "b"]].to_numpy())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x,class,y\n1,2,0\n3,4,1\n", r"feature column 2 is named 'class'"),
        ("x,z,y\n1,,0\n3,4,1\n", r"line 2, column 'z': value is missing"),
        ("x,z,y\n1,2,0\n3,NA,1\n", r"line 3, column 'z': value is missing"),
        ("x,z,y\n1,2,0\n3,inf,1\n", r"line 3, column 'z': value 'inf' is not finite"),
        ("x,z,y\n1,2,0\n3,?,1\n", r"line 3, column 'z': value '\?' is not a number"),
        ("x,z,y\n1,2,0\n3,4,\n", r"line 3, column 'y': value is missing"),
        ("x,z,y\n1,2,0\n3,4,1.5\n", r"line 3, class column 'y': value '1.5' is neither"),
        ("x,x,y\n1,2,0\n3,4,1\n", r"column\(s\) \['x'\] more than once"),
        ("x,z,y\n1,2,0\n3,4,0\n", r"holds a single class"),
    ],
)
def test_bad_csv_is_refused_naming_file_line_and_column(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as err:
        read_benchmark_csv(path)
    assert str(path) in str(err.value)


def test_schema_round_trip_keeps_order_and_types(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TEXT_CSV)
    frame = read_benchmark_csv(path)
    out = tmp_path / "t.parquet"
    write_frame(frame, out, benchmark_schema(frame.columns))
    pd.testing.assert_frame_equal(read_frame(out), frame)
    with pytest.raises(ValueError, match="must end with 'class'"):
        benchmark_schema(["class", "a"])


def test_a_changed_byte_in_a_benchmark_file_is_refused(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(RAW, raw, ignore=shutil.ignore_patterns("mnist"))
    target = raw / "benchmarks" / "robot.csv.gz"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    manifest = raw / "checksums.tsv"
    entry = {e.path: e for e in read_manifest(manifest)}["benchmarks/robot.csv.gz"]
    with pytest.raises(ChecksumError, match=r"benchmarks/robot\.csv\.gz is corrupt") as err:
        verify_manifest(manifest, dataset="benchmarks")
    assert entry.sha256 in str(err.value)
    target.write_bytes((RAW / "benchmarks" / "robot.csv.gz").read_bytes())
    assert len(verify_manifest(manifest, dataset="benchmarks")) == 14


def _readme_table() -> dict[str, tuple[int, int, str]]:
    """file -> (rows, columns incl. class, sha256 of the CSV) from the vendored README."""
    text = (RAW / "benchmarks" / "README.md").read_text()
    rows = re.findall(r"^\| (\w+\.csv\.gz) \| (\d+) \| (\d+) \| ([0-9a-f]{64}) \|$", text, re.M)
    return {name: (int(n), int(d), digest) for name, n, d, digest in rows}


def test_vendored_files_match_the_readme_table():
    """Every file of the README's table is in the manifest; its CSV's SHA-256 and its row and
    column counts are the README's (electricity: the table counts newlines, and the file's
    last line has none; data/raw/benchmarks/README.md, Notes)."""
    table = _readme_table()
    assert len(table) == 14
    listed = {e.path for e in read_manifest(RAW / "checksums.tsv")}
    assert {f"benchmarks/{name}" for name in table} <= listed
    for name, (n_rows, n_columns, digest) in table.items():
        path = RAW / "benchmarks" / name
        csv_bytes = gzip.decompress(path.read_bytes())
        assert hashlib.sha256(csv_bytes).hexdigest() == digest, name
        frame = read_benchmark_csv(path)
        newline_rows = csv_bytes.count(b"\n") - 1
        assert newline_rows == n_rows, name
        extra = 0 if csv_bytes.endswith(b"\n") else 1
        assert frame.shape == (n_rows + extra, n_columns), name
        assert (extra == 1) == (name == "electricity.csv.gz")
        k = frame[BENCHMARK_CLASS].max() + 1
        assert set(frame[BENCHMARK_CLASS]) == set(range(k)), name
        assert list(frame.columns[:-1]) == list(pd.read_csv(path, nrows=0).columns[:-1]), name
