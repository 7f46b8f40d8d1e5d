"""Class centroids of paper 004 (Section 3.3 a, eqs. 3-4) for any classifier's softmax.

``mu_c`` is the mean softmax of the examples correctly classified as c (eq. 3); K-Means
(scikit-learn, ``n_init=1``) started at ``mu_0..mu_{K-1}`` on those same softmax outputs
refines them to ``mu_hat_c``; Table 1 of the paper is ``||mu_hat_c - mu_c||``
(:func:`centroid_shift`). Points whose K-Means cluster is not their class are *misclustered*
(:func:`misclustered`, Figures 3-4).

Every function works for any classifier with ``K >= 2`` classes, ``K`` taken from the
softmax's second dimension. The workflow's MNIST tables (Table 1, the misclustered images)
are built from them in :mod:`reliquant.mlm.reproduction.centroid_tables`.

Input checks. By default each function checks its arrays
(:func:`~reliquant.mlm.softmax.check_softmax`, :func:`check_centroids`) and raises a
``ValueError`` naming the problem. ``check=False`` skips those checks for a caller that has
already checked the same arrays once at its own entry point (as
:func:`reliquant.mlm.likelihood.misclassification_likelihood` does); the result is the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reliquant.mlm.softmax import check_labels, check_softmax

__all__ = [
    "KMeansResult",
    "centroid_shift",
    "check_centroids",
    "class_centroids",
    "distances_to_centroids",
    "misclustered",
    "refine_centroids",
]


def class_centroids(
    softmax: np.ndarray,
    labels: np.ndarray,
    *,
    sum_tol: float | None = None,
    check: bool = True,
) -> np.ndarray:
    """Initial centroids (eq. 3): ``mu_c = 1/|C_c| sum_{x in C_c} s(x)``, where ``C_c`` are the
    examples of class c correctly classified (``argmax(s) == label``; ties: lowest class).

    ``softmax`` is ``(n, K)``, ``labels`` ``(n,)`` in ``0..K-1``, any ``K >= 2``. Returns float64
    ``(K, K)``, row c = ``mu_c``. Raises ``ValueError`` if some class has no correctly classified
    example (naming those classes), or for bad inputs (:func:`~reliquant.mlm.softmax.check_softmax`;
    ``sum_tol`` also checks that rows sum to 1). ``check=False``: the caller has checked
    ``softmax`` and ``labels`` (see the module docstring).
    """
    if check:
        s = check_softmax(softmax, labels, sum_tol=sum_tol).astype(np.float64)
        k = s.shape[1]
        y = check_labels(labels, len(s), k)
    else:
        s = np.asarray(softmax).astype(np.float64)
        k = s.shape[1]
        y = np.asarray(labels).astype(np.int64)
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
    *,
    check: bool = True,
) -> KMeansResult:
    """K-Means (Lloyd, scikit-learn) started at ``init`` with ``n_init=1`` (Section 3.3 a).

    ``points`` are the softmax outputs of the correctly classified training images; ``init`` the
    class means of :func:`class_centroids`. Cluster k starts at ``init[k]``, so cluster k stays
    the cluster of class k. ``max_iter`` and ``tol`` are scikit-learn's (defaults 300, 1e-4,
    ``tol`` relative to the mean per-feature variance). ``seed`` only matters for ties.

    It runs on one OpenMP thread, so the centroids are the same bit for bit under any
    ``OMP_NUM_THREADS``. Across CPUs: scikit-learn computes the point-centroid distances with
    BLAS, whose kernel (and so the distances' last bits) depends on the CPU; the centroids are
    means of the assigned points, so they differ only where a point's two nearest centroids
    are within rounding of each other (none did under five OpenBLAS kernels: docs/trees.md,
    "Bit-identity across machines").

    ``points`` is ``(n, K)`` and ``init`` ``(K, K)``, any ``K >= 2``, with ``n >= K``; each
    point goes to its nearest centroid, ``k = argmin_k ||s - mu_hat_k||_2``. ``check=False``:
    the caller has checked ``points`` (``init`` is always checked; it is small).
    """
    if check:
        pts = check_softmax(points, name="points").astype(np.float64)
    else:
        pts = np.asarray(points).astype(np.float64)
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
    # imported here: scikit-learn takes about 1 s to import, which every job importing
    # reliquant.mlm (inference, training) would pay without using it
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    km = KMeans(
        n_clusters=k,
        init=init,
        n_init=1,
        max_iter=max_iter,
        tol=tol,
        algorithm="lloyd",
        random_state=seed % 2**32,  # scikit-learn takes a 32-bit seed
    )
    # one OpenMP thread: the Lloyd iterations add per-thread partial sums, so with more
    # threads the centroids' rounding followed the thread count (OMP_NUM_THREADS, a job's
    # threads, or the machine's cores): up to 1.1e-13 apart between 1 and 2 threads
    with threadpool_limits(limits=1, user_api="openmp"):
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


def distances_to_centroids(
    softmax: np.ndarray, centroids: np.ndarray, *, check: bool = True
) -> np.ndarray:
    """``d(s_i, mu_c) = ||s_i - mu_c||_2`` (eq. 4) for every row i and centroid c: float64 (n, K).

    ``softmax`` is ``(n, K)`` and ``centroids`` ``(K, K)`` (row c = ``mu_c``), any ``K >= 2``.
    Computed from differences (not the ``|a|^2 + |b|^2 - 2ab`` expansion), so a softmax equal
    to a centroid gives exactly 0. ``check=False``: the caller has checked both arrays.
    """
    if check:
        s = check_softmax(softmax).astype(np.float64)
        k = s.shape[1]
        mu = check_centroids(centroids, k)
    else:
        s = np.asarray(softmax).astype(np.float64)
        k = s.shape[1]
        mu = np.asarray(centroids, dtype=np.float64)
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
