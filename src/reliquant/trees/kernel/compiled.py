"""Every compiled (numba) function of the sampler: the random stream, the bins of a block of
draws, the trees' leaves and the labels, and the kernels called from Python.

The algorithm is described in :mod:`reliquant.trees.kernel`. Every ``@njit`` function and every
constant they read lives in this one module, on purpose: numba's disk cache (``cache=True``)
keys a compiled function by its own file, so a kernel that called a helper of another file
would, after that helper was edited, still load the machine code compiled from the old helper
(numba does not follow calls into other files; globals are frozen into the machine code too).
Kept in one file, any edit here recompiles every kernel (``tests/core/test_import_graph.py``
names this module as an exception to the 500-line limit, for this reason).

The kernels called from Python: :func:`hash_states` (:func:`chunk_seeds`), :func:`count_chunk`
and :func:`chunk_normal_scores` (:func:`reliquant.trees.kernel.agreement.count_agree` and the
score store), and the testing, validation and profiling kernels :func:`sample_bins_kernel`,
:func:`labels_of_bins_kernel`, :func:`bins_of_kernel` and :func:`bins_only_kernel`
(:mod:`reliquant.trees.kernel.bins`); :func:`dispatchers` lists them all with their helpers.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher

__all__ = [
    "BLOCK",
    "LINEAR_MAX",
    "MASK_ACROSS_MAX",
    "NO_SCORES",
    "ZLINEAR_MAX",
    "bins_of_kernel",
    "bins_only_kernel",
    "chunk_normal_scores",
    "chunk_seeds",
    "count_chunk",
    "dispatchers",
    "hash_states",
    "labels_of_bins_kernel",
    "sample_bins_kernel",
]


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.int64(0xFFFFFFFF)
_INV53 = 1.0 / 9007199254740992.0


@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _uniform(state):
    """Next uniform on [0, 1) (53 bits) of the SplitMix64 stream ``state[0]``."""
    state[0] = state[0] + _GOLDEN
    return float(_mix(state[0]) >> np.uint64(11)) * _INV53


def chunk_seeds(seed: int, first: int, n: int) -> np.ndarray:
    """Starting states of chunks ``first .. first + n - 1`` for a run seeded ``seed``."""
    base = np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
    idx = np.arange(first, first + n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return hash_states(base * np.uint64(0xD1B54A32D192ED03) + idx * _GOLDEN)


@njit(cache=True)
def hash_states(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _mix(_mix(x[i]) + _GOLDEN)
    return out


BLOCK = 256  # draws evaluated together
LINEAR_MAX = 48  # features with at most this many thresholds count them instead (no gathers)
ZLINEAR_MAX = 96  # the same for the normal-score cuts of correlated draws
MASK_ACROSS_MAX = 8  # leaf-mask words per draw up to which they are ANDed across the draws


@njit(cache=True)
def _search(cdf, base, lo, hi, u):
    """Bin ``j`` in ``lo..hi`` with ``cdf[base + j] < u <= cdf[base + j + 1]`` (clamped)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cdf[base + mid] < u:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True)
