"""The tables of a sampling plan that depend on the ensemble and the region only
(:mod:`reliquant.trees.plan`): the in-play features and their cuts, the *live* trees (more
than one reachable leaf) compacted to their in-play splits (children side by side, also packed
one int64 per node; a one-class tree's leaf score per node), the summed scores of the fixed
trees, the exact per-tree data for near-ties, and leaf masks when there are enough live trees,
each of one class and at most 8 leaves (:func:`_leaf_masks`).

:func:`tree_tables` builds them; :func:`cached_tree_tables` keeps them for the last few
(ensemble, region) pairs met, so that samples that share a region (plain Monte Carlo: the
whole space) build them once.
"""

from __future__ import annotations

import bisect

import numpy as np

from reliquant.trees.ensemble_views import IdentityLRU, ensemble_views
from reliquant.trees.leaf_tables import link_eps, score_unit_and_base
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "LEAF_CUT",
    "LINK_CODES",
    "MASK_LEAVES",
    "MASK_MIN_TREES",
    "MAX_CUTS",
    "cached_tree_tables",
    "tree_tables",
]


LINK_CODES = {"argmax": 0, "sigmoid32": 1, "softmax32": 2, "ge0": 3, "sigmoid64": 4, "softmax64": 5}
MAX_CUTS = 32_000  # bins are stored as int16
LEAF_CUT = 32_767  # a leaf's cut: every bin is <= it
MASK_LEAVES = 8  # a tree's leaf mask is one byte: at most 8 reachable leaves
MASK_MIN_TREES = 8  # leaf masks from this many live trees on (fewer: the walks are as quick)


def _prune(tree, root_lo: list, root_hi: list) -> tuple[list, list]:
    """(reachable leaves, in-play inner nodes) of ``tree`` (its :func:`ensemble_views`
    lists) inside the region ``root_lo < x <= root_hi`` (lists of the edges)."""
    feature, boundary, left, right = tree
    leaves, inner, stack = [], [], [0]
    while stack:
        node = stack.pop()
        if left[node] < 0:
            leaves.append(node)
            continue
        f, b = feature[node], boundary[node]
        go_l, go_r = root_lo[f] < b, root_hi[f] > b
        if go_l and go_r:
            inner.append(node)
        if go_r:
            stack.append(right[node])
        if go_l:
            stack.append(left[node])
    return leaves, inner


def _compact(tree, vals, root_lo, root_hi, fmap, cuts, nodes, leaf_rows) -> tuple[int, int]:
    """Append ``tree``'s (its :func:`ensemble_views` lists) in-play splits and reachable
    leaves; return (compact root, depth). ``fmap``: each feature's in-play index (a list);
    ``cuts``: each in-play feature's sorted cuts (lists).

    A split's two children are stored side by side (right = left + 1, for the packed walk of
    :mod:`reliquant.trees.kernel`). A leaf is a self-loop ``(0, LEAF_CUT, self, self)``
    (every bin goes "left" to itself), so a walk of exactly ``depth`` steps ends on the leaf
    whatever path it takes."""
    feature, boundary, left, right = tree

    def resolve(node: int) -> int:
        while left[node] >= 0:  # skip splits the region decides
            f, b = feature[node], boundary[node]
            if root_hi[f] <= b:
                node = left[node]
            elif root_lo[f] >= b:
                node = right[node]
            else:
                break
        return node

    def fill(slot: int, node: int) -> int:
        node = resolve(node)
        if left[node] < 0:
            nodes[slot] = [0, LEAF_CUT, slot, slot, len(leaf_rows)]
            leaf_rows.append(vals[node])
            return 0
        a = fmap[feature[node]]
        cut = bisect.bisect_left(cuts[a], boundary[node])  # = np.searchsorted(cuts[a], b)
        child = len(nodes)
        nodes.extend([None, None])
        nodes[slot] = [a, cut, child, child + 1, -1]
        d_left = fill(child, left[node])
        d_right = fill(child + 1, right[node])
        return 1 + max(d_left, d_right)

    root = len(nodes)
    nodes.append(None)
    return root, fill(root, 0)


def _pack_nodes(nd: np.ndarray) -> np.ndarray:
    """One int64 per node: left child (bits 0-31), cut (32-47), feature (48-62)."""
    if nd.shape[0] and (nd[:, 0].max() > 32_767 or nd.shape[0] >= 2**31):
        raise ValueError("more than 32,767 in-play features or 2^31 nodes")
    return (
        nd[:, 2].astype(np.int64)
        | (nd[:, 1].astype(np.int64) << 32)
        | (nd[:, 0].astype(np.int64) << 48)
    )


