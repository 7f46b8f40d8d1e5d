"""Atomic writers and the parquet conventions shared by every workflow step.

Every writer here writes to a temporary file in the destination folder and renames it
into place (``os.replace`` is atomic on POSIX), so a step that fails half-way leaves no
valid-looking output behind.

Parquet files carry CRC-32 page checksums, verified on every read through this module
(:func:`read_table`, :func:`read_frame`, :func:`open_parquet`), so a flipped bit in a stored
intermediate raises instead of being read back silently. Every file written here is logged
(logger ``reliquant.io``) with its size and SHA-256, every parquet file read is logged too, so
a job's log records what it read and wrote. A temporary file left by a killed writer is
removed the next time the same output is written.

Images are stored as a ``fixed_size_list<uint8>[h*w]`` column (:func:`images_to_arrow`),
which round-trips to an ``(n, h, w)`` uint8 array without copies of Python objects.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from reliquant.core.report import markdown_to_html

__all__ = [
    "PARQUET_COMPRESSION",
    "PARQUET_WRITE_OPTIONS",
    "TABLE_SUFFIXES",
    "arrow_to_images",
    "atomic_path",
    "file_sha256",
    "frame_to_markdown",
    "image_type",
    "images_to_arrow",
    "open_parquet",
    "read_frame",
    "read_table",
    "read_table_file",
    "save_figure",
    "table_file_columns",
    "table_file_rows",
    "write_frame",
    "write_markdown",
    "write_row_groups",
    "write_table",
    "write_text",
]

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PARQUET_COMPRESSION = "zstd"
#: Options of every parquet write: page checksums (verified by the readers below).
PARQUET_WRITE_OPTIONS = {"compression": PARQUET_COMPRESSION, "write_page_checksum": True}

log = logging.getLogger("reliquant.io")


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _log_written(path: str | os.PathLike, what: str = "") -> None:
    dest = Path(path)
    log.info("wrote %s%s (%d bytes, sha256 %s)", dest, what, dest.stat().st_size, file_sha256(dest))


def _remove_stale_temporaries(dest: Path) -> None:
    """Delete temporaries of ``dest`` left by a writer that was killed (SIGKILL, power loss)."""
    for stale in dest.parent.glob(f".{dest.name}.*"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            log.warning("removed %s, left by an interrupted write of %s", stale, dest)


def _current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    On any exception the temporary file is removed and ``path`` is left untouched.
    ``suffix`` defaults to the destination's suffix (some writers infer the format from it).
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(dest)
    fd, tmp = tempfile.mkstemp(
        dir=dest.parent,
        prefix=f".{dest.name}.",
        suffix=suffix if suffix is not None else dest.suffix,
    )
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_current_umask())
    try:
        yield tmp_path
        os.replace(tmp_path, dest)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_table(table: pa.Table, path: str | os.PathLike, schema: pa.Schema | None = None) -> None:
    """Write an Arrow table to parquet atomically, cast to ``schema`` when given.

    Casting fails loudly (``pyarrow.ArrowInvalid``) if a column does not fit the schema.
    The file carries no timestamps, so equal tables give equal file content.
    """
    if schema is not None:
        _check_columns(table.column_names, schema, path)
        table = table.select(schema.names).cast(schema)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **PARQUET_WRITE_OPTIONS)
    _log_written(path, f": {table.num_rows} rows")


def write_row_groups(
    tables: Iterable[pa.Table], path: str | os.PathLike, schema: pa.Schema
) -> None:
    """Stream tables into one parquet file atomically, one row group per table.

    Readers can then stream the file group by group (``ParquetFile.iter_row_groups``) without
    holding it whole; each table is cast to ``schema`` (a misfit fails loudly).
    """
    rows = 0
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(tmp, schema, **PARQUET_WRITE_OPTIONS) as writer,
    ):
        for table in tables:
            _check_columns(table.column_names, schema, path)
            writer.write_table(
                table.select(schema.names).cast(schema), row_group_size=max(1, len(table))
            )
            rows += len(table)
    _log_written(path, f": {rows} rows")


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


def read_table(
    path: str | os.PathLike,
    columns: list[str] | None = None,
    filters: list | None = None,
    schema: pa.Schema | None = None,
) -> pa.Table:
    """Read a parquet file with its page checksums verified (a corrupt page raises)."""
    table = pq.read_table(
        path, columns=columns, filters=filters, schema=schema, page_checksum_verification=True
    )
    log.info("read %s: %d rows", path, table.num_rows)
    return table


def open_parquet(path: str | os.PathLike) -> pq.ParquetFile:
    """A ``ParquetFile`` for streaming row groups, with page checksums verified."""
    log.info("read %s (streamed)", path)
    return pq.ParquetFile(path, page_checksum_verification=True)


def read_frame(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a parquet file into a DataFrame (image columns come back as object arrays)."""
    return read_table(path, columns=columns).to_pandas()


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


