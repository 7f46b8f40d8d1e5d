"""The image column: ``(n, h, w)`` uint8 images as a ``fixed_size_binary(h*w)`` Arrow column.

One value per image (:func:`images_to_arrow`, layout :data:`IMAGE_LAYOUT_VERSION`), which reads
back as a copy of the page and decodes to an ``(n, h, w)`` uint8 array without a copy
(:func:`arrow_to_images`).
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

__all__ = [
    "IMAGE_LAYOUT_VERSION",
    "arrow_to_images",
    "image_type",
    "images_to_arrow",
]


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
