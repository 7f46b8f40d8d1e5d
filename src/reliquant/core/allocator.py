"""Keep freed heap memory in the process instead of handing it back to the kernel.

glibc's ``malloc`` serves a large block (above its *mmap threshold*, adjusted at run time up
to 32 MiB) with a fresh ``mmap`` and returns it to the kernel on ``free``; and it trims the
top of the heap whenever more than its *trim threshold* is free there. A loop that allocates
and frees the same few megabytes per step -- a CNN's activations and gradients per batch,
numpy temporaries per block -- then pays a page fault and a page of zeroing for every 4 KiB it
touches, on every step. glibc raises its thresholds only after it has freed a block above
them, so how often this happens depends on what ran before: a CNN training loop alone (batch
64, one thread) took 19.3 ms per step with 1.8 M page faults in 500 steps, and 11.4 ms with
0.17 M once the thresholds were fixed; in the workflow's training, whose per-epoch test
evaluation frees large blocks, only the first epoch was slow (20.5 s against 14.1 s; later
epochs 12.7 s either way). ``bench/allocator.py`` measures it side by side.

:func:`retain_freed_memory` fixes both thresholds with ``mallopt``: blocks up to 32 MiB come
from the heap, and freed memory stays mapped for the next step. The arithmetic is untouched:
the same kernels run on the same values (torch aligns every buffer itself), so results are
bit-identical; only the resident memory stays at its peak instead of shrinking between steps.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "retain_freed_memory"]

log = logging.getLogger(__name__)

#: ``mallopt`` parameter numbers (glibc ``malloc.h``).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: Largest block served from the heap: glibc's own upper limit on 64-bit systems
#: (``DEFAULT_MMAP_THRESHOLD_MAX``); ``mallopt`` refuses more.
MMAP_THRESHOLD = 32 * 1024 * 1024
#: Free memory kept at the top of the heap before it is trimmed (the largest ``int``).
TRIM_THRESHOLD = 2**31 - 1


def _glibc() -> ctypes.CDLL | None:
    """The process's C library when it is glibc (has ``mallopt``), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "mallopt") or not hasattr(libc, "gnu_get_libc_version"):
        return None  # musl and others: no glibc thresholds to set
    return libc


def retain_freed_memory(
    mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD
) -> bool:
    """Serve blocks up to ``mmap_threshold`` bytes from the heap and keep freed memory mapped.

    Calls ``mallopt(M_MMAP_THRESHOLD, mmap_threshold)`` and
    ``mallopt(M_TRIM_THRESHOLD, trim_threshold)``. Setting either turns off glibc's dynamic
    adjustment of both, so both are set together. Process-wide and lasting; call it once at a
    job's start (:func:`reliquant.core.runlog.start_job` does).

    Returns
    -------
    bool
        ``True`` when both were set; ``False`` (and nothing changed) where the C library is not
        glibc, e.g. on macOS or musl.

    Raises
    ------
    ValueError
        if a threshold is out of glibc's range (``mmap_threshold`` in ``[0, 32 MiB]``,
        ``trim_threshold`` in ``[0, 2**31 - 1]``).
    """
    if not 0 <= mmap_threshold <= MMAP_THRESHOLD:
        raise ValueError(f"mmap_threshold must be in [0, {MMAP_THRESHOLD}], got {mmap_threshold}")
    if not 0 <= trim_threshold <= TRIM_THRESHOLD:
        raise ValueError(f"trim_threshold must be in [0, {TRIM_THRESHOLD}], got {trim_threshold}")
    libc = _glibc()
    if libc is None:
        return False
    ok = libc.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)) == 1
    ok = libc.mallopt(_M_TRIM_THRESHOLD, int(trim_threshold)) == 1 and ok
    if not ok:
        log.warning("glibc refused mallopt thresholds %d / %d", mmap_threshold, trim_threshold)
    return ok
