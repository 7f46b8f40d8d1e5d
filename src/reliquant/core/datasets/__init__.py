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
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import logging
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import (
    arrow_to_images,
    atomic_path,
    image_type,
    images_to_arrow,
    read_table,
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

log = logging.getLogger(__name__)

IDX_LABELS_MAGIC = 2049
IDX_IMAGES_MAGIC = 2051

#: Images of each digit 0..9 in the MNIST test set (10,000 in all), as published with it:
#: what a configuration's sizes are checked against before the data is read.
MNIST_TEST_CLASS_COUNTS: tuple[int, ...] = (980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009)

MNIST_SCHEMA = pa.schema(
    [
        pa.field("index", pa.int32(), nullable=False),
        pa.field("label", pa.uint8(), nullable=False),
        pa.field("image", image_type(28), nullable=False),
    ]
)

PIMA_COLUMNS = {
    "Pregnancies": pa.int64(),
    "Glucose": pa.int64(),
    "BloodPressure": pa.int64(),
    "SkinThickness": pa.int64(),
    "Insulin": pa.int64(),
    "BMI": pa.float64(),
    "DiabetesPedigreeFunction": pa.float64(),
    "Age": pa.int64(),
    "Outcome": pa.int64(),
}
PIMA_SCHEMA = pa.schema([pa.field(n, t, nullable=False) for n, t in PIMA_COLUMNS.items()])
#: Physically possible range of each Pima column (0 marks a missing measurement in this
#: data set, as the UCI description says, so 0 is allowed where it occurs).
PIMA_RANGES = {
    "Pregnancies": (0, 30),
    "Glucose": (0, 400),
    "BloodPressure": (0, 250),
    "SkinThickness": (0, 120),
    "Insulin": (0, 1000),
    "BMI": (0.0, 100.0),
    "DiabetesPedigreeFunction": (0.0, 5.0),
    "Age": (0, 120),
    "Outcome": (0, 1),
}

IRIS_FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
IRIS_SCHEMA = pa.schema(
    [pa.field(n, pa.float64(), nullable=False) for n in IRIS_FEATURES]
    + [pa.field("target", pa.int64(), nullable=False), pa.field("target_name", pa.string())]
)


class ChecksumError(RuntimeError):
    """A raw file is missing or its digest differs from the manifest."""


class IdxFormatError(ValueError):
    """A file is not a well-formed IDX file."""


@dataclass(frozen=True)
class ManifestEntry:
    """One raw file of the manifest."""

    path: str
    sha256: str
    md5: str | None
    mirrors: tuple[str, ...]


def read_manifest(manifest: str | os.PathLike) -> list[ManifestEntry]:
    """Parse ``checksums.tsv`` (tab-separated, ``#`` comments, header row)."""
    frame = pd.read_csv(manifest, sep="\t", comment="#", dtype=str, keep_default_na=False)
    expected = ["path", "sha256", "md5", "mirrors"]
    if list(frame.columns) != expected:
        raise ValueError(f"{manifest}: expected columns {expected}, found {list(frame.columns)}")
    entries = []
    for row in frame.itertuples(index=False):
        mirrors = tuple(m for m in row.mirrors.split() if m != "-")
        entries.append(
            ManifestEntry(
                row.path, row.sha256.lower(), None if row.md5 == "-" else row.md5, mirrors
            )
        )
    return entries


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB chunks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_from_mirrors(entry: ManifestEntry, dest: Path, timeout: float = 30.0) -> bool:
    """Try each mirror for a missing file; keep it only if its SHA-256 matches.

    Returns True when a verified copy was written to ``dest``. Network errors are logged
    and the next mirror is tried (the same behaviour torchvision's MNIST has).
    """
    name = Path(entry.path).name
    for mirror in entry.mirrors:
        url = mirror.rstrip("/") + "/" + name
        try:
            with atomic_path(dest) as tmp:
                with (
                    urllib.request.urlopen(url, timeout=timeout) as response,
                    open(tmp, "wb") as out,
                ):
                    shutil.copyfileobj(response, out)
                found = file_digest(tmp)
                if found != entry.sha256:
                    raise ChecksumError(
                        f"{url}: downloaded file has sha256 {found}, expected {entry.sha256}"
                    )
            log.info("downloaded %s from %s", entry.path, url)
            return True
        except (urllib.error.URLError, OSError, ChecksumError) as err:
            log.warning("could not fetch %s: %s", url, err)
    return False


def verify_manifest(
    manifest: str | os.PathLike, allow_download: bool = False, dataset: str | None = None
) -> pd.DataFrame:
    """Check every manifest entry (paths relative to the manifest's folder), or only those of
    ``dataset`` (the path's first folder, e.g. ``mnist``).

    Returns one row per verified file: ``path`` (as in the manifest), ``file`` (where it
    lies), ``sha256`` and ``bytes``. A missing file is fetched from its mirrors when
    ``allow_download`` is true. Raises :class:`ChecksumError` naming the file, the expected
    and the found digest.
    """
    raw = Path(manifest).parent
    entries = read_manifest(manifest)
    if dataset is not None:
        entries = [e for e in entries if e.path.split("/")[0] == dataset]
        if not entries:
            raise ValueError(f"manifest {manifest} lists no file of data set {dataset!r}")
    rows = []
    for entry in entries:
        path = raw / entry.path
        if not path.exists() and not (
            allow_download and entry.mirrors and download_from_mirrors(entry, path)
        ):
            raise ChecksumError(
                f"raw file {path} is missing (expected sha256 {entry.sha256}); "
                "restore it from the repository (git checkout -- data/raw)"
            )
        found = file_digest(path)
        if found != entry.sha256:
            raise ChecksumError(
                f"raw file {path} is corrupt: sha256 expected {entry.sha256}, found {found}"
            )
        if entry.md5 is not None:
            found_md5 = file_digest(path, "md5")
            if found_md5 != entry.md5:
                raise ChecksumError(
                    f"raw file {path} is corrupt: md5 expected {entry.md5}, found {found_md5}"
                )
        rows.append(
            {"path": entry.path, "file": str(path), "sha256": found, "bytes": path.stat().st_size}
        )
    return pd.DataFrame(rows)


def verified_files(verified_tsv: str | os.PathLike) -> dict[str, Path]:
    """Map manifest path -> file location from the record written after verification."""
    frame = pd.read_csv(verified_tsv, sep="\t", dtype=str)
    return {row.path: Path(row.file) for row in frame.itertuples(index=False)}


def _open_maybe_gzip(path: str | os.PathLike):
    with open(path, "rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (gzipped or not) into a uint8 array.

    Labels (magic 2049) give shape ``(n,)``; images (magic 2051) give ``(n, rows, cols)``.
    """
    with _open_maybe_gzip(path) as handle:
        data = handle.read()
    if len(data) < 8:
        raise IdxFormatError(f"{path}: too short for an IDX header ({len(data)} bytes)")
    magic, count = np.frombuffer(data[:8], dtype=">i4")
    if magic == IDX_LABELS_MAGIC:
        shape, offset = (int(count),), 8
    elif magic == IDX_IMAGES_MAGIC:
        rows, cols = np.frombuffer(data[8:16], dtype=">i4")
        shape, offset = (int(count), int(rows), int(cols)), 16
    else:
        raise IdxFormatError(
            f"{path}: magic number {magic} is neither {IDX_LABELS_MAGIC} (labels) "
            f"nor {IDX_IMAGES_MAGIC} (images)"
        )
    expected = int(np.prod(shape))
    if len(data) - offset != expected:
        raise IdxFormatError(
            f"{path}: header promises {expected} bytes of data for shape {shape}, "
            f"file holds {len(data) - offset}"
        )
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(shape)


def mnist_table(images: np.ndarray, labels: np.ndarray) -> pa.Table:
    """Arrow table (``index``, ``label``, ``image``) of one MNIST split."""
    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    return pa.table(
        {
            "index": pa.array(np.arange(len(labels), dtype=np.int32)),
            "label": pa.array(labels.astype(np.uint8)),
            "image": images_to_arrow(images),
        },
        schema=MNIST_SCHEMA,
    )


def load_mnist_split(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Load a converted MNIST split: ``(images uint8 (n, 28, 28), labels uint8 (n,))``."""
    table = read_table(path, columns=["label", "image"])
    labels = table.column("label").to_numpy().astype(np.uint8, copy=False)
    return arrow_to_images(table.column("image"), side=28, source=path), labels


#: The raw IDX files of each MNIST split under ``data/raw/mnist``: (images, labels).
MNIST_RAW_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def load_mnist(
    root: str | os.PathLike = ".",
    splits: Sequence[str] = ("train", "test"),
    *,
    parquet_dir: str | os.PathLike | None = None,
    raw_dir: str | os.PathLike | None = None,
) -> tuple[np.ndarray, ...]:
    """MNIST images and labels of the given splits, wherever they are in a checkout.

    The workflow's converted splits (``<parquet_dir>/mnist_<split>.parquet``, rule
    ``data_mnist``) when every one asked for exists, read with :func:`load_mnist_split`;
    otherwise (a benchmark run before the workflow) the raw IDX files of ``raw_dir``, read
    with :func:`read_idx`. Both give the same pixels and labels.

    Parameters
    ----------
    root
        The repository root the default folders are relative to.
    splits
        ``"train"`` and/or ``"test"``, in the order wanted.
    parquet_dir
        Folder of the converted splits; default ``<root>/results/data``.
    raw_dir
        Folder of the raw IDX files; default ``<root>/data/raw/mnist``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(images, labels)`` of each split in turn, e.g. ``(x_train, y_train, x_test,
        y_test)``: images uint8 ``(n, 28, 28)``, labels uint8 ``(n,)``.
    """
    unknown = [split for split in splits if split not in MNIST_RAW_FILES]
    if unknown:
        raise ValueError(
            f"unknown MNIST split(s) {unknown}: expected some of {list(MNIST_RAW_FILES)}"
        )
    root = Path(root)
    parquet_dir = Path(parquet_dir) if parquet_dir is not None else root / "results" / "data"
    raw_dir = Path(raw_dir) if raw_dir is not None else root / "data" / "raw" / "mnist"
    parquets = [parquet_dir / f"mnist_{split}.parquet" for split in splits]
    if all(path.exists() for path in parquets):
        return tuple(array for path in parquets for array in load_mnist_split(path))
    return tuple(read_idx(raw_dir / name) for split in splits for name in MNIST_RAW_FILES[split])


def pima_table(csv_path: str | os.PathLike) -> pa.Table:
    """The Pima Indians Diabetes CSV as an Arrow table with the explicit schema.

    Raises a ValueError naming the file, the row (1-based, as in the CSV with its header line
    counted) and the column for a non-UTF-8 file, a missing or non-numeric value, or a value
    outside :data:`PIMA_RANGES`.
    """
    raw = Path(csv_path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{csv_path}: line {line} is not valid UTF-8 (byte {raw[err.start]:#x})"
        ) from None
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    if list(frame.columns) != list(PIMA_COLUMNS):
        raise ValueError(
            f"{csv_path}: expected columns {list(PIMA_COLUMNS)}, found {list(frame.columns)}"
        )
    for column, typ in PIMA_COLUMNS.items():
        frame[column] = _pima_column(frame[column], column, typ, csv_path)
    return pa.Table.from_pandas(frame, schema=PIMA_SCHEMA, preserve_index=False)


def _pima_column(text: pd.Series, column: str, typ: pa.DataType, csv_path) -> pd.Series:
    """One Pima column parsed to ``typ`` and checked against :data:`PIMA_RANGES`."""
    values = pd.to_numeric(text.str.strip(), errors="coerce")
    low, high = PIMA_RANGES[column]
    integral = pa.types.is_integer(typ)
    bad = values.isna() | (values < low) | (values > high)
    if integral:
        bad |= values.notna() & (values != values.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        kind = "an integer" if integral else "a number"
        raise ValueError(
            f"{csv_path}: line {row + 2}, column {column}: value {text.iloc[row]!r} is not "
            f"{kind} in [{low}, {high}]"
        )
    return values.astype("int64" if integral else "float64")


def iris_table() -> pa.Table:
    """Iris (150 rows) from scikit-learn with snake_case feature names."""
    from sklearn.datasets import load_iris

    bunch = load_iris()
    columns = {name: bunch.data[:, i] for i, name in enumerate(IRIS_FEATURES)}
    columns["target"] = bunch.target.astype(np.int64)
    columns["target_name"] = np.asarray(bunch.target_names)[bunch.target]
    return pa.table(columns, schema=IRIS_SCHEMA)


#: The class column of a benchmark table: always the last, int64 codes ``0..K-1``.
BENCHMARK_CLASS = "class"


def _decoded_text(path: str | os.PathLike) -> str:
    """The file's text (gunzipped when it is gzip), UTF-8; a ValueError names the line that
    is not."""
    with _open_maybe_gzip(path) as handle:
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
