"""Atomic writers and the parquet conventions shared by every workflow step.

Every writer here writes to a temporary file in the destination folder and renames it
into place (``os.replace`` is atomic on POSIX), so a step that fails half-way leaves no
valid-looking output behind. A temporary file left by a killed writer is removed the next
time the same output is written (one whose writer still runs is kept:
:mod:`reliquant.core.temporaries`). Every file written here is logged (logger
``reliquant.io``) with its size and SHA-256, every parquet file read is logged too, so a
job's log records what it read and wrote.

Integrity of parquet intermediates
----------------------------------
Page checksums (CRC-32, written and verified here) catch a flipped bit in a data page, but
not one in the footer: a footer that still parses can rename or retype a column, or drop
rows, and be read back without error. So every parquet file written here
(:func:`write_table`, :func:`write_frame`, :func:`write_row_groups`) also records a
**content digest** in its key-value metadata under :data:`DIGEST_KEY`: a small JSON record
with the row count, the pandas metadata's SHA-256 and, per column, its name, its canonical
type and the SHA-256 of its values (:func:`table_digest`). The values are hashed in a
batching-independent way (separate running hashes of the fixed-width value bytes, of the
string and list lengths, of the string bytes and of the null positions), so one record
serves a whole read, a read of some columns, and a stream read batch by batch. Only
metadata is added: the data, and so every table read back, is unchanged. Cost: hashing
10,000 MNIST images (7.8 MB) takes about 5 ms, under 10 % of reading them and about 3 % of
writing them.

Every read verifies the record and raises :class:`DamagedFileError` (naming the file and
saying to delete it and rerun) when anything differs:

- :func:`read_table` / :func:`read_frame`: the columns read (and the filter's columns) are
  hashed after the read and compared before the table is returned. ``filters`` are applied
  after the check, in memory, so footer statistics cannot silently skip rows.
- :func:`open_parquet`: the footer (row count, column names and types) is checked when the
  file is opened, the data while it streams: ``iter_batches`` holds back the **last**
  batch until the digest over the whole stream is verified, so a consumer never completes
  a result from a damaged file: it gets the error instead of its last batch. A stream that
  the consumer stops early (a ``limit``) has only its footer checked. ``read`` verifies
  like :func:`read_table`; reading single row groups is refused (it could not be checked).
- A file without the record (written before this check, or by another program) raises
  too, unless the caller passes ``require_digest=False``: :func:`read_table_file` does for
  user tables, which are then only checked where they carry a record. A workspace made
  before this check is rebuilt anyway (every job's ``code`` parameter changed with it).

A damaged file must not be an error forever, and a user's file must never be touched:
:func:`damaged_outputs` checks, cheaply, the files it is given (a parquet file: ``PAR1`` at
both ends, a footer that parses, a record that parses and agrees with the footer, no data
read, about 0.2 ms a file; a sealed zip file such as a model, :func:`seal_zip`: its seal,
about 1 ms a MB) and :func:`remove_damaged_outputs` deletes those no reader here would
accept, with a warning. ``workflow/rules/common.smk`` calls it when a real run starts (its
``onstart`` handler: never in a dry run, ``--touch``, ``--summary`` or ``--report``), on the
outputs of the jobs of that run that are not planned to run, then plans again: the jobs that
write them, and the jobs after those, run. No other file is ever checked or removed: a
user's table under ``results/`` that no rule writes stays as it is. Damage past the footer (a
data page, a value) passes this check and is caught at the first read (the error names the
file).

Other files the workflow writes and reads back (a trained model) are zip archives sealed
by :func:`seal_zip`: the SHA-256 of every byte before it, in the archive comment (which zip
readers, torch's among them, ignore); :func:`verify_zip_seal` checks it before the file is
read and raises :class:`DamagedFileError` naming the file.

Images are stored as a ``fixed_size_binary(h*w)`` column, one value per image
(:func:`images_to_arrow`, layout :data:`IMAGE_LAYOUT_VERSION`), which reads back as a copy of
the page and decodes to an ``(n, h, w)`` uint8 array without a copy (:func:`arrow_to_images`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reliquant.core.report import markdown_to_html
from reliquant.core.temporaries import stale_temporaries, temporary_prefix

__all__ = [
    "DIGEST_KEY",
    "ZIP_SEAL_PREFIX",
    "PARQUET_COMPRESSION",
    "PARQUET_WRITE_OPTIONS",
    "TABLE_SUFFIXES",
    "IMAGE_LAYOUT_VERSION",
    "DamagedFileError",
    "VerifiedParquetFile",
    "arrow_to_images",
    "atomic_path",
    "damaged_outputs",
    "file_sha256",
    "frame_to_markdown",
    "image_type",
    "images_to_arrow",
    "open_parquet",
    "pandas_index_columns",
    "read_frame",
    "read_table",
    "read_table_file",
    "remove_damaged_outputs",
    "save_figure",
    "seal_zip",
    "table_digest",
    "table_file_columns",
    "table_file_rows",
    "write_frame",
    "write_markdown",
    "write_row_groups",
    "write_table",
    "verify_zip_seal",
    "write_text",
    "zip_seal_problem",
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
    """Delete temporaries of ``dest`` left by a writer that was killed (SIGKILL, power loss);
    one whose writer still runs (a second ``snakemake --nolock``) stays
    (:func:`reliquant.core.temporaries.stale_temporaries`)."""
    for stale in stale_temporaries(dest):
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
        prefix=temporary_prefix(dest),
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


# ------------------------------------------------------------------------- content digest
#: Key of the content digest record in a parquet file's key-value metadata.
DIGEST_KEY = "reliquant.digest"
_DIGEST_VERSION = 1
_PANDAS_KEY = b"pandas"
#: Hex digits kept of each SHA-256 (128 bits: any change is caught but with odds 2**-128).
_HEX = 32


class DamagedFileError(OSError):
    """A file the workflow wrote (parquet, a sealed model) that differs from what was written,
    or that cannot be checked.

    The message names the file and says what to do (delete it and rerun the step that
    writes it); ``path`` holds the file's path.
    """

    def __init__(self, path: str | os.PathLike, problem: str, advice: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(
            f"{path}: {problem}; "
            + (
                advice
                or "the file changed after it was written (damaged or truncated): delete it "
                "and rerun the step that writes it (snakemake rebuilds it)"
            )
        )


def _is_variable_list(t: pa.DataType) -> bool:
    """Whether ``t`` is a list type of variable length (list, large list or their views)."""
    return any(
        check(t)
        for check in (
            pa.types.is_list,
            pa.types.is_large_list,
            pa.types.is_list_view,
            pa.types.is_large_list_view,
        )
    )


def _type_name(t: pa.DataType) -> str:
    """``t`` as text, representation choices removed: dictionaries decoded, large and view
    strings, binaries and lists as their plain forms (a parquet round trip may change them)."""
    if pa.types.is_dictionary(t):
        return _type_name(t.value_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_fixed_size_list(t):
        return f"list<{_type_name(t.value_type)}>[{t.list_size}]"
    if _is_variable_list(t):
        return f"list<{_type_name(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{f.name}: {_type_name(f.type)}" for f in t) + ">"
    return str(t)


class _ColumnHasher:
    """Running SHA-256 of one column's values, independent of how they are batched.

    Each kind of content goes to its own running hash ("streams": null positions, value
    bytes, lengths, string bytes, per nesting level), so batches ``[a, b]`` and ``[ab]``
    update every hash with the same bytes in the same order.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._streams: dict[str, hashlib._Hash] = {}
        self._seen: dict[str, int] = {}

    def _feed(self, stream: str, data) -> None:
        if stream not in self._streams:
            self._streams[stream] = hashlib.sha256()
        self._streams[stream].update(data)

    def update(self, column: pa.Array | pa.ChunkedArray) -> None:
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        for chunk in chunks:
            self._add(chunk, "$")

    def _add(self, arr: pa.Array, level: str) -> None:
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        start = self._seen.get(level, 0)
        self._seen[level] = start + len(arr)
        if arr.null_count:
            nulls = pc.indices_nonzero(arr.is_null()).to_numpy().astype("<i8") + start
            self._feed(level + ":nulls", nulls.tobytes())
            arr = arr.drop_null()
        self._add_values(arr, level)

    def _add_values(self, arr: pa.Array, level: str) -> None:
        t = arr.type
        if pa.types.is_null(t) or len(arr) == 0:
            return
        if pa.types.is_boolean(t):
            self._feed(level + ":values", arr.to_numpy(zero_copy_only=False).tobytes())
        elif (
            pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)
        ):
            wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
            offsets = np.frombuffer(arr.buffers()[1], dtype="<i8" if wide else "<i4")
            offsets = offsets[arr.offset : arr.offset + len(arr) + 1]
            self._feed(level + ":lengths", np.diff(offsets).astype("<i8").tobytes())
            data = arr.buffers()[2]
            if data is not None:
                self._feed(level + ":bytes", memoryview(data)[offsets[0] : offsets[-1]])
        elif pa.types.is_string_view(t) or pa.types.is_binary_view(t):
            target = pa.large_string() if pa.types.is_string_view(t) else pa.large_binary()
            self._add_values(arr.cast(target), level)
        elif pa.types.is_fixed_size_list(t):
            self._add(arr.flatten(), level + "[]")
        elif _is_variable_list(t):
            lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
            self._feed(level + ":lengths", lengths.astype("<i8").tobytes())
            self._add(arr.flatten(), level + "[]")
        elif pa.types.is_struct(t):
            for i, child in enumerate(arr.flatten()):
                self._add(child, f"{level}.{i}")
        else:
            try:
                width = t.bit_width
            except ValueError:
                width = 0
            if width % 8 or width == 0:
                raise TypeError(f"column {self.name!r}: no content digest for type {t}")
            size = width // 8
            data = memoryview(arr.buffers()[1])
            self._feed(level + ":values", data[arr.offset * size : (arr.offset + len(arr)) * size])

    def hexdigest(self) -> str:
        total = hashlib.sha256()
        for stream in sorted(self._streams):
            total.update(f"{stream}={self._streams[stream].hexdigest()};".encode())
        return total.hexdigest()[:_HEX]


