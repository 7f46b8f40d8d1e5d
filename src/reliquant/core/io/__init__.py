"""Atomic writers and the parquet conventions shared by every workflow step.

Every writer here writes to a temporary file in the destination folder and renames it
into place (``os.replace`` is atomic on POSIX), so a step that fails half-way leaves no
valid-looking output behind. A temporary file left by a killed writer is removed the next
time the same output is written. Every file written here is logged (logger
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

Modules
-------
atomic            writing a file atomically (a temporary file renamed into place), logged
damaged_file      ``DamagedFileError``, raised by every check of a file the workflow wrote
content_digest    the content digest of a parquet table: computed, recorded, checked
parquet_writers   ``write_table``, ``write_frame``, ``write_row_groups`` (digest recorded)
verified_parquet  ``read_table``, ``read_frame``, ``open_parquet`` (digest verified)
zip_seal          zip archives (models) sealed with their own SHA-256: ``seal_zip``, checks
output_check      the damaged-output check of a real run's outputs (``remove_damaged_outputs``)
table_files       a user's CSV or parquet tables: columns, rows, content
images            the ``fixed_size_binary`` image column codec
documents         text, markdown (and its HTML page) and figure writers

Every name below is importable from ``reliquant.core.io`` itself.
"""

from __future__ import annotations

import logging

from reliquant.core.io.atomic import atomic_path, file_sha256
from reliquant.core.io.content_digest import DIGEST_KEY, table_digest
from reliquant.core.io.damaged_file import DamagedFileError
from reliquant.core.io.documents import frame_to_markdown, save_figure, write_markdown, write_text
from reliquant.core.io.images import (
    IMAGE_LAYOUT_VERSION,
    arrow_to_images,
    image_type,
    images_to_arrow,
)
from reliquant.core.io.output_check import damaged_outputs, remove_damaged_outputs
from reliquant.core.io.parquet_writers import (
    PARQUET_COMPRESSION,
    PARQUET_WRITE_OPTIONS,
    write_frame,
    write_row_groups,
    write_table,
)
from reliquant.core.io.table_files import (
    TABLE_SUFFIXES,
    pandas_index_columns,
    read_table_file,
    table_file_columns,
    table_file_rows,
)
from reliquant.core.io.verified_parquet import (
    VerifiedParquetFile,
    open_parquet,
    read_frame,
    read_table,
)
from reliquant.core.io.zip_seal import ZIP_SEAL_PREFIX, seal_zip, verify_zip_seal, zip_seal_problem

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

#: The logger every reader and writer here logs to.
log = logging.getLogger("reliquant.io")
