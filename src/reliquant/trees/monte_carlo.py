"""Monte Carlo estimate of probabilistic robustness (Scher & Truegler 2022; papers 001/002
Section 4.3): draw ``x_1..x_n`` from the noise model around ``mu`` and count agreements,

    R_hat = (1/n) sum_j 1[f(x_j) = f(mu)],

with an exact (Clopper-Pearson) binomial confidence interval for R.

Two implementations of this one estimator: :func:`monte_carlo_robustness` (numpy sampling of
the noise model, then the ensemble's or any ``predict``) and :func:`compiled_monte_carlo`
(the numba kernel of :mod:`reliquant.trees.kernel`: only the features a tree asks about are
drawn, as bins; results independent of the number of threads). The experiments' baselines
(Tables 2 and 3 of 002) use the compiled one; Table 2 times both.

Public API: :func:`monte_carlo_robustness`, :func:`compiled_monte_carlo` ->
:class:`MonteCarloResult`; :func:`kernel_threads`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from reliquant.core.binomial import clopper_pearson_bounds
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "MonteCarloResult",
    "clopper_pearson",
    "compiled_monte_carlo",
    "kernel_threads",
    "monte_carlo_robustness",
]


@dataclass(frozen=True)
class MonteCarloResult:
    """estimate = n_agree / n_draws; [ci_low, ci_high] the Clopper-Pearson interval at
    ``confidence``; label = f(mu); seconds = wall time of sampling + prediction."""

    estimate: float
    ci_low: float
    ci_high: float
    n_draws: int
    n_agree: int
    confidence: float
    label: object
    seconds: float


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for a proportion: the beta quantiles
    ``B^-1(a/2; k, n - k + 1)`` and ``B^-1(1 - a/2; k + 1, n - k)``, ``a = 1 - confidence``
    (the formula of scipy's ``binomtest(...).proportion_ci(method="exact")``, without its
    per-call overhead; :func:`reliquant.core.binomial.clopper_pearson_bounds` for one pair)."""
    lo, hi = clopper_pearson_bounds(k, n, confidence)
    return float(lo), float(hi)


def monte_carlo_robustness(
    ensemble_or_predict: TreeEnsemble | Callable[[np.ndarray], np.ndarray],
    noise,
    mu: np.ndarray,
    n_draws: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    chunk: int | None = None,
) -> MonteCarloResult:
    """Estimate R(mu) = P(f(x) = f(mu)), x ~ noise, from ``n_draws`` draws.

    ``ensemble_or_predict``: a :class:`TreeEnsemble` or any ``predict(X) -> labels``.
    ``noise``: a model from :mod:`reliquant.trees.box_mass` (its ``sample(n, rng)``).
    Draws are made in chunks (default about 2*10^7 numbers each) to bound memory.
    """
    if n_draws < 1:
        raise ValueError(f"n_draws must be positive; got {n_draws}")
    predict = (
        ensemble_or_predict.predict
        if isinstance(ensemble_or_predict, TreeEnsemble)
        else ensemble_or_predict
    )
    mu = np.asarray(mu, dtype=np.float64).reshape(1, -1)
    t0 = time.perf_counter()
    label = predict(mu)[0]
    d = mu.shape[1]
    chunk = chunk or max(1000, int(2e7 // max(d, 1)))
    agree = 0
    done = 0
    while done < n_draws:
        m = min(chunk, n_draws - done)
        x = noise.sample(m, rng)
        agree += int(np.count_nonzero(predict(x) == label))
        done += m
    seconds = time.perf_counter() - t0
    lo, hi = clopper_pearson(agree, n_draws, confidence)
    return MonteCarloResult(agree / n_draws, lo, hi, n_draws, agree, confidence, label, seconds)


def compiled_monte_carlo(
    ensemble: TreeEnsemble,
    noise,
    mu: np.ndarray,
    n_draws: int,
    rng: np.random.Generator | int,
    confidence: float = 0.95,
    chunk: int = 65_536,
) -> MonteCarloResult:
    """The estimator of :func:`monte_carlo_robustness` (plain, unstratified draws,
    ``R_hat = n_agree / n``, Clopper-Pearson interval) on the compiled kernel.

    Each draw is a plain sample of the noise over the whole space, but only the features a
    tree asks about are drawn (their bins, by inverse CDF; :mod:`reliquant.trees.kernel`), so
    the draws follow the same distribution as ``noise.sample`` while the random stream
    differs: estimates agree in distribution, not digit for digit. ``rng``: a Generator (one
    63-bit seed is taken from it) or an integer seed. Independent, correlated and NORTA noise.
    """
    from reliquant.trees.kernel import chunk_seeds, count_agree
    from reliquant.trees.plan import build_plan

    if n_draws < 1:
        raise ValueError(f"n_draws must be positive; got {n_draws}")
    t0 = time.perf_counter()
    mu = np.asarray(mu, dtype=np.float64).reshape(-1)
    seed = int(rng.integers(2**63)) if isinstance(rng, np.random.Generator) else int(rng)
    y = int(ensemble.predict_index(mu)[0])
    plan = build_plan(ensemble, noise, y)
    n_chunks = -(-n_draws // chunk)
    agree = int(count_agree(plan, chunk_seeds(seed, 0, n_chunks), chunk, n_draws).sum())
    seconds = time.perf_counter() - t0
    lo, hi = clopper_pearson(agree, n_draws, confidence)
    label = ensemble.classes[y]
    return MonteCarloResult(agree / n_draws, lo, hi, n_draws, agree, confidence, label, seconds)


def kernel_threads() -> int:
    """Threads the compiled kernel runs on (numba's ``get_num_threads``; scripts set it to
    the job's ``threads``). Results do not depend on it, runtimes do."""
    import numba

    return int(numba.get_num_threads())