def _metadata_digest(metadata: dict[bytes, bytes] | None) -> str:
    """SHA-256 of the pandas metadata (what ``to_pandas`` rebuilds dtypes and index from)."""
    return hashlib.sha256((metadata or {}).get(_PANDAS_KEY, b"")).hexdigest()[:_HEX]


class _TableHasher:
    """Digest record of a table fed batch by batch (:func:`table_digest`)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows = 0
        self.columns = [_ColumnHasher(name) for name in schema.names]

    def update(self, batch: pa.Table | pa.RecordBatch) -> None:
        self.rows += batch.num_rows
        for hasher, column in zip(self.columns, batch.columns, strict=True):
            hasher.update(column)

    def record(self) -> dict:
        return {
            "version": _DIGEST_VERSION,
            "algorithm": "sha256/128",
            "rows": self.rows,
            "pandas": _metadata_digest(self.schema.metadata),
            "columns": [
                [field.name, _type_name(field.type), hasher.hexdigest()]
                for field, hasher in zip(self.schema, self.columns, strict=True)
            ],
        }


def table_digest(table: pa.Table | pa.RecordBatch) -> dict:
    """The content digest record of ``table``, as :data:`DIGEST_KEY` stores it (JSON).

    ``{"version", "algorithm": "sha256/128", "rows", "pandas": SHA-256 of the pandas metadata,
    "columns": [[name, canonical type, SHA-256 of the values], ...]}``, each SHA-256 cut to
    its first 128 bits. Equal content gives
    an equal record whatever the chunking, dictionary encoding or string/list offsets width.
    """
    hasher = _TableHasher(table.schema)
    hasher.update(table)
    return hasher.record()


def _encode_record(record: dict) -> str:
    return json.dumps(record, separators=(",", ":"), sort_keys=True)


def _read_record(metadata: pq.FileMetaData, path, require: bool) -> dict | None:
    """The digest record in a file's footer; None when absent and not ``require``d."""
    raw = (metadata.metadata or {}).get(DIGEST_KEY.encode())
    if raw is None:
        if require:
            raise DamagedFileError(
                path,
                f"no {DIGEST_KEY} record in its metadata, so its content cannot be verified",
                "a file written before reliquant recorded digests, or whose metadata was "
                "damaged: delete it and rerun the step that writes it (snakemake rebuilds it); "
                "a table of your own: write it with reliquant.core.io.write_table or write_frame",
            )
        # a user's own table (require_digest=False): nothing for the user to do, no warning
        log.debug("%s carries no %s: only its page checksums are verified", path, DIGEST_KEY)
        return None
    try:
        record = json.loads(raw)
        ok = (
            record["version"] == _DIGEST_VERSION
            and isinstance(record["rows"], int)
            and all(len(c) == 3 for c in record["columns"])
            and isinstance(record["pandas"], str)
        )
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise DamagedFileError(path, f"its {DIGEST_KEY} record is unreadable")
    return record