def _bin_of_value(cuts, start, stop, v):
    """Number of cuts in ``cuts[start:stop]`` strictly below ``v`` (bin of ``v``)."""
    lo, hi = start, stop
    while lo < hi:
        mid = (lo + hi) // 2
        if cuts[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo - start


@njit(cache=True)
def _independent_bins(thr, guide, goff, gshift, off, state, bins, n):
    """Bins ``bins[a, i]`` of ``n`` draws of every in-play feature over the region: one
    53-bit integer ``r`` per feature and draw, its bin ``#{j: t_j < r}`` from the feature's
    guide table and thresholds (:func:`reliquant.trees.plan._guide_tables`; the plan's
    arrays of those names)."""
    x = state[0]
    rbuf = np.empty(n, dtype=np.int64)
    for a in range(off.shape[0] - 1):
        tb = off[a] + a
        gb = goff[a]
        sh = gshift[a]
        row = bins[a]
        for i in range(n):  # SplitMix64 outputs x + (i + 1) golden: vectorised
            rbuf[i] = np.int64(_mix(x + np.uint64(i + 1) * _GOLDEN) >> np.uint64(11))
        x += np.uint64(n) * _GOLDEN
        m = off[a + 1] - off[a]
        if m <= LINEAR_MAX:  # few thresholds: count them, one broadcast compare per draw
            for i in range(n):
                row[i] = 0
            for j in range(m):
                t = thr[tb + j]
                for i in range(n):
                    row[i] += rbuf[i] > t
            continue
        for i in range(n):  # guide cell, then one branch-free comparison
            r = rbuf[i]
            b = np.int64(guide[gb + (r >> sh)])
            row[i] = b + (thr[tb + b] < r)
        for i in range(n):  # cells holding two or more thresholds (rare): walk on
            r = rbuf[i]
            b = np.int64(row[i])
            if thr[tb + b] < r:
                while thr[tb + b] < r:
                    b += 1
                row[i] = b
    state[0] = x


@njit(cache=True)
def _normal_scores(chol, state, z, start, n):
    """``z[a, start + i]`` for ``n`` correlated draws: ``z = L e`` with ``L = chol`` and
    ``e`` standard normal by Box-Muller, a pair of uniforms per two features, in stream
    order (draw by draw, pair by pair; the second normal of an odd feature count's last pair
    is not used). The uniforms are made first (vectorised: the stream's ``k``-th output is a
    function of ``state + k golden``), then each score is summed over ``j <= a`` in order:
    the arithmetic of a draw-by-draw loop, value for value."""
    A = chol.shape[0]
    if A == 0 or n == 0:
        return
    U = 2 * ((A + 1) // 2)  # uniforms per draw
    x = state[0]
    u = np.empty(U * n)
    for k in range(U * n):
        u[k] = float(_mix(x + np.uint64(k + 1) * _GOLDEN) >> np.uint64(11)) * _INV53
    state[0] = x + np.uint64(U * n) * _GOLDEN
    e = np.empty((U, n))
    for i in range(n):
        for k in range(0, A, 2):
            r = np.sqrt(-2.0 * np.log(1.0 - u[i * U + k]))
            t = 2.0 * np.pi * u[i * U + k + 1]
            e[k, i] = r * np.cos(t)
            if k + 1 < A:
                e[k + 1, i] = r * np.sin(t)
    for a in range(A):
        za = z[a, start : start + n]
        for i in range(n):
            za[i] = 0.0
        for j in range(a + 1):
            c = chol[a, j]
            ej = e[j]
            for i in range(n):
                za[i] += c * ej[i]


@njit(cache=True)
def _bins_of_scores(zcut, off, z, start, bins, n):
    """``bins[a, i]``: the bin of the score ``z[a, start + i]`` among feature ``a``'s cuts
    (``zcut[off[a]:off[a + 1]]``, the plan's; the number of cuts below it), for ``i < n``:
    for a feature with at most ``ZLINEAR_MAX`` cuts by counting them (one vectorised
    compare per cut across the draws), else by binary search (:func:`_bin_of_value`); both
    give the same integer."""
    cnt = np.empty(n, dtype=np.int64)
    for a in range(off.shape[0] - 1):
        row = bins[a]
        zs = z[a, start : start + n]
        if off[a + 1] - off[a] <= ZLINEAR_MAX:
            cnt[:] = 0
            for j in range(off[a], off[a + 1]):
                t = zcut[j]
                for i in range(n):
                    cnt[i] += zs[i] > t
            for i in range(n):
                row[i] = cnt[i]
        else:
            for i in range(n):
                row[i] = _bin_of_value(zcut, off[a], off[a + 1], zs[i])


@njit(cache=True, inline="always")
def _correlated_bins(p, state, bins, n):
    """Bins of ``n`` correlated draws: z = L e, e standard normal (Box-Muller)."""
    z = np.empty((p.off.shape[0] - 1, n))
    _normal_scores(p.chol, state, z, 0, n)
    _bins_of_scores(p.zcut, p.off, z, 0, bins, n)


@njit(cache=True)
def _stratify(cum, box_ptr, ov_feat, ov_lo, ov_hi, off, cdf, state, bins, n):
    """Each draw picks a box (probability = its mass share) and redraws the features the
    box narrows inside the box's bin range (the plan's arrays of those names)."""
    S = cum.shape[0]
    for i in range(n):
        u = _uniform(state)
        lo, hi = 0, S - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cum[mid] < u:
                lo = mid + 1
            else:
                hi = mid
        for j in range(box_ptr[lo], box_ptr[lo + 1]):
            a = ov_feat[j]
            base = off[a] + 2 * a
            b_lo, b_hi = ov_lo[j], ov_hi[j]
            c_lo = cdf[base + b_lo]
            v = c_lo + (cdf[base + b_hi + 1] - c_lo) * _uniform(state)
            bins[a, i] = _search(cdf, base, b_lo, b_hi, v)


@njit(cache=True)
def _argmax(s):
    """``np.argmax`` of a 1-D float array (the first maximum; the first NaN if there is one),
    as a loop: numba's ``np.argmax`` takes tenths of a second to compile per dtype."""
    best, top = 0, s[0]
    if np.isnan(top):
        return 0
    for c in range(1, s.shape[0]):
        v = s[c]
        if np.isnan(v):
            return c
        if v > top:
            best, top = c, v
    return best


@njit(cache=True)
def _link64(link, link_scale, s):
    """Label of float64 margins ``s`` (``(0, margin)`` when binary) under the plan's
    ``link`` (and ``link_scale``), in the library's arithmetic (``exp`` is C's, as
    LightGBM's ``std::exp``)."""
    if link == 3:  # GradientBoostingClassifier: margin >= 0
        return 1 if s[1] >= 0.0 else 0
    if link == 4:  # LightGBM binary: p = 1 / (1 + exp(-sigmoid * margin)), 1 iff p > 1 - p
        prob = 1.0 / (1.0 + np.exp(-(link_scale * s[1])))
        return 1 if prob > 1.0 - prob else 0
    if link == 5:  # LightGBM Common::Softmax, then the first argmax
        K = s.shape[0]
        wmax = s[0]
        for c in range(1, K):
            wmax = max(s[c], wmax)
        e = np.empty(K)
        wsum = 0.0
        for c in range(K):
            e[c] = np.exp(s[c] - wmax)
            wsum += e[c]
        for c in range(K):
            e[c] /= wsum
        return _argmax(e)
    return _argmax(s)  # first argmax; binary (0, margin): margin > 0


@njit(cache=True)
def _exact_label(
    K, live_pos, tree_class, fixed_vals, leaf_vals, base32, base64, margin, margin64, binary,
    link, link_scale, live_leaf,
):  # fmt: skip
    """The library's label from every tree's leaf, in tree order and its arithmetic (the
    plan's fields of those names; ``K`` classes)."""
    n = live_pos.shape[0]
    if margin64:
        s = np.empty(K)
        for c in range(K):
            s[c] = base64[c]
        for k in range(n):
            c = tree_class[k]
            pos = live_pos[k]
            s[c] += fixed_vals[k, c] if pos < 0 else leaf_vals[live_leaf[pos], c]
        return _link64(link, link_scale, s)
    if not margin:
        s = np.zeros(K)
        for k in range(n):
            pos = live_pos[k]
            for c in range(K):
                s[c] += fixed_vals[k, c] if pos < 0 else leaf_vals[live_leaf[pos], c]
        if n > 1:
            for c in range(K):
                s[c] /= n
        return _argmax(s)
    s32 = np.empty(K, dtype=np.float32)
    for c in range(K):
        s32[c] = base32[c]
    for k in range(n):
        c = tree_class[k]
        pos = live_pos[k]
        v = fixed_vals[k, c] if pos < 0 else leaf_vals[live_leaf[pos], c]
        s32[c] = s32[c] + np.float32(v)
    if binary:
        x = min(-s32[1], np.float32(88.7))
        denom = (np.float32(np.exp(np.float64(x))) + np.float32(1.0)) + np.float32(1e-16)
        return 1 if np.float32(1.0) / denom > np.float32(0.5) else 0
    if link == 2:  # float32 softmax, then first argmax of the probabilities
        wmax = s32[0]  # s32.max(): a NaN is the maximum
        for c in range(K):
            if np.isnan(s32[c]):
                wmax = s32[c]
                break
            if s32[c] > wmax:
                wmax = s32[c]
        e32 = np.empty(K, dtype=np.float32)
        wsum = 0.0
        for c in range(K):
            e32[c] = np.float32(np.exp(np.float64(s32[c] - wmax)))  # expf, rounded once
            wsum += e32[c]
        w32 = np.float32(wsum)
        for c in range(K):
            e32[c] = e32[c] / w32  # float32 / float32: float32, as e32 / np.float32(wsum)
        return _argmax(e32)
    return _argmax(s32)


@njit(cache=True, inline="always")
def _step(packed, bins, node, i):
    """One step of a walk: left child, or right (= left + 1) when the bin is above the cut."""
    w = packed[node]
    left = w & _LOW32
    cut = (w >> 32) & 0xFFFF
    return left + (np.int64(bins[w >> 48, i]) > cut)


@njit(cache=True, inline="always")
def _flat_step(packed, flat, shift, node, i):
    """:func:`_step` on the bins flattened, feature ``a``'s row starting at ``a << shift``
    (unsigned index arithmetic: no negative-index wraparound to check)."""
    w = np.uint64(packed[node])
    left = np.int64(w & np.uint64(0xFFFFFFFF))
    cut = np.int64((w >> np.uint64(32)) & np.uint64(0xFFFF))
    return left + (np.int64(flat[((w >> np.uint64(48)) << shift) + np.uint64(i)]) > cut)


@njit(cache=True, inline="always")
def _walk8(pk, flat, shift, root, d, i):
    """The leaf nodes draws ``i .. i + 7`` reach from ``root`` in ``d`` steps: eight walks
    at a time, in registers (independent chains of loads that overlap in the CPU)."""
    a0, a1 = _flat_step(pk, flat, shift, root, i), _flat_step(pk, flat, shift, root, i + 1)
    a2, a3 = _flat_step(pk, flat, shift, root, i + 2), _flat_step(pk, flat, shift, root, i + 3)
    a4, a5 = _flat_step(pk, flat, shift, root, i + 4), _flat_step(pk, flat, shift, root, i + 5)
    a6, a7 = _flat_step(pk, flat, shift, root, i + 6), _flat_step(pk, flat, shift, root, i + 7)
    for _ in range(d - 1):
        a0, a1 = _flat_step(pk, flat, shift, a0, i), _flat_step(pk, flat, shift, a1, i + 1)
        a2, a3 = _flat_step(pk, flat, shift, a2, i + 2), _flat_step(pk, flat, shift, a3, i + 3)
        a4, a5 = _flat_step(pk, flat, shift, a4, i + 4), _flat_step(pk, flat, shift, a5, i + 5)
        a6, a7 = _flat_step(pk, flat, shift, a6, i + 6), _flat_step(pk, flat, shift, a7, i + 7)
    return a0, a1, a2, a3, a4, a5, a6, a7


@njit(cache=True, inline="always")
def _walk1(pk, flat, shift, root, d, i):
    node = root
    for _ in range(d):
        node = _flat_step(pk, flat, shift, node, i)
    return node


@njit(cache=True)
def _walk_nodes(pk, flat, shift, root, d, n, out):
    """``out[i]``: the leaf node draw ``i < n`` reaches from ``root`` in ``d`` steps, eight
    walks at a time as :func:`_walk8` (for a single live tree; a function of arrays whose
    step is a plain call, not numba-inlined: compiled once, in under a second, and as quick)."""
    n8 = n - n % 8
    for i in range(0, n8, 8):
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = root
        for _ in range(d):
            a0, a1 = _next_node(pk, flat, shift, a0, i), _next_node(pk, flat, shift, a1, i + 1)
            a2, a3 = _next_node(pk, flat, shift, a2, i + 2), _next_node(pk, flat, shift, a3, i + 3)
            a4, a5 = _next_node(pk, flat, shift, a4, i + 4), _next_node(pk, flat, shift, a5, i + 5)
            a6, a7 = _next_node(pk, flat, shift, a6, i + 6), _next_node(pk, flat, shift, a7, i + 7)
        out[i], out[i + 1], out[i + 2], out[i + 3] = a0, a1, a2, a3
        out[i + 4], out[i + 5], out[i + 6], out[i + 7] = a4, a5, a6, a7
    for i in range(n8, n):
        node = root
        for _ in range(d):
            node = _next_node(pk, flat, shift, node, i)
        out[i] = node


@njit(cache=True)
def _next_node(packed, flat, shift, node, i):
    """:func:`_flat_step` as a plain function (LLVM inlines it; numba types it once)."""
    w = np.uint64(packed[node])
    left = np.int64(w & np.uint64(0xFFFFFFFF))
    cut = np.int64((w >> np.uint64(32)) & np.uint64(0xFFFF))
    return left + (np.int64(flat[((w >> np.uint64(48)) << shift) + np.uint64(i)]) > cut)


@njit(cache=True)
def _leaves_of(tree_root, tree_depth, packed, node_leaf, bins, i, live_leaf):
    """Every live tree's leaf row for draw ``i`` (the exact fallback; the plan's arrays of
    those names)."""
    for t in range(tree_root.shape[0]):
        node = tree_root[t]
        for _ in range(tree_depth[t]):
            node = _step(packed, bins, node, i)
        live_leaf[t] = node_leaf[node]


@njit(cache=True)
def _row_shift(width):
    """``log2(width)``: the bins' rows must have a power-of-two width (:func:`_labels`)."""
    shift = 0
    while (1 << shift) < width:
        shift += 1
    if (1 << shift) != width:
        raise ValueError("the bins' width must be a power of two")
    return np.uint64(shift)


@njit(cache=True, inline="always")
def _mask_words(off, qmask, qmask_t, bins, n, words, rows):
    """``words[g, i]``: for draw ``i``, the AND over the in-play features ``a`` of the leaf
    masks ``qmask[off[a] + a + bins[a, i], g]`` (the plan's arrays;
    :func:`reliquant.trees.live_trees._leaf_masks`):
    byte ``j`` keeps the one leaf tree ``8 g + j`` reaches. Few words per draw (at most
    ``MASK_ACROSS_MAX``): word by word, across the block's draws (from ``qmask_t``); more:
    feature by feature, across a draw's words (vectorised; ``rows`` ``(>= n, G)`` holds them
    draw-major), then transposed."""
    A, G = off.shape[0] - 1, qmask.shape[1]
    if G <= MASK_ACROSS_MAX:
        for g in range(G):
            col, wg = qmask_t[g], words[g]
            b = bins[0]
            for i in range(n):
                wg[i] = col[b[i]]
            for a in range(1, A):
                cola = col[off[a] + a :]
                b = bins[a]
                for i in range(n):
                    wg[i] &= cola[b[i]]
        return
    b = bins[0]
    for i in range(n):
        ri, q = rows[i], qmask[b[i]]
        for g in range(G):
            ri[g] = q[g]
    for a in range(1, A):  # a feature at a time: no chain of dependent updates per draw
        base = off[a] + a
        b = bins[a]
        for i in range(n):
            ri, q = rows[i], qmask[base + b[i]]
            for g in range(G):
                ri[g] &= q[g]
    for g in range(G):
        wg = words[g]
        for i in range(n):
            wg[i] = rows[i, g]


@njit(cache=True, inline="always")
def _add_mask_leaves(off, qmask, qmask_t, qval, lclass, bins, n, scores):
    """Add every live tree's leaf score to ``scores`` (tree by tree, in tree order) from the
    leaf masks (:func:`_mask_words`): the one bit of tree ``t``'s byte ``x`` is its leaf
    ``j``, read as three bit tests (``x & 0xAA``, ``0xCC``, ``0xF0``: the bits of ``j``) that
    select ``qval[t, j]`` (branch-free, vectorised across the draws; ``lclass``: the
    plan's ``live_class``)."""
    G = qmask.shape[1]
    words = np.empty((G, n), dtype=np.uint64)
    rows = np.empty((n if G > MASK_ACROSS_MAX else 0, G), dtype=np.uint64)
    _mask_words(off, qmask, qmask_t, bins, n, words, rows)
    m1, m2, m4 = np.uint64(0xAA), np.uint64(0xCC), np.uint64(0xF0)
    for t in range(qval.shape[0]):
        s = scores[lclass[t]]
        v = qval[t]
        v0, v1, v2, v3, v4, v5, v6, v7 = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
        w = words[t >> 3]
        sh = np.uint64(8 * (t & 7))
        for i in range(n):
            x = w[i] >> sh
            j1, j2 = (x & m1) != 0, (x & m2) != 0
            lo = (v3 if j1 else v2) if j2 else (v1 if j1 else v0)
            hi = (v7 if j1 else v6) if j2 else (v5 if j1 else v4)
            s[i] += hi if (x & m4) != 0 else lo


@njit(cache=True, inline="always")
def _fast_label(scores, i, K, eps):
    """The label of draw ``i`` from its summed scores ``scores[:, i]``: the first argmax
    when it leads every other class by more than ``eps``, else -1 (a near-tie, for the
    exact fallback). The one decision of :func:`_block_labels`, for walked draws and for
    the labels of a single live tree's leaves (:func:`_leaf_label`) alike."""
    best = 0
    for c in range(1, K):
        if scores[c, i] > scores[best, i]:
            best = c
    gap = np.inf
    for c in range(K):
        if c != best and scores[best, i] - scores[c, i] < gap:
            gap = scores[best, i] - scores[c, i]
    return best if gap > eps else -1


@njit(cache=True)
def _leaf_label(
    node, const, leaf_vals, node_val, node_leaf, k, eps, live_pos, tree_class, fixed_vals,
    base32, base64, margin, margin64, binary, link, link_scale,
):  # fmt: skip
    """The label of every draw whose walk of the plan's one live tree ends on node ``node``
    (the plan's arrays of those names; ``k``: the tree's ``live_class``): the scores
    :func:`_block_labels` sums for such a draw (the fixed trees' sum, plus the leaf's scores,
    one addition per class or only class ``k``'s), then the same decision
    (:func:`_fast_label`, :func:`_exact_label` on a near-tie)."""
    K = const.shape[0]
    s = np.empty((K, 1))
    for c in range(K):
        s[c, 0] = const[c]
    leaf = node_leaf[node]
    if k >= 0:
        s[k, 0] += node_val[node]
    else:
        for c in range(K):
            s[c, 0] += leaf_vals[leaf, c]
    label = _fast_label(s, 0, K, eps)
    if label >= 0:
        return label
    live_leaf = np.empty(1, dtype=np.int64)
    live_leaf[0] = leaf
    return _exact_label(
        K, live_pos, tree_class, fixed_vals, leaf_vals, base32, base64, margin, margin64,
        binary, link, link_scale, live_leaf,
    )  # fmt: skip


@njit(cache=True)
def _block_labels(p, bins, n, scores, out, memo):
    """Labels of the first ``n`` draws of ``bins`` (feature-major ``(A, w)``, ``w`` a power
    of two; module docstring): the scores ``scores[c, i]`` start from the fixed trees' sum
    and add each live tree's leaf in tree order, the leaves found from the leaf masks when
    the plan has them (:func:`_add_mask_leaves`), else tree by tree by eight walks at a time
    (:func:`_walk8`; a one-class tree's leaf value read from ``p.node_val``).

    With exactly one live tree (no masks) and a ``memo`` of one int64 per node (-1 when
    unknown; kept by the caller across its blocks, :func:`_leaf_memo`), a draw's label is a
    function of the leaf its walk reaches: the draws are walked, and each leaf's label is
    computed once by :func:`_leaf_label` (the same sums and decision) and then looked up;
    ``scores`` is then not filled. An empty ``memo`` (``(0,)``) always sums."""
    const, packed, leaf_vals, roots = p.const_scores, p.packed, p.leaf_vals, p.tree_root
    node_leaf, node_val, depth, lclass = p.node_leaf, p.node_val, p.tree_depth, p.live_class
    K = const.shape[0]
    flat = bins.reshape(-1)
    shift = _row_shift(bins.shape[1])
    n8 = n - n % 8
    masked = p.qmask.shape[0] > 0
    if roots.shape[0] == 1 and not masked and memo.shape[0] == packed.shape[0]:
        _walk_nodes(packed, flat, shift, roots[0], depth[0], n, out)  # each draw's leaf
        for i in range(n):  # its label
            node = out[i]
            label = memo[node]
            if label < 0:
                label = _leaf_label(
                    node, const, leaf_vals, node_val, node_leaf, lclass[0], p.eps, p.live_pos,
                    p.tree_class, p.fixed_vals, p.base32, p.base64, p.margin, p.margin64,
                    p.binary, p.link, p.link_scale,
                )  # fmt: skip
                memo[node] = label
            out[i] = label
        return
    for c in range(K):
        for i in range(n):
            scores[c, i] = const[c]
    if masked:  # every live tree from the leaf masks
        _add_mask_leaves(p.off, p.qmask, p.qmask_t, p.qval, lclass, bins, n, scores)
    for t in range(0 if masked else roots.shape[0]):  # else tree by tree, walking
        root = roots[t]
        d = depth[t]
        if d == 0:
            continue
        k = lclass[t]
        if k >= 0:
            s = scores[k]
            for i in range(0, n8, 8):
                a0, a1, a2, a3, a4, a5, a6, a7 = _walk8(packed, flat, shift, root, d, i)
                s[i] += node_val[a0]
                s[i + 1] += node_val[a1]
                s[i + 2] += node_val[a2]
                s[i + 3] += node_val[a3]
                s[i + 4] += node_val[a4]
                s[i + 5] += node_val[a5]
                s[i + 6] += node_val[a6]
                s[i + 7] += node_val[a7]
            for i in range(n8, n):
                s[i] += node_val[_walk1(packed, flat, shift, root, d, i)]
        else:
            for i in range(0, n8, 8):
                leaves = _walk8(packed, flat, shift, root, d, i)
                for j in range(8):
                    leaf = node_leaf[leaves[j]]
                    for c in range(K):
                        scores[c, i + j] += leaf_vals[leaf, c]
            for i in range(n8, n):
                leaf = node_leaf[_walk1(packed, flat, shift, root, d, i)]
                for c in range(K):
                    scores[c, i] += leaf_vals[leaf, c]
    live_leaf = np.empty(roots.shape[0], dtype=np.int64)
    for i in range(n):
        label = _fast_label(scores, i, K, p.eps)
        if label < 0:  # near-tie: the library's own arithmetic, every tree in order
            _leaves_of(roots, depth, packed, node_leaf, bins, i, live_leaf)
            label = _exact_label(
                K, p.live_pos, p.tree_class, p.fixed_vals, leaf_vals, p.base32, p.base64,
                p.margin, p.margin64, p.binary, p.link, p.link_scale, live_leaf,
            )  # fmt: skip
        out[i] = label


@njit(cache=True, inline="always")
def _leaf_memo(p):
    """A fresh leaf-label memo for :func:`_block_labels`: one -1 per node when the plan has
    exactly one live tree (and no leaf masks), else empty (the general path)."""
    if p.tree_root.shape[0] == 1 and p.qmask.shape[0] == 0:
        memo = np.empty(p.packed.shape[0], dtype=np.int64)
        for j in range(memo.shape[0]):
            memo[j] = -1
        return memo
    return np.zeros(0, dtype=np.int64)


@njit(cache=True)
def _labels(p, bins, n, scores, out):
    """:func:`_block_labels` that always sums: ``scores`` filled for every plan (for tests
    that read the scores; the kernels call :func:`_block_labels` with a memo)."""
    _block_labels(p, bins, n, scores, out, np.zeros(0, dtype=np.int64))


@njit(cache=True, inline="always")
def _draw_bins(p, state, n, bins):
    """Bins of ``n`` draws of the plan's noise (steps 1 and 2 of the module docstring)."""
    if p.correlated:
        _correlated_bins(p, state, bins, n)
    else:
        _independent_bins(p.thr, p.guide, p.goff, p.gshift, p.off, state, bins, n)
        if p.cum.shape[0] > 1:
            _stratify(p.cum, p.box_ptr, p.ov_feat, p.ov_lo, p.ov_hi, p.off, p.cdf, state, bins, n)


@njit(cache=True, nogil=True)
def count_chunk(p, state0, n, z):
    """Number of draws (of ``n``) that keep label ``p.y``: drawn from the stream that starts
    at ``state0`` when ``z`` has no rows (``NO_SCORES``), else those of a correlated plan
    whose chunk's normal scores ``z`` (``(A, >= n)``, :func:`chunk_normal_scores`) are made
    already (the same bins, labels and count). One kernel for both (compiled once)."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = state0
    A, K = p.off.shape[0] - 1, p.const_scores.shape[0]
    bins = np.zeros((A, BLOCK), dtype=np.int16)
    scores = np.zeros((K, BLOCK))
    out = np.zeros(BLOCK, dtype=np.int64)
    stored = z.shape[0] > 0
    memo = _leaf_memo(p)
    agree = 0
    for start in range(0, n, BLOCK):
        m = min(BLOCK, n - start)
        if stored:
            _bins_of_scores(p.zcut, p.off, z, start, bins, m)
        else:
            _draw_bins(p, state, m, bins)
        _block_labels(p, bins, m, scores, out, memo)
        for i in range(m):
            agree += out[i] == p.y
    return agree


NO_SCORES = np.zeros((0, 0))  # count_chunk's z when it draws the scores itself


@njit(cache=True, nogil=True)
def chunk_normal_scores(chol, state0, n, z):
    """``z[:, :n]``: the normal scores of a correlated chunk's ``n`` draws (its stream from
    ``state0``, block by block as :func:`count_chunk` draws them)."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = state0
    for start in range(0, n, BLOCK):
        _normal_scores(chol, state, z, start, min(BLOCK, n - start))


@njit(cache=True)
def sample_bins_kernel(p, state0, n):
    state = np.empty(1, dtype=np.uint64)
    state[0] = state0
    A, K = p.off.shape[0] - 1, p.const_scores.shape[0]
    width = 1
    while width < n:
        width *= 2
    bins = np.zeros((A, width), dtype=np.int16)
    labels = np.zeros(n, dtype=np.int64)
    scores = np.zeros((K, n))
    _draw_bins(p, state, n, bins)
    _block_labels(p, bins, n, scores, labels, _leaf_memo(p))
    out = np.empty((n, A), dtype=np.int64)
    for i in range(n):
        for a in range(A):
            out[i, a] = bins[a, i]
    return out, labels


@njit(cache=True, nogil=True)
def labels_of_bins_kernel(p, bins):
    n = bins.shape[0]
    out = np.zeros(n, dtype=np.int64)
    K = p.const_scores.shape[0]
    memo = _leaf_memo(p)
    for b in range((n + BLOCK - 1) // BLOCK):
        s, e = b * BLOCK, min(n, (b + 1) * BLOCK)
        scores = np.zeros((K, BLOCK))
        res = np.zeros(BLOCK, dtype=np.int64)
        block = np.zeros((bins.shape[1], BLOCK), dtype=np.int16)
        for i in range(e - s):  # the block's rows, feature-major
            for a in range(bins.shape[1]):
                block[a, i] = bins[s + i, a]
        _block_labels(p, block, e - s, scores, res, memo)
        for i in range(e - s):
            out[s + i] = res[i]
    return out


@njit(cache=True, nogil=True)
def bins_of_kernel(p, X):
    n, A = X.shape[0], p.off.shape[0] - 1
    out = np.empty((n, A), dtype=np.int16)
    for i in range(n):
        for a in range(A):
            out[i, a] = _bin_of_value(p.xcut, p.off[a], p.off[a + 1], X[i, p.features[a]])
    return out


@njit(cache=True)
def bins_only_kernel(p, state0, n):
    """The kernel's first step alone: bins of ``n`` plain draws of independent noise, block by
    block (a checksum of the bins is returned so that nothing is optimised away)."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = state0
    bins = np.zeros((p.off.shape[0] - 1, BLOCK), dtype=np.int16)
    acc = 0
    for _ in range(0, n, BLOCK):
        _independent_bins(p.thr, p.guide, p.goff, p.gshift, p.off, state, bins, BLOCK)
        acc += bins[0, 0]
    return acc


def dispatchers() -> dict[str, Dispatcher]:
    """The module's numba kernels (every ``@njit`` function, helpers included) by name: their
    ``signatures``, and ``stats.cache_hits`` / ``stats.cache_misses`` (loaded from numba's
    disk cache / compiled in this process), ``stats.cache_path``."""
    return {name: f for name, f in globals().items() if isinstance(f, Dispatcher)}
