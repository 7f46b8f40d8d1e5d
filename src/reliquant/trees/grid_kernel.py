"""The compiled (numba) enumeration of the papers' box grid: label every box, keep its mass.

Papers 001/002, eq. (4): ``R(mu) = sum_{B : f(centre(B)) = f(mu)} P(x in B)``.
:func:`reliquant.trees.boxes.grid_robustness` cuts the grid and computes the per-feature
interval masses; this module runs its inner loop for independent noise: for a run of
consecutive box indices (one chunk) it enumerates the boxes in index order (mixed radix over
the features with more than one interval, the last such feature fastest), walks every tree
at the box's representative point, sums the trees' scores, takes the label, and for each box
with mu's label writes the box mass ``const * p_{c0}[i0] * p_{c1}[i1] * ...`` (multiplied
left to right, ``const`` the product of the one-interval features' masses) into a buffer, in
box order. Nothing is skipped: every box of the chunk is labelled.

Bit for bit what :meth:`reliquant.trees.structure.TreeEnsemble.predict_index` gives at the
representative point:

* the point's coordinates are read with the ensemble's rule first (:func:`rule_coordinates`:
  float32 rounding for ``le32``/``lt32`` by numpy's cast, LightGBM's zero threshold for
  ``le64z``), then compared as ``leaf_indices`` does: ``x <= threshold`` (``le32``, ``le64``,
  ``le64z``); for ``lt32``, ``float32(x) < float32(t)`` is ``x <= b`` with ``b`` the float64
  just below ``float32(t)`` (exact for every non-NaN ``x``: no float64 lies between them);
* every tree is walked from its root for its depth (a leaf is its own child), so the walk
  has no branch to mispredict; the leaf is the one ``leaf_indices`` reaches;
* scores are summed in the aggregation's dtype in tree order, starting from zeros
  (``mean_proba``, then divided by the number of trees when there are several) or from
  ``base_margin`` (``margin`` in float32, ``margin64`` in float64, each tree adding to its
  class only; a binary one-output model sets score 0 to 0), as
  :meth:`~reliquant.trees.structure.TreeEnsemble.scores_from_leaves`;
* links ``argmax`` (first maximum, a NaN counting as the maximum as in ``np.argmax``) and
  ``ge0`` are decided in the kernel. Links with an exponential (``sigmoid32``, ``softmax32``,
  ``sigmoid64``, ``softmax64``) are not: :func:`chunk_scores` returns the chunk's scores,
  :func:`reliquant.trees.structure.label_from_scores` labels them, and :func:`chunk_masses`
  writes the masses of the boxes it marked.

Masses are multiplied in float64 in the same order as the numpy loop ``m = full(const);
m *= pm[c][idx]`` did, so ``float(buf[:n].sum())`` (numpy's pairwise sum, box order) is the
same number.

Public API: :class:`GridTables`, :func:`grid_tables`, :func:`rule_coordinates`,
:func:`labelled_masses`, :func:`chunk_scores`, :func:`chunk_masses`, :func:`compile_kernels`,
:func:`kernel_signatures` (the kernel with the argument types of those calls, for compiling it
once per machine: :mod:`reliquant.trees.kernel_cache`), :func:`dispatchers`,
:data:`KERNEL_LINKS`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit, typeof
from numba.core.dispatcher import Dispatcher

from reliquant.trees.structure import LGBM_ZERO, Tree, TreeEnsemble, stump_ensemble

__all__ = [
    "KERNEL_LINKS",
    "GridTables",
    "chunk_masses",
    "chunk_scores",
    "compile_kernels",
    "dispatchers",
    "grid_tables",
    "kernel_signatures",
    "labelled_masses",
    "rule_coordinates",
]

#: Links the kernel decides itself (code = position); the others go through numpy.
KERNEL_LINKS = ("argmax", "ge0")


def rule_coordinates(values: np.ndarray, rule: str) -> np.ndarray:
    """Coordinates as ``TreeEnsemble.leaf_indices`` compares them, in float64: ``le32`` and
    ``lt32`` round to float32 (numpy's cast, exact back in float64), ``le64z`` reads
    ``|x| <= LGBM_ZERO`` as 0, ``le64`` keeps ``x``."""
    v = np.asarray(values, dtype=np.float64)
    if rule in ("le32", "lt32"):
        return v.astype(np.float32).astype(np.float64)
    if rule == "le64z":
        return np.where(np.abs(v) <= LGBM_ZERO, 0.0, v)
    return v.copy()


@dataclass(frozen=True)
class GridTables:
    """The flat arrays the kernels read.

    Trees (all nodes, renumbered tree by tree so that a node's children are adjacent):
    ``packed[node] = (first child << 32) | feature``; the walk goes to ``first child +
    (not x[feature] <= threshold[node])``. A leaf is its own first child with threshold
    ``+inf``, so every tree is walked ``depth[k]`` steps (its depth) from ``root[k]``.
    ``threshold`` is the stored threshold (``le32``, ``le64``, ``le64z``); for ``lt32``
    (``x < float32(t)``) the float64 just below ``float32(t)`` (NaN for ``-inf``: never left).
    Scores: ``values`` ``(n_nodes, n_classes)`` in the aggregation's dtype, ``tree_class``
    (-1: the tree adds its whole row; else only that class), ``base`` (starting scores),
    ``divisor`` (0: none), ``zero_first`` (set score 0 to 0), ``link`` (index into
    :data:`KERNEL_LINKS`, -1 for a numpy link).
    Grid (``cols``: the features with more than one kept interval, in feature order):
    ``radix`` (their interval counts), ``x_flat``/``x_off`` (rule coordinates of the
    representative points per col), ``p_flat`` (interval masses per col, same offsets),
    ``point`` (rule coordinates of a full representative point: every feature's first
    interval), ``const``.
    """

    packed: np.ndarray
    threshold: np.ndarray
    root: np.ndarray
    depth: np.ndarray
    values: np.ndarray
    tree_class: np.ndarray
    base: np.ndarray
    divisor: float
    zero_first: bool
    link: int
    cols: np.ndarray
    radix: np.ndarray
    x_flat: np.ndarray
    x_off: np.ndarray
    p_flat: np.ndarray
    point: np.ndarray
    const: float


def _tree_layout(tree: Tree, rule: str, first: int):
    """One tree renumbered breadth first from ``first`` (children adjacent): ``(packed,
    threshold, old node ids in new order, depth)``."""
    left = np.asarray(tree.left, dtype=np.int64)
    right = np.asarray(tree.right, dtype=np.int64)
    order, depth_of = [0], [0]
    new_id = {0: 0}
    q = 0
    while q < len(order):
        u = order[q]
        if left[u] >= 0:
            for v in (int(left[u]), int(right[u])):
                new_id[v] = len(order)
                order.append(v)
                depth_of.append(depth_of[q] + 1)
        q += 1
    order = np.array(order, dtype=np.int64)
    n = len(order)
    packed = np.empty(n, dtype=np.int64)
    thr = np.full(n, np.inf)
    t = np.asarray(tree.threshold, dtype=np.float64)
    for i, u in enumerate(order):
        if left[u] >= 0:
            packed[i] = ((first + new_id[int(left[u])]) << 32) | int(tree.feature[u])
            if rule == "lt32":
                c = np.float64(np.float32(t[u]))
                thr[i] = np.nan if c == -np.inf else np.nextafter(c, -np.inf)
            else:
                thr[i] = t[u]
        else:
            packed[i] = (first + i) << 32
    return packed, thr, order, max(depth_of)


def grid_tables(
    ensemble: TreeEnsemble,
    centres: list[np.ndarray],
    masses: list[np.ndarray],
    cols: np.ndarray,
    const: float,
) -> GridTables:
    """Pack ``ensemble`` and one grid for the kernels.

    ``centres[i]``: the representative points of feature ``i``'s kept intervals (raw
    float64, :func:`reliquant.trees.boxes.grid_intervals`), ``masses[i]`` their
    probabilities; ``cols``: the features with more than one interval (mixed-radix order);
    ``const``: the product of the other features' masses. Raises ``ValueError`` for a NaN
    coordinate (as ``predict_index`` would)."""
    rule = ensemble.rule
    margin = ensemble.aggregation != "mean_proba"
    dt = np.float32 if ensemble.aggregation == "margin" else np.float64
    C = int(ensemble.n_classes)
    packs, thrs, roots, depths, vals = [], [], [], [], []
    first = 0
    for k, tree in enumerate(ensemble.trees):
        packed, thr, order, depth = _tree_layout(tree, rule, first)
        if margin:
            v = np.zeros((len(order), C), dtype=dt)
            v[:, int(ensemble.tree_class[k])] = tree.value[order, 0].astype(dt)
        else:
            v = np.asarray(ensemble.tree_scores(k), dtype=np.float64)[order]
        packs.append(packed)
        thrs.append(thr)
        roots.append(first)
        depths.append(depth)
        vals.append(v)
        first += len(order)
    if margin:
        tree_class = np.asarray(ensemble.tree_class, dtype=np.int64).copy()
        base = np.asarray(ensemble.base_margin).astype(dt)
        divisor = 0.0
        zero_first = bool(C == 2 and np.all(ensemble.tree_class == 1))
    else:
        tree_class = np.full(ensemble.n_trees, -1, dtype=np.int64)
        base = np.zeros(C, dtype=np.float64)
        divisor = float(ensemble.n_trees) if ensemble.n_trees > 1 else 0.0
        zero_first = False
    link = KERNEL_LINKS.index(ensemble.link) if ensemble.link in KERNEL_LINKS else -1
    coords = [rule_coordinates(c, rule) for c in centres]
    if any(np.isnan(c).any() for c in coords):
        raise ValueError("X contains NaN: missing-value routing is not supported")
    cols = np.asarray(cols, dtype=np.int64)
    sizes = np.array([len(coords[i]) for i in cols], dtype=np.int64)
    x_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    empty = [np.zeros(0, dtype=np.float64)]
    x_flat = np.concatenate(empty + [coords[i] for i in cols])
    p_flat = np.concatenate(empty + [np.asarray(masses[i], dtype=np.float64) for i in cols])
    return GridTables(
        packed=np.concatenate(packs),
        threshold=np.concatenate(thrs),
        root=np.array(roots, dtype=np.int64),
        depth=np.array(depths, dtype=np.int64),
        values=np.ascontiguousarray(np.concatenate(vals, axis=0)),
        tree_class=tree_class,
        base=np.ascontiguousarray(base),
        divisor=divisor,
        zero_first=zero_first,
        link=link,
        cols=cols,
        radix=sizes,
        x_flat=x_flat,
        x_off=x_off,
        p_flat=p_flat,
        point=np.array([c[0] for c in coords], dtype=np.float64),
        const=float(const),
    )


# --------------------------------------------------------------------------------------
# kernel
# --------------------------------------------------------------------------------------
_LABEL, _SCORES, _MASSES = 0, 1, 2  # what _grid_chunk does per box (its ``mode``)


@njit(cache=True)
def _grid_chunk(mode, start, n, y, packed, threshold, root, depth, values, tree_class, base,
                divisor, zero_first, link, cols, radix, x_flat, x_off, p_flat, point, const,
                same, out, buf):  # fmt: skip
    """Boxes ``start .. start + n - 1`` in index order. ``mode`` _LABEL: label each box and
    write the masses of those labelled ``y`` into ``buf``; _SCORES: each box's scores into
    ``out[b]``; _MASSES: the masses of the boxes ``b`` with ``same[b]`` into ``buf``. Returns
    how many masses it wrote. (One body, written out: numba's inlined helpers cost here.)"""
    ncol = radix.shape[0]
    digits = np.zeros(ncol, dtype=np.int64)
    x = point.copy()
    rem = start
    for j in range(ncol - 1, -1, -1):  # mixed radix, the last col fastest
        digits[j] = rem % radix[j]
        rem //= radix[j]
        x[cols[j]] = x_flat[x_off[j] + digits[j]]
    C = base.shape[0]
    T = root.shape[0]
    s = np.empty(C, dtype=base.dtype)
    leaves = np.empty(T, dtype=np.int64)
    n_match = 0
    for b in range(n):
        match = False
        if mode == _MASSES:
            match = same[b]
        else:
            # every tree's leaf at x: left iff x[feature] <= threshold (leaves stay put)
            for k in range(T):
                node = root[k]
                for _ in range(depth[k]):
                    w = packed[node]
                    node = (w >> 32) + (0 if x[w & 0xFFFFFFFF] <= threshold[node] else 1)
                leaves[k] = node
            # scores as TreeEnsemble.scores_from_leaves: trees in order, in base's dtype
            for c in range(C):
                s[c] = base[c]
            for k in range(T):
                node = leaves[k]
                tc = tree_class[k]
                if tc < 0:
                    for c in range(C):
                        s[c] += values[node, c]
                else:
                    s[tc] += values[node, tc]
            if divisor > 0:
                for c in range(C):
                    s[c] /= divisor
            if zero_first:
                s[0] = 0
            if mode == _SCORES:
                for c in range(C):
                    out[b, c] = s[c]
            elif link == 1:  # ge0
                match = (1 if s[1] >= 0 else 0) == y
            else:  # argmax: the first maximum, or the first NaN (np.argmax)
                best = 0
                bv = s[0]
                if bv == bv:
                    for c in range(1, C):
                        v = s[c]
                        if v != v:
                            best = c
                            break
                        if v > bv:
                            best = c
                            bv = v
                match = best == y
        if match:
            m = const
            for j in range(ncol):
                m *= p_flat[x_off[j] + digits[j]]
            buf[n_match] = m
            n_match += 1
        j = ncol - 1  # next box: odometer step
        while j >= 0:
            d = digits[j] + 1
            if d < radix[j]:
                digits[j] = d
                x[cols[j]] = x_flat[x_off[j] + d]
                break
            digits[j] = 0
            x[cols[j]] = x_flat[x_off[j]]
            j -= 1
    return n_match


# --------------------------------------------------------------------------------------
# public wrappers
# --------------------------------------------------------------------------------------
def _args(g: GridTables, mode: int, start: int, n: int, y: int, same, out, buf) -> tuple:
    """The arguments of :func:`_grid_chunk` for ``g`` (their types pick its compiled version)."""
    return (
        np.int64(mode), np.int64(start), np.int64(n), np.int64(y), g.packed, g.threshold,
        g.root, g.depth, g.values, g.tree_class, g.base, g.divisor, g.zero_first,
        np.int64(g.link), g.cols, g.radix, g.x_flat, g.x_off, g.p_flat, g.point, g.const,
        same, out, buf,
    )  # fmt: skip


def _run(g: GridTables, mode: int, start: int, n: int, y: int, same, out, buf) -> int:
    return int(_grid_chunk(*_args(g, mode, start, n, y, same, out, buf)))


def labelled_masses(g: GridTables, start: int, n: int, y: int, buf: np.ndarray) -> int:
    """Boxes ``start .. start + n - 1``: label each at its representative point (links of
    :data:`KERNEL_LINKS`), write the masses of those labelled ``y`` into ``buf`` in box
    order; returns how many (eq. 4's terms of this chunk)."""
    if g.link < 0:
        raise ValueError(f"the kernel decides links {KERNEL_LINKS}; use chunk_scores")
    no_out = np.empty((0, g.base.shape[0]), dtype=g.base.dtype)
    return _run(g, _LABEL, start, n, y, np.empty(0, dtype=np.bool_), no_out, buf)


def chunk_scores(g: GridTables, start: int, n: int) -> np.ndarray:
    """Scores ``(n, n_classes)`` of boxes ``start .. start + n - 1`` at their representative
    points, equal to ``TreeEnsemble.scores`` there (label them with ``label_from_scores``)."""
    out = np.empty((n, g.base.shape[0]), dtype=g.base.dtype)
    _run(g, _SCORES, start, n, -1, np.empty(0, dtype=np.bool_), out, np.empty(0))
    return out


def chunk_masses(g: GridTables, start: int, same: np.ndarray, buf: np.ndarray) -> int:
    """Masses of the boxes ``start + b`` with ``same[b]`` into ``buf`` (box order); returns
    how many."""
    same = np.ascontiguousarray(same, dtype=np.bool_)
    no_out = np.empty((0, g.base.shape[0]), dtype=g.base.dtype)
    return _run(g, _MASSES, start, same.shape[0], -1, same, no_out, buf)


def _stump_grids() -> list[GridTables]:
    """Two one-stump grids: float64 scores (a forest's mean of probabilities; float64 margins
    have the same types) and float32 scores (XGBoost's margins)."""
    forest, boost = stump_ensemble(), stump_ensemble(boosted=True)
    centres = [np.array([-1.0, 1.0])]
    masses = [np.array([0.5, 0.5])]
    return [grid_tables(ens, centres, masses, np.array([0]), 1.0) for ens in (forest, boost)]


def compile_kernels() -> float:
    """Compile the kernels (or load them from numba's disk cache, beside this module) for
    float64 and float32 scores on a one-stump grid, so that no timed grid pays for it;
    returns the seconds it took (milliseconds once cached and loaded)."""
    t0 = time.perf_counter()
    buf = np.empty(2)
    for g in _stump_grids():
        labelled_masses(g, 0, 2, 0, buf)
        chunk_masses(g, 0, chunk_scores(g, 0, 2)[:, 0] >= 0, buf)
    return time.perf_counter() - t0


def kernel_signatures() -> list[tuple[Dispatcher, tuple]]:
    """The grid kernel with the argument types (numba types) that :func:`labelled_masses`,
    :func:`chunk_scores` and :func:`chunk_masses` pass, for float64 and float32 scores (one
    type each: the three calls pass the same types). ``dispatcher.compile(types)`` for each
    compiles it, or loads it from numba's disk cache, so that no grid compiles anything."""
    out = []
    for g in _stump_grids():
        no_out = np.empty((0, g.base.shape[0]), dtype=g.base.dtype)
        args = _args(g, _LABEL, 0, 2, 0, np.empty(0, dtype=np.bool_), no_out, np.empty(2))
        out.append((_grid_chunk, tuple(typeof(a) for a in args)))
    return out


def dispatchers() -> dict[str, Dispatcher]:
    """The module's numba kernels by name: their ``signatures``, and ``stats.cache_hits`` /
    ``stats.cache_misses`` (loaded from numba's disk cache / compiled in this process)."""
    return {name: f for name, f in globals().items() if isinstance(f, Dispatcher)}
