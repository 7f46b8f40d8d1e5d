"""What is orchestrated: the draws of a plan that keep its label, counted chunk by chunk in
threads (:func:`count_agree`), the kernels compiled for a plan's type first (:func:`compile_for`),
and every kernel called from Python with its argument types (:func:`kernel_signatures`).
"""

from __future__ import annotations

import time

import numpy as np
from numba import typeof, types
from numba.core.dispatcher import Dispatcher

from reliquant.trees.kernel.compiled import (
    NO_SCORES,
    bins_of_kernel,
    chunk_normal_scores,
    count_chunk,
    hash_states,
    labels_of_bins_kernel,
    sample_bins_kernel,
)
from reliquant.trees.kernel.score_store import active_store
from reliquant.trees.kernel.threads import in_threads
from reliquant.trees.plan import Plan

__all__ = [
    "compile_for",
    "count_agree",
    "kernel_signatures",
]


def count_agree(plan: Plan, seeds: np.ndarray, chunk: int, total: int) -> np.ndarray:
    """Per chunk (in chunk order), how many of its draws keep ``plan.y``; ``total`` draws
    in ``len(seeds)`` chunks of ``chunk`` (the last may be shorter). Within
    :func:`shared_normal_scores`, a correlated plan's normal scores come from its store."""
    if total > len(seeds) * chunk or total <= (len(seeds) - 1) * chunk:
        raise ValueError(f"{total} draws do not fill {len(seeds)} chunks of {chunk}")
    ns = [min(int(chunk), int(total) - c * int(chunk)) for c in range(len(seeds))]
    stored, store = None, active_store()
    if store is not None and plan.correlated and plan.n_in_play:
        stored = store.rows(plan.chol, seeds, int(chunk), int(total))
    if stored is not None:
        arena, rows = stored
        if len(seeds) == 1:
            z = arena[rows[0]]
            return np.array([count_chunk(plan, np.uint64(0), int(total), z)], dtype=np.int64)
        return in_threads(
            lambda c: count_chunk(plan, np.uint64(0), ns[c], arena[rows[c]]), len(seeds)
        )
    if len(seeds) == 1:  # one chunk: no thread start-up
        return np.array([count_chunk(plan, seeds[0], int(total), NO_SCORES)], dtype=np.int64)
    return in_threads(lambda c: count_chunk(plan, seeds[c], ns[c], NO_SCORES), len(seeds))


def compile_for(plan: Plan) -> float:
    """Make sure the kernels of :func:`count_agree` are compiled for ``plan``'s numba type
    (loaded from numba's disk cache, or compiled when met for the first time), without
    running them (no thread is started); returns the seconds it took (tens of microseconds
    once they are compiled)."""
    t0 = time.perf_counter()
    store = active_store() is not None and bool(plan.correlated)
    key = (_type_key(plan), store)
    if key in _COMPILED:  # numba.typeof(plan) alone takes 0.2 to 1 ms
        return time.perf_counter() - t0
    f64 = types.Array(types.float64, 2, "C")
    count_chunk.compile((typeof(plan), types.uint64, types.int64, f64))
    if store:  # the score store's kernel
        chunk_normal_scores.compile((f64, types.uint64, types.int64, f64))
    _COMPILED.add(key)
    return time.perf_counter() - t0


_COMPILED: set = set()  # _type_key of the plans compile_for has compiled the kernels for


def _type_key(plan: Plan) -> tuple:
    """What numba's type of ``plan`` depends on, quickly: the named tuple's class and each
    field's Python type, for arrays also its dtype, dimensions, layout (numba's: ``C`` if
    C-contiguous, else ``F`` if Fortran-contiguous, else ``A``), writeable and aligned
    flags. Plans with one key have one numba type."""
    return (type(plan),) + tuple(
        (
            type(v),
            v.dtype.str,
            v.ndim,
            "C" if v.flags.c_contiguous else "F" if v.flags.f_contiguous else "A",
            v.flags.writeable,
            v.flags.aligned,
        )
        if isinstance(v, np.ndarray)
        else type(v)
        for v in plan
    )


def kernel_signatures(plan: Plan, *, testing: bool = False) -> list[tuple[Dispatcher, tuple]]:
    """The kernels this module calls from Python, each with the argument types (numba types)
    its calls pass for plans of ``plan``'s numba type: :func:`chunk_seeds` and
    :func:`count_agree` (one chunk or several, drawing or, within
    :func:`shared_normal_scores`, from its score store; what :func:`compile_for` compiles),
    with ``testing=True`` also the testing and validation helpers :func:`sample_bins`,
    :func:`labels_of_bins` and :func:`bins_of` (never the profiling hook's bins-only
    kernel). ``dispatcher.compile(types)`` for each compiles it, or loads it from numba's disk
    cache, so that none of these calls compiles anything."""
    p = typeof(plan)
    u64, i64, f64 = types.uint64, types.int64, types.float64

    def arr(dtype, ndim: int = 1) -> types.Array:
        return types.Array(dtype, ndim, "C")

    workload = [
        (hash_states, (arr(u64),)),
        (count_chunk, (p, u64, i64, arr(f64, 2))),
        (chunk_normal_scores, (arr(f64, 2), u64, i64, arr(f64, 2))),
    ]
    if not testing:
        return workload
    return workload + [
        (sample_bins_kernel, (p, u64, i64)),
        (labels_of_bins_kernel, (p, arr(types.int16, 2))),
        (bins_of_kernel, (p, arr(f64, 2))),
    ]
