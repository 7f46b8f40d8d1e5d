"""Batch image corruptions of Perturbed MNIST (MLM paper 004, Section 3.2).

The MLM paper applies 12 corruptions "following [HD19]" at 10 levels to the 10,000 MNIST
test images. ``shared/docs/perturbed-mnist-paper-schedule.md`` records what the authors'
generator did; this module implements those semantics on whole batches.

Pipeline of one image (:func:`corrupt`)::

    u (uint8)  ->  x = u / 255 * 2 - 1          (float64, range [-1, 1])
               ->  y = corruption(x)             (this module, no clipping inside)
               ->  y = clip(y, -1, 1)
               ->  v = trunc((y * 0.5 + 0.5) * 255)   (uint8)

Every function below takes a float64 batch ``x`` of shape ``(n, 28, 28)`` in the [-1, 1]
scale, the parameters of ONE level (a dict of scalars) and the random *fields* of the batch
(:func:`draw_fields`, a dict of ``(n, 28, 28)`` float64 arrays of standard normals or
uniforms). Randomness enters only through those fields: image ``i`` reads the stream of
``reliquant.core.seeding.block_rng(seed, corruption, level)`` from position ``i * 2^40``
(counter-based), so the corruption of an image is a deterministic function of it. So an image's result depends only on (seed, corruption, level,
test_index, parameters), never on batch size, chunking or the number of processes, and
parameter searches (:mod:`reliquant.pmnist.calibration`) see common random numbers.

Conventions that match the authors' OpenCV calls (checked by ``tests/test_corruptions.py``
against per-pixel references):

* borders are reflect-101 (``d c b | a b c d | c b a``; ``scipy.ndimage`` mode ``mirror``);
* a kernel of size ``k`` is anchored at ``k // 2``: output pixel ``i`` reads input pixels
  ``i - k//2 .. i - k//2 + k - 1`` (even ``k`` reaches one pixel further up/left);
* pixelation resamples by area (exact box-overlap average), then nearest neighbour
  (``src = dst * side // 28``).

The registry :data:`REGISTRY` maps a corruption name to its :class:`CorruptionSpec` (the
function, per-level parameter names and types, constants with defaults, random fields and
the scalar a calibration searches). The ``paper`` preset's numbers live in ``config.yaml``;
:data:`PAPER_SCHEDULE` mirrors them as a documented default.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.ndimage as ndi

from reliquant.core.seeding import block_rng

SIDE = 28
N_PIXELS = SIDE * SIDE
N_LEVELS = 10

#: The 12 corruptions in the paper's figure order (Figures 5 and 7).
CORRUPTIONS: tuple[str, ...] = (
    "brightness",
    "contrast",
    "defocus_blur",
    "fog",
    "frost",
    "gaussian_noise",
    "impulse_noise",
    "motion_blur",
    "pixelation",
    "shot_noise",
    "snow",
    "zoom_blur",
)

Fields = Mapping[str, np.ndarray]


class CorruptionConfigError(ValueError):
    """A corruption name, level or parameter that does not fit the registry."""


# --------------------------------------------------------------------------------------
# uint8 <-> float pipeline
# --------------------------------------------------------------------------------------


def check_images(images: np.ndarray, what: str = "images") -> np.ndarray:
    """Return ``images`` if it is a uint8 array of shape ``(n, 28, 28)``; raise otherwise."""
    arr = np.asarray(images)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[1:] != (SIDE, SIDE):
        raise ValueError(
            f"{what} must be a uint8 array of shape (n, {SIDE}, {SIDE}); "
            f"got dtype {arr.dtype} and shape {arr.shape}"
        )
    return arr


def to_float(images: np.ndarray) -> np.ndarray:
    """uint8 ``u`` -> float64 ``x = u / 255 * 2 - 1`` in [-1, 1] (schedule doc, pipeline)."""
    u = check_images(images)
    return u.astype(np.float64) / 255.0 * 2.0 - 1.0


def to_uint8(x: np.ndarray) -> np.ndarray:
    """float ``x`` -> uint8 ``trunc((clip(x, -1, 1) * 0.5 + 0.5) * 255)``.

    Truncation (not rounding) is the authors' convention; it maps 20 of the 256 grey values
    ``u`` to ``u - 1`` on a round trip (e.g. 1 -> 0, 2 -> 1), see docs/pmnist.md.
    """
    y = np.clip(x, -1.0, 1.0)
    return ((y * 0.5 + 0.5) * 255.0).astype(np.uint8)


# --------------------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------------------


def box_filter(x: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Mean of ``k`` neighbours along ``axis``: ``y[i] = mean(x[i - k//2 .. i - k//2 + k - 1])``.

    Reflect-101 border (scipy ``mirror``); even ``k`` anchored at ``k // 2`` like OpenCV.
    """
    if k == 1:
        return x.copy()
    return ndi.uniform_filter1d(x, size=k, axis=axis, mode="mirror")


