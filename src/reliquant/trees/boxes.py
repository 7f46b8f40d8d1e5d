"""The papers' box-grid method for the probabilistic robustness of tree models.

Papers 001/002, Sections 2.1-2.2: merge every feature's split thresholds tau_i, cut the
feature space at all of them into n_b = prod_i (|tau_i| + 1) boxes (eq. 3), label each box by
the model's prediction at its centre, and sum the masses of the boxes that carry mu's label:

    R(mu) = sum_{B : f(centre(B)) = f(mu)} P(x in B)                      (eq. 4)

``prune=level`` is the "99 % boxes" variant (Section 2.2.1): keep only the boxes inside or
intersecting the axis-aligned bounding box of the ``level`` confidence ellipsoid around mu
(half-width sqrt(chi2_d^{-1}(level)) sigma_i); each kept box contributes its full mass, so
the result is at most ``1 - level`` below the full-grid value (002: "at max 1 percentage
point").

The cuts are the *effective* float64 boundaries of :mod:`reliquant.trees.structure`, so the
label at a box centre is the label of every point of the box. Boxes are enumerated in chunks
(mixed radix over the features that have thresholds); memory stays bounded, time grows with
n_b. For independent noise the enumeration runs compiled (:mod:`reliquant.trees.grid_kernel`:
every box is still labelled by the model at its representative point, bit for bit as
``predict_index``). ``max_boxes`` guards against grids that cannot finish (the papers'
storage limit).

Public API: :func:`grid_robustness` -> :class:`GridResult`, :func:`grid_intervals`.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from reliquant.trees.grid_kernel import (
    GridTables,
    chunk_masses,
    chunk_scores,
    compile_kernels,
    grid_tables,
    labelled_masses,
)
from reliquant.trees.structure import TreeEnsemble, label_from_scores

__all__ = [
    "GridResult",
    "grid_counts",
    "grid_intervals",
    "grid_robustness",
]


@dataclass(frozen=True)
class GridResult:
    """robustness: R(mu) by eq. (4) over the kept boxes; n_boxes: boxes kept (all boxes, or
    those meeting the bounding box); n_boxes_label: kept boxes with mu's label; label: f(mu)
    (a class label); prune: the ellipsoid level or None; mass_error: summed error estimate of
    the box masses (0 for exact masses); seconds: wall time."""

    robustness: float
    n_boxes: int
    n_boxes_label: int
    label: object
    prune: float | None
    mass_error: float
    seconds: float


def _centres(edges: np.ndarray, mu_i: float) -> np.ndarray:
    """One interior point per interval ``(edges[j], edges[j+1]]``."""
    a, b = edges[:-1], edges[1:]
    left_inf = np.isneginf(a) & np.isfinite(b)
    right_inf = np.isfinite(a) & np.isposinf(b)
    with np.errstate(invalid="ignore"):
        c = (a + b) / 2.0
        c = np.where(left_inf, b - np.maximum(1.0, np.abs(b)), c)
        c = np.where(right_inf, a + np.maximum(1.0, np.abs(a)), c)
    c = np.where(np.isneginf(a) & np.isposinf(b), mu_i, c)
    return c


def grid_intervals(
    ensemble: TreeEnsemble, noise, mu: np.ndarray, prune: float | None = None
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per feature, the kept intervals ``(lo, hi, centre)`` of the grid (eq. 3)."""
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    if prune is not None:
        blo, bhi = noise.bounding_box(prune, "ellipsoid")
    out = []
    for i, t in enumerate(ensemble.thresholds()):
        edges = np.concatenate([[-np.inf], t, [np.inf]])
        lo, hi = edges[:-1], edges[1:]
        c = _centres(edges, mu[i])
        if prune is not None:
            keep = (lo < bhi[i]) & (hi > blo[i])
            lo, hi, c = lo[keep], hi[keep], c[keep]
        out.append((lo, hi, c))
    return out


def grid_counts(
    ensemble: TreeEnsemble, noise, mu: np.ndarray, prune: float | None = None
) -> list[int]:
    """Per feature, the number of kept intervals of :func:`grid_intervals` (the same test,
    ``lo < box_hi`` and ``hi > box_lo``), without making the intervals' centres: the grid's
    size is their product (eq. 3)."""
    if prune is None:
        return [len(t) + 1 for t in ensemble.thresholds()]
    blo, bhi = noise.bounding_box(prune, "ellipsoid")
    out = []
    for i, t in enumerate(ensemble.thresholds()):
        edges = np.concatenate([[-np.inf], t, [np.inf]])
        out.append(int(np.count_nonzero((edges[:-1] < bhi[i]) & (edges[1:] > blo[i]))))
    return out


@functools.cache
def _compiled() -> float:
    """Compile or load the grid kernels once per process (seconds it took)."""
    return compile_kernels()


