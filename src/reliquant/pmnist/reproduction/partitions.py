"""Perturbed MNIST (MLM paper 004, Section 3.2): blocks, partitions, reader, summaries.

The set is the clean MNIST test images (level 0, corruption ``"clean"``) plus 12
corruptions x 10 levels of corrupted copies (1,210,000 images for all 10,000). One
*block* is one (corruption, level); one *partition* is one corruption's 10 blocks, stored
as a parquet file with one row group per level, rows sorted by (level, test_index)::

    test_index int32, label uint8, corruption string, level uint8,
    image fixed_size_binary[784]

(one value per image, its 784 bytes row by row: image layout version 2,
:data:`reliquant.core.io.IMAGE_LAYOUT_VERSION`, which reads as a copy of the page; a partition
in the earlier ``fixed_size_list<uint8>[784]`` layout is refused by the readers here, with a
message to rebuild it).

:func:`generate_block` is deterministic given (seed, corruption, level, test indices,
parameters) and independent of the chunk size (see :mod:`reliquant.pmnist.fields`).
:func:`write_clean_partition` and :func:`write_corruption_partition` write the 13 files of the
workflow; :func:`iter_partition_batches` streams a partition back in bounded memory.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from numba import njit

from reliquant.core.io import (
    arrow_to_images,
    image_type,
    images_to_arrow,
    open_parquet,
    read_table,
    write_row_groups,
)
from reliquant.pmnist.corruptions import SIDE, check_images
from reliquant.pmnist.fused import corrupt_block
from reliquant.pmnist.registry import N_LEVELS, level_params, validate_schedule
from reliquant.pmnist.reproduction.partition_names import CLEAN

__all__ = [
    "CLEAN",
    "N_BINS",
    "PARTITION_SCHEMA",
    "SUMMARY_SCHEMA",
    "generate_block",
    "iter_partition_batches",
    "level_table",
    "read_images",
    "resolve_schedule",
    "select_subset",
    "summarize_block",
    "summary_markdown_frame",
    "summary_table",
    "write_clean_partition",
    "write_corruption_partition",
    "write_partition",
]

log = logging.getLogger("reliquant.pmnist.reproduction.partitions")

N_BINS = 16

PARTITION_SCHEMA = pa.schema(
    [
        ("test_index", pa.int32()),
        ("label", pa.uint8()),
        ("corruption", pa.string()),
        ("level", pa.uint8()),
        ("image", image_type(SIDE)),
    ]
)

SUMMARY_SCHEMA = pa.schema(
    [
        ("corruption", pa.string()),
        ("level", pa.uint8()),
        ("n_images", pa.int32()),
        ("mean_intensity", pa.float64()),
        ("std_intensity", pa.float64()),
        ("frac_black", pa.float64()),
        ("frac_white", pa.float64()),
        ("histogram", pa.list_(pa.float64(), N_BINS)),
        ("frac_changed", pa.float64()),
        ("frac_background_changed", pa.float64()),
        ("background_mean", pa.float64()),
        ("sha256", pa.string()),
    ]
)


def select_subset(labels: np.ndarray, images_per_class: int | None) -> np.ndarray:
    """Test indices to use: all (``None``) or the first ``images_per_class`` of each class.

    Returned sorted ascending (int64). Deterministic: no randomness.
    """
    labels = np.asarray(labels)
    if images_per_class is None:
        return np.arange(labels.size, dtype=np.int64)
    if isinstance(images_per_class, bool) or int(images_per_class) < 1:
        raise ValueError(f"pmnist.images_per_class must be null or >= 1; got {images_per_class!r}")
    keep = []
    for c in np.unique(labels):
        keep.append(np.flatnonzero(labels == c)[: int(images_per_class)])
    return np.sort(np.concatenate(keep)).astype(np.int64)


def generate_block(
    images: np.ndarray,
    test_index: np.ndarray,
    name: str,
    level: int,
    params: Mapping[str, Any],
    seed: int,
    chunk_size: int = 2500,
) -> np.ndarray:
    """Corrupt ``images`` (uint8 ``(n, 28, 28)``, test indices ``test_index``) at one level.

    ``params`` is the corruption's config section (lists of 10 values + constants); the
    level's values are picked and validated by :func:`reliquant.pmnist.registry.level_params`.
    The bytes are those of ``corrupt(images, name, p, draw_fields(name, seed, level,
    test_index))``, made by the compiled pipeline :func:`reliquant.pmnist.fused.corrupt_block`.
    Works chunk by chunk (``chunk_size`` images) to bound memory; the bytes do not depend
    on ``chunk_size``.
    """
    images = check_images(images)
    test_index = np.asarray(test_index)
    if test_index.shape != (images.shape[0],):
        raise ValueError(
            f"test_index must have shape ({images.shape[0]},) to match images; got {test_index.shape}"
        )
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1; got {chunk_size}")
    p = level_params(name, params, level)
    out = np.empty_like(images)
    for start in range(0, images.shape[0], chunk_size):
        sl = slice(start, start + chunk_size)
        out[sl] = corrupt_block(images[sl], test_index[sl], name, p, seed, level)
    return out


def level_table(
    images: np.ndarray, labels: np.ndarray, test_index: np.ndarray, corruption: str, level: int
) -> pa.Table:
    """One block as an Arrow table in :data:`PARTITION_SCHEMA`, sorted by test_index."""
    order = np.argsort(test_index, kind="stable")
    n = len(order)
    return pa.table(
        {
            "test_index": pa.array(np.asarray(test_index)[order].astype(np.int32)),
            "label": pa.array(np.asarray(labels)[order].astype(np.uint8)),
            "corruption": pa.array([corruption] * n, type=pa.string()),
            "level": pa.array(np.full(n, level, dtype=np.uint8)),
            "image": images_to_arrow(np.ascontiguousarray(images[order])),
        },
        schema=PARTITION_SCHEMA,
    )


def write_partition(path: str | os.PathLike, tables: Iterable[pa.Table]) -> None:
    """Write level tables as one parquet file, one row group per table, atomically (zstd).

    Tables must come in increasing level order; each becomes exactly one row group.
    """

    def checked(tables: Iterable[pa.Table]) -> Iterator[pa.Table]:
        last = -1
        for table in tables:
            levels = table.column("level").to_numpy()
            if levels.size and (levels.min() != levels.max() or levels[0] <= last):
                raise ValueError(
                    f"write_partition({path}): each table must hold one level, in increasing "
                    f"order; got levels {np.unique(levels).tolist()} after {last}"
                )
            last = int(levels[0]) if levels.size else last
            yield table

    write_row_groups(checked(tables), path, PARTITION_SCHEMA)


def iter_partition_batches(
    path: str | os.PathLike, batch_size: int = 10_000
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Stream a partition: yields ``(images uint8 (b,28,28), labels uint8, test_index int32, level uint8)``.

    Reads with ``ParquetFile.iter_batches`` so at most about ``batch_size`` images are held
    at a time; batches follow the file order (level, then test_index).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1; got {batch_size}")
    pf = open_parquet(path)
    missing = [c for c in PARTITION_SCHEMA.names if c not in pf.schema_arrow.names]
    if missing:
        raise ValueError(f"{path} is not a Perturbed MNIST partition: missing columns {missing}")
    cols = ["image", "label", "test_index", "level"]
    for batch in pf.iter_batches(batch_size=batch_size, columns=cols):
        images = arrow_to_images(batch.column("image"), side=SIDE, source=path)
        yield (
            images,
            batch.column("label").to_numpy(zero_copy_only=False).astype(np.uint8, copy=False),
            batch.column("test_index").to_numpy(zero_copy_only=False).astype(np.int32, copy=False),
            batch.column("level").to_numpy(zero_copy_only=False).astype(np.uint8, copy=False),
        )


def read_images(
    path: str | os.PathLike, test_indices: Iterable[int], batch_size: int = 10_000
) -> dict[tuple[int, int], np.ndarray]:
    """Images of the given test indices at every level: ``{(level, test_index): (28, 28)}``.

    Reads the ``test_index``, ``level`` and ``image`` columns whole (their content digests are
    verified, :func:`reliquant.core.io.read_table`) and decodes only the rows asked for: the
    image column reads as one copy of its pages, so a few images of a 100,000-image partition
    cost a tenth of a second. ``batch_size`` is kept for compatibility (unused).
    """
    del batch_size
    wanted = np.asarray(sorted(set(int(i) for i in test_indices)), dtype=np.int64)
    table = read_table(path, columns=["test_index", "level", "image"])
    idx = table.column("test_index").to_numpy()
    hit = np.flatnonzero(np.isin(idx, wanted))
    lev = table.column("level").to_numpy()
    images = arrow_to_images(table.column("image").take(pa.array(hit)), side=SIDE, source=path)
    return {(int(lev[h]), int(idx[h])): image.copy() for h, image in zip(hit, images, strict=True)}


@njit(cache=True)
def _block_counts(images, clean):
    """Integer counts of one block (flat uint8 arrays of equal size): the histogram of
    ``images`` (256), pixels that differ from ``clean``, pixels 0 in ``clean``, those of them
    that changed, and the sum of ``images`` over them.

    The histogram is counted in four interleaved sub-histograms (a run of equal values then
    does not wait on its own previous increment); the other counts in one branch-free pass.
    """
    h0 = np.zeros(256, dtype=np.int64)
    h1 = np.zeros(256, dtype=np.int64)
    h2 = np.zeros(256, dtype=np.int64)
    h3 = np.zeros(256, dtype=np.int64)
    n = images.size
    m = n - n % 4
    for t in range(0, m, 4):
        h0[images[t]] += 1
        h1[images[t + 1]] += 1
        h2[images[t + 2]] += 1
        h3[images[t + 3]] += 1
    for t in range(m, n):
        h0[images[t]] += 1
    changed = 0
    background = 0
    background_changed = 0
    background_sum = 0
    for t in range(n):
        v = images[t]
        bg = clean[t] == 0
        changed += v != clean[t]
        background += bg
        background_changed += bg & (v != 0)
        background_sum += v if bg else 0
    return h0 + h1 + h2 + h3, changed, background, background_changed, background_sum


def summarize_block(
    images: np.ndarray, corruption: str, level: int, clean: np.ndarray | None = None
) -> dict[str, Any]:
    """Mean intensity and a 16-bin pixel histogram (fractions) of one block, and how it
    differs from the ``clean`` images it was made from (the block itself when ``None``).

    ``mean_intensity`` is the mean uint8 value (0..255); bin ``b`` counts values in
    ``[16 b, 16 b + 16)``; ``frac_black``/``frac_white`` are the fractions of 0 and 255.
    ``frac_changed``: pixels that differ from the clean image; ``frac_background_changed``
    and ``background_mean``: the same fraction and the mean value over the pixels that are
    0 in the clean image; ``sha256``: digest of the block's bytes (equal digests = identical
    levels).
    """
    images = check_images(images)
    clean = images if clean is None else check_images(clean)
    if clean.shape != images.shape:
        raise ValueError(f"clean images {clean.shape} do not match the block {images.shape}")
    # every statistic from integer counts (one compiled pass): the means below are those
    # NumPy takes of the boolean and uint8 arrays (their float64 sums are exact integers)
    flat = np.ascontiguousarray(images).reshape(-1)
    n_counts, n_changed, n_bg, n_bg_changed, bg_sum = _block_counts(
        flat, np.ascontiguousarray(clean).reshape(-1)
    )
    counts = n_counts.astype(np.float64)
    total = max(1.0, counts.sum())
    values = np.arange(256, dtype=np.float64)
    mean = float((counts * values).sum() / total)
    var = float((counts * (values - mean) ** 2).sum() / total)
    hist = counts.reshape(N_BINS, 256 // N_BINS).sum(axis=1) / total
    return {
        "corruption": corruption,
        "level": int(level),
        "n_images": int(images.shape[0]),
        "mean_intensity": mean,
        "std_intensity": var**0.5,
        "frac_black": float(counts[0] / total),
        "frac_white": float(counts[255] / total),
        "histogram": hist.tolist(),
        "frac_changed": float(n_changed) / flat.size if flat.size else float("nan"),
        "frac_background_changed": float(n_bg_changed) / n_bg if n_bg else 0.0,
        "background_mean": float(bg_sum) / n_bg if n_bg else float("nan"),
        "sha256": hashlib.sha256(flat).hexdigest(),
    }


def summary_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows of :func:`summarize_block` as a table in :data:`SUMMARY_SCHEMA`."""
    rows = list(rows)
    return pa.Table.from_pylist(rows, schema=SUMMARY_SCHEMA)