def _check_footer(pf: pq.ParquetFile, record: dict, path) -> None:
    """Row count, column names and types of the footer against the record (no data read)."""
    meta = pf.metadata
    groups = sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
    if not meta.num_rows == groups == record["rows"]:
        raise DamagedFileError(
            path,
            f"its footer says {meta.num_rows} rows ({groups} in its row groups), "
            f"{record['rows']} were written",
        )
    schema = pf.schema_arrow
    found = [[f.name, _type_name(f.type)] for f in schema]
    written = [c[:2] for c in record["columns"]]
    if found != written:
        raise DamagedFileError(path, f"its columns read as {found}, {written} were written")
    if _metadata_digest(schema.metadata) != record["pandas"]:
        raise DamagedFileError(path, "its pandas metadata differs from what was written")


def _compare(hasher: _TableHasher, record: dict, path) -> None:
    """Raise unless the hashed columns and the rows equal the record's."""
    if hasher.rows != record["rows"]:
        raise DamagedFileError(path, f"{hasher.rows} rows read, {record['rows']} were written")
    written = {name: (kind, digest) for name, kind, digest in record["columns"]}
    for field, column in zip(hasher.schema, hasher.columns, strict=True):
        kind, digest = written.get(field.name, (None, None))
        if kind != _type_name(field.type) or digest != column.hexdigest():
            raise DamagedFileError(path, f"column {field.name!r} differs from what was written")


