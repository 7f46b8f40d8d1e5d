"""The sampling phase of :func:`reliquant.trees.anytime.robustness`: the timing pilot, the
draws a half-width needs, and drawing until the half-width, the deadline or the draw budget,
the interval for the sampled share mapped to R (the module docstring of
:mod:`reliquant.trees.anytime`, step 2).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from reliquant.trees.confidence import mixture_interval, tuned_rho
from reliquant.trees.kernel import chunk_seeds, count_agree
from reliquant.trees.monte_carlo import clopper_pearson

__all__ = [
    "CHUNK",
    "PILOT_STREAM",
    "ROUND_CHUNKS",
    "SEQ_SHARE",
    "TIME_SHARE",
    "draws_for",
    "pilot_answer",
    "run_pilot",
    "sample_until",
    "sampling_pieces",
]

CHUNK = 4096  # draws per kernel chunk (one random stream each)
ROUND_CHUNKS = 32  # chunks between looks in deterministic mode
SEQ_SHARE = 0.2  # share of 1 - confidence for the confidence sequence (the rest: the fixed look)
TIME_SHARE = 0.85  # the fixed look is planned at this share of the draws the time left allows
PILOT_STREAM = 0x5DEECE66D  # the pilot's seed offset


def pilot_answer(pilot, pieces: tuple, confidence: float) -> tuple[float, float, float, int]:
    """``(ci_low, ci_high, estimate, n)`` from the pilot's plain draws alone, when the budget
    ran out before a counted draw: the mixture confidence sequence at the whole ``1 -
    confidence`` (valid at any number of draws, so also at a stop the timing chose), mapped
    to R by the plain ``pieces`` and intersected with the certified bounds."""
    _, share, n = pilot
    s = round(share * n)
    alpha = 1.0 - confidence
    p_lo, p_hi = mixture_interval(s, n, alpha, tuned_rho(n, alpha))
    scale, base, extra, cert_lo, cert_hi, _ = pieces
    ci_high = min(cert_hi, base + scale * p_hi + extra)
    ci_low = min(max(cert_lo, base + scale * p_lo), ci_high)
    estimate = min(max(base + (scale + extra) * (s / n), ci_low), ci_high)
    return ci_low, ci_high, estimate, n


def run_pilot(plan, seed: int) -> tuple[float, float, int]:
    """(draws/s, share kept, draws) of two chunks on a stream of their own (discarded: no
    counted draw is seen before the sampling phase's plan is fixed)."""
    tw = time.perf_counter()
    kept = count_agree(plan, chunk_seeds(seed ^ PILOT_STREAM, 0, 2), CHUNK, 2 * CHUNK)
    rate = 2 * CHUNK / max(time.perf_counter() - tw, 1e-9)
    return rate, float(kept.sum()) / (2 * CHUNK), 2 * CHUNK


def draws_for(p: float, n_pilot: int, half_width: float, alpha: float) -> float:
    """Draws a Clopper-Pearson interval at level ``1 - alpha`` needs for ``half_width`` when
    the pilot saw a share ``p`` of ``n_pilot`` draws: the root ``n`` of
    ``z sqrt(q (1 - q) / n) + log(2 / alpha) / (2 n) = half_width`` (the normal width plus
    the all-kept term that rules near 0 and 1), with ``q`` = p moved one standard error
    towards 1/2, plus 10 %. (Too few draws planned only cost width: the sampling goes on
    with the confidence sequence.)"""
    if half_width <= 0:
        return np.inf
    se = np.sqrt(p * (1 - p) / n_pilot)
    q = 0.5 - max(abs(p - 0.5) - se, 0.0)
    z, ell = float(stats.norm.isf(alpha / 2)), float(np.log(2 / alpha))
    b = z * np.sqrt(q * (1 - q))
    root = (-b + np.sqrt(b * b + 2 * ell * half_width)) / ell  # 1 / sqrt(n)
    return 1.1 / root**2


def sample_until(plan, pieces, *, deadline, confidence, half_width, seed, max_draws, pilot):
    """Draw until the half-width, the deadline or ``max_draws``; returns the interval pieces.

    ``pieces`` = (scale P, base, extra o, cert_lo, cert_hi, stratified): the interval for
    the sampled share ``p`` maps to R as in the module docstring. Two intervals for ``p``,
    valid together at ``confidence`` (union bound): the mixture confidence sequence at
    ``alpha_seq = SEQ_SHARE * alpha``, valid at every look, and a Clopper-Pearson interval at
    ``alpha - alpha_seq`` at one look ``n_final`` fixed before any counted draw (from the
    pilot's rate and share: the draws that reach the half-width, or that the time left
    allows). Stopping before ``n_final`` uses the sequence; from ``n_final`` on, the
    intersection of both (close to a fixed-size interval, about 1.5 times narrower than the
    sequence alone). With ``deadline = inf`` (deterministic mode) ``n_final = max_draws``
    and rounds have a fixed size, so the looks, the stop and the interval depend on the
    seed only, never on timing."""
    scale, base, extra, cert_lo, cert_hi, stratified = pieces
    alpha = 1.0 - confidence
    a_seq, a_fix = SEQ_SHARE * alpha, (1.0 - SEQ_SHARE) * alpha
    timed = bool(np.isfinite(deadline))
    target = (half_width - extra / 2.0) / scale if scale > 0 else np.inf  # for p
    rate, p_pilot, n_pilot = pilot
    if timed:
        n_time = TIME_SHARE * rate * max(deadline - time.perf_counter(), 0.0)
        n_final = min(n_time, draws_for(p_pilot, n_pilot, target, a_fix))
        n_final = int(
            max(n_final, CHUNK) if max_draws is None else min(max(n_final, CHUNK), max_draws)
        )
    else:
        n_final = int(max_draws)
    rho = tuned_rho(n_final, a_seq)
    s = n = 0
    p_lo, p_hi = 0.0, 1.0
    fix_lo, fix_hi = 0.0, 1.0
    stop, next_chunk, m = "time_budget", 0, 2
    while True:
        left = deadline - time.perf_counter()
        if timed:  # looks: 2, 4, 8, ... chunks, at most 0.25 s of draws, none past n_final
            m = max(1, min(m, int(rate * min(0.25, max(left, 0.0) / 2) // CHUNK)))
        else:
            m = ROUND_CHUNKS
        total = m * CHUNK
        if n < n_final:
            total = min(total, n_final - n)
        if max_draws is not None:
            total = min(total, max_draws - n)
        if total <= 0 or left <= 0 or (timed and min(total, CHUNK) / rate > left):
            stop = "time_budget" if total > 0 else "max_draws"  # no round ends past the deadline
            break
        chunks = -(-total // CHUNK)
        t_round = time.perf_counter()
        counts = count_agree(plan, chunk_seeds(seed, next_chunk, chunks), CHUNK, total)
        t_round = time.perf_counter() - t_round
        if timed and t_round > 0.01:  # the machine may be slower now: size rounds on it
            rate = total / t_round
        next_chunk += chunks
        s += int(counts.sum())
        n += total
        m *= 2
        lo, hi = mixture_interval(s, n, a_seq, rho)
        p_lo, p_hi = max(p_lo, lo), min(p_hi, hi)  # running intersection
        if n == n_final:
            fix_lo, fix_hi = clopper_pearson(s, n, 1.0 - a_fix) if n else (0.0, 1.0)
        lo_all, hi_all = max(p_lo, fix_lo), min(p_hi, fix_hi)
        if scale * (hi_all - lo_all) / 2.0 + extra / 2.0 <= half_width:
            stop = "half_width"
            break
        if time.perf_counter() >= deadline:
            break
    p_lo, p_hi = max(p_lo, fix_lo), min(p_hi, fix_hi)
    # R = lower + P p + theta o = upper - P (1 - p) - (1 - theta) o  (module docstring)
    ci_low = max(cert_lo, base + scale * p_lo)
    ci_high = min(cert_hi, base + scale * p_hi + extra)  # = upper - P (1 - p_hi) for strata
    ci_low = min(ci_low, ci_high)
    if n == 0:  # nothing drawn: the certified bounds are the answer (status bounds_only)
        return ci_low, ci_high, math.nan, n, stop
    estimate = min(max(base + (scale + extra) * (s / n), ci_low), ci_high)
    return ci_low, ci_high, estimate, n, stop


def sampling_pieces(eng, stratified: bool, outside: float) -> tuple:
    """(scale, base, extra, cert_lo, cert_hi, stratified) of the sampling phase: strata of
    the pending boxes, or plain draws inside a box outside which lies the mass ``outside``
    (``R = (1 - o) p + theta o``; the whole space: ``o = 0``)."""
    if stratified:
        pend = eng.pending
        return float(pend.mass.sum()), eng.lower, eng.outside_mass, eng.lower, eng.upper, True
    cert_lo = max(0.0, eng.lower - eng.mass_error)
    cert_hi = min(1.0, eng.upper + eng.mass_error)
    return 1.0 - outside, 0.0, outside, cert_lo, cert_hi, False
