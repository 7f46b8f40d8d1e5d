"""The node arrays of a tree model checked before anything walks them.

A model file can hold any node arrays: a skops file of a scikit-learn tree whose
``children_left[0]`` was set to ``0`` made every walk loop forever, ``-5`` read as a leaf
(robustness 1, "exact", for every sample) and ``10**6`` raised an ``IndexError``; the
libraries' own ``predict`` crashes the process on such files. :func:`check_trees` refuses them
first, naming the tree and the node. What every tree must be:

* **one binary tree rooted at node 0**: a child index is ``-1`` (no child) or a node
  ``0 .. n-1``; a node has two children (a split) or none (a leaf); the root is no node's
  child; every other node is the child of exactly one node and is reached from the root (no
  cycle, no node of two parents, none left over). The one exception: ``n_deleted`` leaves
  that no node points to, as XGBoost keeps the nodes its pruning deleted in its arrays;
* **leaves where the library expects them**: a split's feature is one of the model's
  ``0 .. n_features-1``, a leaf's is ``-1`` (a reader sets it so exactly where its library
  reads a leaf);
* **numbers that are numbers**: a split's threshold is finite, a leaf's values are finite,
  and there is one row of values per node (``n_values`` columns when given).

The check is vectorised over all trees at once (the nodes of every tree in one array; children
numbered after their parents, as the libraries write them, prove there is no cycle in one
comparison, else a walk from the roots takes one numpy step per tree level), so that it costs
milliseconds for a hundred trees of thousands of nodes. Every :class:`reliquant.trees.TreeEnsemble`
runs it when it is built, so a malformed model never reaches a walk: no call of the robustness
engine can loop on one, and its time budget holds.

Public API: :class:`MalformedTreeError`, :func:`check_trees`, :func:`check_ensemble_trees`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["MalformedTreeError", "check_ensemble_trees", "check_trees"]


class MalformedTreeError(ValueError):
    """A tree whose node arrays do not form one binary tree (module docstring); the message
    names the tree and the node."""


def _shapes(trees: Sequence[Any], n_values: int | None, where: str) -> None:
    for k, t in enumerate(trees):
        arrays = {"feature": t.feature, "threshold": t.threshold, "left": t.left, "right": t.right}
        arrays = {name: np.asarray(a) for name, a in arrays.items()}
        n = arrays["left"].shape[0] if arrays["left"].ndim == 1 else -1
        for name, a in arrays.items():
            if a.ndim != 1 or a.shape[0] != n or n < 1:
                raise MalformedTreeError(
                    f"{where}tree {k}: its {name} array has shape {a.shape}; every node array "
                    f"must be 1-D with one entry per node (left has {max(n, 0)} nodes)"
                )
            if name != "threshold" and a.dtype.kind not in "iu":
                raise MalformedTreeError(
                    f"{where}tree {k}: its {name} array holds {a.dtype}, not node or feature "
                    "indices (integers)"
                )
        value = np.asarray(t.value)
        if value.ndim != 2 or value.shape[0] != n or (n_values and value.shape[1] != n_values):
            want = f"({n}, {n_values})" if n_values else f"({n}, outputs)"
            raise MalformedTreeError(
                f"{where}tree {k}: its values have shape {value.shape}; expected {want}, one "
                "row per node"
            )


def check_trees(
    trees: Sequence[Any],
    n_features: int,
    *,
    n_values: int | None = None,
    n_deleted: Sequence[int] | None = None,
    where: str = "",
    node_name: Callable[[int, int], str] | None = None,
) -> None:
    """Refuse trees whose node arrays are not each one binary tree (module docstring).

    ``trees``: objects with the node arrays ``feature``, ``threshold``, ``left``, ``right``
    (``(n,)``, node 0 the root, ``-1`` for no child / a leaf's feature) and ``value``
    (``(n, outputs)``), as :class:`reliquant.trees.structure.Tree`; ``n_features``: the
    model's features; ``n_values``: the columns ``value`` must have (``None``: any);
    ``n_deleted``: per tree, how many leaves no node points to it may hold (XGBoost's
    deleted nodes; default none); ``where``: the start of every message (e.g. the file);
    ``node_name(k, i)``: how a message names node ``i`` of tree ``k`` (default ``"node i"``).

    Raises :class:`MalformedTreeError` (a ``ValueError``) naming the first problem's tree and
    node.
    """
    if len(trees) == 0:
        return
    where = f"{where}: " if where and not where.endswith(": ") else where
    name = node_name if node_name is not None else (lambda k, i: f"node {i}")
    _shapes(trees, n_values, where)
    sizes = np.array([np.asarray(t.left).shape[0] for t in trees], dtype=np.int64)
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    owner = np.repeat(np.arange(len(trees)), sizes)  # tree of each global node
    n_of = sizes[owner]

    def fail(g: int, what: str) -> None:
        k = int(owner[g])
        raise MalformedTreeError(f"{where}tree {k}, {name(k, int(g - start[k]))}: {what}")

    left = np.concatenate([t.left for t in trees], dtype=np.int64)
    right = np.concatenate([t.right for t in trees], dtype=np.int64)
    feature = np.concatenate([t.feature for t in trees], dtype=np.int64)
    threshold = np.concatenate([t.threshold for t in trees], dtype=np.float64)
    values = [np.asarray(t.value, dtype=np.float64) for t in trees]
    if all(np.isfinite(v).all() for v in values):  # the common case: no row to look up
        finite = np.ones(left.size, dtype=bool)
    else:
        finite = np.concatenate([np.isfinite(v).all(axis=1) for v in values])
    leaf = left == -1
    # the fast path, every node at once: -1 <= child < n as one unsigned comparison each
    ok = ((left + 1).view(np.uint64) <= n_of.view(np.uint64)) & (
        (right + 1).view(np.uint64) <= n_of.view(np.uint64)
    )
    ok &= leaf == (right == -1)
    ok &= np.where(leaf, feature == -1, (feature >= 0) & (feature < n_features))
    ok &= np.where(leaf, finite, np.isfinite(threshold))
    if not ok.all():  # say which node and why
        _check_children(left, right, n_of, fail)
        _check_numbers(leaf, feature, threshold, finite, n_features, fail)
        fail(int(np.flatnonzero(~ok)[0]), "its arrays are not those of a node")  # not reached
    split = np.flatnonzero(~leaf)
    offset = start[owner]  # children as global node numbers
    to_left, to_right = left[split] + offset[split], right[split] + offset[split]
    children = np.concatenate([to_left, to_right])
    count = np.bincount(children, minlength=left.size)
    if count[start].any() or count.max(initial=0) > 1:
        _check_parents(children, split, count, start, owner, name, fail)
    # one parent per node but the roots: a tree, unless some nodes form a cycle apart
    every_parent = children.size == left.size - start.size
    if every_parent and (to_left > split).all() and (to_right > split).all():
        return  # children numbered after their parents (as the libraries write them): no cycle
    if every_parent and _n_reached(left + offset, right + offset, leaf, start) == left.size:
        return
    _check_reachable(left, right, leaf, sizes, start, owner, count, n_deleted, name, fail)


def _check_children(left, right, n_of, fail) -> None:
    """Every child -1 or a node of its tree; two children or none."""
    for side, child in (("left", left), ("right", right)):
        bad = np.flatnonzero((child < -1) | (child >= n_of))
        if bad.size:
            g = int(bad[0])
            fail(g, f"its {side} child is {child[g]}, which is neither -1 (no child) nor a node "
                    f"of the tree (0 .. {n_of[g] - 1})")  # fmt: skip
    half = np.flatnonzero((left == -1) != (right == -1))
    if half.size:
        g = int(half[0])
        fail(g, f"it has one child (left {left[g]}, right {right[g]}): a split has two "
                "children, a leaf none (both -1)")  # fmt: skip


def _check_numbers(leaf, feature, threshold, finite, n_features: int, fail) -> None:
    """A split's feature in range and threshold finite; a leaf's feature -1, values finite."""
    split = ~leaf
    bad = np.flatnonzero(split & ((feature < 0) | (feature >= n_features)))
    if bad.size:
        g = int(bad[0])
        fail(g, f"it splits on feature {feature[g]}, but the model has {n_features} features "
                f"(0 .. {n_features - 1})")  # fmt: skip
    bad = np.flatnonzero(leaf & (feature != -1))
    if bad.size:
        g = int(bad[0])
        fail(g, f"it has no children (a leaf) but splits on feature {feature[g]}: the library "
                "reads it as a split")  # fmt: skip
    bad = np.flatnonzero(split & ~np.isfinite(threshold))
    if bad.size:
        g = int(bad[0])
        fail(g, f"its threshold is {threshold[g]}, not a finite number")
    bad = np.flatnonzero(leaf & ~finite)
    if bad.size:
        fail(int(bad[0]), "its leaf values are not all finite numbers")


def _check_parents(children, split, count, start, owner, name, fail) -> None:
    """The root no node's child; every other node the child of one node at most."""
    parents = np.concatenate([split, split])
    is_root = np.zeros(count.size, dtype=bool)
    is_root[start] = True
    to_root = np.flatnonzero(is_root[children])
    if to_root.size:
        j = int(to_root[0])
        p, side = int(parents[j]), "left" if j < split.size else "right"
        k = int(owner[p])
        what = "itself" if p == start[k] else f"the root, {name(k, 0)}"
        fail(p, f"its {side} child is {what}: a cycle")
    g = int(np.flatnonzero(count > 1)[0])
    k = int(owner[g])
    of = sorted(int(p - start[k]) for p in parents[children == g])[:2]
    fail(g, f"it is the child of two nodes ({name(k, of[0])} and {name(k, of[1])}): every "
            "node but the root has one parent")  # fmt: skip


def _n_reached(left, right, leaf, start) -> int:
    """Nodes reached from the roots (global child numbers), one numpy step per level; with
    one parent per node and none for a root, no node is reached twice, so this ends."""
    frontier = start[~leaf[start]]
    n = start.size
    while frontier.size:
        nxt = np.concatenate([left[frontier], right[frontier]])
        n += nxt.size
        frontier = nxt[~leaf[nxt]]
    return n


def _check_reachable(left, right, leaf, sizes, start, owner, count, n_deleted, name, fail):
    """Nodes the root does not reach: allowed only as ``n_deleted`` parentless leaves."""
    reached = np.zeros(left.size, dtype=bool)
    reached[start] = True
    glob_left, glob_right = left + start[owner], right + start[owner]
    frontier = start[~leaf[start]]
    while frontier.size:
        nxt = np.concatenate([glob_left[frontier], glob_right[frontier]])
        reached[nxt] = True
        frontier = nxt[~leaf[nxt]]
    lost = ~reached
    allowed = np.zeros(len(sizes), dtype=np.int64) if n_deleted is None else np.asarray(n_deleted)
    deleted = lost & leaf & (count == 0)  # as XGBoost keeps its pruned nodes
    n_lost = np.bincount(owner[lost], minlength=len(sizes))
    n_orphans = np.bincount(owner[deleted], minlength=len(sizes))
    for k in np.flatnonzero((n_lost > n_orphans) | (n_orphans > allowed)):
        nodes = np.flatnonzero(lost & (owner == k))
        others = nodes[~deleted[nodes]]
        g = int(others[0] if others.size else nodes[0])
        why = "no node points to it" if count[g] == 0 else "it lies on a cycle or below one"
        fail(g, f"it cannot be reached from the root ({why}); {n_lost[k]} of the tree's "
                f"{sizes[k]} nodes cannot, and the library deleted {int(allowed[k])}")  # fmt: skip


def check_ensemble_trees(
    trees: Sequence[Any],
    n_features: int,
    n_classes: int,
    aggregation: str,
    tree_class: np.ndarray,
    *,
    where: str = "",
) -> None:
    """:func:`check_trees` for the trees of a :class:`reliquant.trees.TreeEnsemble` (values of
    ``n_classes`` columns for ``"mean_proba"``; ``n_deleted`` from each tree), and its
    ``tree_class``: one entry per tree, each a class ``0 .. n_classes-1`` for a margin
    aggregation (the class the tree scores). :class:`MalformedTreeError` otherwise."""
    where = f"{where}: " if where and not where.endswith(": ") else where
    tree_class = np.asarray(tree_class)
    if tree_class.shape != (len(trees),):
        raise MalformedTreeError(
            f"{where}tree_class has shape {tree_class.shape}: one class per tree "
            f"({len(trees)},) expected"
        )
    if aggregation != "mean_proba":
        bad = np.flatnonzero((tree_class < 0) | (tree_class >= n_classes))
        if bad.size:
            raise MalformedTreeError(
                f"{where}tree {bad[0]} scores class {tree_class[bad[0]]}, but the model has "
                f"{n_classes} classes (0 .. {n_classes - 1})"
            )
    n_values = n_classes if aggregation == "mean_proba" else None
    n_deleted = [int(getattr(t, "n_deleted", 0)) for t in trees]
    check_trees(trees, n_features, n_values=n_values, n_deleted=n_deleted, where=where)