def _open(path, require_digest: bool, kind: type = pq.ParquetFile) -> tuple:
    """``kind(path)`` (a ``ParquetFile``) and its digest record, the footer checked against it."""
    try:
        pf = kind(path, page_checksum_verification=True)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except Exception as err:  # noqa: BLE001 - any failure to parse is a damaged file
        raise DamagedFileError(path, f"not a readable parquet file ({err})") from err
    record = _read_record(pf.metadata, path, require_digest)
    if record is not None:
        _check_footer(pf, record, path)
    return pf, record


def _without_record(schema: pa.Schema) -> pa.Schema:
    """``schema`` without a digest record in its metadata (one read from a file goes stale)."""
    metadata = schema.metadata or {}
    if DIGEST_KEY.encode() not in metadata:
        return schema
    return schema.with_metadata({k: v for k, v in metadata.items() if k != DIGEST_KEY.encode()})


def _damaged(path, action: str, err: Exception) -> DamagedFileError:
    return DamagedFileError(path, f"{action} failed ({type(err).__name__}: {err})")


# ------------------------------------------------------------------------------- writers
def _write_digest(writer: pq.ParquetWriter, hasher: _TableHasher) -> None:
    writer.add_key_value_metadata({DIGEST_KEY: _encode_record(hasher.record())})


