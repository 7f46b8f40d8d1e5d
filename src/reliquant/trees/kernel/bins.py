"""Single draws and inputs through the kernel: their bins and labels (testing, validation and
the warm-up), and the profiling hook :func:`profile_draws`."""

from __future__ import annotations

import numpy as np

from reliquant.trees.kernel.compiled import (
    NO_SCORES,
    bins_of_kernel,
    bins_only_kernel,
    chunk_seeds,
    count_chunk,
    labels_of_bins_kernel,
    sample_bins_kernel,
)
from reliquant.trees.kernel.threads import ROWS_PER_TASK, in_threads
from reliquant.trees.plan import Plan

__all__ = [
    "bins_of",
    "labels_of_bins",
    "profile_draws",
    "sample_bins",
]


def sample_bins(plan: Plan, seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(bins (n, A), labels (n,))`` of ``n`` draws (testing and validation)."""
    return sample_bins_kernel(plan, chunk_seeds(seed, 0, 1)[0], int(n))


def labels_of_bins(plan: Plan, bins: np.ndarray) -> np.ndarray:
    """Class index of each row of bins (every in-play feature given)."""
    bins = np.ascontiguousarray(bins, dtype=np.int16)
    out = np.empty(bins.shape[0], dtype=np.int64)
    step = ROWS_PER_TASK

    def task(k: int) -> None:
        out[k * step : (k + 1) * step] = labels_of_bins_kernel(
            plan, bins[k * step : (k + 1) * step]
        )

    in_threads(task, -(-bins.shape[0] // step))
    return out


def bins_of(plan: Plan, X: np.ndarray) -> np.ndarray:
    """Bins of raw inputs ``X`` (n, n_features); inputs must lie in the plan's region.

    ``x <= c`` goes left at cut ``c``, so the bin is the number of cuts strictly below x.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], plan.off.shape[0] - 1), dtype=np.int16)
    step = ROWS_PER_TASK

    def task(k: int) -> None:
        out[k * step : (k + 1) * step] = bins_of_kernel(plan, X[k * step : (k + 1) * step])

    in_threads(task, -(-X.shape[0] // step))
    return out


def profile_draws(plan: Plan, state0: int, n: int, *, bins_only: bool = False) -> int:
    """Profiling hook: ``n`` draws of the kernel on the calling thread, from the random stream
    that starts at state ``state0`` (e.g. an entry of :func:`chunk_seeds`), in blocks of
    ``BLOCK``; time a call to see where a draw's time goes.

    ``bins_only=False``: the whole kernel (bins, strata, trees, label) of one chunk, as each
    thread of :func:`count_agree` runs it; returns how many draws keep ``plan.y``.
    ``bins_only=True``: its first step alone, the bins of the in-play features of plain draws
    (independent noise only; a ``ValueError`` for a correlated plan); returns a checksum.
    The first call with a new plan type compiles (numba, cached on disk): warm up before
    timing."""
    if not bins_only:
        return int(count_chunk(plan, np.uint64(state0), int(n), NO_SCORES))
    if plan.correlated:
        raise ValueError("profile_draws(bins_only=True) times independent noise only")
    return int(bins_only_kernel(plan, np.uint64(state0), int(n)))