def correlate_axis(x: np.ndarray, weights: np.ndarray, axis: int) -> np.ndarray:
    """``y[i] = sum_j w[j] x[i + j - len(w)//2]`` along ``axis``, reflect-101 border."""
    return ndi.correlate1d(x, np.asarray(weights, dtype=np.float64), axis=axis, mode="mirror")


def gaussian_kernel(ksize: int, sigma: float) -> np.ndarray:
    """OpenCV's ``getGaussianKernel``: ``g_i = exp(-(i - (ksize-1)/2)^2 / (2 sigma^2))``, sum 1."""
    i = np.arange(ksize, dtype=np.float64) - (ksize - 1) / 2.0
    g = np.exp(-(i**2) / (2.0 * sigma**2))
    return g / g.sum()


def area_matrix(src: int, dst: int) -> np.ndarray:
    """``(dst, src)`` matrix of area resampling: row ``o`` averages the input over ``[o s, (o+1) s)``.

    With ``s = src / dst``, ``A[o, j] = |[j, j+1) ∩ [o s, (o+1) s)| / s`` (box overlap), so
    each row sums to 1. This is OpenCV's INTER_AREA when shrinking; when enlarging
    (``dst > src``) it stays the exact box average (OpenCV switches to bilinear there).
    """
    s = src / dst
    a = np.zeros((dst, src), dtype=np.float64)
    for o in range(dst):
        lo, hi = o * s, (o + 1) * s
        for j in range(int(math.floor(lo)), min(src, int(math.ceil(hi)))):
            a[o, j] = max(0.0, min(hi, j + 1) - max(lo, j)) / s
    return a


def _resample_axis(x: np.ndarray, matrix: np.ndarray, axis: int) -> np.ndarray:
    """Apply a sparse resampling matrix along ``axis`` with elementwise sums in a fixed order.

    Elementwise (not BLAS) so that each image's bytes do not depend on the batch it is in.
    """
    x = np.moveaxis(x, axis, -1)
    out = np.zeros((*x.shape[:-1], matrix.shape[0]), dtype=np.float64)
    for o in range(matrix.shape[0]):
        for j in np.flatnonzero(matrix[o]):
            out[..., o] += matrix[o, j] * x[..., j]
    return np.moveaxis(out, -1, axis)


def pixelation_side(f: float) -> int:
    """Side of the pixelated image: ``28 // f`` (Python float floor division)."""
    return int(SIDE // f)


def poisson_from_uniform(u: np.ndarray, lam: float) -> np.ndarray:
    """Poisson(``lam``) counts by inversion: ``X = min{k : u < F(k)}``, ``F`` the Poisson CDF.

    Monotone in ``lam`` for a fixed uniform field (common random numbers for calibration).
    """
    if lam == 0:
        return np.zeros_like(u)
    kmax = int(lam + 12.0 * math.sqrt(lam) + 40)
    k = np.arange(kmax + 1, dtype=np.float64)
    logpmf = -lam + k * math.log(lam) - np.array([math.lgamma(v + 1) for v in k])
    pmf = np.exp(logpmf)
    cdf = np.cumsum(pmf)
    cdf[-1] = 1.0
    # Upper half: u < F(k) <=> 1 - u > S(k) with S(k) = sum_{j > k} pmf(j). The cumulative
    # sum F saturates just below 1 in float64, S does not, so invert S there.
    sf = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])
    u = np.asarray(u, dtype=np.float64)
    upper = u >= 0.5
    out = np.searchsorted(cdf, u, side="right")
    out[upper] = np.searchsorted(-sf, -(1.0 - u[upper]), side="right")
    return out.astype(np.float64)


# --------------------------------------------------------------------------------------
# the 12 corruptions (float in, float out, not clipped)
# --------------------------------------------------------------------------------------