def _independent_sum(
    ensemble: TreeEnsemble, tables: GridTables, y: int, n_boxes: int, chunk: int
) -> tuple[float, int]:
    """Eq. (4) over all boxes of ``tables``' grid, chunk by chunk: ``(R, boxes with label y)``.

    Every box is labelled at its representative point by the kernel (links it decides), or
    scored by the kernel and labelled by ``label_from_scores`` (links with an exponential)."""
    buf = np.empty(min(chunk, n_boxes), dtype=np.float64)
    total, n_label = 0.0, 0
    for start in range(0, n_boxes, chunk):
        n = min(chunk, n_boxes - start)
        if tables.link >= 0:
            n_match = labelled_masses(tables, start, n, y, buf)
        else:
            labels = label_from_scores(
                chunk_scores(tables, start, n), ensemble.link, ensemble.link_scale
            )
            n_match = chunk_masses(tables, start, labels == y, buf)
        n_label += n_match
        if n_match:
            total += float(buf[:n_match].sum())
    return total, n_label


def grid_robustness(
    ensemble: TreeEnsemble,
    noise,
    mu: np.ndarray,
    prune: float | None = None,
    max_boxes: int = 200_000_000,
    chunk: int = 262_144,
) -> GridResult:
    """R(mu) by the papers' box grid (eq. 4), all boxes or (``prune=0.99``) the 99 % boxes.

    ``noise`` is a model of :mod:`reliquant.trees.box_mass` centred at ``mu``. Independent noise
    uses exact per-feature interval masses and the compiled enumeration of
    :mod:`reliquant.trees.grid_kernel` (compiled, or loaded from numba's disk cache, before the
    clock starts); otherwise ``noise.box_mass_with_error`` per box (numpy). Boxes are
    enumerated in chunks of ``chunk`` consecutive indices; each chunk's masses are summed by
    numpy (pairwise, in box order) and the chunk sums added in order. Raises ``ValueError`` if
    more than ``max_boxes`` boxes would be enumerated.
    """
    independent = bool(getattr(noise, "independent", False))
    if independent:
        _compiled()
    t0 = time.perf_counter()
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    if mu.shape[0] != ensemble.n_features:
        raise ValueError(f"mu has {mu.shape[0]} features; the model has {ensemble.n_features}")
    y = int(ensemble.predict_index(mu)[0])
    ivs = grid_intervals(ensemble, noise, mu, prune)
    counts = [len(lo) for lo, _, _ in ivs]
    n_boxes = math.prod(counts)
    if n_boxes > max_boxes:
        raise ValueError(
            f"the grid has {n_boxes:,} boxes, more than max_boxes={max_boxes:,} (eq. 3); use "
            "the exact engine (reliquant.trees.engine) instead"
        )
    cols = np.array([i for i, c in enumerate(counts) if c > 1], dtype=np.int64)
    const_cols = np.array([i for i, c in enumerate(counts) if c == 1], dtype=np.int64)
    if independent:
        pm = [
            noise.interval_mass(np.array([i]), ivs[i][0][:, None], ivs[i][1][:, None])[:, 0]
            for i in range(len(ivs))
        ]
        const = float(np.prod([pm[i][0] for i in const_cols])) if len(const_cols) else 1.0
        tables = grid_tables(ensemble, [c for _, _, c in ivs], pm, cols, const)
        total, n_label = _independent_sum(ensemble, tables, y, n_boxes, chunk)
        return GridResult(
            robustness=total,
            n_boxes=n_boxes,
            n_boxes_label=n_label,
            label=ensemble.classes[y],
            prune=prune,
            mass_error=0.0,
            seconds=time.perf_counter() - t0,
        )
    base_point = np.array([ivs[i][2][0] for i in range(len(ivs))])
    base_lo = np.array([ivs[i][0][0] for i in range(len(ivs))])
    base_hi = np.array([ivs[i][1][0] for i in range(len(ivs))])
    radix = np.array([counts[i] for i in cols], dtype=np.int64)
    total, err_total, n_label = 0.0, 0.0, 0
    for start in range(0, n_boxes, chunk):
        k = np.arange(start, min(n_boxes, start + chunk), dtype=np.int64)
        idx = np.empty((len(k), len(cols)), dtype=np.int64)
        rem = k.copy()
        for j in range(len(cols) - 1, -1, -1):
            idx[:, j] = rem % radix[j]
            rem //= radix[j]
        pts = np.tile(base_point, (len(k), 1))
        for j, i in enumerate(cols):
            pts[:, i] = ivs[i][2][idx[:, j]]
        same = ensemble.predict_index(pts) == y
        n_label += int(same.sum())
        if not same.any():
            continue
        sel = idx[same]
        lo = np.tile(base_lo, (len(sel), 1))
        hi = np.tile(base_hi, (len(sel), 1))
        for j, i in enumerate(cols):
            lo[:, i] = ivs[i][0][sel[:, j]]
            hi[:, i] = ivs[i][1][sel[:, j]]
        m, e = noise.box_mass_with_error(lo, hi)
        total += float(m.sum())
        err_total += float(e.sum())
    return GridResult(
        robustness=total,
        n_boxes=n_boxes,
        n_boxes_label=n_label,
        label=ensemble.classes[y],
        prune=prune,
        mass_error=err_total,
        seconds=time.perf_counter() - t0,
    )
