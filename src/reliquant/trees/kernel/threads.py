"""Kernel calls shared out among threads: each task one call of a ``nogil`` kernel."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import get_num_threads

from reliquant.trees.kernel.compiled import BLOCK

__all__ = [
    "ROWS_PER_TASK",
    "in_threads",
]


_POOL: dict[int, ThreadPoolExecutor] = {}  # worker threads -> the pool (made when first needed)
ROWS_PER_TASK = 64 * BLOCK  # rows of labels_of_bins and bins_of per thread task


def in_threads(task, n: int) -> np.ndarray:
    """``[task(0), ..., task(n - 1)]`` as int64 (None as 0), the tasks (``nogil`` kernels)
    shared out among ``numba.get_num_threads()`` threads, each taking the next task when it
    is done (what a ``prange`` loop over the tasks did, without compiling one: a task's
    result does not depend on the thread that runs it)."""
    out = np.zeros(n, dtype=np.int64)
    threads = min(get_num_threads(), n)

    def work(todo) -> None:
        for c in todo:  # a range iterator: next() is atomic under the GIL
            r = task(c)
            if r is not None:
                out[c] = r

    todo = iter(range(n))
    if threads <= 1:
        work(todo)
        return out
    if threads - 1 not in _POOL:
        _POOL[threads - 1] = ThreadPoolExecutor(threads - 1, thread_name_prefix="reliquant-kernel")
    futures = [_POOL[threads - 1].submit(work, todo) for _ in range(threads - 1)]
    work(todo)  # the calling thread takes tasks too
    for f in futures:
        f.result()
    return out
