"""Views of a :class:`~reliquant.trees.structure.TreeEnsemble` that the per-sample walks read
many times, built once per ensemble instead of once per sample.

A per-prediction score (:func:`reliquant.trees.anytime.robustness` on every row of a test
set) walks every tree of the same model for each row. Indexing a numpy array element by
element is several times slower than indexing a Python list, and each row used to convert
the same arrays again. :func:`ensemble_views` converts them once and keeps the result for the
last few ensembles met (the entry holds the ensemble, so its ``id`` is not reused meanwhile;
an ensemble is not modified once read). Every value is the one the arrays hold: ``tolist``
gives the same float64 and int values, so the walks that read the views take the same
branches and sum the same numbers in the same order (bit-identical results).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = [
    "GATHER_MAX",
    "EnsembleViews",
    "EnsembleLike",
    "IdentityLRU",
    "ensemble_views",
    "gathered_scores",
    "leaf_indices_row",
]

#: Most leaf ids (rows x trees) that :func:`gathered_scores` gathers in one array.
GATHER_MAX = 1_000_000


class EnsembleLike(Protocol):
    """What the views read of a :class:`reliquant.trees.structure.TreeEnsemble` (that module
    calls this one, so this one does not import it)."""

    trees: tuple
    n_classes: int
    rule: str
    aggregation: str
    tree_class: np.ndarray
    base_margin: np.ndarray

    @property
    def n_trees(self) -> int: ...

    def tree_scores(self, k: int) -> np.ndarray: ...


@dataclass(frozen=True)
class EnsembleViews:
    """Per tree ``k`` of an ensemble, in the ensemble's order:

    - ``lists[k]``: ``(feature, boundary, left, right)`` as Python lists;
    - ``thresholds[k]``: the split thresholds the one-row walk compares with, as a list:
      float64, or rounded to float32 for the ``lt32`` rule (it compares in float32);
    - ``scores64[k]``: ``tree_scores(k)`` in float64, read-only;
    - ``leaf_max_abs[k]``: the largest ``|score|`` over the tree's leaves (0 for an empty tree);

    and ``max_abs_sum``, the sum of ``leaf_max_abs`` taken tree by tree from 0.0. For margin
    models also ``margin_table`` (``(n_trees, most nodes)``, each tree's node values in the
    aggregation's float type, zero-padded) and ``class_trees`` (per class, the trees that
    score it, in order); ``None`` and ``()`` for ``mean_proba``.
    """

    lists: tuple[tuple[list, list, list, list], ...]
    thresholds: tuple[list, ...]
    scores64: tuple[np.ndarray, ...]
    leaf_max_abs: tuple[float, ...]
    max_abs_sum: float
    margin_table: np.ndarray | None
    class_trees: tuple[np.ndarray, ...]


def _margin_tables(ens: EnsembleLike) -> tuple[np.ndarray | None, tuple[np.ndarray, ...]]:
    if ens.aggregation == "mean_proba":
        return None, ()
    dt = np.float32 if ens.aggregation == "margin" else np.float64
    width = max((t.n_nodes for t in ens.trees), default=0)
    table = np.zeros((ens.n_trees, max(width, 1)), dtype=dt)
    for k, tree in enumerate(ens.trees):
        table[k, : tree.n_nodes] = tree.value[:, 0].astype(dt)
    table.setflags(write=False)
    tree_class = np.asarray(ens.tree_class, dtype=np.int64)
    return table, tuple(np.nonzero(tree_class == c)[0] for c in range(ens.n_classes))


def _build(ens: EnsembleLike) -> EnsembleViews:
    lists, thresholds, scores64, leaf_max = [], [], [], []
    total = 0.0
    for k, tree in enumerate(ens.trees):
        lists.append(
            (tree.feature.tolist(), tree.boundary.tolist(), tree.left.tolist(), tree.right.tolist())
        )
        thr = tree.threshold.astype(np.float32) if ens.rule == "lt32" else tree.threshold
        thresholds.append(thr.tolist())
        vals = np.array(ens.tree_scores(k), dtype=np.float64)
        vals.setflags(write=False)
        scores64.append(vals)
        m = float(np.abs(vals[tree.left < 0]).max()) if tree.n_nodes else 0.0
        leaf_max.append(m)
        total += m
    margin_table, class_trees = _margin_tables(ens)
    return EnsembleViews(
        margin_table=margin_table,
        class_trees=class_trees,
        lists=tuple(lists),
        thresholds=tuple(thresholds),
        scores64=tuple(scores64),
        leaf_max_abs=tuple(leaf_max),
        max_abs_sum=total,
    )


class IdentityLRU:
    """The values built for the last ``size`` (object, key) pairs met, keyed by the object's
    identity and ``key``; each entry holds the object, so its ``id`` is not reused while the
    entry lives (the objects cached here, ensembles, are not modified once read)."""

    def __init__(self, size: int) -> None:
        self._entries: OrderedDict = OrderedDict()  # (id(obj), key) -> (obj, value)
        self._size = size
        self._lock = threading.Lock()

    def get(self, obj: object, key: Hashable, build: Callable[[], Any]) -> Any:
        """The value cached for ``(obj, key)``, else ``build()`` (then cached)."""
        k = (id(obj), key)
        with self._lock:
            hit = self._entries.get(k)
            if hit is not None and hit[0] is obj:
                self._entries.move_to_end(k)
                return hit[1]
        value = build()
        with self._lock:
            self._entries[k] = (obj, value)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_VIEWS = IdentityLRU(4)  # the last 4 ensembles' views


def ensemble_views(ens: EnsembleLike) -> EnsembleViews:
    """The :class:`EnsembleViews` of ``ens``, built on first use and remembered for the last
    4 ensembles (:class:`IdentityLRU`)."""
    return _VIEWS.get(ens, None, lambda: _build(ens))


def gathered_scores(ens: EnsembleLike, leaves: np.ndarray) -> np.ndarray | None:
    """The class scores of ``ens.scores_from_leaves(leaves)`` (before a binary margin
    model's class-0 column is zeroed) from one gather of the leaf values instead of a loop
    over the trees, or ``None`` where that does not apply: a ``mean_proba`` model with more
    than one row, or more than :data:`GATHER_MAX` leaf ids.

    Bit for bit the loop's numbers: the loop adds tree ``k``'s value to the running score
    tree by tree, ``s_c = (((b_c + v_1) + v_2) + ...)`` in the model's float type, and a
    cumulative sum (``np.cumsum``, an accumulation: never reordered or paired) of
    ``[b_c, v_1, v_2, ...]`` takes exactly those steps.
    """
    n, n_trees = leaves.shape
    views = ensemble_views(ens)
    if ens.aggregation == "mean_proba":
        if n != 1:
            return None
        rows = [np.zeros(ens.n_classes)]  # the loop starts from zeros (a -0.0 stays +0.0)
        rows += [views.scores64[k][leaf] for k, leaf in enumerate(leaves[0].tolist())]
        s = np.cumsum(np.array(rows), axis=0)[-1:]
        if n_trees > 1:
            s /= n_trees
        return s
    if n * n_trees > GATHER_MAX:
        return None
    table = views.margin_table
    values = table[np.arange(n_trees)[None, :], leaves]  # (n, n_trees)
    s = np.tile(ens.base_margin.astype(table.dtype), (n, 1))
    for c, trees in enumerate(views.class_trees):
        if len(trees):
            steps = np.concatenate([s[:, c : c + 1], values[:, trees]], axis=1)
            s[:, c] = np.cumsum(steps, axis=1)[:, -1]
    return s


def leaf_indices_row(ens: EnsembleLike, x: np.ndarray) -> np.ndarray:
    """``ens.leaf_indices(x)`` of one row ``x`` (already float32 for the float32 rules),
    walked on the trees' lists: ``tolist`` keeps every value, so each comparison is the
    arrays' one (``x <= threshold`` in float64; ``x < threshold`` in float32 for ``lt32``,
    whose float32 values compare alike as Python floats)."""
    views = ensemble_views(ens)
    xs = x.tolist()
    lt32 = ens.rule == "lt32"
    out = []
    for (feat, _, left, right), thr in zip(views.lists, views.thresholds, strict=True):
        node = 0
        if lt32:
            while left[node] >= 0:
                node = left[node] if xs[feat[node]] < thr[node] else right[node]
        else:
            while left[node] >= 0:
                node = left[node] if xs[feat[node]] <= thr[node] else right[node]
        out.append(node)
    return np.array(out, dtype=np.int64)
