"""Raw data: checksum verification, IDX (MNIST) parsing, Pima, Iris and the tabular benchmarks.

The vendored files in ``data/raw`` are listed in a manifest (``checksums.tsv``: path,
sha256, md5, mirrors). :func:`verify_manifest` checks every digest before anything is
parsed; a missing or altered file raises :class:`ChecksumError` naming the file and the
expected and found digests.

The 14 tabular benchmark sets (``data/raw/benchmarks``, Lassance & De Bock, arXiv 2603.23318)
are read by :func:`read_benchmark_csv` with their authors' preprocessing and written with
:func:`benchmark_schema`.

IDX format (LeCun et al.): big-endian int32 magic (2049 labels, 2051 images), the item
count, then rows and columns for images, then uint8 data.

Modules
-------
manifest        the raw files' manifest and its checksums, downloads from mirrors
mnist           the IDX format, the converted MNIST splits, ``load_mnist``
small_tables    the Pima and Iris tables
benchmark_sets  the 14 tabular benchmark sets: ``read_benchmark_csv``, ``benchmark_schema``

Every name below is importable from ``reliquant.core.datasets`` itself.
"""

from __future__ import annotations

import logging

from reliquant.core.datasets.benchmark_sets import (
    BENCHMARK_CLASS,
    benchmark_schema,
    read_benchmark_csv,
)
from reliquant.core.datasets.manifest import (
    ChecksumError,
    ManifestEntry,
    download_from_mirrors,
    file_digest,
    read_manifest,
    verified_files,
    verify_manifest,
)
from reliquant.core.datasets.mnist import (
    IDX_IMAGES_MAGIC,
    IDX_LABELS_MAGIC,
    MNIST_RAW_FILES,
    MNIST_SCHEMA,
    MNIST_TEST_CLASS_COUNTS,
    IdxFormatError,
    load_mnist,
    load_mnist_split,
    mnist_table,
    read_idx,
)
from reliquant.core.datasets.small_tables import (
    IRIS_FEATURES,
    IRIS_SCHEMA,
    PIMA_COLUMNS,
    PIMA_RANGES,
    PIMA_SCHEMA,
    iris_table,
    pima_table,
)

__all__ = [
    "BENCHMARK_CLASS",
    "IDX_IMAGES_MAGIC",
    "IDX_LABELS_MAGIC",
    "IRIS_FEATURES",
    "IRIS_SCHEMA",
    "MNIST_RAW_FILES",
    "MNIST_SCHEMA",
    "MNIST_TEST_CLASS_COUNTS",
    "PIMA_COLUMNS",
    "PIMA_RANGES",
    "PIMA_SCHEMA",
    "ChecksumError",
    "IdxFormatError",
    "ManifestEntry",
    "benchmark_schema",
    "download_from_mirrors",
    "file_digest",
    "iris_table",
    "load_mnist",
    "load_mnist_split",
    "mnist_table",
    "pima_table",
    "read_benchmark_csv",
    "read_idx",
    "read_manifest",
    "verified_files",
    "verify_manifest",
]

#: The logger of the raw-data readers (downloads from mirrors).
log = logging.getLogger(__name__)
