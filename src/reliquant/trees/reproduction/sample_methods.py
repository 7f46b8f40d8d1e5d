"""What every per-sample table of :mod:`reliquant.trees.reproduction.per_sample` shares: the
size of the papers' grid without enumerating it (:func:`grid_size`), our exact engine held to
its ``tol`` (:func:`certified_robustness`), and the tables' progress bar
(:func:`progress_over`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from tqdm import tqdm

from reliquant.core.runlog import progress_enabled
from reliquant.trees.boxes import grid_counts
from reliquant.trees.engine import EngineResult, exact_robustness
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "certified_robustness",
    "grid_size",
    "progress_over",
]


def grid_size(ensemble: TreeEnsemble, noise, mu: np.ndarray, prune: float | None) -> int:
    """Number of boxes the paper's grid enumerates (eq. 3), all or meeting the ``prune``
    bounding box, without enumerating them (:func:`reliquant.trees.boxes.grid_counts`)."""
    return math.prod(grid_counts(ensemble, noise, mu, prune))


def certified_robustness(
    ensemble: TreeEnsemble, noise, mu: np.ndarray, *, tol: float
) -> EngineResult:
    """The exact engine, checked: a table never holds the midpoint of bounds wider than the
    configured ``tol`` (raises instead)."""
    r = exact_robustness(ensemble, noise, mu, tol=tol)
    if not r.converged:
        raise RuntimeError(
            f"exact engine did not reach tol={tol:g} (bounds [{r.lower:.6g}, "
            f"{r.upper:.6g}] after {r.n_boxes:,} boxes, {r.n_active_features} active "
            "features); raise tol or use Monte Carlo for this model"
        )
    return r


def progress_over(items: Sequence, desc: str):
    """A progress bar over ``items`` (shown when the job's progress bars are on)."""
    return tqdm(items, desc=desc, disable=not progress_enabled(), leave=False)
