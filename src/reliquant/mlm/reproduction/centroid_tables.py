"""The workflow's MNIST centroid tables (rule ``mlm_centroids``): Table 1 and Figures 3-4.

From the training softmax table (columns ``p0..p9``, ``K = 10``): both sets of centroids
(class means ``mu`` and their K-Means refinement ``mu_hat``, :mod:`reliquant.mlm.centroids`),
Table 1 of paper 004 (``||mu_hat_c - mu_c||`` beside the paper's numbers, Sections 4.2-4.3)
and the misclustered training images with their distances to the centroids (Figures 3-4).
:func:`centroid_tables` builds every table of the rule; their schemas sit beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown
from reliquant.core.seeding import block_int_seed
from reliquant.mlm.centroids import (
    centroid_shift,
    class_centroids,
    distances_to_centroids,
    misclustered,
    refine_centroids,
)
from reliquant.mlm.softmax import D_COLUMNS, N_CLASSES, P_COLUMNS

__all__ = [
    "CENTROIDS_SCHEMA",
    "MISCLUSTERED_SCHEMA",
    "TABLE1_SCHEMA",
    "CentroidTables",
    "centroid_array",
    "centroid_tables",
    "choose_examples",
    "table1_markdown",
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
