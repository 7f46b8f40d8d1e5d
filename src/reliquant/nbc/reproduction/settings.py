"""Constraints between keys of the ``nbc`` config section, checked before any job is planned.

The JSON schema checks each key alone; these checks need several at once: class
probabilities that sum to one, a ``favoured`` table of one row per class and one valid value
per feature, enough training instances for every cross-validation fold, and grid values that
name distinct files (cell files are named with :func:`reliquant.nbc.reproduction.experiment.gamma_key`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from reliquant.nbc.reproduction.experiment import gamma_key

__all__ = [
    "check_settings",
]


def _collisions(values: Sequence[float], fmt) -> list[tuple[float, float, str]]:
    seen: dict[str, float] = {}
    clashes = []
    for v in values:
        name = fmt(v)
        if name in seen:
            clashes.append((seen[name], v, name))
        seen[name] = v
    return clashes


def check_settings(nbc: Mapping[str, Any]) -> None:
    """Raise a ValueError naming the keys at fault when the ``nbc`` section is inconsistent.

    * ``design.class_probs`` sums to 1 (within 1e-9);
    * ``design.favoured`` has ``len(class_probs)`` rows of ``len(n_values)`` values, value
      ``i`` in ``0 .. n_values[i] - 1``;
    * ``fit.cv_folds`` <= the smallest ``grid.n_train`` (each fold needs an instance);
    * no two ``grid.gamma`` (or ``grid.n_train``) values name the same cell file.
    """
    design, grid, fit = nbc["design"], nbc["grid"], nbc["fit"]
    problems: list[str] = []
    probs = np.asarray(design["class_probs"], dtype=np.float64)
    if abs(probs.sum() - 1.0) > 1e-9:
        problems.append(
            f"nbc.design.class_probs {list(design['class_probs'])} sums to {probs.sum():.10g}; "
            "it must sum to 1"
        )
    n_values = list(design["n_values"])
    favoured = design["favoured"]
    if len(favoured) != len(probs):
        problems.append(
            f"nbc.design.favoured has {len(favoured)} rows; it needs one per class "
            f"({len(probs)}, the length of nbc.design.class_probs)"
        )
    for c, row in enumerate(favoured):
        if len(row) != len(n_values):
            problems.append(
                f"nbc.design.favoured[{c}] has {len(row)} values; it needs one per feature "
                f"({len(n_values)}, the length of nbc.design.n_values)"
            )
            continue
        for i, (value, k) in enumerate(zip(row, n_values, strict=True)):
            if not 0 <= value < k:
                problems.append(
                    f"nbc.design.favoured[{c}][{i}] = {value} is not a value of feature {i} "
                    f"(nbc.design.n_values[{i}] = {k}: values 0..{k - 1})"
                )
    smallest = min(grid["n_train"])
    if fit["cv_folds"] > smallest:
        problems.append(
            f"nbc.fit.cv_folds = {fit['cv_folds']} needs at least that many training instances, "
            f"but nbc.grid.n_train has {smallest}"
        )
    for a, b, name in _collisions(grid["gamma"], gamma_key):
        problems.append(
            f"nbc.grid.gamma values {a!r} and {b!r} name the same cell file (g{name}); "
            "make them differ in the first six significant digits"
        )
    for a, b, _ in _collisions(grid["n_train"], lambda n: str(int(n))):
        problems.append(f"nbc.grid.n_train lists {a!r} twice ({b!r})")
    if problems:
        raise ValueError("inconsistent nbc settings:\n  " + "\n  ".join(problems))
