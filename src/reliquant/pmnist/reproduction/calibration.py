"""The ``calibrated`` Perturbed MNIST preset: severities that make accuracy fall linearly.

The MLM paper (004, Sections 3.2 and 4.4) tuned each corruption's parameters "by trial and
error such that increased perturbation levels ... cause network predictive accuracies to
decrease linearly". This module makes that design rule reproducible: for a model given as
a callable ``predict(images_uint8) -> labels`` and each corruption, it searches one scalar
severity parameter per level so that the accuracy ``acc_L`` on a calibration subset meets

    target_L = acc_clean + (floor - acc_clean) * (L - 1) / 9,   L = 1..10,

i.e. a straight line from the clean accuracy at level 1 to ``floor`` at level 10.

The search assumes accuracy is non-increasing along the parameter from ``Search.mild`` to
``Search.severe`` (see :data:`reliquant.pmnist.registry.REGISTRY`); it bisects that interval
(integer bisection for integer parameters) with common random numbers (the same random
fields for every candidate), and keeps the evaluated value whose accuracy is closest to the
target. Levels are solved in order and each starts at the previous level's value.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from reliquant.pmnist.corruptions import check_images, to_float, to_uint8
from reliquant.pmnist.fields import draw_fields
from reliquant.pmnist.registry import (
    N_LEVELS,
    Search,
    apply_float,
    get_spec,
    level_params,
    validate_schedule,
)

__all__ = [
    "LevelResult",
    "Predict",
    "accuracy",
    "calibrate",
    "calibrate_corruption",
    "schedule_section",
    "target_accuracies",
]

log = logging.getLogger("reliquant.pmnist.reproduction.calibration")

Predict = Callable[[np.ndarray], np.ndarray]


def target_accuracies(clean_accuracy: float, floor: float, n_levels: int = N_LEVELS) -> np.ndarray:
    """``target_L = clean + (floor - clean) (L - 1) / (n_levels - 1)`` for L = 1..n_levels."""
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"pmnist.calibration.floor must be in [0, 1]; got {floor}")
    t = np.arange(n_levels) / (n_levels - 1)
    return clean_accuracy + (floor - clean_accuracy) * t


def accuracy(predict: Predict, images: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of ``predict(images) == labels``."""
    pred = np.asarray(predict(images))
    if pred.shape != labels.shape:
        raise ValueError(f"predict returned shape {pred.shape}; expected {labels.shape}")
    return float(np.mean(pred == labels))


@dataclass
class LevelResult:
    """The chosen value of one level, its accuracy and the target it aimed at."""

    level: int
    value: float
    accuracy: float
    target: float
    evaluations: int


def _search_level(
    evaluate: Callable[[float], float],
    lo: float,
    hi: float,
    target: float,
    integer: bool,
    tol: float,
    max_iter: int,
) -> tuple[float, float, int]:
    """Bisect ``t`` on the segment lo -> hi (any direction) for ``evaluate(v) ≈ target``.

    ``evaluate`` is assumed non-increasing from ``lo`` to ``hi``. Returns (value, accuracy,
    evaluations); the value is the evaluated one with accuracy closest to the target
    (ties: the milder one).
    """
    seen: dict[float, float] = {}

    def ev(v: float) -> float:
        v = float(round(v)) if integer else float(v)
        if v not in seen:
            seen[v] = evaluate(v)
        return seen[v]

    a_lo, a_hi = ev(lo), ev(hi)
    if a_lo <= target + tol:
        pass  # the mildest value is already at or below the target
    elif a_hi >= target - tol:
        pass  # even the most severe value does not reach the target
    else:
        t_lo, t_hi = 0.0, 1.0
        for _ in range(max_iter):
            t_mid = 0.5 * (t_lo + t_hi)
            v = lo + t_mid * (hi - lo)
            if integer:
                vi_lo, vi_hi = round(lo + t_lo * (hi - lo)), round(lo + t_hi * (hi - lo))
                if abs(vi_hi - vi_lo) <= 1:
                    break
            a = ev(v)
            if abs(a - target) <= tol:
                break
            if a > target:
                t_lo = t_mid
            else:
                t_hi = t_mid
    sign = 1.0 if hi >= lo else -1.0
    best = min(seen, key=lambda v: (abs(seen[v] - target), sign * v))
    return best, seen[best], len(seen)


