"""Per-sample tables for the compiled sampler (:mod:`reliquant.trees.kernel`).

A tree's path depends on a feature only through the *bin* it falls in between that
feature's split boundaries, so a draw needs one bin per feature a tree actually asks about,
never the 784-wide input. For a region (the root box ``root_lo < x <= root_hi``; the whole
space for plain Monte Carlo) the plan keeps:

* the *in-play* features: those some reachable split cuts inside the region, each with its
  cuts ``c_0 < ... < c_{m-1}`` (effective boundaries, :mod:`reliquant.trees.structure`);
  bin ``j`` is ``(c_{j-1}, c_j]`` and a split at ``c_j`` sends bins ``<= j`` left;
* per in-play feature the noise CDF at the region edges and the cuts,
  ``Phi(z(root_lo)), Phi(z(c_0)), ..., Phi(z(root_hi))`` (``z`` the normal score of
  :func:`reliquant.trees.noise.normal_scores`): for independent noise one uniform in
  ``[F(lo), F(hi)]`` picks the bin of a box's range ``lo..hi`` exactly (inverse CDF);
* the same as integer thresholds in units of 2^-53 with a guide table per feature (the
  kernel's fast inverse CDF, :func:`_guide_tables`);
* the Cholesky factor of the scores' correlation (correlated and NORTA noise);
* the *live* trees (more than one reachable leaf), compacted to their in-play splits
  (children side by side, also packed one int64 per node; a one-class tree's leaf score
  per node), and the summed scores of the fixed trees; the exact per-tree data for
  near-ties;
* leaf masks when there are enough live trees, each of one class and at most 8 leaves
  (:func:`reliquant.trees.live_trees._leaf_masks`): per in-play feature and bin, a byte per
  live tree of the leaves the bin leaves possible, and each tree's leaf scores by bit;
* optional strata: boxes (bin ranges overriding the region on a few features) chosen with
  probability proportional to their masses.

The tables that depend on the ensemble and the region only are kept for the last few
(ensemble, region) pairs met (:func:`reliquant.trees.live_trees.cached_tree_tables`):
samples that share a region (plain Monte Carlo: the whole space) build them once.

The tables of the ensemble and the region (the in-play features and cuts, the live trees,
the leaf masks) are built by :mod:`reliquant.trees.live_trees`.

Public API: :class:`Plan`, :func:`build_plan`, :func:`bin_ranges`, and the constants.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal
from reliquant.trees.live_trees import (
    LEAF_CUT,
    LINK_CODES,
    MASK_LEAVES,
    MASK_MIN_TREES,
    MAX_CUTS,
    cached_tree_tables,
)
from reliquant.trees.noise import fixed_features, normal_cdf, normal_correlation, normal_scores
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "LEAF_CUT",
    "LINK_CODES",
    "MASK_LEAVES",
    "MASK_MIN_TREES",
    "MAX_CUTS",
    "Plan",
    "U53",
    "bin_ranges",
    "build_plan",
]


class Plan(NamedTuple):
    """Arrays the numba kernel reads (see module docstring); ``y`` is mu's class index."""

    y: int
    correlated: bool
    features: np.ndarray  # int64[A]: the model's index of each in-play feature
    off: np.ndarray  # int64[A + 1]: feature a's cuts are xcut[off[a]:off[a+1]]
    xcut: np.ndarray  # float64: cuts in feature units
    zcut: np.ndarray  # float64: cuts as normal scores
    cdf: np.ndarray  # float64[off[A] + 2 A]: Phi at edges and cuts, feature a at off[a] + 2a
    mode: np.ndarray  # int64[A]: each feature's most probable bin (tried first)
    chol: np.ndarray  # float64[A, A] (correlated) or [0, 0]
    nodes: np.ndarray  # int32[N, 4]: (feature, cut, left, right); a split sends bins <= cut
    # left; a leaf loops to itself (see live_trees._compact)
    node_leaf: np.ndarray  # int32[N]: row of leaf_vals at leaves, -1 at splits
    tree_depth: np.ndarray  # int64[T_live]: steps from the root to the deepest leaf
    tree_root: np.ndarray  # int64[T_live]
    leaf_vals: np.ndarray  # float64[L, K]
    const_scores: np.ndarray  # float64[K]: base + fixed trees (fast path)
    eps: float  # fast-path decision margin (rounding of the library's arithmetic)
    live_pos: np.ndarray  # int64[n_trees]: index among live trees, -1 for fixed trees
    fixed_vals: np.ndarray  # float64[n_trees, K]: a fixed tree's scores
    tree_class: np.ndarray  # int64[n_trees] (margin models)
    base32: np.ndarray  # float32[K]
    margin: bool  # XGBoost arithmetic (float32 margins) vs mean of probabilities
    binary: bool  # binary margin model: scores (0, margin)
    link: int  # LINK_CODES
    margin64: bool  # float64 margins (LightGBM, scikit-learn gradient boosting)
    base64: np.ndarray  # float64[K]
    link_scale: float  # the sigmoid64 link's factor
    cum: np.ndarray  # float64[S]: cumulative stratum probabilities (last = 1)
    box_ptr: np.ndarray  # int64[S + 1]
    ov_feat: np.ndarray  # int64: overridden feature
    ov_lo: np.ndarray  # int64: first bin of the range
    ov_hi: np.ndarray  # int64: last bin of the range
    packed: np.ndarray  # int64[N]: nodes packed for the walk (live_trees); right = left + 1
    live_class: np.ndarray  # int64[T_live]: the one class a live tree scores, -1 for all
    thr: np.ndarray  # int64[off[A] + A]: integer bin thresholds, feature a's at off[a] + a
    guide: np.ndarray  # int16: guide tables (_guide_tables), feature a's at goff[a]
    goff: np.ndarray  # int64[A + 1]
    gshift: np.ndarray  # int64[A]: cell of r is r >> gshift[a]
    node_val: np.ndarray  # float64[N]: at a leaf of a one-class live tree, its class's score
    qmask: np.ndarray  # uint64[off[A] + A, G]: leaf masks (live_trees), [0, 0] when unused
    qmask_t: np.ndarray  # uint64[G, off[A] + A]: the same transposed (word-major)
    qval: np.ndarray  # float64[T_live, 8]: each live tree's leaf score by mask bit, [0, 8]

    @property
    def n_in_play(self) -> int:
        return len(self.off) - 1

    @property
    def n_live(self) -> int:
        return len(self.tree_root)


