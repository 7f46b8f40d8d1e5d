"""Exact probabilistic robustness of tree ensembles by branch and bound over boxes.

R(mu) = P(f(x) = f(mu)), x ~ noise around mu (papers 001/002, eqs. 1-4), computed without
the papers' threshold grid (eq. 3), whose size prod_i (|tau_i| + 1) explodes for forests.

Algorithm (in the spirit of Veritas / Chen et al.'s tree verification):

1. Root box. With ``tol > 0`` the search starts from the per-axis (Bonferroni) box that
   holds all but ``tol/2`` of the noise mass, widened on every side to the nearest split
   boundary beyond it (widening changes no tree path, and shrinks the outside mass). The
   outside mass is *booked as error*. With ``tol = 0`` the root is the whole space.
2. Leaves unreachable from the root are discarded; trees left with one reachable leaf are
   constants; path conditions that hold on the whole root are dropped.
3. Best-first (heaviest boxes first, in vectorised batches) every box is bounded: for each
   other class c, the score difference s_y - s_c lies in
   [sum_t min_{reachable leaves} (v_y - v_c), sum_t max (v_y - v_c)] (plus base margins).
   If every lower bound is > eps the box keeps mu's label ("agree"); if some upper bound is
   < -eps, it cannot ("disagree"). ``eps`` covers the library's floating-point rounding. A
   box in which every tree reaches a single leaf gets its exact label from the library's
   own arithmetic (:meth:`TreeEnsemble.label_from_leaves`), so ties and near-ties are exact.
4. Otherwise the box is split in two at a boundary of the tree that matters most for the
   most threatening class (largest spread of v_y - v_c over its reachable leaves), at the
   first node of that tree on the box's path whose split cuts the box.
5. Stop when the boxes still pending weigh at most ``tol`` minus the outside mass: they
   are dropped with their mass booked as error.

Result: lower = mass of agree boxes, upper = 1 - mass of disagree boxes, upper - lower =
outside + dropped mass <= tol (plus the integrator's error for non-factorising noise, reported
as ``mass_error``). With ``tol = 0`` nothing is dropped and ``lower`` equals the grid
method's value up to float rounding. Box masses come from the noise model (exact for
independent normal noise; see :mod:`reliquant.trees.box_mass`).

Public API: :func:`exact_robustness` -> :class:`EngineResult`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from reliquant.trees.leaf_tables import LeafTables, OutOfTime
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "EngineResult",
    "PendingBoxes",
    "exact_robustness",
    "root_box",
]


@dataclass(frozen=True)
class EngineResult:
    """lower/upper: certified bounds on R(mu) (exact masses assumed); robustness: their
    midpoint; gap = upper - lower; label: f(mu); n_boxes: boxes bounded; n_decided: boxes
    decided (agree, disagree or resolved); outside_mass: mass outside the root box;
    dropped_mass: mass of pending boxes dropped at the end; mass_error: summed integration
    error estimate of the masses used (0 for independent noise); exact: nothing outside,
    nothing dropped; converged: gap <= tol was reached within ``max_boxes``, ``time_limit``
    and ``max_memory``; seconds;
    n_active_features: features that cut the root box on some reachable path (the search's
    dimension); n_live_trees: trees with more than one reachable leaf in the root box. When
    both are in the hundreds and R is far from 0 and 1 (e.g. 100-tree forests on raw
    MNIST pixels), no box is decided and the gap stays near 1: use Monte Carlo there."""

    lower: float
    upper: float
    robustness: float
    gap: float
    label: object
    n_boxes: int
    n_decided: int
    outside_mass: float
    dropped_mass: float
    mass_error: float
    exact: bool
    converged: bool
    seconds: float
    n_active_features: int = 0
    n_live_trees: int = 0
    pending: PendingBoxes | None = None


@dataclass(frozen=True)
class PendingBoxes:
    """The undecided part of an unconverged search (``keep_pending=True``): boxes
    ``lo < x <= hi`` over the ``active`` features (other features range over the root box),
    their masses, and the root box ``root_lo < x <= root_hi`` (all features) outside which
    lies ``EngineResult.outside_mass``. R = lower + P(label kept in pending) + P(kept outside)."""

    lo: np.ndarray
    hi: np.ndarray
    mass: np.ndarray
    active: np.ndarray
    root_lo: np.ndarray
    root_hi: np.ndarray


def root_box(ens: TreeEnsemble, noise, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """The engine's root box ``(lo, hi)``: a box holding all but ``tol / 2`` of the mass of
    ``noise`` (its ``bounding_box(1 - tol / 2, "union")``), each edge widened to the nearest
    effective split boundary of ``ens`` beyond it, so that no tree path changes between the
    box and its edges (``-inf`` / ``inf`` where no boundary lies beyond). ``tol <= 0``: the
    whole space. The exact engine bounds the mass outside it as error; the anytime method
    (:mod:`reliquant.trees.anytime`) draws its plain samples inside it.
    """
    d = ens.n_features
    if tol <= 0:
        return np.full(d, -np.inf), np.full(d, np.inf)
    blo, bhi = noise.bounding_box(1.0 - tol / 2.0, "union")
    blo = np.asarray(blo, dtype=np.float64).copy()
    bhi = np.asarray(bhi, dtype=np.float64).copy()
    for i, t in enumerate(ens.thresholds()):
        # widen to the nearest boundary beyond the box (no path changes inside)
        j = np.searchsorted(t, blo[i], side="right") - 1
        blo[i] = t[j] if j >= 0 else -np.inf
        j = np.searchsorted(t, bhi[i], side="left")
        bhi[i] = t[j] if j < len(t) else np.inf
    return blo, bhi


def exact_robustness(
    ensemble: TreeEnsemble,
    noise,
    mu: np.ndarray,
    tol: float = 1e-9,
    batch: int = 1024,
    max_boxes: int = 20_000_000,
    chunk_elems: int = 4_000_000,
    time_limit: float | None = None,
    max_memory: float = 1e9,
    keep_pending: bool = False,
    stop_when=None,
) -> EngineResult:
    """Certified bounds on R(mu) = P(f(x) = f(mu)) with ``upper - lower <= tol``.

    ``noise``: a model of :mod:`reliquant.trees.box_mass` centred at ``mu`` with one
    dimension per feature of the model (another size is refused, naming both), or a spec of
    :mod:`reliquant.trees.noise` (bound to ``mu`` here). ``tol = 0`` gives the
    exact value (no clipping, no dropping; use it on small models). ``batch``: boxes bounded
    per vectorised step; ``max_boxes``: safety cap on boxes bounded (``converged=False`` when
    hit). ``chunk_elems`` bounds the temporary arrays (boxes x leaves x conditions).
    ``time_limit`` (seconds): stop early with the certified bounds reached so far
    (``converged=False``); the bounds stay valid, only the gap is wider than ``tol``. A batch
    is not started when, at the last batch's pace (the first: twice its boxes times the
    root box's integral), it would end past ``time_limit``; when building the per-sample
    tables (:class:`reliquant.trees.leaf_tables.LeafTables`, linear in the model's size)
    passes ``time_limit``, nothing is certified: bounds ``[0, 1]``, ``n_live_trees = 0``.
    ``max_memory`` (bytes): the same early stop when the pending boxes would need more
    memory (two float64 corners per box and active feature), so a model the search cannot
    decide (see :class:`EngineResult`) ends with wide bounds instead of exhausting memory.
    ``keep_pending``: return the boxes left undecided at an early stop in
    ``EngineResult.pending`` (:class:`PendingBoxes`), for sampling them. ``stop_when``:
    ``f(seconds, gap) -> bool`` asked before each batch; True stops early like
    ``time_limit`` (the anytime method stops certifying once the gap shrinks too slowly).
    """
    t0 = time.perf_counter()
    if not tol >= 0 or not np.isfinite(tol):
        raise ValueError(f"tol must be a finite number >= 0; got {tol}")
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    if mu.shape[0] != ensemble.n_features:
        raise ValueError(f"mu has {mu.shape[0]} features; the model has {ensemble.n_features}")
    if hasattr(noise, "bind"):  # a spec of reliquant.trees.noise: centred at mu here
        noise = noise.bind(mu, ensemble.n_features)
    d_noise = getattr(noise, "d", None)
    if d_noise != ensemble.n_features:
        raise ValueError(
            f"noise has {d_noise} features but the model has {ensemble.n_features}: the noise "
            "must describe every feature of the model"
        )
    y = int(ensemble.predict_index(mu)[0])
    d = ensemble.n_features
    root_lo, root_hi = root_box(ensemble, noise, tol)
    independent = bool(getattr(noise, "independent", False))

    # outside mass of the root box
    root_mass = None  # the root box's (mass, error) when integrated here
    per_integral = 0.0  # seconds of one box integral (correlated noise), for the first batch
    if np.all(np.isneginf(root_lo)) and np.all(np.isposinf(root_hi)):
        outside, out_err = 0.0, 0.0
    elif independent and hasattr(noise, "outside_mass"):
        outside, out_err = noise.outside_mass(root_lo, root_hi), 0.0
    else:
        t_int = time.perf_counter()
        root_mass = noise.box_mass_with_error(root_lo[None], root_hi[None])
        per_integral = time.perf_counter() - t_int
        mroot, eroot = root_mass
        outside, out_err = max(0.0, 1.0 - float(mroot[0])), float(eroot[0])

    try:
        deadline = None if time_limit is None else t0 + time_limit
        prep = LeafTables(ensemble, y, root_lo, root_hi, deadline=deadline)
    except OutOfTime:  # no time to bound a box: the bounds [0, 1], nothing decided
        return EngineResult(
            lower=0.0, upper=1.0, robustness=0.5, gap=1.0, label=ensemble.classes[y],
            n_boxes=0, n_decided=0, outside_mass=outside, dropped_mass=0.0, mass_error=0.0,
            exact=False, converged=False, seconds=time.perf_counter() - t0,
            n_active_features=0, n_live_trees=0, pending=None,
        )  # fmt: skip
    prep.set_root(root_lo, root_hi)
    act = prep.active
    inactive = np.setdiff1d(np.arange(d), act)

    if independent:
        const_mass = float(
            np.prod(noise.interval_mass(inactive, root_lo[inactive][None], root_hi[inactive][None]))
        )

        def masses(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            m = const_mass * np.prod(noise.interval_mass(act, lo, hi), axis=1)
            return m, np.zeros_like(m)
    else:

        def masses(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            flo = np.tile(root_lo, (lo.shape[0], 1))
            fhi = np.tile(root_hi, (lo.shape[0], 1))
            flo[:, act] = lo
            fhi[:, act] = hi
            return noise.box_mass_with_error(flo, fhi)

    F_lo = prep.root_lo_active[None].copy()
    F_hi = prep.root_hi_active[None].copy()
    if root_mass is not None and not independent:
        # the first box is the root box, whose mass was just integrated: the same box
        # (masses() puts the root's edges on the inactive features), the same numbers (a
        # box's mass is a function of the box; the QMC integrator is seeded per box)
        F_m, F_e = root_mass
    else:
        F_m, F_e = masses(F_lo, F_hi)
    agree = 0.0
    disagree = 0.0
    mass_err = out_err
    n_boxes = 0
    n_decided = 0
    P = prep.cf.shape[1]
    C = max(prep.D.shape[1], 1)
    per_box = max(1, prep.L * max(P, C))
    sub = max(1, min(batch, chunk_elems // per_box))
    converged = True
    dropped = 0.0
    kept = None
    last_batch = None  # seconds the last batch took: a batch is not started past time_limit
    while F_m.shape[0]:
        pending = float(F_m.sum())
        elapsed = time.perf_counter() - t0
        pace = last_batch if last_batch is not None else 2 * min(batch, F_m.shape[0]) * per_integral
        if tol > 0 and outside + pending <= tol:
            dropped = pending
            mass_err += float(F_e.sum())
            break
        if (
            n_boxes >= max_boxes
            or (time_limit is not None and elapsed + pace > time_limit)
            or (stop_when is not None and stop_when(elapsed, outside + pending))
            or F_lo.nbytes + F_hi.nbytes + 16 * F_m.shape[0] > max_memory
        ):
            dropped = pending
            mass_err += float(F_e.sum())
            converged = False
            if keep_pending:
                kept = PendingBoxes(F_lo, F_hi, F_m, act, root_lo, root_hi)
            break
        t_batch = time.perf_counter()
        if F_m.shape[0] > batch:
            sel = np.argpartition(-F_m, batch - 1)[:batch]
            keep = np.ones(F_m.shape[0], dtype=bool)
            keep[sel] = False
        else:
            sel = np.arange(F_m.shape[0])
            keep = np.zeros(F_m.shape[0], dtype=bool)
        B_lo, B_hi, B_m, B_e = F_lo[sel], F_hi[sel], F_m[sel], F_e[sel]
        F_lo, F_hi, F_m, F_e = F_lo[keep], F_hi[keep], F_m[keep], F_e[keep]
        n_boxes += len(sel)
        new_lo, new_hi = [], []
        for s in range(0, len(sel), sub):
            lo, hi = B_lo[s : s + sub], B_hi[s : s + sub]
            bm, be = B_m[s : s + sub], B_e[s : s + sub]
            ok = prep.reach(lo, hi) if prep.L else np.zeros((lo.shape[0], 0), dtype=bool)
            lb, ub, mins, maxs, counts = prep.bounds(ok)
            yes = np.all(lb > prep.eps, axis=1)
            no = np.any(ub < -prep.eps, axis=1) & ~yes
            resolved = np.all(counts == 1, axis=1) & ~yes & ~no
            if resolved.any():
                lab = prep.exact_labels(ok[resolved])
                r_idx = np.nonzero(resolved)[0]
                yes[r_idx[lab == y]] = True
                no[r_idx[lab != y]] = True
            agree += float(bm[yes].sum())
            disagree += float(bm[no].sum())
            mass_err += float(be[yes | no].sum())
            n_decided += int((yes | no).sum())
            und = ~(yes | no)
            if und.any():
                ul, uh = lo[und], hi[und]
                f, b = prep.split_points(
                    ul, uh, ok[und], lb[und], mins[und], maxs[und], counts[und]
                )
                r = np.arange(ul.shape[0])
                left_hi = uh.copy()
                left_hi[r, f] = b
                right_lo = ul.copy()
                right_lo[r, f] = b
                new_lo += [ul, right_lo]
                new_hi += [left_hi, uh]
        if new_lo:
            nl = np.concatenate(new_lo)
            nh = np.concatenate(new_hi)
            nm, ne = masses(nl, nh)
            F_lo = np.concatenate([F_lo, nl])
            F_hi = np.concatenate([F_hi, nh])
            F_m = np.concatenate([F_m, nm])
            F_e = np.concatenate([F_e, ne])
        last_batch = time.perf_counter() - t_batch
    lower = agree
    upper = 1.0 - disagree
    if upper < lower:  # float rounding when nothing is left undecided
        upper = lower = (lower + upper) / 2.0
    gap = upper - lower
    if tol > 0 and gap > tol:
        converged = False
    return EngineResult(
        lower=lower,
        upper=upper,
        robustness=(lower + upper) / 2.0,
        gap=gap,
        label=ensemble.classes[y],
        n_boxes=n_boxes,
        n_decided=n_decided,
        outside_mass=outside,
        dropped_mass=dropped,
        mass_error=mass_err,
        exact=(outside == 0.0 and dropped == 0.0 and converged),
        converged=converged,
        seconds=time.perf_counter() - t0,
        n_active_features=int(len(prep.active)),
        n_live_trees=int(prep.n_live),
        pending=kept,
    )
