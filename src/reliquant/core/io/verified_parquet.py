"""Reading parquet files with their page checksums and content digest verified.

- :func:`read_table` / :func:`read_frame`: the columns read (and the filter's columns) are
  hashed after the read and compared before the table is returned. ``filters`` are applied
  after the check, in memory, so footer statistics cannot silently skip rows.
- :func:`open_parquet`: the footer (row count, column names and types) is checked when the
  file is opened, the data while it streams (:class:`VerifiedParquetFile`).
- A file without a digest record raises too, unless the caller passes
  ``require_digest=False``.

Every difference raises :class:`~reliquant.core.io.damaged_file.DamagedFileError` naming the
file; every read is logged (logger ``reliquant.io``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reliquant.core.io.content_digest import (
    TableHasher,
    check_footer,
    check_hashes,
    read_record,
    without_record,
)
from reliquant.core.io.damaged_file import DamagedFileError

__all__ = [
    "VerifiedParquetFile",
    "open_parquet",
    "open_with_record",
    "read_frame",
    "read_table",
]


log = logging.getLogger("reliquant.io")


def open_with_record(path, require_digest: bool, kind: type = pq.ParquetFile) -> tuple:
    """``kind(path)`` (a ``ParquetFile``) and its digest record, the footer checked against it."""
    try:
        pf = kind(path, page_checksum_verification=True)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except Exception as err:  # noqa: BLE001 - any failure to parse is a damaged file
        raise DamagedFileError(path, f"not a readable parquet file ({err})") from err
    record = read_record(pf.metadata, path, require_digest)
    if record is not None:
        check_footer(pf, record, path)
    return pf, record


def _damaged(path, action: str, err: Exception) -> DamagedFileError:
    return DamagedFileError(path, f"{action} failed ({type(err).__name__}: {err})")


def _filter_columns(filters) -> list[str] | None:
    """Column names a pyarrow DNF filter (list of tuples, or list of lists of tuples) uses;
    None for an expression (every column is then read)."""
    if isinstance(filters, pc.Expression):
        return None
    if not filters:
        return []
    terms = (
        filters
        if isinstance(filters[0], (list, tuple))
        and filters[0]
        and isinstance(filters[0][0], (list, tuple))
        else [filters]
    )
    return [str(term[0]) for conj in terms for term in conj]


def _unknown_columns(pf: pq.ParquetFile, columns: list[str], path) -> None:
    missing = [c for c in columns if c not in pf.schema_arrow.names]
    if missing:
        raise ValueError(f"{path} has no columns {missing}; it has {pf.schema_arrow.names}")


def _read_verified(pf: pq.ParquetFile, record: dict | None, path, columns) -> pa.Table:
    try:
        table = pf.read(columns=columns)
    except Exception as err:  # noqa: BLE001 - a page or footer that does not decode
        raise _damaged(path, "reading", err) from err
    if record is not None:
        hasher = TableHasher(table.schema)
        hasher.update(table)
        check_hashes(hasher, record, path)
    return table


def read_table(
    path: str | os.PathLike,
    columns: list[str] | None = None,
    filters: list | pc.Expression | None = None,
    schema: pa.Schema | None = None,
    *,
    require_digest: bool = True,
) -> pa.Table:
    """Read a parquet file written by :func:`write_table`, its content verified.

    Page checksums and the content digest (:data:`DIGEST_KEY`) of the columns read are
    verified; any difference raises :class:`DamagedFileError` naming the file. ``filters``
    (pyarrow's DNF form) select rows after the check; ``schema`` selects and casts the
    columns (a misfit fails loudly). ``require_digest=False`` accepts a file without a
    digest record (a user's table; only its page checksums are verified, logged at debug
    level: a file the project did not write has no record to carry).
    """
    wanted = (
        list(columns)
        if columns is not None
        else (list(schema.names) if schema is not None else None)
    )
    pf, record = open_with_record(path, require_digest)
    if record is None and not require_digest:  # a file of another program: read as it is
        table = pq.read_table(
            path, columns=wanted, filters=filters, page_checksum_verification=True
        )
    else:
        needed, used = None, _filter_columns(filters)
        if wanted is not None and used is not None:
            needed = list(dict.fromkeys(wanted + used))
            _unknown_columns(pf, needed, path)
        table = _read_verified(pf, record, path, needed)
        if isinstance(filters, pc.Expression):
            table = table.filter(filters)
        elif filters:
            table = table.filter(pq.filters_to_expression(filters))
        if wanted is not None:
            table = table.select(wanted)
    if schema is not None:
        table = table.select(schema.names).cast(schema)
    log.info("read %s: %d rows", path, table.num_rows)
    return table.replace_schema_metadata(without_record(table.schema).metadata)


class VerifiedParquetFile(pq.ParquetFile):
    """A ``ParquetFile`` whose reads verify the content digest (:func:`open_parquet`).

    ``iter_batches`` hashes every batch and holds back the last one until the whole stream
    is verified: a damaged file raises :class:`DamagedFileError` instead of yielding its last
    batch. ``read`` verifies like :func:`read_table`. ``read_row_group(s)`` and
    ``iter_batches(row_groups=...)`` are refused: a part of the file cannot be verified.
    """

    digest_record: dict | None = None
    path: str = ""

    def iter_batches(  # noqa: D102 - documented on the class
        self,
        batch_size: int = 65536,
        row_groups=None,
        columns=None,
        use_threads: bool = True,
        use_pandas_metadata: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        if row_groups is not None:
            raise ValueError(f"{self.path}: a verified stream reads every row group")
        if columns is not None:
            _unknown_columns(self, list(columns), self.path)
        batches = super().iter_batches(
            batch_size=batch_size,
            columns=columns,
            use_threads=use_threads,
            use_pandas_metadata=use_pandas_metadata,
        )
        return self._verified(batches)

    def _verified(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        hasher, held = None, None
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except Exception as err:  # noqa: BLE001 - a page or footer that does not decode
                raise _damaged(self.path, "reading", err) from err
            if hasher is None:
                hasher = TableHasher(batch.schema)
            if self.digest_record is not None:
                hasher.update(batch)
            if held is not None:
                yield held
            held = batch
        if self.digest_record is not None:
            if hasher is None:  # an empty stream: the record must say 0 rows
                hasher = TableHasher(pa.schema([]))
            check_hashes(hasher, self.digest_record, self.path)
        if held is not None:
            yield held

    def read(self, columns=None, use_threads: bool = True, use_pandas_metadata: bool = False):  # noqa: D102
        if columns is not None:
            _unknown_columns(self, list(columns), self.path)
        return _read_verified(self, self.digest_record, self.path, columns)

    def read_row_group(self, *args, **kwargs):  # noqa: D102
        raise ValueError(f"{self.path}: read it whole or stream it (iter_batches) to verify it")

    def read_row_groups(self, *args, **kwargs):  # noqa: D102
        raise ValueError(f"{self.path}: read it whole or stream it (iter_batches) to verify it")

    def iter_row_groups(self, *args, **kwargs):  # noqa: D102
        raise ValueError(f"{self.path}: read it whole or stream it (iter_batches) to verify it")


def open_parquet(path: str | os.PathLike, *, require_digest: bool = True) -> VerifiedParquetFile:
    """A ``ParquetFile`` for streaming, with page checksums and the content digest verified.

    The footer (rows, column names and types) is checked here; the data while it streams
    (:class:`VerifiedParquetFile`: the last batch comes only once everything read matched).
    """
    pf, record = open_with_record(path, require_digest, VerifiedParquetFile)
    pf.path, pf.digest_record = str(path), record
    log.info("read %s (streamed)", path)
    return pf


def read_frame(
    path: str | os.PathLike, columns: list[str] | None = None, *, require_digest: bool = True
) -> pd.DataFrame:
    """Read a parquet file into a DataFrame (image columns come back as object arrays),
    verified as by :func:`read_table`."""
    return read_table(path, columns=columns, require_digest=require_digest).to_pandas()
