"""Per-sample tables of the exact engine (:mod:`reliquant.trees.engine`, step 2).

For one sample with label y and a root box: the leaves reachable from the root, their path
conditions (the splits that still cut the root), the score differences v_y - v_c per leaf and
other class c, the constant part of the score from trees with a single reachable leaf, and
``eps``, the rounding margin below which a box's label is taken leaf by leaf (float64 sums
for ``mean_proba`` and ``margin64``, float32 for ``margin``; :func:`link_eps` adds the margin
below which the library's link, not the sign or argmax of the scores, decides).
"""

from __future__ import annotations

import time

import numpy as np

from reliquant.trees.ensemble_views import ensemble_views
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "LINK64_EPS",
    "LeafTables",
    "MARGIN_LINK_EPS",
    "OutOfTime",
    "link_eps",
    "score_unit_and_base",
]

MARGIN_LINK_EPS = 1e-6  # score gap below which an XGBoost box is labelled leaf by leaf
# the same for LightGBM's float64 sigmoid / softmax, which follow the margin's sign / argmax
# except within about 2e-16 of a tie (structure.sigmoid64_label, softmax64_label)
LINK64_EPS = 1e-12


def link_eps(ens: TreeEnsemble) -> float:
    """Score gap below which the library's link, not the margin, may decide the label."""
    if ens.aggregation == "margin":
        # XGBoost labels by float32 sigmoid / softmax: label 1 needs a margin above
        # 9e-8, and classes closer than a few float32 ulps of 1 tie (structure.sigmoid32)
        return MARGIN_LINK_EPS
    if ens.link == "sigmoid64":
        return LINK64_EPS / ens.link_scale
    return LINK64_EPS if ens.link == "softmax64" else 0.0


def score_unit_and_base(ens: TreeEnsemble) -> tuple[float, np.ndarray]:
    """Unit roundoff of the ensemble's score arithmetic and its base scores as added."""
    if ens.aggregation == "mean_proba":
        return float(np.finfo(np.float64).eps), np.zeros(ens.n_classes)
    if ens.aggregation == "margin64":
        return float(np.finfo(np.float64).eps), ens.base_margin.astype(np.float64)
    return float(np.finfo(np.float32).eps), ens.base_margin.astype(np.float32).astype(np.float64)


class OutOfTime(Exception):
    """The tables were not built by their deadline (the engine then certifies nothing)."""


