"""Tree robustness at any scale: certified where possible, a valid interval always.

``robustness(model, x, noise)`` answers R(x) = P(f(x') = f(x)), x' ~ noise around x (papers
001/002, eq. 1). By default with a fixed amount of work (deterministic mode: at most
``DEFAULT_MAX_BOXES`` certified boxes, then at most ``DEFAULT_MAX_DRAWS`` draws; identical
numbers from identical calls on any machine, :mod:`reliquant.trees.budget`); with
``time_budget=`` seconds, where a user asks for it, within that time:

0. **Pilot** (timed mode): two chunks of plain draws on a stream of their own (discarded)
   measure the kernel's rate and how long plain sampling needs for ``half_width``.
1. **Certify** (:func:`reliquant.trees.engine.exact_robustness`, at most ``certify_fraction``
   of the budget, and only while the gap shrinks fast enough to pay for its time against the
   time left *and* against the pilot's plain-sampling time, unless at its current rate the
   gap would reach ``tol`` within the certification time, :class:`reliquant.trees.budget.StallRule`; batches of
   64 boxes, so that it can stop after a few milliseconds): decided
   boxes give certified ``lower <= R <= upper``. When ``upper - lower <= tol`` the answer
   is exact (small models: Tables 1-3). Where plain sampling is quick (R near 0 or 1) or
   the gap does not shrink (large forests, wide noise), certification stops early.
2. **Sample only what is undecided.** With independent noise and a certified gap below
   ``STRATIFY_BELOW`` the pending boxes are strata: a box is drawn with probability
   proportional to its mass, then the noise truncated to it (:mod:`reliquant.trees.kernel`).
   With ``P`` the pending mass, ``o`` the mass outside the engine's root box and ``p`` =
   P(label kept | pending), ``R = lower + P p + theta o`` for some ``theta`` in [0, 1], so
   an interval for ``p`` gives ``[lower + P p_lo, upper - P (1 - p_hi)]``: its width scales
   with ``upper - lower``. Otherwise (a gap near 1: strata would not reduce the variance
   and cost more per draw; correlated or NORTA noise) the kernel draws plain samples of the
   noise (independent noise: truncated to the engine's root box, outside which lies at most
   ``tol / 2`` of the mass ``o``, so ``R = (1 - o) p + theta o``; fewer features and shallower
   trees to draw) and the interval is intersected with the certified bounds (widened by the
   integrator's error).
3. The interval for ``p`` holds at ``confidence`` at any stopping time (union bound over two
   pieces): the beta-binomial mixture confidence sequence of
   :mod:`reliquant.trees.confidence` at ``SEQ_SHARE * (1 - confidence)``, valid at every
   sample size, intersected, from a look ``n_final`` fixed before any counted draw (the
   pilot's estimate of the draws for ``half_width``, or of what the time left allows), with
   the Clopper-Pearson interval at the rest of ``1 - confidence`` at that look. The
   sequence alone is about 1.55 times wider than a fixed-size interval at its tuned size;
   the fixed look brings the width within about 5 % of it.

Reading a result: ``lower``/``upper`` are certain (up to float rounding; for correlated
noise up to the QMC integrator's error target); ``ci_low``/``ci_high`` hold R with
probability >= ``confidence`` and always lie inside ``[lower, upper]``; ``exact`` means
``upper - lower <= tol``. ``status`` says what the answer rests on: ``"exact"``,
``"sampled"`` (draws were made), or ``"bounds_only"`` (deterministic mode only, never in a
timed call): no draw was made, so the answer is the certified ``[lower, upper]`` alone and
``estimate`` is NaN (never a made-up 0.5).

What the budget covers: the whole call, from reading the model (pass a
:class:`TreeEnsemble`, or use :func:`robustness_batch`, to read a model once for many
samples) to the answer. ``seconds`` is the call's wall time; it stays within
:func:`budget_allowance` (``time_budget`` plus ``BUDGET_TOLERANCE``: 10 % + 50 ms), or
``overrun`` says why not. The certification never starts a batch of boxes that would, at
its pace so far, end past its time limit, and a round of draws is never planned past the
deadline. A budget too short to certify or to sample still answers from the pilot's two
chunks of plain draws (step 0; the mixture confidence sequence at the whole ``1 -
confidence``, valid at any stop), so a timed call never ends with no draw. Compiling the
numba kernel is not charged: ``import reliquant.trees`` compiles it (once per machine:
numba caches it on disk; later imports load it in a fraction of a second), :func:`warm_up`
does it explicitly, and a kernel specialisation first met inside a call is compiled with
its deadline moved by that time; ``overrun`` then names it.

Inputs are matched to the model's features by name when both have names
(:mod:`reliquant.trees.inputs`); every argument is checked and refused with its name
(``time_budget``, ``half_width``, ``max_draws``, ``max_boxes``, ``tol``, ...).

Public API: :func:`robustness` -> :class:`RobustnessResult`, :func:`robustness_batch`,
:func:`warm_up` (compile the kernel before timing anything), :data:`STATUSES`; from
:mod:`reliquant.trees.budget`: :data:`BUDGET_TOLERANCE`, :data:`DEFAULT_MAX_BOXES`,
:data:`DEFAULT_MAX_DRAWS`, :func:`budget_allowance`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, fields
from numbers import Integral, Real

import numpy as np
import pandas as pd

from reliquant.core.progress import progress_bar
from reliquant.core.seeding import block_int_seed
from reliquant.trees.budget import (
    BUDGET_TOLERANCE,
    DEFAULT_MAX_BOXES,
    DEFAULT_MAX_DRAWS,
    Clock,
    StallRule,
    batch_overrun,
    budget_allowance,
    resolve_budget,
    row_budgets,
)
from reliquant.trees.engine import EngineResult, exact_robustness, root_box
from reliquant.trees.inputs import match_features, noise_in_model_order, noise_spec
from reliquant.trees.kernel import chunk_seeds, compile_for, count_agree
from reliquant.trees.leaf_tables import LeafTables
from reliquant.trees.plan import build_plan
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.sampling_phase import (
    CHUNK,
    PILOT_STREAM,
    ROUND_CHUNKS,
    SEQ_SHARE,
    TIME_SHARE,
    draws_for,
    pilot_answer,
    run_pilot,
    sample_until,
    sampling_pieces,
)
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "BUDGET_TOLERANCE",
    "CHUNK",
    "DEFAULT_MAX_BOXES",
    "DEFAULT_MAX_DRAWS",
    "PILOT_STREAM",
    "REGION_MIN_BUDGET",
    "ROUND_CHUNKS",
    "RobustnessResult",
    "SEQ_SHARE",
    "STATUSES",
    "STOP_REASONS",
    "STRATIFY_BELOW",
    "TIME_SHARE",
    "budget_allowance",
    "robustness",
    "robustness_batch",
    "warm_up",
]

STOP_REASONS = ("exact", "half_width", "time_budget", "max_draws")
#: ``RobustnessResult.status``: exact (certified gap <= tol), sampled (draws made), or
#: bounds_only (no draw could be made: the certified bounds are the answer, estimate NaN).
STATUSES = ("exact", "sampled", "bounds_only")
STRATIFY_BELOW = 0.7  # certified gap below which the pending boxes are sampled as strata
#: Below this budget (s) plain draws cover the whole space, whose sampling plan is built once
#: per model (cached), instead of the sample's root box, whose plan is built per sample
#: (linear in the model's size: a tenth of a second for 100 deep trees).
REGION_MIN_BUDGET = 0.5


@dataclass(frozen=True)
class RobustnessResult:
    """label: f(x); lower/upper: certified bounds; estimate and ci_low..ci_high (valid at
    ``confidence``, inside [lower, upper]); exact: upper - lower <= tol; n_draws: kernel
    draws; seconds: wall time of the whole call; stop: one of ``STOP_REASONS``;
    certify_seconds, n_boxes: the certification phase; n_strata: pending boxes sampled;
    n_in_play/n_live_trees: the sampled features and trees; status: one of ``STATUSES``
    (``"bounds_only"``: no draw was made, ``estimate`` is NaN and ``ci_low..ci_high`` are
    the certified bounds; a timed call always draws); overrun: why a timed call took
    longer than :func:`budget_allowance` (``""`` when it did not); budget: what bounded the
    call (``"max_boxes=256, max_draws=131072"``: reproducible; ``"time_budget=2 s"``: timed,
    :func:`reliquant.trees.budget.resolve_budget`)."""

    label: object
    lower: float
    upper: float
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    exact: bool
    n_draws: int
    seconds: float
    stop: str
    certify_seconds: float = 0.0
    n_boxes: int = 0
    n_strata: int = 0
    n_in_play: int = 0
    n_live_trees: int = 0
    status: str = "sampled"
    overrun: str = ""
    budget: str = ""

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2.0


def _as_ensemble(model) -> TreeEnsemble:
    return model if isinstance(model, TreeEnsemble) else extract_ensemble(model)


def _bind(noise, x: np.ndarray, ens: TreeEnsemble):
    """A spec (:mod:`reliquant.trees.noise`) bound to ``x``, or a bound model checked."""
    if hasattr(noise, "bind"):
        return noise.bind(x, ens.n_features)
    d = getattr(noise, "d", None)
    if d != ens.n_features:
        raise ValueError(f"noise has {d} features but the model has {ens.n_features}")
    return noise


def _number(name: str, value, *, low: float, low_open: bool, integer: bool = False):
    """``value`` checked: a real number (an integer when ``integer``), not NaN, finite, and
    above ``low`` (or at least ``low`` when not ``low_open``); else a ValueError naming it."""
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool | np.bool_) or not isinstance(
        value, Integral | np.integer if integer else Real | np.number
    ):
        raise ValueError(f"{name} must be {kind}; got {value!r} ({type(value).__name__})")
    v = int(value) if integer else float(value)
    if not integer and not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    if v < low or (low_open and v == low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}; got {value!r}")
    return v


def _check_arguments(time_budget, confidence, tol, half_width, certify_fraction, max_draws,
                     max_boxes) -> None:  # fmt: skip
    """Refuse every invalid argument of :func:`robustness`, naming it."""
    if time_budget is not None:
        _number("time_budget", time_budget, low=0.0, low_open=True)
    _number("confidence", confidence, low=0.0, low_open=True)
    if not confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}")
    _number("tol", tol, low=0.0, low_open=False)
    _number("half_width", half_width, low=0.0, low_open=True)
    _number("certify_fraction", certify_fraction, low=0.0, low_open=False)
    if not certify_fraction <= 1:
        raise ValueError(f"certify_fraction must be in [0, 1]; got {certify_fraction!r}")
    if max_draws is not None:
        _number("max_draws", max_draws, low=0, low_open=True, integer=True)
    if max_boxes is not None:
        _number("max_boxes", max_boxes, low=0, low_open=False, integer=True)


def _plain_region(ens, noise, tol: float, independent: bool) -> tuple:
    """(root_lo, root_hi, outside mass) of plain draws: the engine's root box (all but
    ``tol / 2`` of the mass, edges at split boundaries, :func:`reliquant.trees.engine.root_box`)
    for independent noise, where features and splits that cut only outside it drop out of
    the draw; else the whole space."""
    if not independent or tol <= 0 or not hasattr(noise, "outside_mass"):
        return None, None, 0.0
    lo, hi = root_box(ens, noise, tol)
    if np.all(np.isneginf(lo)) and np.all(np.isposinf(hi)):
        return None, None, 0.0
    return lo, hi, float(noise.outside_mass(lo, hi))


def _uncertified(ens: TreeEnsemble, noise, y: int, tol: float, tables: bool = True) -> EngineResult:
    """What :func:`reliquant.trees.engine.exact_robustness` gives the sampling phase when it
    may bound no box (``max_boxes=0``) under noise that does not factorise, without its
    integral: the bounds ``[0, 1]`` (no box decided), no pending boxes (plain draws follow),
    and its live trees in the root box (:class:`reliquant.trees.leaf_tables.LeafTables`;
    ``tables=False``: not counted, 0, for a timed call with no time left to build them).
    The engine would also integrate the root box's mass (one QMC integral); here that mass
    only widens ``[0, 1]`` by its error, which :func:`sampling_pieces` clips back to ``[0, 1]``, so
    the mass fields are left at 0 and the result is the same."""
    n_active = n_live = 0  # without ``tables`` (a timed call out of time): not counted
    if tables:
        root_lo, root_hi = root_box(ens, noise, tol)
        prep = LeafTables(ens, y, root_lo, root_hi)
        n_active, n_live = int(len(prep.active)), int(prep.n_live)
    return EngineResult(
        lower=0.0, upper=1.0, robustness=0.5, gap=1.0, label=ens.classes[y], n_boxes=0,
        n_decided=0, outside_mass=0.0, dropped_mass=0.0, mass_error=0.0, exact=False,
        converged=False, seconds=0.0, n_active_features=n_active, n_live_trees=n_live,
        pending=None,
    )  # fmt: skip


def robustness(
    model,
    x: np.ndarray,
    noise,
    *,
    time_budget: float | None = None,
    confidence: float = 0.95,
    tol: float = 1e-9,
    seed: int = 0,
    half_width: float = 1e-4,
    certify_fraction: float = 0.25,
    max_draws: int | None = None,
    max_boxes: int | None = None,
) -> RobustnessResult:
    """R(x) = P(f(x') = f(x)) for ``x' ~ noise`` around ``x``: reproducible by default (a
    fixed amount of work), within ``time_budget`` s where one is given.

    ``model``: a fitted scikit-learn tree classifier, forest or gradient boosting classifier
    (classic or histogram), an XGBoost or LightGBM classifier or Booster (or a
    :class:`TreeEnsemble`). ``x``: one sample: an array in the model's feature order, or a
    pandas Series / one-row DataFrame, matched to the model's feature names by name when the
    model knows them (:mod:`reliquant.trees.inputs`; missing or unknown names are refused).
    ``noise``: :class:`reliquant.trees.noise.Gaussian` or :class:`reliquant.trees.noise.Norta`
    (bound to ``x`` here; named parts matched to the model's features by name, plain
    vectors in the model's order: :mod:`reliquant.trees.inputs`), a bare number ``v`` (=
    ``Gaussian(v)``: isotropic normal noise of variance ``v``), or a bound model of
    :mod:`reliquant.trees.box_mass`. ``time_budget`` (s, > 0; default ``None``: the
    deterministic mode below): the wall time of this call, reading the model included,
    within :func:`budget_allowance` (10 % + 50 ms), else ``overrun`` says why (compiling a
    new kernel specialisation is not charged: module docstring).
    ``tol`` (>= 0): certified gap that counts as exact; ``half_width`` (> 0): the
    statistical half-width at which sampling stops early; ``certify_fraction`` (in [0, 1]):
    most share of the budget for the branch and bound; ``max_draws`` (>= 1): cap on kernel
    draws. Every argument is checked, and an invalid one is refused naming it.

    Timed mode: a pilot of plain draws (on a stream of its own) first measures how long
    plain sampling needs for ``half_width``; certification stops when it no longer pays
    against that (:class:`reliquant.trees.budget.StallRule`), and the sampling phase then draws from the pending
    boxes when the certified gap is below ``STRATIFY_BELOW``, else plainly (cheaper per draw).

    Deterministic mode, the default (two identical calls give identical numbers on any
    machine; :mod:`reliquant.trees.budget`): the certification phase bounds at most
    ``max_boxes`` boxes (default :data:`DEFAULT_MAX_BOXES`, no time limit), then at most
    ``max_draws`` draws (default :data:`DEFAULT_MAX_DRAWS`) in rounds of a fixed size; the
    result depends on the inputs and ``seed`` only. A ``time_budget`` next to ``max_boxes``
    is ignored. ``result.budget`` names what bounded the call.
    With ``max_boxes=0`` under noise that does not factorise nothing is certified: the
    bounds are ``[0, 1]`` and the engine's root-box integral, which could only widen them,
    is skipped (:func:`_uncertified`).
    """
    t_call = time.perf_counter()  # the budget covers the whole call (module docstring)
    _check_arguments(time_budget, confidence, tol, half_width, certify_fraction, max_draws,
                     max_boxes)  # fmt: skip
    ens = _as_ensemble(model)
    t_read = time.perf_counter() - t_call
    x, perm, names = match_features(x, ens, one=True)
    noise = noise_in_model_order(noise_spec(noise), ens, perm, names)
    bound = _bind(noise, x, ens)
    y = int(ens.predict_index(x)[0])
    independent = bool(getattr(bound, "independent", False))
    deterministic, max_boxes, max_draws, budget = resolve_budget(time_budget, max_boxes, max_draws)
    clock = Clock(t_call, np.inf if deterministic else float(time_budget), t_read)
    box_lo, box_hi, outside = (None, None, 0.0)
    if not deterministic and time_budget >= REGION_MIN_BUDGET:
        box_lo, box_hi, outside = _plain_region(ens, bound, tol, independent)
    tb = time.perf_counter()
    plain = build_plan(ens, bound, y, box_lo, box_hi)
    clock.plan = time.perf_counter() - tb
    clock.compiled(compile_for(plain))  # a specialisation met first here: not charged
    pilot = plain_pilot = (np.inf, 0.5, 1)
    t_cert = 0.0
    if deterministic:
        limits = {"max_boxes": max_boxes}
    else:
        tp = time.perf_counter()
        pilot = plain_pilot = run_pilot(plain, seed)
        clock.pilot = time.perf_counter() - tp
        alpha = (1.0 - SEQ_SHARE) * (1.0 - confidence)
        t_plain = draws_for(pilot[1], pilot[2], half_width, alpha) / pilot[0]
        warmup = min(0.05 * time_budget, max(0.5 * t_plain, 0.005 * time_budget))
        te = time.perf_counter()
        t_cert = min(certify_fraction * time_budget, clock.deadline - te)
        rule = StallRule(clock.deadline, te, warmup, t_plain=t_plain, tol=tol, t_certify=t_cert)
        limits = {"time_limit": t_cert, "stop_when": rule}
    t_eng = time.perf_counter()
    no_time = max_boxes == 0 if deterministic else t_cert <= 0
    if no_time and not independent and tol < 1:
        eng = _uncertified(ens, bound, y, tol, tables=deterministic)  # no integral, no time
    else:
        eng = exact_robustness(
            ens, bound, x, tol=tol, batch=(256 if deterministic else 64) if independent else 4,
            max_memory=2.5e8,
            keep_pending=True, **limits,
        )  # fmt: skip
    cert_s = time.perf_counter() - t_eng
    clock.certify_over = 0.0 if deterministic else max(0.0, cert_s - max(t_cert, 0.0))
    common = {"label": ens.classes[y], "confidence": confidence, "certify_seconds": cert_s,
              "n_boxes": eng.n_boxes, "n_live_trees": eng.n_live_trees, "budget": budget}  # fmt: skip
    if eng.gap <= tol or eng.pending is None and eng.converged:
        return RobustnessResult(
            lower=eng.lower, upper=eng.upper, estimate=eng.robustness, ci_low=eng.lower,
            ci_high=eng.upper, exact=True, n_draws=0, stop="exact", status="exact",
            **clock.finish(), **common,
        )  # fmt: skip
    pend = eng.pending
    stratified = independent and pend is not None and (deterministic or eng.gap < STRATIFY_BELOW)
    plan = plain
    if stratified and not deterministic and time.perf_counter() >= clock.deadline:
        stratified = False  # no time left to draw from strata: the pilot's draws answer
    if stratified:
        strata = (pend.lo, pend.hi, pend.mass, pend.active)
        plan = build_plan(ens, bound, y, pend.root_lo, pend.root_hi, strata)
        clock.compiled(compile_for(plan))
        if not deterministic:
            pilot = run_pilot(plan, seed)
    pieces = sampling_pieces(eng, stratified, outside)
    ci_low, ci_high, est, n, stop = sample_until(
        plan, pieces, deadline=clock.deadline, confidence=confidence, half_width=half_width,
        seed=seed, max_draws=max_draws, pilot=pilot,
    )  # fmt: skip
    lo, hi = pieces[3], pieces[4]
    if n == 0 and not deterministic:  # the budget was spent before a counted draw
        pieces = sampling_pieces(eng, False, outside)
        lo, hi = pieces[3], pieces[4]
        ci_low, ci_high, est, n = pilot_answer(plain_pilot, pieces, confidence)
        plan, stop = plain, "time_budget"
    exact = hi - lo <= tol
    status = "exact" if exact else "sampled" if n else "bounds_only"
    if exact and not n:
        est = min(max((lo + hi) / 2.0, ci_low), ci_high)
    return RobustnessResult(
        lower=lo, upper=hi, estimate=est, ci_low=ci_low, ci_high=ci_high, status=status,
        exact=exact, n_draws=n, stop=stop, **clock.finish(),
        n_strata=len(plan.cum) if len(plan.cum) > 1 else 0, n_in_play=plan.n_in_play, **common,
    )  # fmt: skip


def warm_up(full: bool = True) -> float:
    """Compile the numba kernel (or load it from numba's disk cache) on a one-stump model, so
    that no :func:`robustness` budget is spent compiling; returns the seconds it took.

    ``import reliquant.trees`` calls ``warm_up(full=False)``: the kernels :func:`robustness`
    draws with. On a machine with an empty numba cache (a fresh clone) that compiles them
    once, which takes tens of seconds (the closing note of ``docs/trees.md`` gives the
    numbers); numba then caches them on disk (``__pycache__`` beside
    :mod:`reliquant.trees.kernel`) and later imports load them in a fraction of a second.
    ``full=True`` also compiles the kernel's testing and validation helpers
    (:func:`reliquant.trees.kernel.sample_bins`, ``labels_of_bins``, ``bins_of``).
    """
    from reliquant.trees.box_mass import IndependentNormal
    from reliquant.trees.kernel import bins_of, labels_of_bins, sample_bins
    from reliquant.trees.structure import stump_ensemble

    t0 = time.perf_counter()
    ens = stump_ensemble()
    plan = build_plan(ens, IndependentNormal(np.zeros(1), 1.0), 0)
    compile_for(plan)
    chunk_seeds(0, 0, 2)
    if full:
        count_agree(plan, chunk_seeds(0, 0, 2), 8, 16)
        labels_of_bins(plan, bins_of(plan, np.zeros((2, 1))))
        sample_bins(plan, 0, 4)
    return time.perf_counter() - t0


def robustness_batch(
    model, X, noise, *, seed: int = 0, progress: bool | None = None, **kwargs
) -> pd.DataFrame:
    """:func:`robustness` for every row of ``X`` (one noise spec, bound to each row; row ``i``
    seeded ``block_int_seed(seed, "anytime", i)``): a DataFrame, one row per sample, with
    the fields of :class:`RobustnessResult` and ``half_width``.

    The model is read and checked once. ``X``: a 2-D array in the model's feature order, or
    a DataFrame matched to the model's feature names by name when it knows them (missing or
    unknown names are refused, naming both lists; :mod:`reliquant.trees.inputs`); the noise
    is matched the same way (a plain vector is in the model's order, and refused next to a
    reordered ``X``).

    By default every row is computed in :func:`robustness`'s deterministic mode (a fixed
    amount of work: identical numbers from identical calls; ``frame.attrs["budget"]`` names
    it). Timed mode (``time_budget`` seconds per row, where a user asks for it): the whole
    batch, reading the model included, takes at most ``len(X)`` budgets plus the tolerance
    (:func:`budget_allowance`): a row's budget is cut, to at least half of it, while the batch
    is behind that schedule (:func:`reliquant.trees.budget.row_budgets`); each row's ``seconds`` is its own wall time and ``overrun`` says
    why a row ran past its budget. ``frame.attrs["seconds"]`` is the batch's wall time and
    ``frame.attrs["overrun"]`` says why it exceeded ``budget_allowance(len(X) * time_budget)``
    (``""`` when it did not; e.g. reading the model, which is charged to the batch). No
    rows: a frame of 0 rows with every column.
    ``progress``: a progress bar with the time left (:func:`reliquant.core.progress.show_progress`:
    by default on in a terminal only)."""
    t_start = time.perf_counter()
    ens = _as_ensemble(model)
    t_read = time.perf_counter() - t_start
    values, perm, names = match_features(X, ens, one=False, what="X")
    noise = noise_in_model_order(noise_spec(noise), ens, perm, names)
    budget = kwargs.pop("time_budget", None)
    timed = budget is not None and kwargs.get("max_boxes") is None
    if timed:
        _number("time_budget", budget, low=0.0, low_open=True)
    budgets = row_budgets(float(budget), len(values), t_start) if timed else None
    rows = []
    bar = progress_bar(values, desc="robustness", unit="sample", progress=progress)
    for i, x in enumerate(bar):
        b = next(budgets) if timed else budget
        r = robustness(ens, x, noise, seed=block_int_seed(seed, "anytime", i), time_budget=b,
                       **kwargs)  # fmt: skip
        rows.append({"sample": i, **asdict(r), "half_width": r.half_width})
    columns = ["sample", *(f.name for f in fields(RobustnessResult)), "half_width"]
    frame = pd.DataFrame(rows, columns=columns)
    seconds = time.perf_counter() - t_start
    frame.attrs["seconds"] = seconds
    frame.attrs["budget"] = resolve_budget(budget, kwargs.get("max_boxes"),
                                           kwargs.get("max_draws"))[3]  # fmt: skip
    frame.attrs["overrun"] = (
        batch_overrun(seconds, float(budget), len(values), t_read, frame) if timed else ""
    )
    return frame


# Importing this module (``from reliquant.trees import robustness`` does) compiles the kernels
# robustness() draws with, or loads them from numba's disk cache, so that no time budget is
# spent compiling (issue 22; docs/trees.md, "The compiled kernel").
warm_up(full=False)
