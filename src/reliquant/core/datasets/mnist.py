"""MNIST: the IDX format (LeCun et al.), the converted splits' table, and loading either.

IDX: big-endian int32 magic (2049 labels, 2051 images), the item count, then rows and columns
for images, then uint8 data.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from reliquant.core.datasets.manifest import open_maybe_gzip
from reliquant.core.io import arrow_to_images, image_type, images_to_arrow, read_table

__all__ = [
    "IDX_IMAGES_MAGIC",
    "IDX_LABELS_MAGIC",
    "IdxFormatError",
    "MNIST_RAW_FILES",
    "MNIST_SCHEMA",
    "MNIST_TEST_CLASS_COUNTS",
    "load_mnist",
    "load_mnist_split",
    "mnist_table",
    "read_idx",
]


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


class IdxFormatError(ValueError):
    """A file is not a well-formed IDX file."""


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (gzipped or not) into a uint8 array.

    Labels (magic 2049) give shape ``(n,)``; images (magic 2051) give ``(n, rows, cols)``.
    """
    with open_maybe_gzip(path) as handle:
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
