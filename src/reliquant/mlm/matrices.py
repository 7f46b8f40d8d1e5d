"""Distance and likelihood matrices of paper 004 (Sections 3.3 b-d, 3.4 and 4.5, eqs. 4-10).

Pipeline, all on softmax outputs ``s in R^K`` (points of the probability simplex; any
``K >= 2`` classes, taken from the arrays' shapes; the workflow's MNIST has ``K = 10``):

a. centroids (eq. 3) and their K-Means refinement ``mu_hat_c``: :mod:`reliquant.mlm.centroids`;
b. distance (eq. 4): ``d(s, mu_hat_c) = ||s - mu_hat_c||_2``
   (:func:`reliquant.mlm.centroids.distances_to_centroids`);
c. nearest distances (eqs. 5, 7): ``D[y, c] = min over x with true class y of d(f(x), mu_hat_c)``
   for ``c != y``; the diagonal is empty (NaN);
d. likelihood (eqs. 6, 8): ``L[y, c] = (1/D[y, c]) / sum_{c' != y} 1/D[y, c']``; the diagonal
   stays empty, every row sums to 1 over its off-diagonal entries;
e. across perturbation levels (eqs. 9-10): ``mean_p L^(p)`` and the population standard
   deviation ``sqrt(1/P sum_p (L^(p) - mean)^2)``.

Zero distances. ``1/D`` is infinite when an example's softmax coincides with another class's
centroid. We take the limit of eq. 6 as those distances go to zero together: the zero entries
share the row's mass equally and every other entry of the row gets 0 (a zero distance is
treated as certain confusion). No inf or NaN leaves :func:`likelihood_matrix`; a NaN or
negative off-diagonal distance raises ``ValueError``.

Since ``D`` is a minimum, the matrix of any union of example sets is the elementwise minimum of
the matrices of its parts (:func:`combine_min`); the workflow computes ``D`` once per
(corruption, level) cell and derives the whole-set, per-level and per-corruption matrices.
:func:`reliquant.mlm.likelihood.misclassification_likelihood` runs steps a-d in one call.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.mlm.centroids import check_centroids, distances_to_centroids
from reliquant.mlm.softmax import check_labels, check_softmax

__all__ = [
    "MATRICES_SCHEMA",
    "cell_distance_matrices",
    "combine_min",
    "level_mean_std",
    "likelihood_matrix",
    "long_to_matrix",
    "matrices_long",
    "matrix_to_long",
    "min_distance_matrix",
]

#: Long format of every distance/likelihood matrix (see :func:`matrices_long`).
MATRICES_SCHEMA = pa.schema(
    [
        pa.field("scope", pa.string(), nullable=False),
        pa.field("corruption", pa.string()),
        pa.field("level", pa.uint8()),
        pa.field("true", pa.uint8(), nullable=False),
        pa.field("predicted", pa.uint8(), nullable=False),
        pa.field("distance", pa.float64()),
        pa.field("likelihood", pa.float64(), nullable=False),
    ]
)


def min_distance_matrix(
    softmax: np.ndarray,
    labels: np.ndarray,
    centroids: np.ndarray,
    chunk: int = 65536,
    *,
    check: bool = True,
) -> np.ndarray:
    """Nearest distances ``D[y, c] = min_{x in X_y} d(f(x), mu_c)``, ``c != y`` (eqs. 5, 7).

    ``softmax`` is ``(n, K)``, ``labels`` ``(n,)`` in ``0..K-1``, ``centroids`` ``(K, K)``; any
    ``K >= 2``. Returns float64 (K, K) with a NaN diagonal. A class with no example in
    ``labels`` has an all-``+inf`` row (the identity of ``min``), so that :func:`combine_min`
    over parts is exact; :func:`likelihood_matrix` refuses such rows. Works through ``chunk``
    rows at a time. ``check=False`` skips the checks of ``softmax``, ``labels`` and
    ``centroids`` for a caller that has checked them (the result is the same).
    """
    if check:
        s = check_softmax(softmax, labels)
        k = s.shape[1]
        y = check_labels(labels, len(s), k)
        check_centroids(centroids, k)
    else:
        s = np.asarray(softmax)
        k = s.shape[1]
        y = np.asarray(labels).astype(np.int64)
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1; got {chunk}")
    out = np.full((k, k), np.inf)
    for start in range(0, len(s), chunk):
        d = distances_to_centroids(s[start : start + chunk], centroids, check=False)
        yy = y[start : start + chunk]
        for cls in np.unique(yy):
            out[cls] = np.minimum(out[cls], d[yy == cls].min(0))
    np.fill_diagonal(out, np.nan)
    return out


def _square_stack(matrices: list[np.ndarray] | np.ndarray) -> tuple[np.ndarray, int]:
    """``matrices`` as a float64 stack ``(P, K, K)``, ``P >= 1``, ``K >= 2``, and its ``K``."""
    stack = np.asarray(matrices, dtype=np.float64)
    if stack.ndim != 3 or len(stack) == 0 or stack.shape[1] != stack.shape[2] or stack.shape[1] < 2:
        raise ValueError(
            f"need a non-empty stack of (K, K) matrices, K >= 2; got shape {stack.shape}"
        )
    return stack, stack.shape[1]


def combine_min(matrices: list[np.ndarray] | np.ndarray) -> np.ndarray:
    """``D`` of a union of example sets: elementwise minimum of the parts' ``D`` (NaN diagonal).

    ``matrices`` is a stack ``(P, K, K)`` (or a list of ``(K, K)``), any ``K >= 2``.
    """
    stack, k = _square_stack(matrices)
    off = ~np.eye(k, dtype=bool)
    out = np.full((k, k), np.nan)
    out[off] = stack[:, off].min(0)
    return out


def likelihood_matrix(distances: np.ndarray) -> np.ndarray:
    """Misclassification Likelihood Matrix (eqs. 6, 8): row-normalised reciprocal distances.

    ``L[y, c] = (1/D[y, c]) / sum_{c' != y} 1/D[y, c']`` for ``c != y``; the diagonal is NaN
    (empty). Zero distances: the zero entries of a row share its mass equally, the others get
    0 (limit of eq. 6). Raises ``ValueError`` for NaN, negative or infinite off-diagonal
    distances (an infinite row means the class had no example).

    ``distances`` is ``(K, K)``, any ``K >= 2`` (for ``K = 2`` each row's single off-diagonal
    entry is 1).
    """
    d = np.asarray(distances, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] < 2:
        raise ValueError(f"distances must be a square (K, K) matrix, K >= 2; got {d.shape}")
    k = d.shape[0]
    off = ~np.eye(k, dtype=bool)
    vals = d[off].reshape(k, k - 1)
    if np.isnan(vals).any() or (vals < 0).any() or np.isinf(vals).any():
        bad = sorted({int(r) for r in np.argwhere(~np.isfinite(vals) | (vals < 0))[:, 0]})
        raise ValueError(
            f"off-diagonal distances must be finite and >= 0; rows {bad} are not "
            "(an infinite row means no example of that class)"
        )
    zero = vals == 0
    with np.errstate(divide="ignore"):
        w = np.where(zero.any(1, keepdims=True), zero.astype(np.float64), 1.0 / vals)
    w /= w.sum(1, keepdims=True)
    out = np.full((k, k), np.nan)
    out[off] = w.reshape(-1)
    return out


def level_mean_std(matrices: list[np.ndarray] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (eq. 9) and population standard deviation (eq. 10, divisor P) over levels.

    ``matrices`` is a stack ``(P, K, K)`` of ``L^(p)``, any ``K >= 2``; the diagonal stays NaN.
    """
    stack, k = _square_stack(matrices)
    off = ~np.eye(k, dtype=bool)
    mean = np.full((k, k), np.nan)
    std = np.full((k, k), np.nan)
    mean[off] = stack[:, off].mean(0)
    std[off] = np.sqrt(((stack[:, off] - mean[off]) ** 2).mean(0))
    return mean, std


