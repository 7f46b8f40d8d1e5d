"""Softmax outputs of paper 004: the array check every ``reliquant.mlm`` module shares, and the
MNIST softmax tables (one row per scored image, columns ``p0..p9`` and the argmax).

Eq. 1: ``s = softmax(f(x))``, a point of the probability simplex in ``R^K``. The array
functions of :mod:`reliquant.mlm` take ``K`` from the softmax's second dimension (any
``K >= 2``); the tables (:data:`SOFTMAX_SCHEMA`, ``p0..p9``) are the workflow's MNIST tables
and keep ``K = 10`` (:data:`N_CLASSES`). :func:`softmax_table` builds them as Arrow tables
(what the workflow writes), :func:`softmax_frame` converts them to DataFrames.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reliquant.core.arguments import check_real

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "D_COLUMNS",
    "N_CLASSES",
    "P_COLUMNS",
    "SOFTMAX_SCHEMA",
    "check_labels",
    "check_softmax",
    "softmax_frame",
    "softmax_table",
]

#: Classes of MNIST, the workflow's data set (the tables' ``p0..p9``); the array functions
#: take K from their inputs instead.
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


def check_softmax(
    softmax: np.ndarray,
    labels: np.ndarray | None = None,
    *,
    n_classes: int | None = None,
    sum_tol: float | None = None,
    name: str = "softmax",
) -> np.ndarray:
    """``softmax`` as an array (dtype kept), after checking it is a softmax of ``K`` classes.

    ``K`` is ``softmax.shape[1]`` unless ``n_classes`` fixes it. Raises ``ValueError``, naming
    what is wrong, unless:

    - ``softmax`` is a real-valued ``(n, K)`` array with ``K >= 2`` (``n`` may be 0);
    - every entry is finite (no NaN or inf; the first bad row is named);
    - ``labels``, if given, are one integer per row in ``0..K-1`` (see :func:`check_labels`);
    - if ``sum_tol`` is given: every entry is ``>= 0`` and every row sums to 1 within
      ``sum_tol`` (``|sum_c s_c - 1| <= sum_tol``). ``None`` (the default) skips this, for
      callers that pass points which need not lie on the simplex (K-Means inputs, centroids).
      Float32 softmax outputs sum to 1 within about ``K * 6e-8``.

    ``name`` is how the messages call the array. ``sum_tol`` itself must be ``None`` or a
    finite number ``>= 0`` (``TypeError`` / ``ValueError`` naming it): a NaN tolerance would
    compare false with every error and switch the check off.
    """
    if sum_tol is not None:
        check_real(sum_tol, "sum_tol", low=0.0)
    s = np.asarray(softmax)
    if s.ndim != 2:
        raise ValueError(f"{name} must be 2-D, shape (n, K); got shape {s.shape}")
    k = s.shape[1]
    if n_classes is not None and k != n_classes:
        raise ValueError(f"{name} must have shape (n, {n_classes}); got {s.shape}")
    if k < 2:
        raise ValueError(f"{name} must have K >= 2 classes (columns); got shape {s.shape}")
    if s.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real-valued array; got dtype {s.dtype}")
    if s.dtype.kind == "f" and len(s):
        finite = np.isfinite(s)
        if not finite.all():
            bad = np.flatnonzero(~finite.all(1))
            what = "NaN" if np.isnan(s[bad[0]]).any() else "inf"
            raise ValueError(
                f"{name} has non-finite values (NaN or inf) in {len(bad)} row(s); "
                f"row {bad[0]} has {what}"
            )
    if labels is not None:
        check_labels(labels, len(s), k)
    if sum_tol is not None and len(s):
        if s.min() < 0:
            row = int(np.flatnonzero((s < 0).any(1))[0])
            raise ValueError(
                f"{name} has negative entries (row {row}); a softmax lies on the simplex"
            )
        err = np.abs(s.sum(1, dtype=np.float64) - 1.0)
        if err.max() > sum_tol:
            row = int(err.argmax())
            raise ValueError(
                f"{name} rows must sum to 1 within sum_tol={sum_tol:g}; "
                f"{int((err > sum_tol).sum())} row(s) do not, e.g. row {row} sums to "
                f"{float(s[row].sum(dtype=np.float64)):.6g}"
            )
    return s


def check_labels(labels: np.ndarray, n: int, n_classes: int, name: str = "labels") -> np.ndarray:
    """``labels`` as int64 after checking they are ``n`` integers in ``0..n_classes-1``.

    Integer (or bool) arrays pass; float arrays pass when every value is a whole number.
    Raises ``ValueError`` naming the problem (shape, NaN, non-integers, out of range).
    """
    y = np.asarray(labels)
    if y.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one per softmax row; got {y.shape}")
    if y.dtype.kind == "f":
        if np.isnan(y).any():
            raise ValueError(f"{name} contain NaN (row {int(np.flatnonzero(np.isnan(y))[0])})")
        if n and not (np.isfinite(y).all() and (y == np.round(y)).all()):
            raise ValueError(
                f"{name} must be whole numbers (class indices); got e.g. {y[y != np.round(y)][:3]}"
            )
    elif y.dtype.kind not in "biu":
        raise ValueError(f"{name} must be integer class indices; got dtype {y.dtype}")
    if n and (y.min() < 0 or y.max() >= n_classes):
        bad = np.flatnonzero((y < 0) | (y >= n_classes))
        raise ValueError(
            f"{name} must lie in 0..{n_classes - 1} (K = {n_classes} classes); got "
            f"{y.min()}..{y.max()}, {len(bad)} out of range (first at row {bad[0]})"
        )
    return y.astype(np.int64)


def softmax_frame(
    index: np.ndarray,
    labels: np.ndarray,
    corruption: np.ndarray | str,
    level: np.ndarray | int,
    softmax: np.ndarray,
) -> pd.DataFrame:
    """:func:`softmax_table` as a DataFrame: rows of :data:`SOFTMAX_SCHEMA`,
    ``prediction = argmax(softmax)`` (ties: lowest class); ``softmax`` must have
    :data:`N_CLASSES` (10) columns.
    """
    return softmax_table(index, labels, corruption, level, softmax).to_pandas()


def softmax_table(
    index: np.ndarray,
    labels: np.ndarray,
    corruption: np.ndarray | pa.Array | pa.ChunkedArray | str,
    level: np.ndarray | int,
    softmax: np.ndarray,
) -> pa.Table:
    """Rows of :data:`SOFTMAX_SCHEMA` as an Arrow table; ``prediction = argmax(softmax)``
    (ties: lowest class), built column by column without pandas; ``corruption`` may also be an Arrow string column (e.g.
    the column read from a partition), used as it is. ``softmax`` must have
    :data:`N_CLASSES` (10) columns.
    """
    s = check_softmax(softmax, labels, n_classes=N_CLASSES).astype(np.float32, copy=False)
    n = len(s)
    if isinstance(corruption, (pa.Array, pa.ChunkedArray)):
        if len(corruption) != n:
            raise ValueError(f"corruption must have {n} values, one per row; got {len(corruption)}")
        if isinstance(corruption, pa.ChunkedArray):
            corruption = corruption.combine_chunks()
        corruption = corruption.cast(pa.string())
    elif isinstance(corruption, str):
        # one value n times: a null column filled in (no Python string per row)
        corruption = pc.fill_null(pa.nulls(n, pa.string()), corruption)
    else:
        names = np.broadcast_to(np.asarray(corruption, dtype=object), (n,))
        corruption = pa.array(names, pa.string())
    columns = [
        pa.array(np.asarray(index, dtype=np.int32)),
        pa.array(np.asarray(labels, dtype=np.uint8)),
        corruption,
        pa.array(np.broadcast_to(np.asarray(level, dtype=np.uint8), (n,)).copy()),
        *[pa.array(np.ascontiguousarray(s[:, c])) for c in range(N_CLASSES)],
        pa.array(s.argmax(1).astype(np.uint8)),
    ]
    return pa.Table.from_arrays(columns, schema=SOFTMAX_SCHEMA)
