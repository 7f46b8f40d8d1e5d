"""The corruptions by name: parameter specs, one level's parameters, validation, dispatch.

:data:`REGISTRY` maps a corruption name to its :class:`CorruptionSpec`: the batch function
(:mod:`reliquant.pmnist.corruptions`), its parameters (:class:`Param`: type, bounds, and
whether the config gives one value per level or one constant for every level), its random
fields and the scalar a calibration searches. It is the one source of every parameter's
type and bounds: the config schema only says that ``pmnist.corruptions`` maps names to
sections, and the workflow checks those sections with :func:`validate_schedule` before any
job starts. The numbers of the paper's schedule live in ``config.yaml`` only.

How a level maps to parameters (:func:`level_params`), the same for every corruption: a
per-level parameter's config value is a list of 10 and level ``L`` takes item ``L - 1``; a
constant's config value is one scalar used at every level.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reliquant.pmnist import corruptions as C

__all__ = [
    "CORRUPTIONS",
    "N_LEVELS",
    "REGISTRY",
    "CorruptionConfigError",
    "CorruptionSpec",
    "Param",
    "Search",
    "apply_float",
    "check_level",
    "check_value",
    "config_value",
    "constant",
    "corrupt",
    "get_spec",
    "level_params",
    "per_level",
    "validate_schedule",
]

N_LEVELS = 10


class CorruptionConfigError(ValueError):
    """A corruption name, level or parameter that does not fit the registry."""


@dataclass(frozen=True)
class Param:
    """One parameter of a corruption and how its config value maps to a level's value.

    ``kind``: ``int``, ``float`` or ``bool`` (a switch, YAML ``true``/``false``, no bounds).
    ``per_level``: the config holds a list of :data:`N_LEVELS` values (level ``L`` takes item
    ``L - 1``); otherwise one constant for every level. ``lo``/``hi``: inclusive bounds
    (``None``: unbounded). ``odd``: only odd integers. ``doc``: what the value does.
    """

    kind: type
    per_level: bool
    doc: str
    lo: float | None = None
    hi: float | None = None
    odd: bool = False


def per_level(kind: type, doc: str, lo: float | None = None, hi: float | None = None) -> Param:
    """A parameter given as one value per level 1..10."""
    return Param(kind, True, doc, lo, hi)


def constant(
    kind: type, doc: str, lo: float | None = None, hi: float | None = None, odd: bool = False
) -> Param:
    """A parameter given as one value for every level."""
    return Param(kind, False, doc, lo, hi, odd)


@dataclass(frozen=True)
class Search:
    """The scalar a calibration searches: ``param`` from ``mild`` (least severe) to ``severe``.

    ``integer``: the parameter only takes integer values. ``fixed``: values of the other
    per-level parameters while searching.
    """

    param: str
    mild: float
    severe: float
    integer: bool = False
    fixed: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CorruptionSpec:
    """One corruption: batch function, parameters, random fields, calibration search."""

    fn: Callable[[np.ndarray, Mapping[str, Any], C.Fields], np.ndarray]
    params: Mapping[str, Param]
    search: Search
    fields: tuple[tuple[str, str], ...] = ()  # (field name, "normal" | "uniform")

    @property
    def per_level(self) -> tuple[str, ...]:
        """Names of the parameters given per level."""
        return tuple(k for k, p in self.params.items() if p.per_level)

    @property
    def constants(self) -> tuple[str, ...]:
        """Names of the parameters constant over levels."""
        return tuple(k for k, p in self.params.items() if not p.per_level)


#: The 12 corruptions in the paper's figure order (Figures 5 and 7).
REGISTRY: dict[str, CorruptionSpec] = {
    "brightness": CorruptionSpec(
        C.brightness,
        {"b": per_level(float, "added to x in [-1, 1]")},
        Search("b", 0.0, 2.0),
    ),
    "contrast": CorruptionSpec(
        C.contrast,
        {"c": per_level(float, "(x - mean) * (1 + c); -1 gives a flat image", lo=-1.0)},
        Search("c", 3.0, -1.0),
    ),
    "defocus_blur": CorruptionSpec(
        C.defocus_blur,
        {
            "k": per_level(int, "box-filter size (even k anchored at k // 2)", 1, C.SIDE),
            "a": per_level(float, "blend weight: blur * a + x * (1 - a) (a > 1 extrapolates)"),
        },
        Search("a", 0.0, 3.0, fixed={"k": 7}),
    ),
    "fog": CorruptionSpec(
        C.fog,
        {
            "f": per_level(float, "fog weight, also the mask radius", 1e-9, 1.0),
            "noise_std": constant(float, "std of the normal noise on the fog mask", lo=0.0),
        },
        Search("f", 0.01, 1.0),
        (("z", "normal"),),
    ),
    "frost": CorruptionSpec(
        C.frost,
        {
            "level": per_level(float, "multiplier of the added noise", lo=0.0),
            "field_std": constant(float, "std s of the N(0, s) field", lo=0.0),
            "threshold": constant(float, "field >= threshold gives mask +1, below -1"),
            "mask_noise_std": constant(float, "std of the noise on the -1/+1 mask", lo=0.0),
            "blur_ksize": constant(int, "Gaussian kernel size", 1, C.SIDE - 1, odd=True),
            "blur_sigma": constant(float, "Gaussian sigma", lo=1e-9),
            "mask_below": constant(float, "noise is added where the blurred mask is below (0)"),
            "add_noise_std": constant(float, "std of the added noise (times level)", lo=0.0),
        },
        Search("level", 0.0, 40.0),
        (("z1", "normal"), ("z2", "normal"), ("z3", "normal")),
    ),
    "gaussian_noise": CorruptionSpec(
        C.gaussian_noise,
        {
            "mean": per_level(float, "mean of the added normal noise"),
            "std": constant(float, "std of the added normal noise", lo=0.0),
        },
        Search("mean", 0.0, 2.0),
        (("z", "normal"),),
    ),
    "impulse_noise": CorruptionSpec(
        C.impulse_noise,
        {
            "density": per_level(float, "fraction of pixels salted (int(density * 784))", 0.0, 1.0),
            "amount": constant(float, "value added to salted pixels"),
        },
        Search("density", 0.0, 1.0),
        (("u", "uniform"),),
    ),
    "motion_blur": CorruptionSpec(
        C.motion_blur,
        {
            "k": per_level(int, "length of the vertical line kernel (1 = identity)", 1, C.SIDE),
            # Quirk of the paper's data set (false): the authors' line sits in column
            # int((k - 1) / 2) of the k x k kernel, anchored at k // 2, so even k shifts the
            # blurred image one pixel to the right (22-40 % of the pixels differ).
            "centred": constant(
                bool, "false: the paper's line one column left of the anchor for even k"
            ),
        },
        Search("k", 1, C.SIDE, integer=True),
    ),
    "pixelation": CorruptionSpec(
        C.pixelation,
        # hi = 28 keeps the side 28 // f >= 1
        {"f": per_level(float, "area-resampled to 28 // f pixels a side", 0.05, float(C.SIDE))},
        Search("f", 1.0, 14.0),
    ),
    "shot_noise": CorruptionSpec(
        C.shot_noise,
        {"lam": per_level(float, "Poisson mean of the added integer counts", 0.0, 1000.0)},
        Search("lam", 0.0, 5.0),
        (("u", "uniform"),),
    ),
    "snow": CorruptionSpec(
        C.snow,
        {
            "p": per_level(float, "uniform < p gives a mask pixel", 0.0, 1.0),
            "k": per_level(int, "blur kernel size (even k is bumped to k + 1)", 1, C.SIDE - 1),
            "amount": constant(float, "value added where the blurred mask equals 1"),
        },
        Search("p", 0.0, 1.0, fixed={"k": 3}),
        (("u", "uniform"),),
    ),
    "zoom_blur": CorruptionSpec(
        C.zoom_blur,
        {
            "k": per_level(int, "kernel size (1 = identity); weights (center - row)", 1, 14),
            "center": constant(float, "image centre used for the weights"),
        },
        Search("k", 1, 14, integer=True),
    ),
}

#: The 12 corruption names in the paper's figure order.
CORRUPTIONS: tuple[str, ...] = tuple(REGISTRY)


def get_spec(name: str) -> CorruptionSpec:
    """The registry entry of ``name``; unknown names raise :class:`CorruptionConfigError`."""
    if name not in REGISTRY:
        raise CorruptionConfigError(
            f"unknown corruption {name!r}; expected one of {', '.join(CORRUPTIONS)}"
        )
    return REGISTRY[name]


def check_level(level: int) -> int:
    """Return ``level`` if it is an int in 1..10, else raise naming it."""
    if isinstance(level, bool) or not isinstance(level, numbers.Integral):
        raise CorruptionConfigError(f"level must be an integer in 1..{N_LEVELS}; got {level!r}")
    if not 1 <= int(level) <= N_LEVELS:
        raise CorruptionConfigError(f"level must be in 1..{N_LEVELS}; got {level}")
    return int(level)


def check_value(where: str, value: Any, param: Param) -> int | float | bool:
    """``value`` as ``param.kind`` if it has that type, is finite and within the bounds.

    A ``bool`` parameter takes only ``true``/``false`` (not 0/1 or strings).

    ``where`` names the config key in the error (``pmnist.corruptions.<name>.<key>``).
    """
    if param.kind is bool:
        if not isinstance(value, bool | np.bool_):
            raise CorruptionConfigError(f"{where} must be true or false; got {value!r}")
        return bool(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise CorruptionConfigError(f"{where} must be a {param.kind.__name__}; got {value!r}")
    if param.kind is int:
        if not isinstance(value, numbers.Integral):
            raise CorruptionConfigError(f"{where} must be an integer; got {value!r}")
        value = int(value)
        if param.odd and value % 2 == 0:
            raise CorruptionConfigError(f"{where} must be odd; got {value}")
    else:
        value = float(value)
        if not math.isfinite(value):
            raise CorruptionConfigError(f"{where} must be finite; got {value!r}")
    if (param.lo is not None and value < param.lo) or (param.hi is not None and value > param.hi):
        raise CorruptionConfigError(f"{where} = {value!r} is outside [{param.lo}, {param.hi}]")
    return value


def config_value(where: str, values: Any, param: Param, level: int) -> Any:
    """The raw value of one level: item ``level - 1`` of a per-level list, else the constant."""
    if not param.per_level:
        return values
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise CorruptionConfigError(f"{where} must be a list of {N_LEVELS} values; got {values!r}")
    if len(values) != N_LEVELS:
        raise CorruptionConfigError(
            f"{where} must have {N_LEVELS} values (levels 1..10); got {len(values)}"
        )
    return values[level - 1]


def level_params(name: str, params: Mapping[str, Any], level: int) -> dict[str, Any]:
    """Parameters of one level from a corruption's config section (validated).

    ``params`` holds a list of 10 values per per-level parameter and a scalar per constant
    (:class:`Param`). Unknown keys, missing keys, wrong lengths, wrong types and values
    outside the bounds raise :class:`CorruptionConfigError` naming the key.
    """
    spec = get_spec(name)
    level = check_level(level)
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        raise CorruptionConfigError(
            f"pmnist.corruptions.{name}: unknown parameter(s) {unknown}; "
            f"expected {sorted(spec.params)}"
        )
    out: dict[str, Any] = {}
    for key, param in spec.params.items():
        if key not in params:
            raise CorruptionConfigError(f"pmnist.corruptions.{name}: missing parameter {key!r}")
        where = f"pmnist.corruptions.{name}.{key}"
        out[key] = check_value(where, config_value(where, params[key], param, level), param)
    return out


def validate_schedule(schedule: Mapping[str, Mapping[str, Any]], complete: bool = False) -> None:
    """Check every corruption and level of a schedule (``{name: params}``); raise on error.

    ``complete``: every corruption of the registry must be present (the ``paper`` preset).
    """
    if not isinstance(schedule, Mapping):
        raise CorruptionConfigError(f"pmnist.corruptions must be a mapping; got {schedule!r}")
    missing = [name for name in CORRUPTIONS if name not in schedule]
    if complete and missing:
        raise CorruptionConfigError(f"pmnist.corruptions: missing corruption(s) {missing}")
    for name, params in schedule.items():
        if not isinstance(params, Mapping):
            raise CorruptionConfigError(
                f"pmnist.corruptions.{name} must be a mapping of parameters; got {params!r}"
            )
        for level in range(1, N_LEVELS + 1):
            level_params(name, params, level)


def apply_float(
    name: str, x: np.ndarray, params: Mapping[str, Any], fields: C.Fields
) -> np.ndarray:
    """Apply corruption ``name`` to a float batch (no clipping). ``params`` = one level's values."""
    return get_spec(name).fn(x, params, fields)


def corrupt(
    images: np.ndarray,
    name: str,
    params: Mapping[str, Any],
    fields: C.Fields,
) -> np.ndarray:
    """The full pipeline on uint8 images: :func:`~reliquant.pmnist.corruptions.to_float`,
    corruption ``name``, :func:`~reliquant.pmnist.corruptions.to_uint8`."""
    x = C.to_float(images)
    return C.to_uint8(apply_float(name, x, params, fields))
