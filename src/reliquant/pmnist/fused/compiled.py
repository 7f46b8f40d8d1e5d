"""Every compiled (numba) function of the fused pipelines: the per-pixel helpers, scipy's 1-D
filters, NumPy's pairwise sum of 784 values, and one kernel per corruption
(``images (n, 784) uint8 -> out (n, 784) uint8``).

The float operations and their order are those of :mod:`reliquant.pmnist.corruptions`
(:mod:`reliquant.pmnist.fused`). Every ``@njit`` function and every constant they read lives
in this one module, on purpose: numba's disk cache (``cache=True``) keys a compiled function by
its own file, so a kernel that called a helper of another file would, after that helper was
edited, still load the machine code compiled from the old helper (numba follows no call into
another file; globals are frozen into the machine code too). ``tests/core/test_import_graph.py``
names this module as an exception to the 500-line limit, for this reason.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from reliquant.pmnist import corruptions as C
from reliquant.pmnist.streams import fill_normal, fill_uniform

__all__ = [
    "JIT",
    "N",
    "NP",
    "SUM784_SIZES",
    "SUM784_STARTS",
    "TO_FLOAT",
    "contrast_kernel",
    "defocus_blur_kernel",
    "fill_fields",
    "fog_kernel",
    "frost_kernel",
    "gaussian_noise_kernel",
    "impulse_noise_kernel",
    "lut_kernel",
    "motion_blur_kernel",
    "pixelation_kernel",
    "shot_noise_kernel",
    "snow_kernel",
    "zoom_blur_kernel",
    "salt_threshold",
    "sum784",
]


N = C.SIDE
NP = C.N_PIXELS


# --------------------------------------------------------------------------------------
# per-pixel helpers: the batch code's expressions on flat (784,) images. Loops are kept
# simple (contiguous, no table look-up inside arithmetic) so that LLVM vectorises them;
# vectorising changes no result (each lane does the scalar operations in the same order).
# --------------------------------------------------------------------------------------

#: ``u / 255 * 2 - 1`` of every grey value (the batch code's expression, evaluated by NumPy).
TO_FLOAT = np.arange(256, dtype=np.uint8).astype(np.float64) / 255.0 * 2.0 - 1.0

#: numba options of every kernel and helper: IEEE division (no zero check: every divisor is
#: >= 1 or guarded), compiled once and cached on disk. Helpers are ordinary compiled functions,
#: not ``inline="always"``: LLVM inlines them where it pays (without fast-math it reorders no
#: float operation, so the bytes are the same), and numba's own IR inlining cost seconds of
#: compilation per kernel, paid by every job of a fresh checkout (a helper is compiled once
#: and cached; see also the block arrays of :func:`_sum784` and the array copy in
#: :func:`motion_blur_kernel`).
JIT = {"cache": True, "error_model": "numpy"}


@njit(**JIT)
def _to_uint8(y):
    """``trunc((clip(y, -1, 1) * 0.5 + 0.5) * 255)``."""
    y = min(max(y, -1.0), 1.0)
    return np.uint8((y * 0.5 + 0.5) * 255.0)


@njit(**JIT)
def _r101(i, n):
    if i < 0:
        return -i
    if i >= n:
        return 2 * (n - 1) - i
    return i


@njit(**JIT)
def _load(img, x):
    """``x = u / 255 * 2 - 1`` (a table look-up) for one flat uint8 image."""
    for t in range(NP):
        x[t] = TO_FLOAT[img[t]]


@njit(**JIT)
def _store(y, out):
    for t in range(NP):
        out[t] = _to_uint8(y[t])


@njit(**JIT)
def _draw(fields, kinds, states, i, ih, il):
    """The fields of image ``i`` (``fields[f]`` flat, 784 draws each, registry order)."""
    sh, sl = states[i, 0], states[i, 1]
    for f in range(kinds.size):
        if kinds[f] == 0:
            sh, sl = fill_normal(fields[f], sh, sl, ih, il)
        else:
            sh, sl = fill_uniform(fields[f], sh, sl, ih, il)


# --------------------------------------------------------------------------------------
# scipy.ndimage's 1-D filters (mode "mirror" = reflect-101, origin 0) down the columns of
# one (28, 28) image, all 28 columns at once; along the rows: transpose, filter down,
# transpose back. Each output is the scipy line's sum, term by term in its order.
# --------------------------------------------------------------------------------------


@njit(**JIT)
def _copy2(a, b):
    """``b[:, :] = a`` for (28, 28) arrays, element by element (numba compiles a slice
    assignment's shape-mismatch message for seconds)."""
    for r in range(N):
        for c in range(N):
            b[r, c] = a[r, c]


@njit(**JIT)
def _transpose(a, b):
    for r in range(N):
        for c in range(N):
            b[c, r] = a[r, c]


@njit(**JIT)
def _box_down(x, y, k, acc):
    """``uniform_filter1d`` down the columns: running sum ``s += x[i+k-1] - x[i-1]``, ``s / k``."""
    h = k // 2
    kf = float(k)
    acc[:] = 0.0
    for t in range(k):
        row = _r101(t - h, N)
        for c in range(N):
            acc[c] += x[row, c]
    for c in range(N):
        y[0, c] = acc[c] / kf
    for t in range(1, N):
        ra = _r101(t - 1 + k - h, N)
        rb = _r101(t - 1 - h, N)
        for c in range(N):
            acc[c] += x[ra, c] - x[rb, c]
            y[t, c] = acc[c] / kf


@njit(**JIT)
def _corr_down(x, y, w, sym):
    """``correlate1d`` down the columns (``sym``: 1 symmetric, -1 antisymmetric, 0 general).

    General: ``y = x[+k-1] w[k-1]``, then ``+= x[+q] w[q]`` for q = 0..k-2; symmetric:
    ``y = x[+h] w[h]``, then ``+= (x[+q] +/- x[+2h-q]) w[q]`` (offsets from the first tap).
    """
    k = w.size
    h = k // 2
    if sym == 0:
        for t in range(N):
            ra = _r101(t + k - 1 - h, N)
            wa = w[k - 1]
            for c in range(N):
                y[t, c] = x[ra, c] * wa
            for q in range(k - 1):
                rq = _r101(t + q - h, N)
                wq = w[q]
                for c in range(N):
                    y[t, c] += x[rq, c] * wq
    else:
        for t in range(N):
            wh = w[h]
            for c in range(N):
                y[t, c] = x[t, c] * wh
            for q in range(h):
                r1 = _r101(t + q - h, N)
                r2 = _r101(t + h - q, N)
                wq = w[q]
                if sym > 0:
                    for c in range(N):
                        y[t, c] += (x[r1, c] + x[r2, c]) * wq
                else:
                    for c in range(N):
                        y[t, c] += (x[r1, c] - x[r2, c]) * wq


#: NumPy's pairwise sum of 784 values in eight blocks: their starts and sizes. Read from arrays,
#: so that :func:`_sum_block` is compiled once: constant arguments would compile it once per
#: value (numba types them as literals).
SUM784_STARTS = np.array([0, 96, 192, 288, 392, 488, 584, 680], dtype=np.int64)
SUM784_SIZES = np.array([96, 96, 96, 104, 96, 96, 96, 104], dtype=np.int64)


@njit(**JIT)
def _sum_block(a, lo, n):
    """NumPy's pairwise sum of ``a[lo : lo + n]`` for n <= 128 (8 accumulators)."""
    if n < 8:
        res = 0.0
        for t in range(lo, lo + n):
            res += a[t]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    t = 8
    while t < n - n % 8:
        r0 += a[lo + t]
        r1 += a[lo + t + 1]
        r2 += a[lo + t + 2]
        r3 += a[lo + t + 3]
        r4 += a[lo + t + 4]
        r5 += a[lo + t + 5]
        r6 += a[lo + t + 6]
        r7 += a[lo + t + 7]
        t += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while t < n:
        res += a[lo + t]
        t += 1
    return res


@njit(**JIT)
def _sum784(a):
    """NumPy's pairwise sum of 784 values: halves of 392 = (96 + 96) + (96 + 104)."""
    s, m = SUM784_STARTS, SUM784_SIZES
    q1 = (_sum_block(a, s[0], m[0]) + _sum_block(a, s[1], m[1])) + (
        _sum_block(a, s[2], m[2]) + _sum_block(a, s[3], m[3])
    )
    q2 = (_sum_block(a, s[4], m[4]) + _sum_block(a, s[5], m[5])) + (
        _sum_block(a, s[6], m[6]) + _sum_block(a, s[7], m[7])
    )
    return q1 + q2


# --------------------------------------------------------------------------------------
# the kernels, one per corruption: images (n, 784) uint8 -> out (n, 784) uint8
# --------------------------------------------------------------------------------------


@njit(**JIT)
def lut_kernel(images, out, table):
    a = images.reshape(-1)
    b = out.reshape(-1)
    for t in range(a.size):
        b[t] = table[a[t]]


@njit(**JIT)
def sum784(a):
    """:func:`_sum784` of a (784,) float64 array (for the tests)."""
    return _sum784(a)


@njit(**JIT)
def contrast_kernel(images, out, c):
    x = np.empty(NP)
    y = np.empty(NP)
    g = 1.0 + c
    for i in range(images.shape[0]):
        _load(images[i], x)
        mean = _sum784(x) / NP
        for t in range(NP):
            y[t] = (x[t] - mean) * g
        _store(y, out[i])


@njit(**JIT)
def defocus_blur_kernel(images, out, k, a):
    x = np.empty(NP)
    y = np.empty(NP)
    t1 = np.empty((N, N))
    t2 = np.empty((N, N))
    t3 = np.empty((N, N))
    b = np.empty((N, N))
    acc = np.empty(N)
    x2 = x.reshape(N, N)
    bf = b.reshape(NP)
    w = 1.0 - a
    for i in range(images.shape[0]):
        _load(images[i], x)
        if k == 1:
            _copy2(x2, b)
        else:
            _box_down(x2, t1, k, acc)
            _transpose(t1, t2)
            _box_down(t2, t3, k, acc)
            _transpose(t3, b)
        for t in range(NP):
            y[t] = bf[t] * a + x[t] * w
        _store(y, out[i])


@njit(**JIT)
def fog_kernel(images, out, states, ih, il, kinds, mask, f, noise_std):
    x = np.empty(NP)
    y = np.empty(NP)
    fields = np.empty((kinds.size, NP))
    w = 1.0 - f
    for i in range(images.shape[0]):
        _load(images[i], x)
        _draw(fields, kinds, states, i, ih, il)
        z = fields[0]
        for t in range(NP):
            m = min(max(mask[t] + noise_std * z[t], 0.0), 1.0)
            y[t] = x[t] * w + m * f
        _store(y, out[i])


@njit(**JIT)
def frost_kernel(images, out, states, ih, il, kinds, g, sym, field_std, threshold, mns, below, amp):
    x = np.empty(NP)
    y = np.empty(NP)
    mk = np.empty(NP)
    t1 = np.empty((N, N))
    t2 = np.empty((N, N))
    t3 = np.empty((N, N))
    b = np.empty(NP)
    mk2 = mk.reshape(N, N)
    b2 = b.reshape(N, N)
    fields = np.empty((kinds.size, NP))
    for i in range(images.shape[0]):
        _load(images[i], x)
        _draw(fields, kinds, states, i, ih, il)
        z1, z2, z3 = fields[0], fields[1], fields[2]
        for t in range(NP):
            v = 1.0 if field_std * z1[t] >= threshold else -1.0
            mk[t] = min(max(v + mns * z2[t], -1.0), 1.0)
        _corr_down(mk2, t1, g, sym)
        _transpose(t1, t2)
        _corr_down(t2, t3, g, sym)
        _transpose(t3, b2)
        for t in range(NP):
            y[t] = x[t] + (amp * z3[t] if b[t] < below else 0.0)
        _store(y, out[i])


@njit(**JIT)
def gaussian_noise_kernel(images, out, states, ih, il, kinds, mean, std):
    x = np.empty(NP)
    y = np.empty(NP)
    fields = np.empty((kinds.size, NP))
    for i in range(images.shape[0]):
        _load(images[i], x)
        _draw(fields, kinds, states, i, ih, il)
        z = fields[0]
        for t in range(NP):
            y[t] = x[t] + (mean + std * z[t])
        _store(y, out[i])


@njit(**JIT)
def _salt_threshold(u, m, counts, cand):
    """The m-th smallest key of ``u`` and whether another key equals it (a tie).

    ``u <= threshold`` is then the set of the m smallest keys (without a tie): the bucket
    ``int(256 u)`` that holds the m-th key is found by counting, and only it is sorted.
    """
    if m <= 0:
        return -1.0, False
    if m >= u.size:
        return 2.0, False
    counts[:] = 0
    for t in range(u.size):
        counts[int(u[t] * 256.0)] += 1
    below = 0
    bucket = 0
    while below + counts[bucket] < m:
        below += counts[bucket]
        bucket += 1
    nc = 0
    for t in range(u.size):
        if int(u[t] * 256.0) == bucket:
            cand[nc] = u[t]
            nc += 1
    for a in range(1, nc):  # insertion sort (np.sort's values; a bucket holds a few keys)
        v = cand[a]
        b = a - 1
        while b >= 0 and cand[b] > v:
            cand[b + 1] = cand[b]
            b -= 1
        cand[b + 1] = v
    thr = cand[m - below - 1]
    return thr, (m - below < nc and cand[m - below] == thr)


@njit(**JIT)
def salt_threshold(u, m):
    """:func:`_salt_threshold` of a 1-D array of keys in [0, 1) (for the tests)."""
    return _salt_threshold(u, m, np.zeros(256, dtype=np.int64), np.empty(u.size))


@njit(**JIT)
def impulse_noise_kernel(images, out, states, ih, il, kinds, m, table):
    """Salt the ``m`` smallest keys: ``out = table[salted, u]`` (rows: ``x`` and ``x + amount``
    through the pipeline). Returns the images whose m-th key is tied (to redo)."""
    fields = np.empty((kinds.size, NP))
    counts = np.zeros(256, dtype=np.int64)
    cand = np.empty(NP)
    tied = np.zeros(images.shape[0], dtype=np.bool_)
    flat = table.reshape(-1)
    for i in range(images.shape[0]):
        _draw(fields, kinds, states, i, ih, il)
        u = fields[0]
        thr, tied[i] = _salt_threshold(u, m, counts, cand)
        img = images[i]
        o = out[i]
        for t in range(NP):
            o[t] = flat[(u[t] <= thr) * 256 + img[t]]
    return tied


@njit(**JIT)
def motion_blur_kernel(images, out, k, cols):
    """Box ``k`` down the columns, then column ``j`` of the result is column ``cols[j]``."""
    x = np.empty(NP)
    y = np.empty(NP)
    b = np.empty((N, N))
    acc = np.empty(N)
    x2 = x.reshape(N, N)
    for i in range(images.shape[0]):
        _load(images[i], x)
        if k == 1:
            _copy2(x2, b)
        else:
            _box_down(x2, b, k, acc)
        for r in range(N):
            for c in range(N):
                y[r * N + c] = b[r, cols[c]]
        _store(y, out[i])


@njit(**JIT)
def pixelation_kernel(images, out, starts, cols, weights, s, idx):
    """Area resampling (the sparse matrix row by row, terms in order), nearest up, min-max.

    Both passes run over contiguous rows: the first on the image, the second on the
    transposed result (``small_t[o, r]`` is ``small[r, o]``).
    """
    x = np.empty(NP)
    y = np.empty(NP)
    rows = np.empty((s, N))
    rows_t = np.empty((N, s))
    small_t = np.empty((s, s))
    x2 = x.reshape(N, N)
    for i in range(images.shape[0]):
        _load(images[i], x)
        for o in range(s):  # along axis 1: rows[o] = sum_j A[o, j] x[j]
            rows[o, :] = 0.0
            for e in range(starts[o], starts[o + 1]):
                we = weights[e]
                j = cols[e]
                for c in range(N):
                    rows[o, c] += we * x2[j, c]
        for o in range(s):
            for c in range(N):
                rows_t[c, o] = rows[o, c]
        for o in range(s):  # along axis 2: small[:, o] = sum_j A[o, j] rows[:, j]
            small_t[o, :] = 0.0
            for e in range(starts[o], starts[o + 1]):
                we = weights[e]
                j = cols[e]
                for r in range(s):
                    small_t[o, r] += we * rows_t[j, r]
        for r in range(N):
            for c in range(N):
                y[r * N + c] = small_t[idx[c], idx[r]]
        lo = y[0]
        hi = y[0]
        for t in range(NP):
            lo = min(lo, y[t])
            hi = max(hi, y[t])
        span = hi - lo
        if span > 0:
            for t in range(NP):
                y[t] = (y[t] - lo) / span * 2.0 - 1.0
        _store(y, out[i])


@njit(**JIT)
def shot_noise_kernel(images, out, states, ih, il, kinds, breaks):
    """``x + #{m : breaks[m] <= u}`` (:func:`poisson_breaks`: the inversion's steps in u)."""
    x = np.empty(NP)
    y = np.empty(NP)
    fields = np.empty((kinds.size, NP))
    nb = breaks.size
    n4 = min(nb, 4)
    for i in range(images.shape[0]):
        _load(images[i], x)
        _draw(fields, kinds, states, i, ih, il)
        u = fields[0]
        for t in range(NP):
            v = u[t]
            k = 0
            for m in range(n4):  # no branch for the common counts 0..3
                k += v >= breaks[m]
            if k == 4:
                while k < nb and breaks[k] <= v:
                    k += 1
            y[t] = x[t] + float(k)
        _store(y, out[i])


@njit(**JIT)
def snow_kernel(images, out, states, ih, il, kinds, p, k, table):
    """``out = table[flake, u]``: a flake where the k x k window (reflect-101) of ``u < p``
    is all true (each row of the mask a 28-bit word: the window is k shifted ANDs)."""
    fields = np.empty((kinds.size, NP))
    bits = np.empty(N, dtype=np.uint64)
    down = np.empty(N, dtype=np.uint64)
    flat = table.reshape(-1)
    h = k // 2
    one = np.uint64(1)
    full = np.uint64((1 << N) - 1)
    for i in range(images.shape[0]):
        _draw(fields, kinds, states, i, ih, il)
        u = fields[0]
        for r in range(N):
            word = np.uint64(0)
            for c in range(N):
                word |= np.uint64(u[r * N + c] < p) << np.uint64(c)
            bits[r] = word
        for r in range(N):  # the window's rows
            word = bits[_r101(r - h, N)]
            for d in range(1, k):
                word &= bits[_r101(r + d - h, N)]
            down[r] = word
        img = images[i]
        o = out[i]
        for r in range(N):  # then its columns: bit t of ext is column r101(t - h)
            word = down[r]
            ext = word << np.uint64(h)
            for j in range(1, h + 1):
                ext |= ((word >> np.uint64(j)) & one) << np.uint64(h - j)
                ext |= ((word >> np.uint64(N - 1 - j)) & one) << np.uint64(N - 1 + h + j)
            flake = ext
            for d in range(1, k):
                flake &= ext >> np.uint64(d)
            flake &= full
            for c in range(N):
                f = (flake >> np.uint64(c)) & one
                o[r * N + c] = flat[f * np.uint64(256) + np.uint64(img[r * N + c])]


@njit(**JIT)
def zoom_blur_kernel(images, out, w, sym, k):
    x = np.empty(NP)
    t1 = np.empty((N, N))
    t2 = np.empty((N, N))
    t3 = np.empty((N, N))
    b = np.empty(NP)
    acc = np.empty(N)
    x2 = x.reshape(N, N)
    b2 = b.reshape(N, N)
    for i in range(images.shape[0]):
        _load(images[i], x)
        if k > 1:
            _corr_down(x2, t1, w, sym)
            _transpose(t1, t2)
            _box_down(t2, t3, k, acc)
            _transpose(t3, b2)
            _store(b, out[i])
        else:
            _store(x, out[i])


@njit(**JIT)
def fill_fields(fields, kinds, states, ih, il):
    """``fields[f, r]`` = field ``f`` of image ``r`` (flat, 784 draws)."""
    for r in range(states.shape[0]):
        _draw(fields[:, r], kinds, states, r, ih, il)
