"""A user's own table files, CSV or parquet: their columns, their rows, their content.

A parquet file is read as ``pandas.read_parquet`` reads it (the index columns of its pandas
metadata become the index, :func:`pandas_index_columns`), its page checksums verified where
it has them and its content digest where it has one.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa

from reliquant.core.io.verified_parquet import open_with_record, read_frame

__all__ = [
    "TABLE_SUFFIXES",
    "pandas_index_columns",
    "read_table_file",
    "table_file_columns",
    "table_file_rows",
]


log = logging.getLogger("reliquant.io")

#: Suffixes of the user tables :func:`read_table_file` reads (CSV with a header row, parquet).
TABLE_SUFFIXES = (".csv", ".parquet")


def _table_suffix(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ValueError(
            f"{path}: expected a table file ending in {' or '.join(TABLE_SUFFIXES)}; "
            f"got {suffix or 'no suffix'!r}"
        )
    return suffix


def pandas_index_columns(schema: pa.Schema) -> list[str]:
    """The columns of a parquet schema that pandas' own metadata marks as the index.

    ``DataFrame.to_parquet()`` stores a non-default index as columns (``__index_level_0__``
    for an unnamed one, the index's name otherwise) and lists them under ``index_columns``
    in the ``pandas`` metadata; ``pandas.read_parquet`` restores them as the index, so they
    are no data columns. A default ``RangeIndex`` is stored as a description, not a column;
    a file without pandas metadata has none."""
    try:
        meta = schema.pandas_metadata or {}
    except ValueError:  # metadata that is not JSON: pandas would fail; no index here
        return []
    names = set(schema.names)
    return [c for c in meta.get("index_columns", []) if isinstance(c, str) and c in names]


def table_file_columns(path: str | os.PathLike) -> list[str]:
    """The column names of a CSV (its header row) or parquet file (its schema, without the
    index columns of pandas' metadata: :func:`pandas_index_columns`), without reading the
    rows (a parquet file's footer is checked against its digest record, if any)."""
    if _table_suffix(path) == ".parquet":
        pf, _ = open_with_record(path, require_digest=False)
        index = set(pandas_index_columns(pf.schema_arrow))
        return [n for n in pf.schema_arrow.names if n not in index]
    return [str(c) for c in pd.read_csv(path, nrows=0).columns]


def table_file_rows(path: str | os.PathLike) -> int:
    """The number of data rows of a CSV or parquet file (parquet: from its footer, checked
    against its digest record, if any)."""
    if _table_suffix(path) == ".parquet":
        pf, _ = open_with_record(path, require_digest=False)
        return int(pf.metadata.num_rows)
    return sum(len(chunk) for chunk in pd.read_csv(path, usecols=[0], chunksize=1 << 16))


def read_table_file(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """A user's table, CSV (header row; types inferred by pandas) or parquet (page checksums
    verified where the file has them, and its content digest where it has one), as a
    DataFrame; ``columns`` selects and orders them.

    A parquet file is read as ``pandas.read_parquet`` reads it: the index columns of its
    pandas metadata (``DataFrame.to_parquet()`` with a non-default index) become the
    frame's index, not data columns (:func:`pandas_index_columns`). Anything else is a
    ValueError naming the file and the suffixes read.
    """
    if _table_suffix(path) == ".parquet":
        if columns is None:
            return read_frame(path, require_digest=False)
        pf, _ = open_with_record(path, require_digest=False)
        index = [c for c in pandas_index_columns(pf.schema_arrow) if c not in columns]
        frame = read_frame(path, columns=[*columns, *index], require_digest=False)
        return frame[list(columns)]
    frame = pd.read_csv(path, usecols=columns)
    log.info("read %s: %d rows", path, len(frame))
    return frame if columns is None else frame[list(columns)]