def calibrate_corruption(
    name: str,
    predict: Predict,
    images: np.ndarray,
    labels: np.ndarray,
    test_index: np.ndarray,
    targets: np.ndarray,
    seed: int,
    constants: Mapping[str, Any] | None = None,
    search: Search | None = None,
    tol: float = 0.005,
    max_iter: int = 20,
) -> list[LevelResult]:
    """Severity of each level of ``name`` so that accuracy follows ``targets`` (eq. above).

    ``constants``: the corruption's constant parameters (every one the registry lists);
    ``search``: which parameter to search over which interval (default: the registry's).
    Random fields are those of (seed, name, level, test_index), as in generation.
    """
    spec = get_spec(name)
    search = search or spec.search
    images = check_images(images)
    labels = np.asarray(labels)
    x = to_float(images)
    base = {k: v for k, v in (constants or {}).items() if k in spec.constants}
    results: list[LevelResult] = []
    start = float(search.mild)
    for level, target in enumerate(targets, start=1):
        fields = draw_fields(name, seed, level, test_index)

        def evaluate(v: float, fields=fields, level=level) -> float:
            params = {**base, **{k: [val] * N_LEVELS for k, val in search.fixed.items()}}
            params[search.param] = [int(v) if search.integer else float(v)] * N_LEVELS
            p = level_params(name, params, level)
            u8 = to_uint8(apply_float(name, x, p, fields))
            return accuracy(predict, u8, labels)

        value, acc, n_eval = _search_level(
            evaluate, start, float(search.severe), float(target), search.integer, tol, max_iter
        )
        log.info(
            "%s level %d: %s = %.4g, accuracy %.4f (target %.4f, %d evaluations)",
            name,
            level,
            search.param,
            value,
            acc,
            target,
            n_eval,
        )
        results.append(LevelResult(level, value, acc, float(target), n_eval))
        start = value
    return results


def schedule_section(
    name: str,
    results: list[LevelResult],
    constants: Mapping[str, Any] | None = None,
    search: Search | None = None,
) -> dict[str, Any]:
    """A corruption's config section (lists of 10 + constants) from calibration results."""
    spec = get_spec(name)
    search = search or spec.search
    values = [int(r.value) if search.integer else float(r.value) for r in results]
    section: dict[str, Any] = {search.param: values}
    for k, v in search.fixed.items():
        section[k] = [v] * len(results)
    given = constants or {}
    section.update({k: given[k] for k in spec.constants if k in given})
    validate_schedule({name: section})
    return section


def calibrate(
    predict: Predict,
    images: np.ndarray,
    labels: np.ndarray,
    test_index: np.ndarray,
    seed: int,
    floor: float,
    corruptions: Mapping[str, Mapping[str, Any]],
    searches: Mapping[str, Search] | None = None,
    tol: float = 0.005,
    max_iter: int = 20,
) -> dict[str, Any]:
    """Calibrated schedule for every corruption in ``corruptions`` (their constants are kept).

    Returns ``{"clean_accuracy", "floor", "targets", "corruptions": {name: section},
    "achieved": {name: [accuracy per level]}}``; ``corruptions`` is in the format of
    ``pmnist.corruptions`` and can be passed to the generator.
    """
    clean = accuracy(predict, check_images(images), np.asarray(labels))
    targets = target_accuracies(clean, floor)
    out: dict[str, Any] = {
        "clean_accuracy": clean,
        "floor": float(floor),
        "targets": [float(t) for t in targets],
        "corruptions": {},
        "achieved": {},
        "searched": {},
    }
    for name, section in corruptions.items():
        spec = get_spec(name)
        search = (searches or {}).get(name, spec.search)
        constants = {k: section[k] for k in spec.constants if k in section}
        res = calibrate_corruption(
            name,
            predict,
            images,
            labels,
            test_index,
            targets,
            seed,
            constants,
            search,
            tol,
            max_iter,
        )
        out["corruptions"][name] = schedule_section(name, res, constants, search)
        out["achieved"][name] = [r.accuracy for r in res]
        out["searched"][name] = search.param
    return out
