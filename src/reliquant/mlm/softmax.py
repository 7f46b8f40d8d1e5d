"""Softmax tables of paper 004: one row per scored image, columns ``p0..p9`` and the argmax.

The column names, the table schema and the input check every other ``reliquant.mlm`` module
shares (eq. 1: ``s = softmax(f(x))``, a point of the probability simplex in ``R^10``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = [
    "D_COLUMNS",
    "N_CLASSES",
    "P_COLUMNS",
    "SOFTMAX_SCHEMA",
    "check_softmax",
    "softmax_frame",
]

N_CLASSES = 10
#: Softmax columns p0..p9 of the softmax tables.
P_COLUMNS = [f"p{c}" for c in range(N_CLASSES)]
#: Distance-to-centroid columns d0..d9.
D_COLUMNS = [f"d{c}" for c in range(N_CLASSES)]

#: One row per scored image: MNIST index (test_index for perturbed partitions), true label,
#: corruption ("none" for the unperturbed train/test splits), level (0 = clean), softmax, argmax.
SOFTMAX_SCHEMA = pa.schema(
    [
        pa.field("index", pa.int32(), nullable=False),
        pa.field("label", pa.uint8(), nullable=False),
        pa.field("corruption", pa.string(), nullable=False),
        pa.field("level", pa.uint8(), nullable=False),
        *[pa.field(c, pa.float32(), nullable=False) for c in P_COLUMNS],
        pa.field("prediction", pa.uint8(), nullable=False),
    ]
)


def check_softmax(softmax: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
    """``softmax`` as an array, after checking it is ``(n, 10)`` and ``labels`` (if given) lie
    in 0..9 with one per row; a ValueError names what came instead."""
    s = np.asarray(softmax)
    if s.ndim != 2 or s.shape[1] != N_CLASSES:
        raise ValueError(f"softmax must have shape (n, {N_CLASSES}); got {s.shape}")
    if labels is not None:
        y = np.asarray(labels)
        if y.shape != (len(s),):
            raise ValueError(f"labels must have shape ({len(s)},); got {y.shape}")
        if len(y) and (y.min() < 0 or y.max() >= N_CLASSES):
            raise ValueError(f"labels must lie in 0..{N_CLASSES - 1}; got {y.min()}..{y.max()}")
    return s


def softmax_frame(
    index: np.ndarray,
    labels: np.ndarray,
    corruption: np.ndarray | str,
    level: np.ndarray | int,
    softmax: np.ndarray,
) -> pd.DataFrame:
    """Rows of :data:`SOFTMAX_SCHEMA`; ``prediction = argmax(softmax)`` (ties: lowest class)."""
    s = check_softmax(softmax, labels).astype(np.float32, copy=False)
    n = len(s)
    frame = pd.DataFrame(
        {
            "index": np.asarray(index, dtype=np.int32),
            "label": np.asarray(labels, dtype=np.uint8),
            "corruption": np.broadcast_to(np.asarray(corruption, dtype=object), (n,)),
            "level": np.broadcast_to(np.asarray(level, dtype=np.uint8), (n,)),
        }
    )
    for c in range(N_CLASSES):
        frame[P_COLUMNS[c]] = s[:, c]
    frame["prediction"] = s.argmax(1).astype(np.uint8)
    return frame