def matrix_to_long(matrix: np.ndarray, value: str) -> pd.DataFrame:
    """A (K, K) matrix as rows ``true, predicted, <value>`` (diagonal dropped), row-major.

    ``true``/``predicted`` are uint8 (as :data:`MATRICES_SCHEMA`) for ``K <= 256``, else int64.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 2:
        raise ValueError(f"matrix must be a square (K, K) matrix, K >= 2; got {m.shape}")
    k = m.shape[0]
    t, p = np.nonzero(~np.eye(k, dtype=bool))
    dtype = np.uint8 if k <= 256 else np.int64
    return pd.DataFrame({"true": t.astype(dtype), "predicted": p.astype(dtype), value: m[t, p]})


def cell_distance_matrices(
    softmax: np.ndarray,
    labels: np.ndarray,
    corruption: np.ndarray,
    level: np.ndarray,
    centroids: np.ndarray,
) -> dict[tuple[str, int], np.ndarray]:
    """``D`` (eq. 5/7) for every (corruption, level) cell present, keyed by ``(name, level)``.

    The arrays are checked once here, not again per cell."""
    s = check_softmax(softmax, labels)
    y = check_labels(labels, len(s), s.shape[1])
    mu = check_centroids(centroids, s.shape[1])
    corruption, level = np.asarray(corruption), np.asarray(level).astype(np.int64)
    if corruption.shape != (len(s),) or level.shape != (len(s),):
        raise ValueError("corruption and level must have one entry per softmax row")
    out: dict[tuple[str, int], np.ndarray] = {}
    keys = pd.DataFrame({"c": corruption, "l": level})
    for (name, lev), rows in keys.groupby(["c", "l"], sort=True).indices.items():
        out[(str(name), int(lev))] = min_distance_matrix(s[rows], y[rows], mu, check=False)
    return out


def matrices_long(
    cells: dict[tuple[str, int], np.ndarray],
    clean: str = "clean",
    overall_includes_clean: bool = False,
) -> pd.DataFrame:
    """Every MLM of Sections 3.3-3.4 from per-cell ``D`` matrices, in long format.

    Scopes (``D`` of a union = elementwise min of the cells' ``D``, :func:`combine_min`):

    - ``overall``: all corrupted cells (Figure 2; plus the clean cells if
      ``overall_includes_clean``);
    - ``clean``: the cells of corruption ``clean`` (the unperturbed test set);
    - ``level``: for each level p >= 1, all corruptions at that level (eqs. 7-8, ``L^(p)``);
    - ``corruption``: for each corruption, all its levels;
    - ``mean`` / ``std``: eqs. 9-10 across the per-level ``L^(p)`` (``distance`` is null).

    Columns follow :data:`MATRICES_SCHEMA`; ``corruption``/``level`` are null where the scope
    spans several. Raises ``ValueError`` if a scope lacks a class (through
    :func:`likelihood_matrix`).
    """
    if not cells:
        raise ValueError("no (corruption, level) cells given")
    corrupted = {k: v for k, v in cells.items() if k[0] != clean}
    clean_cells = {k: v for k, v in cells.items() if k[0] == clean}
    if not corrupted:
        raise ValueError(f"no corrupted cells: every cell is the clean partition {clean!r}")
    parts: list[pd.DataFrame] = []

    def add(scope: str, corr: str | None, lev: int | None, d: np.ndarray | None, lk: np.ndarray):
        frame = matrix_to_long(lk, "likelihood")
        frame["distance"] = np.nan if d is None else matrix_to_long(d, "distance")["distance"]
        frame.insert(0, "scope", scope)
        frame.insert(1, "corruption", corr)
        frame.insert(2, "level", pd.array([lev] * len(frame), dtype="UInt8"))
        parts.append(frame)

    overall = list(corrupted.values()) + (
        list(clean_cells.values()) if overall_includes_clean else []
    )
    d = combine_min(overall)
    add("overall", None, None, d, likelihood_matrix(d))
    if clean_cells:
        d = combine_min(list(clean_cells.values()))
        add("clean", clean, None, d, likelihood_matrix(d))
    levels = sorted({lev for _, lev in corrupted})
    per_level = []
    for lev in levels:
        d = combine_min([v for (c, lv), v in corrupted.items() if lv == lev])
        lk = likelihood_matrix(d)
        per_level.append(lk)
        add("level", None, lev, d, lk)
    for name in sorted({c for c, _ in corrupted}):
        d = combine_min([v for (c, _), v in corrupted.items() if c == name])
        add("corruption", name, None, d, likelihood_matrix(d))
    mean, std = level_mean_std(per_level)
    add("mean", None, None, None, mean)
    add("std", None, None, None, std)
    out = pd.concat(parts, ignore_index=True)
    return out[[f.name for f in MATRICES_SCHEMA]]


def long_to_matrix(
    frame: pd.DataFrame, value: str = "likelihood", n_classes: int | None = None
) -> np.ndarray:
    """Inverse of :func:`matrix_to_long` for one scope: (K, K) with a NaN diagonal.

    ``K`` is ``n_classes``, else one more than the largest class in ``true``/``predicted``.
    """
    t, p = frame["true"].to_numpy(int), frame["predicted"].to_numpy(int)
    if n_classes is None:
        n_classes = int(max(t.max(initial=-1), p.max(initial=-1))) + 1
    if n_classes < 2:
        raise ValueError(f"need K >= 2 classes; got {n_classes} (an empty frame?)")
    out = np.full((n_classes, n_classes), np.nan)
    out[t, p] = frame[value].to_numpy(float)
    return out