U53 = 2**53  # the kernel's uniforms are integers r in [0, 2^53): u = r / 2^53
_U53_END = np.array([U53], dtype=np.int64)  # the sentinel that ends a feature's thresholds


def _guide_tables(cdf_parts: list) -> tuple[np.ndarray, ...]:
    """Integer inverse-CDF tables of each feature's bins over the region.

    With ``F`` the feature's CDF at the region edges and cuts, bin ``j`` has probability
    ``(F(c_j) - F(c_{j-1})) / (F(hi) - F(lo))``. In units of ``2^-53`` its upper edge is the
    threshold ``t_j = ceil(2^53 (F(c_j) - F(lo)) / (F(hi) - F(lo))) - 1`` and the bin of a
    uniform integer ``r`` is ``#{j: t_j < r}`` (so P(bin <= j) = (t_j + 1) / 2^53, within
    2^-53 of the exact value, and a bin of zero mass is never drawn); a sentinel ``2^53``
    ends each feature's list. A guide table (Chen & Asau 1974) of ``2^g`` cells gives the bin
    of the first integer of each cell, so a draw is one table look-up and usually one
    comparison."""
    thr, guide, goff, gshift = [], [], [0], []
    for c in cdf_parts:
        last = len(c) - 2
        width = c[-1] - c[0]
        t = np.ceil((c[1:-1] - c[0]) / width * U53) - 1.0 if width > 0 else np.full(last, -1.0)
        t = np.clip(t, -1.0, U53 - 1.0).astype(np.int64)
        t = np.maximum.accumulate(t) if last else t
        g = int(min(12, max(1, np.ceil(np.log2(last + 1)) + 2)))
        starts = np.arange(2**g, dtype=np.int64) << (53 - g)
        guide.append(np.searchsorted(t, starts, side="left").astype(np.int16))
        thr.append(np.concatenate((t, _U53_END)))
        goff.append(goff[-1] + 2**g)
        gshift.append(53 - g)
    if not cdf_parts:
        return (
            np.zeros(0, np.int64),
            np.zeros(0, np.int16),
            np.zeros(1, np.int64),
            np.zeros(0, np.int64),
        )
    return (np.concatenate(thr), np.concatenate(guide), np.array(goff, dtype=np.int64),
            np.array(gshift, dtype=np.int64))  # fmt: skip


def _edge_scores(noise, feats: np.ndarray, edges: list) -> list:
    """Normal scores of each in-play feature's region edges and cuts (one vectorised call
    for normal noise, feature by feature otherwise)."""
    if not len(feats):
        return []
    if isinstance(noise, IndependentNormal | CorrelatedNormal):
        flat = np.concatenate(edges)
        cols = np.repeat(feats, [len(e) for e in edges])
        z = normal_scores(noise, cols, flat[None, :])[0]
        return np.split(z, np.cumsum([len(e) for e in edges])[:-1])
    return [normal_scores(noise, np.array([f]), e[:, None])[:, 0] for f, e in zip(feats, edges, strict=True)]  # fmt: skip


