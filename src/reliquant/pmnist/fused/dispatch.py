"""Dispatch: each corruption's per-level constants in Python, its loop compiled
(:data:`BLOCKS`), and :func:`corrupt_block`, the fused pipeline of one block of images."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from reliquant.pmnist import corruptions as C
from reliquant.pmnist.fields import KIND_CODES, image_states
from reliquant.pmnist.fused.compiled import (
    NP,
    TO_FLOAT,
    N,
    contrast_kernel,
    defocus_blur_kernel,
    fill_fields,
    fog_kernel,
    frost_kernel,
    gaussian_noise_kernel,
    impulse_noise_kernel,
    lut_kernel,
    motion_blur_kernel,
    pixelation_kernel,
    shot_noise_kernel,
    snow_kernel,
    zoom_blur_kernel,
)
from reliquant.pmnist.fused.level_constants import poisson_breaks, symmetry
from reliquant.pmnist.kernels import area_matrix, gaussian_kernel, reflect101
from reliquant.pmnist.registry import check_level, get_spec

__all__ = [
    "BLOCKS",
    "Block",
    "corrupt_block",
]


def _brightness_block(images, out, p, rng):
    table = C.to_uint8(C.brightness(TO_FLOAT, p, {}))
    lut_kernel(images, out, table)


def _impulse_block(images, out, p, rng):
    m = C.impulse_count(p["density"])
    table = np.stack([C.to_uint8(TO_FLOAT), C.to_uint8(TO_FLOAT + p["amount"])])
    tied = impulse_noise_kernel(images, out, *rng, m, table)
    for i in np.flatnonzero(tied):  # the batch code's own choice for a tied m-th key
        states, ih, il, kinds = rng
        u = np.empty((1, 1, NP))
        fill_fields(u, kinds, states[i : i + 1], ih, il)
        x = C.to_float(images[i].reshape(1, N, N))
        out[i] = C.to_uint8(C.impulse_noise(x, p, {"u": u.reshape(1, N, N)})).reshape(-1)


def _motion_block(images, out, p, rng):
    k = int(p["k"])
    offset = 0 if p["centred"] else C.motion_line_offset(k)
    motion_blur_kernel(images, out, k, reflect101(np.arange(N) + offset, N).astype(np.int64))


def _pixelation_block(images, out, p, rng):
    s = C.pixelation_side(p["f"])
    a = area_matrix(N, s)
    starts = np.zeros(s + 1, dtype=np.int64)
    cols, weights = [], []
    for o in range(s):
        nz = np.flatnonzero(a[o])
        cols.extend(nz.tolist())
        weights.extend(a[o, nz].tolist())
        starts[o + 1] = starts[o] + nz.size
    idx = ((np.arange(N) * s) // N).astype(np.int64)
    cols_a = np.asarray(cols, dtype=np.int64)
    pixelation_kernel(images, out, starts, cols_a, np.asarray(weights, dtype=np.float64), s, idx)


def _shot_block(images, out, p, rng):
    breaks = poisson_breaks(float(p["lam"]))
    if breaks is None:  # never seen; the batch code stays exact
        states, ih, il, kinds = rng
        u = np.empty((1, images.shape[0], NP))
        fill_fields(u, kinds, states, ih, il)
        x = C.to_float(images.reshape(-1, N, N))
        y = C.shot_noise(x, p, {"u": u.reshape(-1, N, N)})
        out[:] = C.to_uint8(y).reshape(out.shape)
        return
    shot_noise_kernel(images, out, *rng, breaks)


def _frost_block(images, out, p, rng):
    g = gaussian_kernel(int(p["blur_ksize"]), p["blur_sigma"])
    frost_kernel(
        images,
        out,
        *rng,
        g,
        symmetry(g),
        float(p["field_std"]),
        float(p["threshold"]),
        float(p["mask_noise_std"]),
        float(p["mask_below"]),
        float(p["level"] * p["add_noise_std"]),
    )


def _zoom_block(images, out, p, rng):
    k = int(p["k"])
    rows = p["center"] - np.arange(k, dtype=np.float64)
    w = rows / rows.sum()
    zoom_blur_kernel(images, out, w, symmetry(w), k)


Block = Callable[[np.ndarray, np.ndarray, Mapping[str, Any], tuple], None]

#: The compiled pipeline of each corruption: ``(images (n, 784), out, params, stream)``.
BLOCKS: dict[str, Block] = {
    "brightness": _brightness_block,
    "contrast": lambda im, out, p, rng: contrast_kernel(im, out, float(p["c"])),
    "defocus_blur": lambda im, out, p, rng: defocus_blur_kernel(
        im, out, int(p["k"]), float(p["a"])
    ),
    "fog": lambda im, out, p, rng: fog_kernel(
        im, out, *rng, C.fog_mask(p["f"]).reshape(-1), float(p["f"]), float(p["noise_std"])
    ),
    "frost": _frost_block,
    "gaussian_noise": lambda im, out, p, rng: gaussian_noise_kernel(
        im, out, *rng, float(p["mean"]), float(p["std"])
    ),
    "impulse_noise": _impulse_block,
    "motion_blur": _motion_block,
    "pixelation": _pixelation_block,
    "shot_noise": _shot_block,
    "snow": lambda im, out, p, rng: snow_kernel(
        im,
        out,
        *rng,
        float(p["p"]),
        C.snow_support(int(p["k"])),
        np.stack([C.to_uint8(TO_FLOAT + 0.0), C.to_uint8(TO_FLOAT + p["amount"])]),
    ),
    "zoom_blur": _zoom_block,
}


def corrupt_block(
    images: np.ndarray,
    test_index: np.ndarray,
    name: str,
    params: Mapping[str, Any],
    seed: int,
    level: int,
) -> np.ndarray:
    """``corrupt(images, name, params, draw_fields(name, seed, level, test_index))``, compiled.

    ``params`` are one level's values (:func:`reliquant.pmnist.registry.level_params`).
    The random fields of image ``r`` are those of test index ``test_index[r]``
    (:mod:`reliquant.pmnist.fields`), drawn inside the compiled loop.
    """
    images = C.check_images(images)
    spec = get_spec(name)
    level = check_level(level)
    flat = np.ascontiguousarray(images).reshape(-1, NP)
    out = np.empty_like(flat)
    rng: tuple = ()
    if spec.fields:
        states, ih, il = image_states(seed, name, level, test_index)
        if states.shape[0] != flat.shape[0]:
            raise ValueError(
                f"test_index must have one entry per image ({flat.shape[0]}); got {states.shape[0]}"
            )
        kinds = np.array([KIND_CODES[k] for _, k in spec.fields], dtype=np.int64)
        rng = (states, ih, il, kinds)
    BLOCKS[name](flat, out, params, rng)
    return out.reshape(images.shape)