def write_clean_partition(
    path: str | os.PathLike, images: np.ndarray, labels: np.ndarray, test_index: np.ndarray
) -> pa.Table:
    """Write the uncorrupted images as level 0 (corruption ``"clean"``); return its summary.

    The summary is one :func:`summarize_block` row in :data:`SUMMARY_SCHEMA`.
    """
    write_partition(path, [level_table(images, labels, test_index, CLEAN, 0)])
    return summary_table([summarize_block(images, CLEAN, 0)])


def write_corruption_partition(
    path: str | os.PathLike,
    images: np.ndarray,
    labels: np.ndarray,
    test_index: np.ndarray,
    name: str,
    params: Mapping[str, Any],
    seed: int,
    chunk_size: int = 2500,
) -> pa.Table:
    """Generate levels 1..10 of corruption ``name`` and write them as one partition.

    ``params`` is the corruption's config section, validated for every level before anything
    is written. Each level is :func:`generate_block` (``chunk_size`` bounds memory only) and
    becomes one row group. Returns the 10 :func:`summarize_block` rows in
    :data:`SUMMARY_SCHEMA`.
    """
    validate_schedule({name: params})
    rows: list[dict[str, Any]] = []

    def tables() -> Iterator[pa.Table]:
        for level in range(1, N_LEVELS + 1):
            t0 = time.perf_counter()
            out = generate_block(images, test_index, name, level, params, seed, chunk_size)
            rows.append(summarize_block(out, name, level, images))
            log.info(
                "%s level %d: %.2f s, mean intensity %.2f",
                name,
                level,
                time.perf_counter() - t0,
                rows[-1]["mean_intensity"],
            )
            yield level_table(out, labels, test_index, name, level)

    write_partition(path, tables())
    return summary_table(rows)


def resolve_schedule(
    preset: str, paper: Mapping[str, Any], calibrated: Mapping[str, Any] | None
) -> Mapping[str, Any]:
    """The corruptions section to use: ``paper`` (config) or ``calibrated`` (schedule file)."""
    if preset == "paper":
        return paper
    if preset == "calibrated":
        if calibrated is None:
            raise ValueError("pmnist.preset is 'calibrated' but no calibrated schedule was given")
        return calibrated
    raise ValueError(f"pmnist.preset must be 'paper' or 'calibrated'; got {preset!r}")


def summary_markdown_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean intensity per corruption (rows) and level (columns L0..L10; L0 = the clean set)."""
    clean = frame.loc[frame["corruption"] == CLEAN, "mean_intensity"]
    rest = frame[frame["corruption"] != CLEAN]
    wide = rest.pivot_table(
        index="corruption", columns="level", values="mean_intensity", sort=False
    )
    wide.columns = [f"L{c}" for c in wide.columns]
    wide.insert(0, "L0", float(clean.iloc[0]) if len(clean) else np.nan)
    return wide.reset_index()