def bin_ranges(plan: Plan, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last bin of the box ``lo < x <= hi`` (in-play features, ``(m, A)``)."""
    blo = np.empty(lo.shape, dtype=np.int64)
    bhi = np.empty(hi.shape, dtype=np.int64)
    for a in range(plan.n_in_play):
        c = plan.xcut[plan.off[a] : plan.off[a + 1]]
        blo[:, a] = np.searchsorted(c, lo[:, a], side="right")
        bhi[:, a] = np.searchsorted(c, hi[:, a], side="left")
    return blo, bhi


def _no_strata() -> dict:
    z = np.zeros(0, dtype=np.int64)
    return {"cum": np.ones(1), "box_ptr": np.zeros(2, dtype=np.int64), "ov_feat": z,
            "ov_lo": z, "ov_hi": z}  # fmt: skip


def _strata(plan: Plan, strata) -> dict:
    """Stratum tables: boxes (``lo``, ``hi`` over ``features``, ``mass``) as bin overrides
    of the features whose range is narrower than the region's."""
    lo, hi, mass, features = strata
    keep = mass > 0  # (a box missing a fixed feature's value has no mass)
    lo, hi, mass = lo[keep], hi[keep], mass[keep]
    fmap = {int(f): a for a, f in enumerate(plan.features)}
    in_play = np.array([int(f) in fmap for f in features], dtype=bool)
    lo, hi = lo[:, in_play], hi[:, in_play]
    cols = np.array([fmap[int(f)] for f in np.asarray(features)[in_play]], dtype=np.int64)
    full_lo = np.full((lo.shape[0], plan.n_in_play), -np.inf)
    full_hi = np.full((lo.shape[0], plan.n_in_play), np.inf)
    full_lo[:, cols], full_hi[:, cols] = lo, hi
    blo, bhi = bin_ranges(plan, full_lo, full_hi)
    last = np.diff(plan.off)  # last bin index = number of cuts
    over = (blo > 0) | (bhi < last[None, :])
    rows, js = np.nonzero(over)
    ptr = np.zeros(lo.shape[0] + 1, dtype=np.int64)
    np.add.at(ptr, rows + 1, 1)
    cum = np.cumsum(mass / mass.sum())
    cum[-1] = 1.0
    return {"cum": cum, "box_ptr": np.cumsum(ptr), "ov_feat": js.astype(np.int64),
            "ov_lo": blo[rows, js], "ov_hi": bhi[rows, js]}  # fmt: skip


def build_plan(
    ens: TreeEnsemble,
    noise,
    y: int,
    root_lo: np.ndarray | None = None,
    root_hi: np.ndarray | None = None,
    strata: tuple | None = None,
) -> Plan:
    """Tables for sampling the region ``root_lo < x <= root_hi`` (default: everything).

    ``strata``: ``(lo, hi, mass, features)``, boxes over the model features ``features``
    (each the root box elsewhere) drawn with probability proportional to ``mass``; boxes
    must have edges at region edges or cuts (as the exact engine's boxes have). Only for
    independent noise.
    """
    d = ens.n_features
    root_lo = np.full(d, -np.inf) if root_lo is None else np.asarray(root_lo, dtype=np.float64)
    root_hi = np.full(d, np.inf) if root_hi is None else np.asarray(root_hi, dtype=np.float64)
    fixed = fixed_features(noise)  # zero variance: pinned to the sample's value
    if fixed.any():
        mu = noise.mu[fixed]
        root_lo = root_lo.copy()
        root_hi = root_hi.copy()
        root_lo[fixed] = np.maximum(root_lo[fixed], np.nextafter(mu, -np.inf))
        root_hi[fixed] = np.minimum(root_hi[fixed], mu)
    t = cached_tree_tables(ens, root_lo, root_hi)
    feats, cuts = t["features"], t.pop("cuts")
    edges = [
        np.concatenate((root_lo[f : f + 1], c, root_hi[f : f + 1]))
        for f, c in zip(feats.tolist(), cuts, strict=True)
    ]
    z_edges = _edge_scores(noise, feats, edges)
    zcut = np.concatenate([z[1:-1] for z in z_edges]) if cuts else np.zeros(0)
    cdf_parts = [normal_cdf(z) for z in z_edges]
    cdf = np.concatenate(cdf_parts) if cuts else np.zeros(0)
    mode = np.array([int(np.argmax(np.diff(c))) for c in cdf_parts], dtype=np.int64)
    correlated = not bool(getattr(noise, "independent", False))
    chol = np.zeros((0, 0))
    if correlated and len(feats):
        chol = np.linalg.cholesky(normal_correlation(noise, feats))
    thr, guide, goff, gshift = _guide_tables(cdf_parts if cuts else [])
    plan = Plan(
        y=int(y), correlated=correlated, zcut=zcut, cdf=cdf, mode=mode, chol=chol, thr=thr,
        guide=guide, goff=goff, gshift=gshift, **t, **_no_strata(),
    )  # fmt: skip
    if strata is not None:
        if correlated:
            raise ValueError("strata need independent noise")
        plan = plan._replace(**_strata(plan, strata))
    return plan
