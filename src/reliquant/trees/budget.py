"""What bounds one call of :func:`reliquant.trees.robustness`: a fixed amount of work (the
default: reproducible) or a time budget (where a user asks for one), and the accounting of a
timed call (its deadline, its tolerance, why it ran over).

**Reproducible by default.** A call without ``time_budget`` runs in deterministic mode: the
certification bounds at most ``max_boxes`` boxes (default :data:`DEFAULT_MAX_BOXES`) with no
time limit, then at most ``max_draws`` kernel draws (default :data:`DEFAULT_MAX_DRAWS`) in
rounds of a fixed size, stopping early only at ``half_width`` or an exact answer: the result
depends on the inputs and ``seed`` only, so two identical calls give identical numbers on any
machine. ``time_budget=`` (seconds) asks for the timed mode instead: the amount of work then
depends on how fast the machine is at that moment (:func:`resolve_budget`; the result's
``budget`` names which).

**A timed call** takes at most :func:`budget_allowance` of wall time (``time_budget`` plus
:data:`BUDGET_TOLERANCE`: 10 % + 50 ms), or its ``overrun`` says why (:class:`Clock`); the
certification stops when the gap no longer shrinks fast enough to pay for its time
(:class:`StallRule`); a batch's rows share its schedule (:func:`row_budgets`,
:func:`batch_overrun`).

Public API: :data:`BUDGET_TOLERANCE`, :data:`DEFAULT_MAX_BOXES`, :data:`DEFAULT_MAX_DRAWS`,
:func:`resolve_budget`, :func:`budget_allowance`, :class:`StallRule`, :class:`Clock`,
:func:`row_budgets`, :func:`batch_overrun`.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = [
    "BUDGET_TOLERANCE",
    "DEFAULT_MAX_BOXES",
    "DEFAULT_MAX_DRAWS",
    "Clock",
    "StallRule",
    "batch_overrun",
    "budget_allowance",
    "resolve_budget",
    "row_budgets",
]

#: A timed call takes at most ``time_budget * (1 + share) + seconds`` of wall time
#: (:func:`budget_allowance`), or says why in ``RobustnessResult.overrun``.
BUDGET_TOLERANCE = (0.10, 0.05)
#: Boxes the certification bounds at most in a call without ``time_budget`` (small models,
#: e.g. the README's 10-tree forest on iris, are exact within it; a 100-tree forest on 64
#: features spends about a second a sample on them).
DEFAULT_MAX_BOXES = 256
#: Kernel draws at most in a call without ``time_budget``: 32 chunks of 4,096, one round of
#: the deterministic mode (a 95 % half-width of at most about 0.003).
DEFAULT_MAX_DRAWS = 2**17


def resolve_budget(
    time_budget: float | None, max_boxes: int | None, max_draws: int | None
) -> tuple[bool, int | None, int | None, str]:
    """``(deterministic, max_boxes, max_draws, budget)`` of one call: deterministic when
    ``time_budget`` is ``None`` or ``max_boxes`` is given (``max_boxes`` and ``max_draws``
    then default to :data:`DEFAULT_MAX_BOXES` and :data:`DEFAULT_MAX_DRAWS`), timed otherwise
    (``max_draws`` an optional cap); ``budget`` names it for the result, e.g.
    ``"max_boxes=256, max_draws=131072"`` or ``"time_budget=2 s"``."""
    if time_budget is not None and max_boxes is None:
        cap = "" if max_draws is None else f", max_draws={max_draws}"
        return False, None, max_draws, f"time_budget={time_budget:g} s{cap}"
    boxes = DEFAULT_MAX_BOXES if max_boxes is None else max_boxes
    draws = DEFAULT_MAX_DRAWS if max_draws is None else max_draws
    return True, boxes, draws, f"max_boxes={boxes}, max_draws={draws}"


class StallRule:
    """Stop certifying when the gap shrinks too slowly to pay for the time it takes.

    The sampling half-width scales like ``gap / sqrt(sampling time)``, so the sampling time
    a target needs scales like ``gap^2`` and a further ``dt`` of certification pays while
    ``-d log(gap) / dt > 1 / (2 T)``, ``T`` the sampling time still to come: the time left
    before the deadline, or less when plain sampling would reach the target half-width
    sooner (``t_plain``, measured by a pilot, times the gap: an upper bound, as the
    stratified variance is at most the gap times the plain one). It never stops while, at
    the current rate, the gap would reach ``tol`` (an exact answer) within ``t_certify``
    seconds. The rate is measured over the last ``window`` share of the elapsed time, after
    a ``warmup`` (the first batches are tiny).
    """

    def __init__(self, deadline: float, t0: float, warmup: float, window: float = 0.5,
                 t_plain: float = np.inf, tol: float = 0.0, t_certify: float = np.inf) -> None:  # fmt: skip
        self.deadline, self.t0, self.warmup, self.window = deadline, t0, warmup, window
        self.t_plain, self.tol, self.t_certify = t_plain, tol, t_certify
        self.history: list[tuple[float, float]] = []

    def __call__(self, seconds: float, gap: float) -> bool:
        now = self.t0 + seconds
        self.history.append((seconds, max(gap, 1e-300)))
        past = [h for h in self.history if h[0] <= seconds * (1 - self.window)]
        if not past or seconds < self.warmup:
            return False
        s0, g0 = past[-1]
        rate = (np.log(g0) - np.log(gap)) / max(seconds - s0, 1e-9)
        if (
            rate > 0
            and np.log(max(gap, 1e-300) / max(self.tol, 1e-300)) / rate <= self.t_certify - seconds
        ):
            return False  # at this rate the gap reaches tol (exact) within the certify time
        t_left = min(self.deadline - now, self.t_plain * min(gap, 1.0))
        return rate < 1.0 / (2.0 * max(t_left, 1e-9))


def budget_allowance(time_budget: float) -> float:
    """The wall time a timed call may take: ``time_budget * (1 + BUDGET_TOLERANCE[0]) +
    BUDGET_TOLERANCE[1]`` seconds (10 % + 50 ms); a call that takes longer says why in
    ``RobustnessResult.overrun``."""
    share, seconds = BUDGET_TOLERANCE
    return float(time_budget) * (1.0 + share) + seconds


class Clock:
    """The budget of one timed call: its deadline (the call's start plus ``time_budget``,
    moved by the seconds spent compiling kernel specialisations, which are not charged),
    and, when the call took longer than :func:`budget_allowance`, the reason."""

    def __init__(self, t_call: float, budget: float, t_read: float) -> None:
        self.t_call, self.budget, self.read = t_call, budget, t_read
        self.deadline = t_call + budget
        self.compiling = self.pilot = self.certify_over = self.plan = 0.0

    def compiled(self, seconds: float) -> None:
        self.compiling += seconds
        self.deadline += seconds

    def finish(self) -> dict:
        """``seconds`` (the whole call's wall time) and ``overrun`` of the result."""
        seconds = time.perf_counter() - self.t_call
        return {"seconds": seconds, "overrun": self.overrun(seconds)}

    def overrun(self, seconds: float) -> str:
        if not np.isfinite(self.budget) or seconds <= budget_allowance(self.budget):
            return ""
        causes = {
            "compiling the sampling kernel for this model (once per machine: numba caches it "
            f"on disk; not charged to the budget) took {self.compiling:.2f} s": self.compiling,
            f"reading and checking the model took {self.read:.2f} s (read it once: pass "
            "extract_ensemble(model), or use robustness_batch)": self.read,
            f"one certification step (a batch of box integrals) ran {self.certify_over:.2f} s "
            "past its time limit": self.certify_over,
            f"the pilot draws, the least a call draws, took {self.pilot:.2f} s": self.pilot,
            f"building the sampling plan (linear in the model's size) took {self.plan:.2f} s": self.plan,
        }
        cause, took = max(causes.items(), key=lambda kv: kv[1])
        if took < 0.5 * (seconds - self.budget):
            cause = "the draws ran past the deadline (the machine was slower than measured)"
        return f"{seconds:.2f} s for a time_budget of {self.budget:g} s: {cause}"


def row_budgets(time_budget: float, n: int, t_start: float):
    """The budget of each row of a timed batch, asked for when its turn comes: its own
    ``time_budget``, cut (to at least half of it) while the batch is behind its schedule
    ``t_start + (i + 1) time_budget`` (reading the model, earlier rows' overruns), so that
    the batch's wall time stays within ``n`` budgets as long as that debt is below ``n / 2``
    of them. A row that finishes early gives no time to later rows."""
    for i in range(n):
        owed = t_start + (i + 1) * time_budget - time.perf_counter()
        yield min(time_budget, max(0.5 * time_budget, owed))


def batch_overrun(seconds: float, budget: float, n: int, t_read: float, frame) -> str:
    """Why a timed batch of ``n`` rows took longer than ``budget_allowance(n * budget)``
    (``""`` when it did not): reading the model (charged to the batch, not to a row), the
    rows that ran past their own budgets, or the machine."""
    if seconds <= budget_allowance(n * budget):
        return ""
    late = int((frame["overrun"] != "").sum()) if n else 0
    excess = seconds - n * budget
    if t_read >= 0.5 * excess:
        cause = f"reading and checking the model took {t_read:.2f} s (once for the batch)"
    elif late:
        cause = f"{late} row(s) ran past their budget (column overrun says why)"
    else:
        cause = "the rows ran past the batch's schedule (the machine was slower than measured)"
    return f"{seconds:.2f} s for {n} rows of time_budget {budget:g} s: {cause}"
