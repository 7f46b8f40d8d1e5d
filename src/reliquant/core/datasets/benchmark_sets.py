"""The 14 tabular benchmark sets (``data/raw/benchmarks``, Lassance & De Bock, arXiv
2603.23318), read by :func:`read_benchmark_csv` with their authors' preprocessing and written
with :func:`benchmark_schema`."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.datasets.manifest import open_maybe_gzip

__all__ = [
    "BENCHMARK_CLASS",
    "benchmark_schema",
    "read_benchmark_csv",
]


#: The class column of a benchmark table: always the last, int64 codes ``0..K-1``.
BENCHMARK_CLASS = "class"


def _decoded_text(path: str | os.PathLike) -> str:
    """The file's text (gunzipped when it is gzip), UTF-8; a ValueError names the line that
    is not."""
    with open_maybe_gzip(path) as handle:
        raw = handle.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{path}: line {line} is not valid UTF-8 (byte {raw[err.start]:#x})"
        ) from None


def _header(text: str, path) -> list[str]:
    """The header row's column names as written (pandas would rename duplicates silently)."""
    names = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
    if len(names) < 2:
        raise ValueError(f"{path}: expected a header row of features and the class, got {names}")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"{path}: header names column(s) {duplicated} more than once")
    features = names[:-1]
    if BENCHMARK_CLASS in features:
        raise ValueError(
            f"{path}: feature column {features.index(BENCHMARK_CLASS) + 1} is named "
            f"{BENCHMARK_CLASS!r}; only the last column may be (it holds the class)"
        )
    return names


def _first_bad(mask: pd.Series) -> int:
    return int(np.flatnonzero(mask.to_numpy())[0])


def _benchmark_column(text: pd.Series, column: str, path) -> tuple[np.ndarray, bool]:
    """One column as float64 numbers or, when every value is text, as
    ``pandas.Categorical(values).codes`` (categories sorted); second item: it was text.

    Refuses (naming file, line and column) a missing value (pandas' default NA markers or an
    empty field), a non-finite number, or a column that mixes numbers and text.
    """
    missing = text.isna()
    if missing.any():
        row = _first_bad(missing)
        raise ValueError(f"{path}: line {row + 2}, column {column!r}: value is missing")
    numbers = pd.to_numeric(text, errors="coerce")
    parsed = numbers.notna()
    if not parsed.any():
        return pd.Categorical(text.to_numpy(dtype=object)).codes.astype(np.float64), True
    if not parsed.all():
        row = _first_bad(~parsed)
        raise ValueError(
            f"{path}: line {row + 2}, column {column!r}: value {text.iloc[row]!r} is not a "
            "number in a numeric column (a missing-value marker?)"
        )
    values = numbers.to_numpy(dtype=np.float64)
    infinite = ~np.isfinite(values)
    if infinite.any():
        row = int(np.flatnonzero(infinite)[0])
        raise ValueError(
            f"{path}: line {row + 2}, column {column!r}: value {text.iloc[row]!r} is not finite"
        )
    return values, False


def _class_codes(text: pd.Series, column: str, path) -> np.ndarray:
    """The class column as int64 codes ``0..K-1``: text labels by
    ``pandas.Categorical(labels).codes`` (categories sorted), integer labels by their rank
    among the distinct labels (``label - min`` when the labels are consecutive, the
    authors' shift to 0). Non-integer numbers are refused."""
    values, was_text = _benchmark_column(text, column, path)
    if was_text:
        return values.astype(np.int64)
    fractional = values != np.round(values)
    if fractional.any():
        row = int(np.flatnonzero(fractional)[0])
        raise ValueError(
            f"{path}: line {row + 2}, class column {column!r}: value {text.iloc[row]!r} is "
            "neither an integer label nor text"
        )
    return np.unique(values, return_inverse=True)[1].astype(np.int64)


def read_benchmark_csv(path: str | os.PathLike) -> pd.DataFrame:
    """A tabular benchmark CSV (gzipped or not; header row, the class in the last column) with
    its authors' preprocessing (Lassance & De Bock, arXiv 2603.23318, their notebooks):

    - feature columns in CSV order, named as in the header, float64; a column whose values
      are all text becomes ``pandas.Categorical(values).codes`` (categories sorted); no
      scaling;
    - the last column, renamed :data:`BENCHMARK_CLASS` (``"class"``), int64 codes
      ``0..K-1``: text labels ``pandas.Categorical(labels).codes``, integer labels ranked
      (``y - min(y)`` for consecutive labels, as the authors shift them to start at 0).

    Raises ``ValueError`` naming the file, the line (1-based, the header is line 1) and the
    column for: a feature column named ``"class"``, a duplicated column name, a missing value,
    a non-finite number, a column mixing numbers and text, a non-integer numeric label, or
    fewer than two classes. Verify the file's digest before (:func:`verify_manifest`).
    """
    text = _decoded_text(path)
    names = _header(text, path)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=True)
    if list(frame.columns) != names or frame.empty:
        raise ValueError(
            f"{path}: expected columns {names} and at least one row; read {list(frame.columns)} "
            f"and {len(frame)} rows"
        )
    out = {name: _benchmark_column(frame[name], name, path)[0] for name in names[:-1]}
    out[BENCHMARK_CLASS] = _class_codes(frame[names[-1]], names[-1], path)
    if out[BENCHMARK_CLASS].max() < 1:
        raise ValueError(f"{path}: class column {names[-1]!r} holds a single class")
    return pd.DataFrame(out)


def benchmark_schema(columns: Sequence[str]) -> pa.Schema:
    """The explicit schema of a benchmark table: every feature float64, then
    :data:`BENCHMARK_CLASS` int64 last (no nulls); ``columns`` as
    :func:`read_benchmark_csv` returns them. A ValueError when ``"class"`` is not last."""
    columns = [str(c) for c in columns]
    if not columns or columns[-1] != BENCHMARK_CLASS or BENCHMARK_CLASS in columns[:-1]:
        raise ValueError(
            f"benchmark columns must end with {BENCHMARK_CLASS!r}, once; got {columns}"
        )
    return pa.schema(
        [pa.field(c, pa.float64(), nullable=False) for c in columns[:-1]]
        + [pa.field(BENCHMARK_CLASS, pa.int64(), nullable=False)]
    )