class LeafTables:
    """Per-sample tables: reachable leaves, their path conditions and score differences."""

    def __init__(self, ens: TreeEnsemble, y: int, root_lo: np.ndarray, root_hi: np.ndarray,
                 deadline: float | None = None):  # fmt: skip
        """``deadline`` (a ``time.perf_counter()`` value): raise :class:`OutOfTime` when the
        walk through the trees (linear in the model's size) passes it."""
        self.ens = ens
        d = ens.n_features
        K = ens.n_classes
        others = np.array([c for c in range(K) if c != y], dtype=np.int64)
        # exact leaf values in float64 and the eps that covers the library's rounding
        unit, base = score_unit_and_base(ens)
        views = ensemble_views(ens)
        lo, hi = root_lo.tolist(), root_hi.tolist()
        leaf_rows = []  # (tree, node, cond list)
        const_leaf = np.full(ens.n_trees, -1, dtype=np.int64)
        live_trees = []
        for k, (feature, boundary, left, right) in enumerate(views.lists):
            if deadline is not None and time.perf_counter() > deadline:
                raise OutOfTime(f"the leaf tables passed their deadline at tree {k}")
            reach = []
            stack = [(0, [])]
            while stack:
                node, conds = stack.pop()
                if left[node] < 0:
                    reach.append((node, conds))
                    continue
                f, b = feature[node], boundary[node]
                if lo[f] < b:  # left (x <= b) reachable
                    c = conds if hi[f] <= b else [*conds, (f, b, True)]
                    stack.append((left[node], c))
                if hi[f] > b:  # right (x > b) reachable
                    c = conds if lo[f] >= b else [*conds, (f, b, False)]
                    stack.append((right[node], c))
            if len(reach) == 1:
                const_leaf[k] = reach[0][0]
            else:
                reach.sort(key=lambda r: r[0])
                live_trees.append(k)
                for node, conds in reach:
                    leaf_rows.append((k, node, conds))
        max_abs = views.max_abs_sum  # the leaves' largest |score|, summed tree by tree
        self.const_leaf = const_leaf
        self.live_trees = np.array(live_trees, dtype=np.int64)
        n_scale = ens.n_trees + 1
        self.eps = 4.0 * n_scale * unit * (max_abs + float(np.abs(base).max(initial=0.0))) + 1e-300
        self.eps = max(self.eps, link_eps(ens))
        # constant part of s_y - s_c
        const_diff = base[y] - base[others]
        for k in np.nonzero(const_leaf >= 0)[0]:
            v = views.scores64[k][const_leaf[k]]
            const_diff = const_diff + (v[y] - v[others])
        self.const_diff = const_diff
        self.others = others
        # active features and padded condition tables
        feats = sorted({f for _, _, conds in leaf_rows for f, _, _ in conds})
        self.active = np.array(feats, dtype=np.int64)
        fmap = np.full(d, -1, dtype=np.int64)
        fmap[self.active] = np.arange(len(feats))
        self.fmap = fmap
        L = len(leaf_rows)
        P = max([len(c) for _, _, c in leaf_rows], default=0)
        P = max(P, 1)
        self.cf = np.zeros((L, P), dtype=np.int64)
        self.cb = np.full((L, P), np.inf)
        self.cl = np.ones((L, P), dtype=bool)
        self.leaf_tree = np.array([k for k, _, _ in leaf_rows], dtype=np.int64)
        self.leaf_node = np.array([node for _, node, _ in leaf_rows], dtype=np.int64)
        at_i = [i for i, (_, _, conds) in enumerate(leaf_rows) for _ in conds]
        at_j = [j for _, _, conds in leaf_rows for j in range(len(conds))]
        if at_i:
            fmap_list = fmap.tolist()
            self.cf[at_i, at_j] = [fmap_list[f] for _, _, conds in leaf_rows for f, _, _ in conds]
            self.cb[at_i, at_j] = [b for _, _, conds in leaf_rows for _, b, _ in conds]
            self.cl[at_i, at_j] = [is_left for _, _, conds in leaf_rows for _, _, is_left in conds]
        D = np.empty((L, len(others)))
        for i, (k, node, _) in enumerate(leaf_rows):
            v = views.scores64[k][node]
            D[i] = v[y] - v[others]
        self.D = D
        self.L = L
        # tree segments in the leaf table
        if L:
            starts = np.r_[0, np.nonzero(np.diff(self.leaf_tree))[0] + 1]
        else:
            starts = np.zeros(0, dtype=np.int64)
        self.seg_starts = starts
        self.n_live = len(starts)
        self.root_lo_active = root_lo[self.active]
        self.root_hi_active = root_hi[self.active]
        self.y = y

    # ------------------------------------------------------------------ bounding
    def reach(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """(m, L) leaf reachability of boxes ``lo < x <= hi`` (active coordinates)."""
        a = lo[:, self.cf] < self.cb
        b = hi[:, self.cf] > self.cb
        return np.where(self.cl, a, b).all(axis=2)

    def bounds(self, ok: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per box: LB, UB of s_y - s_c (m, C'), per-tree min/max (m, T_live, C'), counts."""
        m = ok.shape[0]
        C = self.D.shape[1]
        if self.L == 0:
            lb = np.tile(self.const_diff, (m, 1))
            z = np.zeros((m, 0, C))
            return lb, lb.copy(), z, z, np.zeros((m, 0), dtype=np.int64)
        big = np.where(ok[:, :, None], self.D[None], np.inf)
        mins = np.minimum.reduceat(big, self.seg_starts, axis=1)
        big = np.where(ok[:, :, None], self.D[None], -np.inf)
        maxs = np.maximum.reduceat(big, self.seg_starts, axis=1)
        counts = np.add.reduceat(ok, self.seg_starts, axis=1)
        lb = self.const_diff + mins.sum(axis=1)
        ub = self.const_diff + maxs.sum(axis=1)
        return lb, ub, mins, maxs, counts

    def exact_labels(self, ok: np.ndarray) -> np.ndarray:
        """Exact labels of boxes in which every live tree reaches one leaf."""
        m = ok.shape[0]
        leaves = np.tile(self.const_leaf, (m, 1))
        if self.L:
            rows, cols = np.nonzero(ok)
            node = self.leaf_node[cols].reshape(m, self.n_live)
            leaves[:, self.live_trees] = node
        return self.ens.label_from_leaves(leaves)

    def split_points(
        self, lo: np.ndarray, hi: np.ndarray, ok: np.ndarray, lb, mins, maxs, counts
    ) -> tuple[np.ndarray, np.ndarray]:
        """(active feature index, boundary) at which to split each box."""
        m = lo.shape[0]
        r = np.arange(m)
        cstar = np.argmin(lb, axis=1)
        spread = maxs[r, :, cstar] - mins[r, :, cstar]  # (m, T_live)
        spread = np.where(counts > 1, spread, -1.0)
        tsel = np.argmax(spread, axis=1)  # index into live trees
        # among the chosen tree's reachable leaves, the shallowest active condition that cuts
        # the box is found by walking the tree from its root
        ens = self.ens
        feat_out = np.empty(m, dtype=np.int64)
        bnd_out = np.empty(m)
        for t_live in np.unique(tsel):
            rows = np.nonzero(tsel == t_live)[0]
            tree = ens.trees[int(self.live_trees[t_live])]
            node = np.zeros(len(rows), dtype=np.int64)
            done = np.zeros(len(rows), dtype=bool)
            for _ in range(tree.n_nodes):
                if done.all():
                    break
                f = tree.feature[node]
                b = tree.boundary[node]
                fc = self.fmap[np.maximum(f, 0)]
                act = (f >= 0) & (fc >= 0)
                fcs = np.maximum(fc, 0)
                lo_v = np.where(act, lo[rows, fcs], -np.inf)
                hi_v = np.where(act, hi[rows, fcs], np.inf)
                # inactive feature: the root box lies on one side of b
                root_left = self.root_side_left(f, b)
                left_ok = np.where(act, lo_v < b, root_left)
                right_ok = np.where(act, hi_v > b, ~root_left)
                cut = act & left_ok & right_ok & ~done
                feat_out[rows[cut]] = fcs[cut]
                bnd_out[rows[cut]] = b[cut]
                done |= cut
                nxt = np.where(left_ok, tree.left[node], tree.right[node])
                node = np.where(done, node, nxt)
            if not done.all():  # pragma: no cover - guarded by counts > 1
                raise RuntimeError("engine found no split for an undecided box")
        return feat_out, bnd_out

    def root_side_left(self, f: np.ndarray, b: np.ndarray) -> np.ndarray:
        """For splits on features inactive in the root box: does the root lie left of b?"""
        fo = np.maximum(f, 0)
        return self._root_hi_full[fo] <= b

    def set_root(self, root_lo: np.ndarray, root_hi: np.ndarray) -> None:
        self._root_lo_full = root_lo
        self._root_hi_full = root_hi