def write_table(table: pa.Table, path: str | os.PathLike, schema: pa.Schema | None = None) -> None:
    """Write an Arrow table to parquet atomically, cast to ``schema`` when given.

    Casting fails loudly (``pyarrow.ArrowInvalid``) if a column does not fit the schema.
    The file carries no timestamps, so equal tables give equal file content; its metadata
    carries the content digest (:data:`DIGEST_KEY`) that every read verifies.
    """
    if schema is not None:
        _check_columns(table.column_names, schema, path)
        table = table.select(schema.names).cast(schema)
    table = table.replace_schema_metadata(_without_record(table.schema).metadata)
    hasher = _TableHasher(table.schema)
    hasher.update(table)
    with (
        atomic_path(path) as tmp,
        pq.ParquetWriter(tmp, table.schema, **PARQUET_WRITE_OPTIONS) as writer,
    ):
        writer.write_table(table)
        _write_digest(writer, hasher)
    _log_written(path, f": {table.num_rows} rows")


def write_row_groups(
    tables: Iterable[pa.Table], path: str | os.PathLike, schema: pa.Schema
) -> None:
    """Stream tables into one parquet file atomically, one row group per table.

    Readers can then stream the file group by group (``ParquetFile.iter_row_groups``) without
    holding it whole; each table is cast to ``schema`` (a misfit fails loudly). The content
    digest is computed while streaming and recorded when the file is closed.
    """
    schema = _without_record(schema)
    hasher = _TableHasher(schema)
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
    _log_written(path, f": {hasher.rows} rows")


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


# ------------------------------------------------------------------------------- readers
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
        hasher = _TableHasher(table.schema)
        hasher.update(table)
        _compare(hasher, record, path)
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
    pf, record = _open(path, require_digest)
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
    return table.replace_schema_metadata(_without_record(table.schema).metadata)


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
                hasher = _TableHasher(batch.schema)
            if self.digest_record is not None:
                hasher.update(batch)
            if held is not None:
                yield held
            held = batch
        if self.digest_record is not None:
            if hasher is None:  # an empty stream: the record must say 0 rows
                hasher = _TableHasher(pa.schema([]))
            _compare(hasher, self.digest_record, self.path)
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
    pf, record = _open(path, require_digest, VerifiedParquetFile)
    pf.path, pf.digest_record = str(path), record
    log.info("read %s (streamed)", path)
    return pf


def read_frame(
    path: str | os.PathLike, columns: list[str] | None = None, *, require_digest: bool = True
) -> pd.DataFrame:
    """Read a parquet file into a DataFrame (image columns come back as object arrays),
    verified as by :func:`read_table`."""
    return read_table(path, columns=columns, require_digest=require_digest).to_pandas()


# ------------------------------------------------------------------ damaged intermediates
_MAGIC = b"PAR1"