def table_file_columns(path: str | os.PathLike) -> list[str]:
    """The column names of a CSV (its header row) or parquet file (its schema), without
    reading the rows."""
    if _table_suffix(path) == ".parquet":
        return list(pq.read_schema(path).names)
    return [str(c) for c in pd.read_csv(path, nrows=0).columns]


def table_file_rows(path: str | os.PathLike) -> int:
    """The number of data rows of a CSV or parquet file (parquet: from its footer)."""
    if _table_suffix(path) == ".parquet":
        return int(pq.ParquetFile(path).metadata.num_rows)
    return sum(len(chunk) for chunk in pd.read_csv(path, usecols=[0], chunksize=1 << 16))


def read_table_file(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """A user's table, CSV (header row; types inferred by pandas) or parquet (page checksums
    verified where the file has them), as a DataFrame; ``columns`` selects and orders them.

    Anything else is a ValueError naming the file and the suffixes read.
    """
    if _table_suffix(path) == ".parquet":
        return read_frame(path, columns=columns)
    frame = pd.read_csv(path, usecols=columns)
    log.info("read %s: %d rows", path, len(frame))
    return frame if columns is None else frame[list(columns)]


def images_to_arrow(images: np.ndarray) -> pa.FixedSizeListArray:
    """Encode an ``(n, h, w)`` uint8 array as a fixed-size-list column of ``h*w`` bytes."""
    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim != 3:
        raise ValueError(
            f"images must be a uint8 array of shape (n, h, w); got {images.dtype} {images.shape}"
        )
    n, h, w = images.shape
    flat = pa.array(np.ascontiguousarray(images).reshape(-1), type=pa.uint8())
    return pa.FixedSizeListArray.from_arrays(flat, h * w)


def arrow_to_images(column: pa.Array | pa.ChunkedArray, side: int = 28) -> np.ndarray:
    """Decode a fixed-size-list uint8 column back to an ``(n, side, side)`` uint8 array."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values = column.flatten().to_numpy(zero_copy_only=False)
    return values.astype(np.uint8, copy=False).reshape(-1, side, side)


def image_type(side: int = 28) -> pa.DataType:
    """Arrow type of one image: ``fixed_size_list<uint8>[side*side]``."""
    return pa.list_(pa.uint8(), side * side)


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write a text file (markdown tables, schedules) atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    _log_written(path)


def write_markdown(
    text: str, path: str | os.PathLike, html_path: str | os.PathLike, title: str | None = None
) -> None:
    """Write markdown ``text`` to ``path`` and its HTML page (what the report shows) to
    ``html_path``, each atomically (:func:`reliquant.core.report.markdown_to_html`)."""
    write_text(text, path)
    write_text(markdown_to_html(text, title=title), html_path)


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 150) -> None:
    """Save a matplotlib figure atomically; the format follows the path's suffix.

    PNG metadata carries no software version or date, so reruns give identical files
    for identical figures.
    """
    suffix = Path(path).suffix.lower()
    metadata: dict[str, str | None] = {"Software": None}
    if suffix == ".pdf":
        metadata = {"Creator": None, "Producer": None, "CreationDate": None}
    elif suffix == ".svg":
        metadata = {"Date": None, "Creator": None}
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", metadata=metadata)
    _log_written(path)


def frame_to_markdown(frame: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """Render a DataFrame as a GitHub markdown table (index dropped)."""
    return frame.to_markdown(index=False, floatfmt=floatfmt) + "\n"
