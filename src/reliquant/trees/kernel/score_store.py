"""The store of correlated draws' normal scores, shared by the plans of one sample's stream.

Within :func:`shared_normal_scores`, :func:`reliquant.trees.kernel.agreement.count_agree` takes a
correlated plan's normal scores ``z = L e`` from the store (:class:`ScoreStore`, the one in use
given by :func:`active_store`), drawn once per chunk and Cholesky factor.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from reliquant.trees.kernel.compiled import chunk_normal_scores
from reliquant.trees.kernel.threads import in_threads

__all__ = [
    "ScoreStore",
    "active_store",
    "shared_normal_scores",
]


class ScoreStore:
    """Normal scores of correlated chunks (:func:`chunk_normal_scores`), one row of
    ``arena`` per chunk, found by the chunk's starting state, for one Cholesky factor at a
    time (a chunk's scores depend on nothing else; a row holding more draws than asked
    serves as well, the stream being the same). At most ``max_bytes`` of rows: when full,
    the rows used least recently are given to new chunks."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self.key: tuple | None = None
        self.arena = np.zeros((0, 0, 0))
        self.index: dict[int, tuple[int, int]] = {}  # state -> (row, draws held), LRU order
        self.free: list[int] = []

    def rows(self, chol: np.ndarray, seeds: np.ndarray, chunk: int, total: int):
        """``(arena, rows)``: ``arena[rows[c]]`` holds chunk ``c``'s scores, made here when
        missing; None when the store cannot hold ``len(seeds)`` chunks."""
        A = chol.shape[0]
        key = (chol.shape, chol.tobytes(), int(chunk))
        if key != self.key:  # another factor: start over
            cap = max(self.max_bytes // (8 * A * chunk), 1)
            self.arena = np.empty((cap, A, chunk))  # its pages are touched as rows fill
            self.key, self.index, self.free = key, {}, list(range(cap - 1, -1, -1))
        if len(seeds) > len(self.arena):
            return None  # more chunks than the store holds: the caller draws them itself
        states = seeds.tolist()
        for state in states:  # the chunks asked for now become the most recently used
            if state in self.index:
                self.index[state] = self.index.pop(state)
        fresh = sum(state not in self.index for state in states)
        while len(self.free) < fresh:  # free the least recently used rows (none asked now)
            self.free.append(self.index.pop(next(iter(self.index)))[0])
        ns = np.minimum(chunk, total - chunk * np.arange(len(seeds)))
        rows = np.empty(len(seeds), dtype=np.int64)
        missing = []
        for c, state in enumerate(states):
            row, held = self.index.get(state, (-1, 0))
            if row < 0:
                row = self.free.pop()
            if held < ns[c]:
                missing.append(c)
                self.index[state] = (row, int(ns[c]))
            rows[c] = row
        if missing:
            m = np.array(missing, dtype=np.int64)
            chol = np.ascontiguousarray(chol)
            arena, seeds_m, ns_m, rows_m = self.arena, seeds[m], ns[m], rows[m]
            in_threads(
                lambda c: chunk_normal_scores(chol, seeds_m[c], ns_m[c], arena[rows_m[c]]), len(m)
            )
        return self.arena, rows


_STORE: ScoreStore | None = None


@contextmanager
def shared_normal_scores(max_bytes: int = 2**27) -> Iterator[None]:
    """Within the ``with`` block, :func:`count_agree` keeps the normal scores ``z = L e`` of
    correlated (and NORTA) draws per chunk, at most ``max_bytes`` of them, and reuses them
    for every plan with the same Cholesky factor ``L`` (the same in-play features and
    correlation) that draws the same chunk (the same seed): such plans draw the same
    scores, so the counts are those of :func:`count_agree` without it, while the
    Box-Muller draws are made once. For several models evaluated on one sample's stream in
    turn (the cells of a sensitivity table, sample by sample); plans of independent noise
    are not affected."""
    global _STORE
    previous = _STORE
    _STORE = ScoreStore(max_bytes)
    try:
        yield
    finally:
        _STORE = previous


def active_store() -> ScoreStore | None:
    """The score store of the innermost :func:`shared_normal_scores` block; None outside one."""
    return _STORE
