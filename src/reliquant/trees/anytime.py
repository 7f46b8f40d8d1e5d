"""Tree robustness at any scale: certified where possible, a valid interval always.

``robustness(model, x, noise)`` answers R(x) = P(f(x') = f(x)), x' ~ noise around x (papers
001/002, eq. 1) within a time budget:

1. **Certify** (:func:`reliquant.trees.engine.exact_robustness`, at most ``certify_fraction``
   of the budget, and only while the gap shrinks fast enough to pay for its time,
   :class:`_StallRule`): decided boxes give certified ``lower <= R <= upper``.
   When ``upper - lower <= tol`` the answer is exact (small models: Tables 1-3).
2. **Sample only what is undecided.** With independent noise the pending boxes are strata:
   a box is drawn with probability proportional to its mass, then the noise truncated to it
   (:mod:`reliquant.trees.kernel`). With ``P`` the pending mass, ``o`` the mass outside the
   engine's root box and ``p`` = P(label kept | pending),
   ``R = lower + P p + theta o`` for some ``theta`` in [0, 1], so an interval for ``p`` gives
   ``[lower + P p_lo, upper - P (1 - p_hi)]``: its width scales with ``upper - lower``.
   With correlated or NORTA noise the kernel draws plain samples of the whole noise and the
   interval is intersected with the certified bounds (widened by the integrator's error).
3. The interval for ``p`` is the beta-binomial mixture confidence sequence of
   :mod:`reliquant.trees.confidence`, valid at every sample size, so stopping when the
   half-width reaches ``half_width`` or when the budget is spent keeps ``confidence``.

Reading a result: ``lower``/``upper`` are certain (up to float rounding; for correlated
noise up to the QMC integrator's error target); ``ci_low``/``ci_high`` hold R with
probability >= ``confidence`` and always lie inside ``[lower, upper]``; ``exact`` means
``upper - lower <= tol``.

Public API: :func:`robustness` -> :class:`RobustnessResult`, :func:`robustness_batch`,
:func:`warm_up` (compile the kernel before timing anything).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from reliquant.core.seeding import block_int_seed
from reliquant.trees.confidence import mixture_interval, tuned_rho
from reliquant.trees.engine import exact_robustness
from reliquant.trees.kernel import chunk_seeds, count_agree
from reliquant.trees.plan import build_plan
from reliquant.trees.structure import TreeEnsemble, extract_ensemble

STOP_REASONS = ("exact", "half_width", "time_budget", "max_draws")
CHUNK = 4096  # draws per kernel chunk (one random stream each)
ROUND_CHUNKS = 32  # chunks between looks in deterministic mode


@dataclass(frozen=True)
class RobustnessResult:
    """label: f(x); lower/upper: certified bounds; estimate and ci_low..ci_high (valid at
    ``confidence``, inside [lower, upper]); exact: upper - lower <= tol; n_draws: kernel
    draws; seconds: wall time; stop: one of ``STOP_REASONS``; certify_seconds, n_boxes:
    the certification phase; n_strata: pending boxes sampled; n_in_play/n_live_trees: the
    sampled features and trees."""

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


class _StallRule:
    """Stop certifying when the gap shrinks too slowly to pay for the time it takes.

    The sampling half-width scales like ``gap / sqrt(sampling time)``, so a further
    ``dt`` of certification pays while ``-d log(gap) / dt > 1 / (2 (deadline - now))``.
    The rate is measured over the last ``window`` share of the elapsed time, after a
    ``warmup`` (the first batches are tiny).
    """

    def __init__(self, deadline: float, t0: float, warmup: float, window: float = 0.5) -> None:
        self.deadline, self.t0, self.warmup, self.window = deadline, t0, warmup, window
        self.history: list[tuple[float, float]] = []

    def __call__(self, seconds: float, gap: float) -> bool:
        now = self.t0 + seconds
        self.history.append((seconds, max(gap, 1e-300)))
        past = [h for h in self.history if h[0] <= seconds * (1 - self.window)]
        if not past or seconds < self.warmup:
            return False
        s0, g0 = past[-1]
        rate = (np.log(g0) - np.log(gap)) / max(seconds - s0, 1e-9)
        return rate < 1.0 / (2.0 * max(self.deadline - now, 1e-9))


def _sampling_phase(ens, noise, y, eng, *, deadline, confidence, half_width, seed, max_draws):
    """Draw until the half-width, the deadline or ``max_draws``; returns the interval pieces.

    With ``deadline = inf`` (deterministic mode) rounds have a fixed size, so the looks, the
    stop and the interval depend on the seed only, never on timing."""
    independent = bool(getattr(noise, "independent", False))
    pend = eng.pending
    stratified = independent and pend is not None
    if stratified:
        strata = (pend.lo, pend.hi, pend.mass, pend.active)
        plan = build_plan(ens, noise, y, pend.root_lo, pend.root_hi, strata)
        scale, base, extra = float(pend.mass.sum()), eng.lower, eng.outside_mass
        cert_lo, cert_hi = eng.lower, eng.upper
    else:  # plain draws of the whole noise, intersected with the certified bounds
        plan = build_plan(ens, noise, y)
        scale, base, extra = 1.0, 0.0, 0.0
        cert_lo = max(0.0, eng.lower - eng.mass_error)
        cert_hi = min(1.0, eng.upper + eng.mass_error)
    alpha = 1.0 - confidence
    # timing warm-up on a separate stream (values discarded), then a prior tuned to the
    # number of draws the remaining time allows (fixed before any counted draw)
    timed = bool(np.isfinite(deadline))
    rate, planned = ROUND_CHUNKS * CHUNK / 0.25, max_draws
    if timed:
        tw = time.perf_counter()
        count_agree(plan, chunk_seeds(seed ^ 0x5DEECE66D, 0, 2), CHUNK, 2 * CHUNK)
        rate = 2 * CHUNK / max(time.perf_counter() - tw, 1e-9)
        planned = max(rate * max(deadline - time.perf_counter(), 0.0), 1e4)
        planned = planned if max_draws is None else min(planned, max_draws)
    rho = tuned_rho(planned, alpha)
    s = n = 0
    p_lo, p_hi = 0.0, 1.0
    stop, next_chunk, rounds = "time_budget", 0, 0
    while True:
        left = deadline - time.perf_counter()
        step = min(0.25, 0.02 * 2.0**rounds, max(left, 0.0) / 2)  # looks: 20 ms, 40 ms, ...
        m = max(2, int(min(rate * step, 1e9) // CHUNK))
        rounds += 1
        m = m if timed else ROUND_CHUNKS
        if max_draws is not None:
            m = min(m, max(0, -(-(max_draws - n) // CHUNK)))
        total = m * CHUNK if max_draws is None else min(m * CHUNK, max_draws - n)
        if total <= 0 or left <= 0:
            stop = "time_budget" if total > 0 else "max_draws"
            break
        counts = count_agree(plan, chunk_seeds(seed, next_chunk, m), CHUNK, total)
        next_chunk += m
        s += int(counts.sum())
        n += total
        lo, hi = mixture_interval(s, n, alpha, rho)
        p_lo, p_hi = max(p_lo, lo), min(p_hi, hi)  # running intersection
        if scale * (p_hi - p_lo) / 2.0 + extra / 2.0 <= half_width:
            stop = "half_width"
            break
        if time.perf_counter() >= deadline:
            break
    # R = lower + P p + theta o = upper - P (1 - p) - (1 - theta) o  (module docstring)
    ci_low = max(cert_lo, base + scale * p_lo)
    ci_high = cert_hi - scale * (1.0 - p_hi) if stratified else min(cert_hi, p_hi)
    p_hat = s / n if n else 0.5
    estimate = min(max(base + (scale + extra) * p_hat, ci_low), ci_high)
    return plan, (ci_low, ci_high, estimate, n, stop, cert_lo, cert_hi)


def robustness(
    model,
    x: np.ndarray,
    noise,
    *,
    time_budget: float = 2.0,
    confidence: float = 0.95,
    tol: float = 1e-9,
    seed: int = 0,
    half_width: float = 1e-4,
    certify_fraction: float = 0.25,
    max_draws: int | None = None,
    max_boxes: int | None = None,
) -> RobustnessResult:
    """R(x) = P(f(x') = f(x)) for ``x' ~ noise`` around ``x`` within ``time_budget`` s.

    ``model``: a fitted scikit-learn tree classifier, forest or gradient boosting classifier
    (classic or histogram), an XGBoost or LightGBM classifier or Booster (or a
    :class:`TreeEnsemble`). ``noise``: :class:`reliquant.trees.noise.Gaussian` or
    :class:`reliquant.trees.noise.Norta` (bound to ``x`` here), or a bound model of
    :mod:`reliquant.trees.box_mass`. ``tol``: certified gap that counts as exact;
    ``half_width``: the statistical half-width at which sampling stops early;
    ``certify_fraction``: share of the budget for the branch and bound; ``max_draws``: cap
    on kernel draws. The first call in a process compiles the kernel (numba, cached on disk;
    :func:`warm_up` does it ahead).

    Deterministic mode (for tables that must be identical between runs): ``max_boxes`` (the
    certification phase bounds at most that many boxes, no time limit) together with
    ``max_draws``; ``time_budget`` is then ignored and the result depends on ``seed`` only.
    """
    t0 = time.perf_counter()
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence}")
    if time_budget <= 0 or not 0 <= certify_fraction <= 1:
        raise ValueError("time_budget must be > 0 and certify_fraction in [0, 1]")
    ens = _as_ensemble(model)
    x = np.asarray(x, dtype=np.float64)
    bound = _bind(noise, x, ens)
    y = int(ens.predict_index(x)[0])
    independent = bool(getattr(bound, "independent", False))
    deterministic = max_boxes is not None
    if deterministic and max_draws is None:
        raise ValueError("deterministic mode (max_boxes) needs max_draws as well")
    limits = (
        {"max_boxes": max_boxes}
        if deterministic
        else {"time_limit": certify_fraction * time_budget,
              "stop_when": _StallRule(t0 + time_budget, t0, warmup=0.1 * time_budget)}
    )  # fmt: skip
    eng = exact_robustness(
        ens, bound, x, tol=tol, batch=256 if independent else 4, max_memory=2.5e8,
        keep_pending=True, **limits,
    )  # fmt: skip
    cert_s = time.perf_counter() - t0
    common = {"label": ens.classes[y], "confidence": confidence, "certify_seconds": cert_s,
              "n_boxes": eng.n_boxes, "n_live_trees": eng.n_live_trees}  # fmt: skip
    if eng.gap <= tol or eng.pending is None and eng.converged:
        return RobustnessResult(
            lower=eng.lower, upper=eng.upper, estimate=eng.robustness, ci_low=eng.lower,
            ci_high=eng.upper, exact=True, n_draws=0, seconds=time.perf_counter() - t0,
            stop="exact", **common,
        )  # fmt: skip
    plan, (ci_low, ci_high, est, n, stop, lo, hi) = _sampling_phase(
        ens, bound, y, eng, deadline=np.inf if deterministic else t0 + time_budget,
        confidence=confidence,
        half_width=half_width, seed=seed, max_draws=max_draws,
    )  # fmt: skip
    return RobustnessResult(
        lower=lo, upper=hi, estimate=est, ci_low=ci_low, ci_high=ci_high,
        exact=hi - lo <= tol, n_draws=n, seconds=time.perf_counter() - t0, stop=stop,
        n_strata=len(plan.cum) if len(plan.cum) > 1 else 0, n_in_play=plan.n_in_play, **common,
    )  # fmt: skip


def warm_up() -> float:
    """Compile (or load from numba's disk cache) every kernel on a one-stump model, so the
    first :func:`robustness` call's budget is not spent compiling; returns the seconds."""
    from reliquant.trees.box_mass import IndependentNormal
    from reliquant.trees.kernel import bins_of, labels_of_bins, sample_bins
    from reliquant.trees.structure import Tree

    t0 = time.perf_counter()
    stump = Tree(np.array([0, -1, -1], dtype=np.int32), np.array([0.0, np.nan, np.nan]),
                 np.array([1, -1, -1], dtype=np.int32), np.array([2, -1, -1], dtype=np.int32),
                 np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]))  # fmt: skip
    ens = TreeEnsemble((stump,), 1, 2, "le32", "mean_proba", np.arange(2), np.array([-1]),
                       np.zeros(2))  # fmt: skip
    plan = build_plan(ens, IndependentNormal(np.zeros(1), 1.0), 0)
    count_agree(plan, chunk_seeds(0, 0, 2), 8, 16)
    labels_of_bins(plan, bins_of(plan, np.zeros((2, 1))))
    sample_bins(plan, 0, 4)
    return time.perf_counter() - t0


def robustness_batch(model, X: np.ndarray, noise, *, seed: int = 0, **kwargs) -> pd.DataFrame:
    """:func:`robustness` for every row of ``X`` (one noise spec, bound to each row; row ``i``
    seeded ``block_int_seed(seed, "anytime", i)``): a DataFrame, one row per sample, with
    the fields of :class:`RobustnessResult` and ``half_width``."""
    ens = _as_ensemble(model)
    rows = []
    for i, x in enumerate(np.atleast_2d(np.asarray(X, dtype=np.float64))):
        r = robustness(ens, x, noise, seed=block_int_seed(seed, "anytime", i), **kwargs)
        rows.append({"sample": i, **asdict(r), "half_width": r.half_width})
    return pd.DataFrame(rows)