def brightness(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``y = x + b``."""
    return x + p["b"]


def contrast(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``y = (x - mean(x)) * (1 + c)`` with the per-image mean NOT added back."""
    n = x.shape[0]
    mean = x.reshape(n, -1).sum(axis=1) / N_PIXELS
    return (x - mean[:, None, None]) * (1.0 + p["c"])


def defocus_blur(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``y = box_k(x) * a + x * (1 - a)``, ``box_k`` the k x k mean (reflect-101, anchor k//2)."""
    k, a = int(p["k"]), p["a"]
    blur = box_filter(box_filter(x, k, axis=1), k, axis=2)
    return blur * a + x * (1.0 - a)


def fog_mask(f: float) -> np.ndarray:
    """``exp(-(r / f)^2)`` with ``r`` the distance from the centre, 1 at the border midpoints."""
    c = np.linspace(-1.0, 1.0, SIDE)
    r = np.sqrt(c[:, None] ** 2 + c[None, :] ** 2)
    return np.exp(-((r / f) ** 2))


def fog(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``m = clip(exp(-(r/f)^2) + noise_std * z, 0, 1)``; ``y = x (1 - f) + m f``."""
    f = p["f"]
    m = np.clip(fog_mask(f)[None] + p["noise_std"] * fields["z"], 0.0, 1.0)
    return x * (1.0 - f) + m * f


def frost(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """Procedural frost.

    ``mask = [field_std z1 > threshold]``; ``mask = clip(mask + mask_noise_std z2, 0, 1)``;
    ``g = Gauss_{blur_ksize, blur_sigma}(mask)`` (reflect-101);
    ``y = x + [g < mask_below] * level * add_noise_std * z3``.
    """
    mask = (p["field_std"] * fields["z1"] > p["threshold"]).astype(np.float64)
    mask = np.clip(mask + p["mask_noise_std"] * fields["z2"], 0.0, 1.0)
    g = gaussian_kernel(int(p["blur_ksize"]), p["blur_sigma"])
    blurred = correlate_axis(correlate_axis(mask, g, axis=1), g, axis=2)
    noise = p["level"] * p["add_noise_std"] * fields["z3"]
    return x + np.where(blurred < p["mask_below"], noise, 0.0)


def gaussian_noise(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``y = x + N(mean, std)`` drawn as ``mean + std * z``."""
    return x + (p["mean"] + p["std"] * fields["z"])


def impulse_count(density: float) -> int:
    """Number of salted pixels per image: ``int(density * 784)`` (truncated)."""
    return int(density * N_PIXELS)


def impulse_noise(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """Add ``amount`` to ``int(density * 784)`` pixels chosen without replacement.

    The chosen pixels are those with the smallest uniform keys ``u`` (a uniformly random
    subset; nested as ``density`` grows).
    """
    n = x.shape[0]
    m = impulse_count(p["density"])
    y = x.reshape(n, N_PIXELS).copy()
    if m > 0:
        keys = fields["u"].reshape(n, N_PIXELS)
        if m < N_PIXELS:
            chosen = np.argpartition(keys, m - 1, axis=1)[:, :m]
        else:
            chosen = np.broadcast_to(np.arange(N_PIXELS), (n, N_PIXELS))
        rows = np.arange(n)[:, None]
        y[rows, chosen] += p["amount"]
    return y.reshape(x.shape)


def motion_blur(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """Vertical line kernel of length ``k`` (mean of ``k`` pixels down a column), anchor k//2.

    ``k = 1`` is the identity.
    """
    return box_filter(x, int(p["k"]), axis=1)


def pixelation(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """Area-resample to ``s = 28 // f`` a side, nearest back to 28, min-max rescale to [-1, 1].

    Nearest: ``src = dst * s // 28``. Rescale: ``(v - min) / (max - min) * 2 - 1`` per image;
    a constant image is left as it is.
    """
    s = pixelation_side(p["f"])
    a = area_matrix(SIDE, s)
    small = _resample_axis(_resample_axis(x, a, axis=1), a, axis=2)
    idx = (np.arange(SIDE) * s) // SIDE
    up = small[:, idx][:, :, idx]
    n = x.shape[0]
    flat = up.reshape(n, -1)
    lo, hi = flat.min(axis=1), flat.max(axis=1)
    span = hi - lo
    safe = np.where(span > 0, span, 1.0)
    scaled = (up - lo[:, None, None]) / safe[:, None, None] * 2.0 - 1.0
    return np.where((span > 0)[:, None, None], scaled, up)


def shot_noise(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``y = x + Poisson(lam)`` (integer counts, by inversion of a uniform field)."""
    return x + poisson_from_uniform(fields["u"], p["lam"])


def snow_support(k: int) -> int:
    """Gaussian kernel size of snow: even ``k`` is bumped to ``k + 1``."""
    return k + 1 if k % 2 == 0 else k


def snow(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """``mask = [u < p]``; add ``amount`` where ``Gauss_k(mask) == 1``.

    A normalised positive kernel gives exactly 1 iff every pixel of its k x k support
    (reflect-101) is 1, so the equality is evaluated exactly as a k x k minimum filter
    (independent of the kernel's sigma and of floating-point rounding).
    """
    k = snow_support(int(p["k"]))
    mask = fields["u"] < p["p"]
    flakes = ndi.minimum_filter(mask, size=(1, k, k), mode="mirror")
    return x + np.where(flakes, p["amount"], 0.0)


def zoom_kernel(k: int, center: float) -> np.ndarray:
    """``k x k`` kernel ``w[r, c] ∝ (center - r)``, normalised to sum 1 (top-weighted box)."""
    rows = center - np.arange(k, dtype=np.float64)
    w = np.repeat(rows[:, None], k, axis=1)
    return w / w.sum()


def zoom_blur(x: np.ndarray, p: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """Correlate with :func:`zoom_kernel` (weights from the image centre, anchor k//2).

    Separable: vertical weights ``(center - r) / sum_r (center - r)``, horizontal box ``k``.
    """
    k = int(p["k"])
    rows = p["center"] - np.arange(k, dtype=np.float64)
    y = correlate_axis(x, rows / rows.sum(), axis=1) if k > 1 else x.copy()
    return box_filter(y, k, axis=2)


# --------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------


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
    """One corruption: function, per-level parameters (name -> type), constants, fields."""

    name: str
    fn: Callable[[np.ndarray, Mapping[str, Any], Fields], np.ndarray]
    per_level: Mapping[str, type]
    constants: Mapping[str, tuple[type, Any]]
    fields: tuple[tuple[str, str], ...]  # (field name, "normal" | "uniform")
    search: Search
    bounds: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)


REGISTRY: dict[str, CorruptionSpec] = {
    "brightness": CorruptionSpec(
        "brightness", brightness, {"b": float}, {}, (), Search("b", 0.0, 2.0)
    ),
    "contrast": CorruptionSpec(
        "contrast", contrast, {"c": float}, {}, (), Search("c", 3.0, -1.0), {"c": (-1.0, None)}
    ),
    "defocus_blur": CorruptionSpec(
        "defocus_blur",
        defocus_blur,
        {"k": int, "a": float},
        {},
        (),
        Search("a", 0.0, 3.0, fixed={"k": 7}),
        {"k": (1, SIDE)},
    ),
    "fog": CorruptionSpec(
        "fog",
        fog,
        {"f": float},
        {"noise_std": (float, 0.1)},
        (("z", "normal"),),
        Search("f", 0.01, 1.0),
        {"f": (1e-9, 1.0), "noise_std": (0.0, None)},
    ),
    "frost": CorruptionSpec(
        "frost",
        frost,
        {"level": float},
        {
            "field_std": (float, 1.0),
            "threshold": (float, 0.1),
            "mask_noise_std": (float, 0.1),
            "blur_ksize": (int, 5),
            "blur_sigma": (float, 1.0),
            "mask_below": (float, 0.45),
            "add_noise_std": (float, 0.1),
        },
        (("z1", "normal"), ("z2", "normal"), ("z3", "normal")),
        Search("level", 0.0, 40.0),
        {
            "level": (0.0, None),
            "field_std": (0.0, None),
            "mask_noise_std": (0.0, None),
            "blur_ksize": (1, SIDE - 1),
            "blur_sigma": (1e-9, None),
            "add_noise_std": (0.0, None),
        },
    ),
    "gaussian_noise": CorruptionSpec(
        "gaussian_noise",
        gaussian_noise,
        {"mean": float},
        {"std": (float, 0.25)},
        (("z", "normal"),),
        Search("mean", 0.0, 2.0),
        {"std": (0.0, None)},
    ),
    "impulse_noise": CorruptionSpec(
        "impulse_noise",
        impulse_noise,
        {"density": float},
        {"amount": (float, 1.0)},
        (("u", "uniform"),),
        Search("density", 0.0, 1.0),
        {"density": (0.0, 1.0)},
    ),
    "motion_blur": CorruptionSpec(
        "motion_blur",
        motion_blur,
        {"k": int},
        {},
        (),
        Search("k", 1, SIDE, integer=True),
        {"k": (1, SIDE)},
    ),
    "pixelation": CorruptionSpec(
        "pixelation",
        pixelation,
        {"f": float},
        {},
        (),
        Search("f", 1.0, 14.0),
        {"f": (0.05, float(SIDE))},
    ),
    "shot_noise": CorruptionSpec(
        "shot_noise",
        shot_noise,
        {"lam": float},
        {},
        (("u", "uniform"),),
        Search("lam", 0.0, 5.0),
        {"lam": (0.0, 1000.0)},
    ),
    "snow": CorruptionSpec(
        "snow",
        snow,
        {"p": float, "k": int},
        {"amount": (float, 1.0)},
        (("u", "uniform"),),
        Search("p", 0.0, 1.0, fixed={"k": 3}),
        {"p": (0.0, 1.0), "k": (1, SIDE - 1)},
    ),
    "zoom_blur": CorruptionSpec(
        "zoom_blur",
        zoom_blur,
        {"k": int},
        {"center": (float, 14.0)},
        (),
        Search("k", 1, 14, integer=True),
        {"k": (1, 14)},
    ),
}

#: The ``paper`` preset (schedule doc); config.yaml carries the same numbers.
PAPER_SCHEDULE: dict[str, dict[str, Any]] = {
    "brightness": {"b": [0.1, 0.55, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]},
    "contrast": {"c": [3.0, 2.1, 1.7, 1.4, 1.0, 0.2, -0.2, -0.4, -0.5, -0.6]},
    "defocus_blur": {
        "k": [3, 7, 7, 6, 6, 6, 6, 7, 7, 8],
        "a": [0.1, 0.6, 0.7, 0.8, 1.5, 0.9, 1.0, 1.2, 1.0, 1.2],
    },
    "fog": {"f": [0.1, 0.43, 0.45, 0.48, 0.5, 0.52, 0.54, 0.56, 0.58, 0.6], "noise_std": 0.1},
    "frost": {
        "level": [6, 8, 10, 11, 12, 13, 14, 16, 17, 18],
        "field_std": 1.0,
        "threshold": 0.1,
        "mask_noise_std": 0.1,
        "blur_ksize": 5,
        "blur_sigma": 1.0,
        "mask_below": 0.45,
        "add_noise_std": 0.1,
    },
    "gaussian_noise": {
        "mean": [0.05, 0.45, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.835, 0.87],
        "std": 0.25,
    },
    "impulse_noise": {
        "density": [0.25, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75],
        "amount": 1.0,
    },
    "motion_blur": {"k": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]},
    "pixelation": {"f": [0.7, 2, 2.5, 3, 3.5, 3.55, 3.75, 4.25, 4.7, 5.7]},
    "shot_noise": {"lam": [0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.42, 0.46, 0.5, 0.57]},
    "snow": {
        "p": [0.81, 0.84, 0.86, 0.88, 0.9, 0.91, 0.93, 0.94, 0.95, 0.99],
        "k": [5, 3, 2, 2, 2, 2, 2, 2, 2, 2],
        "amount": 1.0,
    },
    "zoom_blur": {"k": [1, 2, 3, 4, 5, 5, 6, 6, 7, 8], "center": 14.0},
}


# --------------------------------------------------------------------------------------
# validation and schedules
# --------------------------------------------------------------------------------------


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


def _check_value(name: str, key: str, value: Any, typ: type, spec: CorruptionSpec) -> Any:
    where = f"pmnist.corruptions.{name}.{key}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise CorruptionConfigError(f"{where} must be a {typ.__name__}; got {value!r}")
    if typ is int:
        if not isinstance(value, numbers.Integral):
            raise CorruptionConfigError(f"{where} must be an integer; got {value!r}")
        value = int(value)
    else:
        value = float(value)
        if not math.isfinite(value):
            raise CorruptionConfigError(f"{where} must be finite; got {value!r}")
    lo, hi = spec.bounds.get(key, (None, None))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise CorruptionConfigError(f"{where} = {value!r} is outside [{lo}, {hi}]")
    return value


def level_params(name: str, params: Mapping[str, Any], level: int) -> dict[str, Any]:
    """Parameters of one level from a corruption's config section (validated).

    ``params`` holds a list of 10 values per per-level key and a scalar per constant
    (constants may be omitted and take the registry default). Unknown keys, missing keys,
    wrong lengths and wrong types raise :class:`CorruptionConfigError` naming the key.
    """
    spec = get_spec(name)
    level = check_level(level)
    known = set(spec.per_level) | set(spec.constants)
    unknown = sorted(set(params) - known)
    if unknown:
        raise CorruptionConfigError(
            f"pmnist.corruptions.{name}: unknown parameter(s) {unknown}; expected {sorted(known)}"
        )
    out: dict[str, Any] = {}
    for key, typ in spec.per_level.items():
        if key not in params:
            raise CorruptionConfigError(f"pmnist.corruptions.{name}: missing parameter {key!r}")
        values = params[key]
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise CorruptionConfigError(
                f"pmnist.corruptions.{name}.{key} must be a list of {N_LEVELS} values; got {values!r}"
            )
        if len(values) != N_LEVELS:
            raise CorruptionConfigError(
                f"pmnist.corruptions.{name}.{key} must have {N_LEVELS} values (levels 1..10); "
                f"got {len(values)}"
            )
        out[key] = _check_value(name, key, values[level - 1], typ, spec)
    for key, (typ, default) in spec.constants.items():
        out[key] = _check_value(name, key, params.get(key, default), typ, spec)
    if name == "frost" and out["blur_ksize"] % 2 == 0:
        raise CorruptionConfigError(
            f"pmnist.corruptions.frost.blur_ksize must be odd; got {out['blur_ksize']}"
        )
    if name == "pixelation" and pixelation_side(out["f"]) < 1:
        raise CorruptionConfigError(f"pmnist.corruptions.pixelation.f = {out['f']} gives side < 1")
    return out


def validate_schedule(schedule: Mapping[str, Mapping[str, Any]]) -> None:
    """Check every corruption and level of a schedule (``{name: params}``); raise on error."""
    for name, params in schedule.items():
        for level in range(1, N_LEVELS + 1):
            level_params(name, params, level)


# --------------------------------------------------------------------------------------
# random fields and the pipeline
# --------------------------------------------------------------------------------------


#: Draws reserved for one image in its block's stream (counter-based offset, see draw_fields).
IMAGE_STRIDE = 1 << 40


def draw_fields(name: str, seed: int, level: int, test_index: np.ndarray) -> dict[str, np.ndarray]:
    """Random fields of a batch, image by image, from the block stream of (seed, name, level).

    The block stream is the PCG64 generator of ``block_rng(seed, name, level)``; image
    ``i = test_index[r]`` reads it from position ``i * IMAGE_STRIDE`` (``advance``; 2^40
    draws reserved per image, far more than the 3 x 784 it uses), so each image's fields
    depend only on (seed, name, level, i), not on which other images are in the batch.
    Each image draws its fields in the registry's order, each ``(28, 28)``: ``normal`` =
    standard normal, ``uniform`` = U[0, 1). Returns ``{field: (n, 28, 28) float64}``.
    """
    spec = get_spec(name)
    level = check_level(level)
    idx = np.asarray(test_index)
    out = {f: np.empty((idx.size, SIDE, SIDE), dtype=np.float64) for f, _ in spec.fields}
    if not spec.fields:
        return out
    if idx.size and (idx.min() < 0 or idx.max() >= (1 << 24)):
        raise ValueError(f"test indices must be in [0, 2^24); got {idx.min()}..{idx.max()}")
    rng = block_rng(seed, name, level)
    bitgen = rng.bit_generator
    start = bitgen.state
    for row, i in enumerate(idx.tolist()):
        bitgen.state = start
        bitgen.advance(int(i) * IMAGE_STRIDE)
        for f, kind in spec.fields:
            if kind == "normal":
                out[f][row] = rng.standard_normal((SIDE, SIDE))
            else:
                out[f][row] = rng.random((SIDE, SIDE))
    return out


def apply_float(name: str, x: np.ndarray, params: Mapping[str, Any], fields: Fields) -> np.ndarray:
    """Apply corruption ``name`` to a float batch (no clipping). ``params`` = one level's values."""
    return get_spec(name).fn(x, params, fields)


def corrupt(
    images: np.ndarray,
    name: str,
    params: Mapping[str, Any],
    fields: Fields,
) -> np.ndarray:
    """The full pipeline on uint8 images: :func:`to_float`, corruption, :func:`to_uint8`."""
    x = to_float(images)
    return to_uint8(apply_float(name, x, params, fields))
