"""Writing parquet files atomically, each with its content digest recorded.

:func:`write_table`, :func:`write_frame` and :func:`write_row_groups` write page checksums and
record the content digest (:mod:`reliquant.core.io.content_digest`) that every read verifies;
the file carries no timestamps, so equal tables give equal file content.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from reliquant.core.io.atomic import atomic_path, log_written
from reliquant.core.io.content_digest import DIGEST_KEY, TableHasher, encode_record, without_record

__all__ = [
    "PARQUET_COMPRESSION",
    "PARQUET_WRITE_OPTIONS",
    "write_frame",
    "write_row_groups",
    "write_table",
]


PARQUET_COMPRESSION = "zstd"
#: Options of every parquet write: page checksums (verified by the readers, verified_parquet).
PARQUET_WRITE_OPTIONS = {"compression": PARQUET_COMPRESSION, "write_page_checksum": True}


def _write_digest(writer: pq.ParquetWriter, hasher: TableHasher) -> None:
    writer.add_key_value_metadata({DIGEST_KEY: encode_record(hasher.record())})


def write_table(table: pa.Table, path: str | os.PathLike, schema: pa.Schema | None = None) -> None:
    """Write an Arrow table to parquet atomically, cast to ``schema`` when given.

    Casting fails loudly (``pyarrow.ArrowInvalid``) if a column does not fit the schema.
    The file carries no timestamps, so equal tables give equal file content; its metadata
    carries the content digest (:data:`DIGEST_KEY`) that every read verifies.
    """
    if schema is not None:
        _check_columns(table.column_names, schema, path)
        table = table.select(schema.names).cast(schema)
    table = table.replace_schema_metadata(without_record(table.schema).metadata)
    hasher = TableHasher(table.schema)
    hasher.update(table)
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(tmp, table.schema, **PARQUET_WRITE_OPTIONS) as writer,
    ):
        writer.write_table(table)
        _write_digest(writer, hasher)
    log_written(path, f": {table.num_rows} rows")


def write_row_groups(
    tables: Iterable[pa.Table], path: str | os.PathLike, schema: pa.Schema
) -> None:
    """Stream tables into one parquet file atomically, one row group per table.

    Readers can then stream the file group by group (``ParquetFile.iter_row_groups``) without
    holding it whole; each table is cast to ``schema`` (a misfit fails loudly). The content
    digest is computed while streaming and recorded when the file is closed.
    """
    schema = without_record(schema)
    hasher = TableHasher(schema)
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(tmp, schema, **PARQUET_WRITE_OPTIONS) as writer,
    ):
        for table in tables:
            _check_columns(table.column_names, schema, path)
            table = table.select(schema.names).cast(schema)
            writer.write_table(table, row_group_size=max(1, len(table)))
            hasher.update(table)
        _write_digest(writer, hasher)
    log_written(path, f": {hasher.rows} rows")


def _check_columns(names: list[str], schema: pa.Schema, path: str | os.PathLike) -> None:
    """Raise a ValueError naming the missing and unexpected columns for ``path``."""
    missing = [n for n in schema.names if n not in names]
    extra = [n for n in names if n not in schema.names]
    if missing or extra:
        raise ValueError(
            f"table for {path} does not match its schema: missing columns {missing}, "
            f"unexpected columns {extra}"
        )


def write_frame(
    frame: pd.DataFrame, path: str | os.PathLike, schema: pa.Schema | None = None
) -> None:
    """Write a DataFrame (index dropped) to parquet atomically with an explicit schema."""
    if schema is not None:
        _check_columns([str(c) for c in frame.columns], schema, path)
        frame = frame[schema.names]
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    write_table(table, path, schema)
