"""The content digest of a parquet table: computed, recorded, checked.

Every parquet file the workflow writes records, in its key-value metadata under
:data:`DIGEST_KEY`, a small JSON record with the row count, the pandas metadata's SHA-256 and,
per column, its name, its canonical type and the SHA-256 of its values (:func:`table_digest`).
The values are hashed in a batching-independent way (separate running hashes of the
fixed-width value bytes, of the string and list lengths, of the string bytes and of the null
positions, :class:`TableHasher`), so one record serves a whole read, a read of some columns,
and a stream read batch by batch. :func:`read_record`, :func:`check_footer` and
:func:`check_hashes` compare a file against its record and raise
:class:`~reliquant.core.io.damaged_file.DamagedFileError` naming it.
"""

from __future__ import annotations

import hashlib
import json
import logging

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from reliquant.core.io.damaged_file import DamagedFileError

__all__ = [
    "DIGEST_KEY",
    "TableHasher",
    "check_footer",
    "check_hashes",
    "encode_record",
    "read_record",
    "table_digest",
    "without_record",
]


log = logging.getLogger("reliquant.io")

#: Key of the content digest record in a parquet file's key-value metadata.
DIGEST_KEY = "reliquant.digest"
_DIGEST_VERSION = 1
_PANDAS_KEY = b"pandas"
#: Hex digits kept of each SHA-256 (128 bits: any change is caught but with odds 2**-128).
_HEX = 32


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


class TableHasher:
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
    hasher = TableHasher(table.schema)
    hasher.update(table)
    return hasher.record()


def encode_record(record: dict) -> str:
    """``record`` as the compact JSON text stored under :data:`DIGEST_KEY`."""
    return json.dumps(record, separators=(",", ":"), sort_keys=True)


def read_record(metadata: pq.FileMetaData, path, require: bool) -> dict | None:
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


def check_footer(pf: pq.ParquetFile, record: dict, path) -> None:
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


def check_hashes(hasher: TableHasher, record: dict, path) -> None:
    """Raise unless the hashed columns and the rows equal the record's."""
    if hasher.rows != record["rows"]:
        raise DamagedFileError(path, f"{hasher.rows} rows read, {record['rows']} were written")
    written = {name: (kind, digest) for name, kind, digest in record["columns"]}
    for field, column in zip(hasher.schema, hasher.columns, strict=True):
        kind, digest = written.get(field.name, (None, None))
        if kind != _type_name(field.type) or digest != column.hexdigest():
            raise DamagedFileError(path, f"column {field.name!r} differs from what was written")


def without_record(schema: pa.Schema) -> pa.Schema:
    """``schema`` without a digest record in its metadata (one read from a file goes stale)."""
    metadata = schema.metadata or {}
    if DIGEST_KEY.encode() not in metadata:
        return schema
    return schema.with_metadata({k: v for k, v in metadata.items() if k != DIGEST_KEY.encode()})
