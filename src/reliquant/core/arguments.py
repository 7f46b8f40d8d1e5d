"""Checks of the scalar arguments of public functions (counts, seeds, levels, tolerances).

Every public function validates its arguments at the boundary (CONTRIBUTING.md, Library
conventions). These helpers do it in one way: each refusal names the argument, the value
given (``repr`` and type) and what is expected, so that a wrong call never ends in a bare
``TypeError`` from deep inside numpy, nor passes silently (a NaN tolerance compares false
with everything and would switch a check off).

* a value of the wrong type (a string, ``None``, a float where an integer is needed, a
  ``bool``) is a ``TypeError``;
* a value of the right type outside its range (NaN, inf, below a minimum) is a
  ``ValueError``.

Public API: :func:`check_int`, :func:`check_seed`, :func:`check_real`, :func:`check_level`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["check_int", "check_level", "check_real", "check_seed"]


def _given(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """``value`` as an ``int`` after checking it is an integer (Python or numpy, not a bool)
    ``>= minimum``. A float, even ``2.0``, is refused: a count is never fractional."""
    expected = "an integer" + ("" if minimum is None else f" >= {minimum}")
    if isinstance(value, bool | np.bool_) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be {expected}; got {_given(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be {expected}; got {_given(value)}")
    return int(value)


def check_seed(value: Any, name: str = "seed") -> int:
    """A seed of :func:`reliquant.core.seeding.block_rng`: an integer ``>= 0``."""
    return check_int(value, name, minimum=0)


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite ``float`` in the interval ``low..high`` (``low_open`` /
    ``high_open``: the end itself excluded; ``None``: no bound). Strings, ``None`` and bools
    are a ``TypeError``; NaN, inf and values outside the interval a ``ValueError``."""
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {high:g}")
    expected = " ".join(["a finite number", " and ".join(bounds)]).strip()
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise TypeError(f"{name} must be {expected}; got {_given(value)}")
    x = float(value)
    ok = math.isfinite(x)
    if ok and low is not None:
        ok = x > low if low_open else x >= low
    if ok and high is not None:
        ok = x < high if high_open else x <= high
    if not ok:
        raise ValueError(f"{name} must be {expected}; got {_given(value)}")
    return x


def check_level(value: Any, name: str = "confidence") -> float:
    """A confidence level: a number strictly between 0 and 1."""
    return check_real(value, name, low=0.0, high=1.0, low_open=True, high_open=True)
