"""Class centroids of paper 004 (Section 3.3 a, eq. 3-4) and Table 1 (Sections 4.2-4.3).

``mu_c`` is the mean softmax of the training images correctly classified as c (eq. 3);
K-Means (scikit-learn, ``n_init=1``) started at ``mu_0..mu_{K-1}`` on those same softmax outputs
refines them to ``mu_hat_c``; Table 1 is ``||mu_hat_c - mu_c||``. Images whose K-Means cluster
is not their class are *misclustered* (Figures 3-4). :func:`centroid_tables` builds every table
of rule ``mlm_centroids``; their schemas sit beside it.

The array functions (:func:`class_centroids`, :func:`refine_centroids`, :func:`centroid_shift`,
:func:`distances_to_centroids`) work for any classifier with ``K >= 2`` classes, ``K`` taken from
the softmax's second dimension. The tables (:func:`centroid_tables`, :func:`centroid_array`
and the schemas, columns ``p0..p9``) are the workflow's MNIST tables, ``K = 10``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from sklearn.cluster import KMeans

from reliquant.core.io import frame_to_markdown
from reliquant.core.seeding import block_int_seed
from reliquant.mlm.softmax import D_COLUMNS, N_CLASSES, P_COLUMNS, check_labels, check_softmax

__all__ = [
    "CENTROIDS_SCHEMA",
    "MISCLUSTERED_SCHEMA",
    "TABLE1_SCHEMA",
    "CentroidTables",
    "KMeansResult",
    "centroid_array",
    "centroid_shift",
    "centroid_tables",
    "check_centroids",
    "choose_examples",
    "class_centroids",
    "distances_to_centroids",
    "misclustered",
    "refine_centroids",
]

#: Both sets of centroids: ``kind`` ``mean`` (mu, eq. 3) or ``kmeans`` (mu-hat), per class.
CENTROIDS_SCHEMA = pa.schema(
    [pa.field("kind", pa.string()), pa.field("class", pa.uint8())]
    + [pa.field(c, pa.float64()) for c in P_COLUMNS]
)
#: Table 1: per class, the correctly classified and misclustered counts, ours and the paper's
#: distance between class mean and K-Means centroid.
TABLE1_SCHEMA = pa.schema(
    [
        pa.field("class", pa.uint8()),
        pa.field("n_correct", pa.int64()),
        pa.field("n_misclustered", pa.int64()),
        pa.field("distance", pa.float64()),
        pa.field("paper_distance", pa.float64()),
    ]
)
#: One row per misclustered training image: its softmax and distances to the K-Means centroids.
MISCLUSTERED_SCHEMA = pa.schema(
    [pa.field("index", pa.int32()), pa.field("label", pa.uint8()), pa.field("cluster", pa.uint8())]
    + [pa.field(c, pa.float32()) for c in P_COLUMNS]
    + [pa.field(c, pa.float64()) for c in D_COLUMNS]
)


def class_centroids(
    softmax: np.ndarray, labels: np.ndarray, *, sum_tol: float | None = None
) -> np.ndarray:
    """Initial centroids (eq. 3): ``mu_c = 1/|C_c| sum_{x in C_c} s(x)``, where ``C_c`` are the
    examples of class c correctly classified (``argmax(s) == label``; ties: lowest class).

    ``softmax`` is ``(n, K)``, ``labels`` ``(n,)`` in ``0..K-1``, any ``K >= 2``. Returns float64
    ``(K, K)``, row c = ``mu_c``. Raises ``ValueError`` if some class has no correctly classified
    example (naming those classes), or for bad inputs (:func:`~reliquant.mlm.softmax.check_softmax`;
    ``sum_tol`` also checks that rows sum to 1).
    """
    s = check_softmax(softmax, labels, sum_tol=sum_tol).astype(np.float64)
    k = s.shape[1]
    y = check_labels(labels, len(s), k)
    correct = s.argmax(1) == y
    counts = np.bincount(y[correct], minlength=k)
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        which = f"class {empty[0]} has" if len(empty) == 1 else f"classes {empty.tolist()} have"
        raise ValueError(
            f"{which} no correctly classified example (argmax(softmax) == label); "
            "no centroid (eq. 3)"
        )
    out = np.empty((k, k))
    for c in range(k):
        out[c] = s[correct & (y == c)].mean(0)
    return out


@dataclass
class KMeansResult:
    """Refined centroids ``mu_hat`` (K, K), the cluster of each input row, iterations run."""

    centroids: np.ndarray
    assignments: np.ndarray
    n_iter: int


def refine_centroids(
    points: np.ndarray,
    init: np.ndarray,
    seed: int = 0,
    max_iter: int = 300,
    tol: float = 1e-4,
) -> KMeansResult:
    """K-Means (Lloyd, scikit-learn) started at ``init`` with ``n_init=1`` (Section 3.3 a).

    ``points`` are the softmax outputs of the correctly classified training images; ``init`` the
    class means of :func:`class_centroids`. Cluster k starts at ``init[k]``, so cluster k stays
    the cluster of class k. ``max_iter`` and ``tol`` are scikit-learn's (defaults 300, 1e-4,
    ``tol`` relative to the mean per-feature variance). ``seed`` only matters for ties.

    ``points`` is ``(n, K)`` and ``init`` ``(K, K)``, any ``K >= 2``, with ``n >= K``; each
    point goes to its nearest centroid, ``k = argmin_k ||s - mu_hat_k||_2``.
    """
    pts = check_softmax(points, name="points").astype(np.float64)
    k = pts.shape[1]
    init = np.asarray(init, dtype=np.float64)
    if init.shape != (k, k):
        raise ValueError(
            f"init must have shape ({k}, {k}), one start per class of the (n, {k}) points; "
            f"got {init.shape}"
        )
    if not np.isfinite(init).all():
        raise ValueError("init has non-finite values (NaN or inf)")
    if len(pts) < k:
        raise ValueError(f"K-Means with {k} clusters needs at least {k} points; got {len(pts)}")
    km = KMeans(
        n_clusters=k,
        init=init,
        n_init=1,
        max_iter=max_iter,
        tol=tol,
        algorithm="lloyd",
        random_state=seed % 2**32,  # scikit-learn takes a 32-bit seed
    )
    km.fit(pts)
    return KMeansResult(
        centroids=km.cluster_centers_.copy(),
        assignments=km.labels_.astype(np.int64),
        n_iter=int(km.n_iter_),
    )


def centroid_shift(initial: np.ndarray, refined: np.ndarray) -> np.ndarray:
    """Table 1: ``||mu_hat_c - mu_c||_2`` for each class c (float64, length K)."""
    a, b = np.asarray(initial, dtype=np.float64), np.asarray(refined, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"centroid arrays differ in shape: {a.shape} vs {b.shape}")
    if a.ndim != 2:
        raise ValueError(f"centroids must be 2-D, (K, K); got shape {a.shape}")
    return np.sqrt(((b - a) ** 2).sum(1))


def distances_to_centroids(softmax: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """``d(s_i, mu_c) = ||s_i - mu_c||_2`` (eq. 4) for every row i and centroid c: float64 (n, K).

    ``softmax`` is ``(n, K)`` and ``centroids`` ``(K, K)`` (row c = ``mu_c``), any ``K >= 2``.
    Computed from differences (not the ``|a|^2 + |b|^2 - 2ab`` expansion), so a softmax equal
    to a centroid gives exactly 0.
    """
    s = check_softmax(softmax).astype(np.float64)
    k = s.shape[1]
    mu = check_centroids(centroids, k)
    out = np.empty((len(s), k))
    for c in range(k):
        diff = s - mu[c]
        out[:, c] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return out


def check_centroids(centroids: np.ndarray, n_classes: int) -> np.ndarray:
    """``centroids`` as float64 after checking they are ``(K, K)`` and finite (K = ``n_classes``,
    the softmax's number of columns); a ``ValueError`` names what came instead."""
    mu = np.asarray(centroids, dtype=np.float64)
    k = n_classes
    if mu.shape != (k, k):
        raise ValueError(
            f"centroids must have shape ({k}, {k}), one per class of the (n, {k}) softmax; "
            f"got {mu.shape}"
        )
    if not np.isfinite(mu).all():
        raise ValueError("centroids have non-finite values (NaN or inf)")
    return mu


def misclustered(labels: np.ndarray, assignments: np.ndarray) -> np.ndarray:
    """Positions of the points whose K-Means cluster differs from their class (Section 4.3)."""
    y, a = np.asarray(labels).astype(np.int64), np.asarray(assignments).astype(np.int64)
    if y.shape != a.shape:
        raise ValueError(f"labels and assignments differ in shape: {y.shape} vs {a.shape}")
    return np.flatnonzero(y != a)


def choose_examples(available: np.ndarray, preferred: list[int], k: int | None = None) -> list[int]:
    """Figures 3-4: the ``preferred`` indices that are ``available`` (misclustered), in order,
    topped up with the lowest other available indices until there are ``k`` (default
    ``len(preferred)``)."""
    avail = sorted({int(a) for a in np.asarray(available).ravel()})
    k = len(preferred) if k is None else k
    chosen = [int(p) for p in preferred if int(p) in set(avail)][:k]
    chosen += [a for a in avail if a not in chosen][: k - len(chosen)]
    return chosen


@dataclass(frozen=True)
class CentroidTables:
    """Everything rule ``mlm_centroids`` writes, plus what its log reports."""

    centroids: pd.DataFrame  # CENTROIDS_SCHEMA
    table1: pd.DataFrame  # TABLE1_SCHEMA
    table1_markdown: str
    misclustered: pd.DataFrame  # MISCLUSTERED_SCHEMA
    n_correct: int
    n_iter: int


def centroid_tables(
    train: pd.DataFrame,
    kmeans: Mapping[str, Any],
    seed: int,
    paper_shift: Sequence[float],
) -> CentroidTables:
    """Centroids, K-Means, Table 1 and the misclustered images from the training softmax.

    ``train`` is the softmax table of the training images (``index, label, p0..p9``);
    ``kmeans`` the config's ``max_iter``/``tol``; the K-Means seed is
    ``block_int_seed(seed, "mlm", "kmeans")``; ``paper_shift`` is Table 1 of the paper
    (classes 0..9), set beside ours.
    """
    s = train[P_COLUMNS].to_numpy(np.float64)
    y = train["label"].to_numpy(np.int64)
    correct = s.argmax(1) == y
    initial = class_centroids(s, y)
    km = refine_centroids(
        s[correct],
        initial,
        seed=block_int_seed(seed, "mlm", "kmeans"),
        max_iter=kmeans["max_iter"],
        tol=kmeans["tol"],
    )
    cent = pd.DataFrame(np.vstack([initial, km.centroids]), columns=P_COLUMNS)
    cent.insert(0, "kind", ["mean"] * N_CLASSES + ["kmeans"] * N_CLASSES)
    cent.insert(1, "class", np.tile(np.arange(N_CLASSES, dtype=np.uint8), 2))

    pos = misclustered(y[correct], km.assignments)
    table1 = pd.DataFrame(
        {
            "class": np.arange(N_CLASSES, dtype=np.uint8),
            "n_correct": np.bincount(y[correct], minlength=N_CLASSES).astype(np.int64),
            "n_misclustered": np.bincount(y[correct][pos], minlength=N_CLASSES).astype(np.int64),
            "distance": centroid_shift(initial, km.centroids),
            "paper_distance": np.asarray(paper_shift, dtype=np.float64),
        }
    )
    rows = np.flatnonzero(correct)[pos]
    mis = train.iloc[rows][["index", "label", *P_COLUMNS]].reset_index(drop=True)
    mis.insert(2, "cluster", km.assignments[pos].astype(np.uint8))
    dist = distances_to_centroids(s[rows], km.centroids)
    for c in range(N_CLASSES):
        mis[D_COLUMNS[c]] = dist[:, c]
    n_correct = int(correct.sum())
    return CentroidTables(
        centroids=cent,
        table1=table1,
        table1_markdown=table1_markdown(table1, n_correct, km.n_iter),
        misclustered=mis,
        n_correct=n_correct,
        n_iter=km.n_iter,
    )


def table1_markdown(table1: pd.DataFrame, n_correct: int, n_iter: int) -> str:
    """Table 1 as markdown, with how many images K-Means ran on and its iterations."""
    return (
        "# Table 1: Euclidean distance between class mean softmax and K-Means centroid\n\n"
        f"K-Means (scikit-learn, n_init=1) on the softmax of the {n_correct} correctly "
        f"classified training images converged in {n_iter} iteration(s).\n"
        "`n_misclustered`: correctly classified images of the class assigned to another "
        "cluster.\n\n"
        + frame_to_markdown(
            table1.astype({"class": str, "n_correct": str, "n_misclustered": str}), floatfmt=".4e"
        )
    )


def centroid_array(centroids: pd.DataFrame, kind: str) -> np.ndarray:
    """The ``(10, 10)`` centroids of one ``kind`` (``mean`` or ``kmeans``) of a
    :data:`CENTROIDS_SCHEMA` table, row c = class c."""
    rows = centroids[centroids["kind"] == kind].sort_values("class")
    if len(rows) != N_CLASSES:
        raise ValueError(f"need {N_CLASSES} centroids of kind {kind!r}; found {len(rows)}")
    return rows[P_COLUMNS].to_numpy(np.float64)