def _footer_problem(path: Path) -> str | None:
    """Why ``path`` would be refused by every reader here, from its footer alone; or None."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(4)
            handle.seek(max(0, size - 4))
            tail = handle.read(4)
    except OSError as err:
        return f"unreadable ({err})"
    if size < 12 or head != _MAGIC or tail != _MAGIC:
        return f"truncated or not parquet ({size} bytes, no PAR1 at both ends)"
    try:
        _open(path, require_digest=True)
    except DamagedFileError as err:
        return err.problem
    return None


#: Start of the archive comment that seals a zip file (:func:`seal_zip`); 64 hex digits follow.
ZIP_SEAL_PREFIX = b"reliquant.digest sha256:"
_EOCD = b"PK\x05\x06"  # signature of a zip archive's end-of-central-directory record
_EOCD_SIZE = 22  # its size without the comment; the comment's length is its last 2 bytes
_SEAL_SIZE = len(ZIP_SEAL_PREFIX) + 64


def seal_zip(data: bytes) -> bytes:
    """A zip archive's bytes (no archive comment), sealed with their own SHA-256.

    The archive comment (the last field of the end-of-central-directory record) becomes
    ``ZIP_SEAL_PREFIX + sha256(b).hexdigest()``, where ``b`` is every byte of the archive
    before the comment's 2-byte length field. Zip readers (``torch.load``, ``zipfile``)
    ignore the comment, so the archive reads as before; :func:`verify_zip_seal` recomputes
    the hash. Deterministic: equal archives give equal sealed bytes.
    """
    if (
        len(data) < _EOCD_SIZE
        or data[-_EOCD_SIZE : -_EOCD_SIZE + 4] != _EOCD
        or data[-2:] != b"\0\0"
    ):
        raise ValueError(
            "expected a zip archive that ends with its end-of-central-directory record and "
            "has no archive comment"
        )
    body = data[:-2]
    seal = ZIP_SEAL_PREFIX + hashlib.sha256(body).hexdigest().encode()
    return body + len(seal).to_bytes(2, "little") + seal


def zip_seal_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a zip archive sealed by :func:`seal_zip` with its bytes unchanged
    (any bit flipped, a byte missing or added), or None when it is."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return f"unreadable ({err})"
    eocd = data[-(_SEAL_SIZE + _EOCD_SIZE) : -_SEAL_SIZE]
    seal = data[-_SEAL_SIZE:]
    if (
        len(data) < _SEAL_SIZE + _EOCD_SIZE
        or eocd[:4] != _EOCD
        or int.from_bytes(eocd[-2:], "little") != _SEAL_SIZE
        or not seal.startswith(ZIP_SEAL_PREFIX)
    ):
        return f"truncated or not sealed ({len(data)} bytes, no {ZIP_SEAL_PREFIX.decode()} seal at the end)"
    expected = seal[len(ZIP_SEAL_PREFIX) :].decode("ascii", errors="replace")
    actual = hashlib.sha256(data[: -(_SEAL_SIZE + 2)]).hexdigest()
    if actual != expected:
        return f"content SHA-256 {actual} differs from the sealed {expected}"
    return None


def verify_zip_seal(path: str | os.PathLike) -> None:
    """Raise :class:`DamagedFileError` naming ``path`` unless its seal matches its bytes
    (:func:`zip_seal_problem`); log the check."""
    problem = zip_seal_problem(path)
    if problem is not None:
        raise DamagedFileError(path, problem)
    log.info("read %s (seal verified)", path)


#: Suffixes of the files the workflow writes sealed as zip archives (:func:`seal_zip`).
_SEALED_SUFFIXES = (".pt",)


def _output_problem(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _footer_problem(path)
    if suffix in _SEALED_SUFFIXES:
        return zip_seal_problem(path)
    return None


def damaged_outputs(paths: Iterable[str | os.PathLike]) -> dict[Path, str]:
    """Those of ``paths`` that exist and that no reader here would accept: ``{path: why}``.

    Cheap: a parquet file's footer and digest record (no data read, :func:`read_table`
    checks the rest), a sealed file's seal (``.pt``, :func:`zip_seal_problem`). Files of
    other suffixes, and missing files, are not reported. Only the given paths are looked
    at: pass the outputs of a workflow's jobs, never a folder's contents.
    """
    found = {}
    for name in paths:
        path = Path(name)
        if not path.is_file():
            continue
        problem = _output_problem(path)
        if problem is not None:
            found[path] = problem
    return found


def remove_damaged_outputs(paths: Iterable[str | os.PathLike]) -> dict[Path, str]:
    """Delete those of ``paths`` that :func:`damaged_outputs` reports, each with a warning.

    For a workflow's outputs whose jobs will run again (``workflow/rules/common.smk``
    passes only the outputs of the jobs of a real run). Returns ``{deleted path: why}``.
    """
    removed = {}
    for path, problem in damaged_outputs(paths).items():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed[path] = problem
            log.warning("removed %s (%s); the job that writes it will run again", path, problem)
    return removed


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
        pf, _ = _open(path, require_digest=False)
        index = set(pandas_index_columns(pf.schema_arrow))
        return [n for n in pf.schema_arrow.names if n not in index]
    return [str(c) for c in pd.read_csv(path, nrows=0).columns]


def table_file_rows(path: str | os.PathLike) -> int:
    """The number of data rows of a CSV or parquet file (parquet: from its footer, checked
    against its digest record, if any)."""
    if _table_suffix(path) == ".parquet":
        pf, _ = _open(path, require_digest=False)
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
        pf, _ = _open(path, require_digest=False)
        index = [c for c in pandas_index_columns(pf.schema_arrow) if c not in columns]
        frame = read_frame(path, columns=[*columns, *index], require_digest=False)
        return frame[list(columns)]
    frame = pd.read_csv(path, usecols=columns)
    log.info("read %s: %d rows", path, len(frame))
    return frame if columns is None else frame[list(columns)]


#: Version of the image column's layout, which its Arrow type spells: 2 (now) is
#: ``fixed_size_binary(h*w)``, one value per image holding its ``h*w`` bytes row by row, read
#: as one copy of the page (about 1 us an image); 1 (before) was ``fixed_size_list<uint8>[h*w]``,
#: the same bytes with a repetition level per pixel (7-26 us an image to read), which
#: :func:`arrow_to_images` refuses.
IMAGE_LAYOUT_VERSION = 2


def images_to_arrow(images: np.ndarray) -> pa.FixedSizeBinaryArray:
    """Encode an ``(n, h, w)`` uint8 array as a ``fixed_size_binary(h*w)`` column (one value
    per image: its bytes, row-major; layout :data:`IMAGE_LAYOUT_VERSION`), without a copy."""
    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim != 3:
        raise ValueError(
            f"images must be a uint8 array of shape (n, h, w); got {images.dtype} {images.shape}"
        )
    n, h, w = images.shape
    if h * w < 1:
        raise ValueError(f"images must have at least one pixel; got shape {images.shape}")
    flat = np.ascontiguousarray(images).reshape(-1)
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(h * w), n, [None, pa.py_buffer(flat)])


def arrow_to_images(
    column: pa.Array | pa.ChunkedArray, side: int = 28, *, source: str | os.PathLike | None = None
) -> np.ndarray:
    """Decode an image column (:func:`images_to_arrow`) to an ``(n, side, side)`` uint8 array.

    A view of the column's buffer (read-only) when it is one chunk, else one copy. A column in
    the layout before :data:`IMAGE_LAYOUT_VERSION` (``fixed_size_list<uint8>``), of another
    size, or with missing images raises a ValueError naming ``source`` (the file read).
    """
    where = f"{source}: " if source is not None else ""
    t = column.type
    if pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        raise ValueError(
            f"{where}image column of type {t}, the image layout before version "
            f"{IMAGE_LAYOUT_VERSION} (now {image_type(side)}): a file written by an older "
            "reliquant; delete it and rerun the step that writes it (snakemake reruns it)"
        )
    if not pa.types.is_fixed_size_binary(t) or t.byte_width != side * side:
        raise ValueError(f"{where}expected an image column of type {image_type(side)}; got {t}")
    if column.null_count:
        raise ValueError(f"{where}image column has {column.null_count} missing images")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    size = side * side
    data = column.buffers()[1]
    if data is None or len(column) == 0:
        return np.empty((0, side, side), dtype=np.uint8)
    flat = np.frombuffer(
        data, dtype=np.uint8, count=len(column) * size, offset=column.offset * size
    )
    return flat.reshape(-1, side, side)


def image_type(side: int = 28) -> pa.DataType:
    """Arrow type of one image: ``fixed_size_binary(side*side)`` (layout
    :data:`IMAGE_LAYOUT_VERSION`)."""
    return pa.binary(side * side)


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