def _leaf_masks(nd: np.ndarray, roots: list, off: np.ndarray, node_val: np.ndarray,
                live_class: np.ndarray) -> dict:  # fmt: skip
    """Leaf masks of the live trees (QuickScorer, Lucchese et al. 2015): the plan's ``qmask``,
    ``qmask_t`` (its transpose) and ``qval``, empty (``(0, 0)``, ``(0, 0)`` and ``(0, 8)``)
    unless there are at least ``MASK_MIN_TREES`` live trees, each scoring one class (margin
    models) with at most ``MASK_LEAVES`` reachable leaves.

    A tree's leaves are numbered ``0 .. 7`` (in node order) and ``qval[t, j]`` is the score of
    tree ``t``'s leaf ``j`` (``node_val``). For in-play feature ``a``, its bin ``b`` and live
    tree ``t``, the byte ``M[a, b, t]`` is the AND over the tree's splits on ``a`` of the
    complement of the leaves the bin cannot reach there: those of the right subtree when
    ``b <= cut`` (the walk goes left), else those of the left subtree; leaves beyond the tree's
    own are cleared. The AND of ``M[a, bins[a], t]`` over the in-play features keeps exactly
    one bit, the walk's leaf: every other leaf lies on the untaken side of its deepest common
    ancestor with that leaf. Byte ``j`` of ``qmask[off[a] + a + b, g]`` (``(w >> 8 j) &
    0xFF``) is ``M[a, b, 8 g + j]``, so a draw ANDs one row of ``G = ceil(T / 8)`` words per
    feature."""
    T = len(roots)
    none = np.zeros((0, 0), dtype=np.uint64)
    off_tables = {"qmask": none, "qmask_t": none.copy(), "qval": np.zeros((0, MASK_LEAVES))}
    if T < MASK_MIN_TREES or bool((live_class < 0).any()):
        return off_tables
    N = nd.shape[0]
    tree_of = np.repeat(np.arange(T), np.diff(np.r_[roots, N]))  # a tree's nodes follow its root
    leaf = np.nonzero(nd[:, 4] >= 0)[0]
    n_leaves = np.bincount(tree_of[leaf], minlength=T)
    if n_leaves.max() > MASK_LEAVES:
        return off_tables
    slot = np.arange(len(leaf)) - np.r_[0, np.cumsum(n_leaves)[:-1]][tree_of[leaf]]
    qval = np.zeros((T, MASK_LEAVES))
    qval[tree_of[leaf], slot] = node_val[leaf]
    below = np.zeros(N, dtype=np.int64)  # the leaves under each node, as bits
    below[leaf] = 1 << slot
    below_list, left_list, is_split = below.tolist(), nd[:, 2].tolist(), (nd[:, 4] < 0).tolist()
    for k in range(N - 1, -1, -1):  # children follow their parent (_compact): bottom-up
        if is_split[k]:
            below_list[k] = below_list[left_list[k]] | below_list[left_list[k] + 1]
    below = np.array(below_list, dtype=np.int64)
    split = np.nonzero(nd[:, 4] < 0)[0]
    a, cut, left = nd[split, 0].astype(np.int64), nd[split, 1].astype(np.int64), nd[split, 2]
    rows = off[a + 1] - off[a] + 1  # bins 0 .. m_a of the split's feature
    first = np.repeat(np.cumsum(rows) - rows, rows)
    b = np.arange(int(rows.sum())) - first  # each split's bins in turn
    cut_r = np.repeat(cut, rows)
    keep = np.where(b <= cut_r, ~np.repeat(below[left + 1], rows), ~np.repeat(below[left], rows))
    R = int(off[-1]) + len(off) - 1
    M = np.repeat(((1 << n_leaves) - 1).astype(np.uint8)[None, :], R, axis=0)
    np.bitwise_and.at(
        M.reshape(-1),
        (np.repeat(off[a] + a, rows) + b) * T + np.repeat(tree_of[split], rows),
        (keep & 0xFF).astype(np.uint8),
    )
    G = -(-T // 8)
    padded = np.zeros((R, 8 * G), dtype=np.uint64)
    padded[:, :T] = M
    shifts = np.arange(8, dtype=np.uint64) * np.uint64(8)
    qmask = np.bitwise_or.reduce(padded.reshape(R, G, 8) << shifts, axis=2)
    return {"qmask": np.ascontiguousarray(qmask, dtype=np.uint64),
            "qmask_t": np.ascontiguousarray(qmask.T, dtype=np.uint64), "qval": qval}  # fmt: skip


def _decision_eps(ens: TreeEnsemble) -> float:
    """Score gap above which float64 sums in any order give the library's label (the exact
    engine's margin, :class:`reliquant.trees.leaf_tables.LeafTables`)."""
    unit, _ = score_unit_and_base(ens)
    base = 0.0 if ens.aggregation == "mean_proba" else float(np.abs(ens.base_margin).max())
    max_abs = ensemble_views(ens).max_abs_sum  # the leaves' largest |score|, tree by tree
    eps = 4.0 * (ens.n_trees + 1) * unit * (max_abs + base) + 1e-300
    return max(eps, link_eps(ens))


def tree_tables(ens: TreeEnsemble, root_lo: np.ndarray, root_hi: np.ndarray) -> dict:
    """The fields of a :class:`Plan` that depend on the ensemble and the region only (not on
    the noise or the label), plus each in-play feature's ``cuts`` (the module docstring lists
    the tables)."""
    d, K = ens.n_features, ens.n_classes
    lo_list, hi_list = root_lo.tolist(), root_hi.tolist()
    views = ensemble_views(ens)
    trees = views.lists
    pruned = [_prune(t, lo_list, hi_list) for t in trees]
    per_feat: dict[int, set] = {}
    for (feature, boundary, _, _), (_, inner) in zip(trees, pruned, strict=True):
        for node in inner:
            per_feat.setdefault(feature[node], set()).add(boundary[node])
    feats = np.array(sorted(per_feat), dtype=np.int64)
    fmap = np.full(d, -1, dtype=np.int64)
    fmap[feats] = np.arange(len(feats))
    cuts = [np.array(sorted(per_feat[int(f)])) for f in feats]
    if any(len(c) > MAX_CUTS for c in cuts):
        raise ValueError(f"a feature has more than {MAX_CUTS} split values (bins are int16)")
    off = np.zeros(len(feats) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(c) for c in cuts])
    xcut = np.concatenate(cuts) if cuts else np.zeros(0)
    nodes: list = []
    leaf_rows: list = []
    roots, depths, live_pos = [], [], np.full(ens.n_trees, -1, dtype=np.int64)
    fixed_vals = np.zeros((ens.n_trees, K))
    const = score_unit_and_base(ens)[1].astype(np.float64).copy()
    fmap_list, cut_lists = fmap.tolist(), [c.tolist() for c in cuts]
    for k, (t, (leaves, _)) in enumerate(zip(trees, pruned, strict=True)):
        vals = views.scores64[k]
        if len(leaves) == 1:
            fixed_vals[k] = vals[leaves[0]]
            const += vals[leaves[0]]
            continue
        live_pos[k] = len(roots)
        root, depth = _compact(t, vals, lo_list, hi_list, fmap_list, cut_lists, nodes, leaf_rows)
        roots.append(root)
        depths.append(depth)
    nd = np.array(nodes, dtype=np.int32).reshape(-1, 5)
    live = np.nonzero(live_pos >= 0)[0]
    one_class = ens.aggregation != "mean_proba"  # margins: each tree scores one class
    live_class = (
        np.asarray(ens.tree_class, dtype=np.int64)[live]
        if one_class
        else np.full(len(live), -1, dtype=np.int64)
    )
    leaf_vals = np.array(leaf_rows, dtype=np.float64).reshape(-1, K)
    node_val = np.zeros(nd.shape[0])
    if one_class and len(roots):  # each live tree's nodes follow its root (_compact)
        node_class = np.repeat(live_class, np.diff(np.r_[roots, nd.shape[0]]))
        leaf = nd[:, 4] >= 0
        node_val[leaf] = leaf_vals[nd[leaf, 4], node_class[leaf]]
    binary = ens.aggregation != "mean_proba" and K == 2 and bool(np.all(ens.tree_class == 1))
    return dict(
        features=feats, off=off, xcut=xcut, cuts=cuts,
        nodes=np.ascontiguousarray(nd[:, :4]), node_leaf=nd[:, 4].copy(),
        tree_depth=np.array(depths, dtype=np.int64), tree_root=np.array(roots, dtype=np.int64),
        leaf_vals=leaf_vals, const_scores=const,
        eps=_decision_eps(ens), live_pos=live_pos, fixed_vals=fixed_vals,
        tree_class=np.asarray(ens.tree_class, dtype=np.int64),
        base32=ens.base_margin.astype(np.float32), margin=ens.aggregation == "margin",
        binary=binary, link=LINK_CODES[ens.link], margin64=ens.aggregation == "margin64",
        base64=ens.base_margin.astype(np.float64), link_scale=float(ens.link_scale),
        packed=_pack_nodes(nd), live_class=live_class, node_val=node_val,
        **_leaf_masks(nd, roots, off, node_val, live_class),
    )  # fmt: skip


_TABLES = IdentityLRU(8)  # the last 8 (ensemble, region) pairs' tables


def cached_tree_tables(ens: TreeEnsemble, root_lo: np.ndarray, root_hi: np.ndarray) -> dict:
    """:func:`tree_tables`, remembered for the last 8 ensembles and regions (many samples
    share one region, e.g. the whole space), keyed by the ensemble's identity
    (:class:`~reliquant.trees.ensemble_views.IdentityLRU`) and the region's values; each call
    returns a fresh dict of copies, so no plan shares an array with the cache."""
    region = (root_lo.tobytes(), root_hi.tobytes())
    tables = _TABLES.get(ens, region, lambda: tree_tables(ens, root_lo, root_hi))
    return {
        k: v.copy() if isinstance(v, np.ndarray) else [c.copy() for c in v] if k == "cuts" else v
        for k, v in tables.items()
    }
