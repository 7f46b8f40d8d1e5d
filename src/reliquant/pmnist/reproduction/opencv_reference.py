"""Each corruption of ONE image as a user of OpenCV writes the authors' generator.

``bench/pmnist.py`` times our batch generation
(:func:`~reliquant.pmnist.reproduction.partitions.generate_block`) against this per-image reference (``cv2.blur`` / ``cv2.GaussianBlur`` /
``cv2.filter2D`` / ``cv2.resize`` / ``cv2.erode`` and numpy, one image per call, each image's
random fields drawn by a numpy Generator positioned at that image's stream); the ratio means
something only if both make the same images, which the benchmark checks on every run and the
tests check for every corruption and level (:func:`off_by_truncation`).

Needs ``opencv-python-headless`` (the ``bench`` extra: ``pip install -e '.[bench]'``); ``cv2``
is imported inside :func:`opencv_reference`, so this module imports without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from reliquant.core.seeding import block_rng
from reliquant.pmnist.fields import IMAGE_STRIDE
from reliquant.pmnist.registry import level_params

__all__ = ["off_by_truncation", "opencv_reference", "to_uint8"]


def opencv_reference(
    name: str, schedule: Mapping[str, Any], level: int, seed: int
) -> Callable[[np.ndarray, int], np.ndarray]:
    """Corruption ``name`` at ``level`` of ONE image, as a user of OpenCV writes it.

    Returns ``corrupt(u, i) -> y``: ``u`` a uint8 (28, 28) image with test index ``i``, ``y``
    the float64 image before clipping (:func:`to_uint8` finishes it). Per image, as the
    authors' generator: ``x = u / 255 * 2 - 1``, the image's random fields from a numpy
    ``Generator`` (the block's PCG64 stream moved to the image: ``state``, then
    ``advance(i * IMAGE_STRIDE)``; each field one ``standard_normal`` / ``random`` call of
    28 x 28), then OpenCV / numpy on the 28 x 28 array. Per-level constants (kernels, the fog
    mask, the Poisson table) are made once. Written independently of the library's
    corruption code (only the registry's parameter validation and the seeding are shared).
    """
    import cv2

    reflect = cv2.BORDER_REFLECT_101
    p = level_params(name, schedule, level)
    rng = block_rng(seed, name, level)
    bitgen = rng.bit_generator
    start = bitgen.state

    def image_rng(i: int) -> np.random.Generator:
        bitgen.state = start
        bitgen.advance(int(i) * IMAGE_STRIDE)
        return rng

    if name == "brightness":
        b = p["b"]
        return lambda u, i: u / 255.0 * 2.0 - 1.0 + b
    if name == "contrast":
        c = p["c"]

        def contrast(u, i):
            x = u / 255.0 * 2.0 - 1.0
            return (x - x.mean()) * (1.0 + c)

        return contrast
    if name == "defocus_blur":
        k, a = p["k"], p["a"]

        def defocus(u, i):
            x = u / 255.0 * 2.0 - 1.0
            return cv2.blur(x, (k, k), borderType=reflect) * a + x * (1.0 - a)

        return defocus
    if name == "fog":
        f, std = p["f"], p["noise_std"]
        c = np.linspace(-1.0, 1.0, 28)
        radial = np.exp(-((np.sqrt(c[:, None] ** 2 + c[None, :] ** 2) / f) ** 2))

        def fog(u, i):
            x = u / 255.0 * 2.0 - 1.0
            mask = np.clip(radial + std * image_rng(i).standard_normal((28, 28)), 0.0, 1.0)
            return x * (1.0 - f) + mask * f

        return fog
    if name == "frost":
        ksize, sigma = p["blur_ksize"], p["blur_sigma"]
        amp = p["level"] * p["add_noise_std"]

        def frost(u, i):
            x = u / 255.0 * 2.0 - 1.0
            r = image_rng(i)
            z1, z2, z3 = (r.standard_normal((28, 28)) for _ in range(3))
            mask = np.where(p["field_std"] * z1 >= p["threshold"], 1.0, -1.0)
            mask = np.clip(mask + p["mask_noise_std"] * z2, -1.0, 1.0)
            blurred = cv2.GaussianBlur(mask, (ksize, ksize), sigma, borderType=reflect)
            return x + np.where(blurred < p["mask_below"], amp * z3, 0.0)

        return frost
    if name == "gaussian_noise":
        mean, std = p["mean"], p["std"]

        def gaussian(u, i):
            x = u / 255.0 * 2.0 - 1.0
            return x + (mean + std * image_rng(i).standard_normal((28, 28)))

        return gaussian
    if name == "impulse_noise":
        m = int(p["density"] * 784)

        def impulse(u, i):
            x = (u / 255.0 * 2.0 - 1.0).ravel()
            keys = image_rng(i).random((28, 28)).ravel()
            if m:
                x[np.argpartition(keys, m - 1)[:m]] += p["amount"]
            return x.reshape(28, 28)

        return impulse
    if name == "motion_blur":
        k = p["k"]
        kernel = np.zeros((k, k))
        kernel[k // 2 if p["centred"] else int((k - 1) / 2), :] = 1.0 / k
        kernel = np.ascontiguousarray(np.rot90(kernel))  # the line turned into a column

        def motion(u, i):
            return cv2.filter2D(u / 255.0 * 2.0 - 1.0, -1, kernel, borderType=reflect)

        return motion
    if name == "pixelation":
        # Area resampling as the exact box-overlap average (a 28 -> side matrix, both ways):
        # OpenCV's INTER_AREA keeps its weights in single precision at non-integer scales
        # (errors ~6e-8) and turns bilinear when enlarging, so it does not give these images.
        side = int(28 // p["f"])
        edges = np.arange(side + 1) * (28 / side)
        area = np.clip(
            np.minimum(edges[1:, None], np.arange(1, 29)[None])
            - np.maximum(edges[:-1, None], np.arange(28)[None]),
            0.0,
            None,
        ) / (28 / side)

        def pixelation(u, i):
            small = area @ (u / 255.0 * 2.0 - 1.0) @ area.T
            up = cv2.resize(small, (28, 28), interpolation=cv2.INTER_NEAREST)
            lo, hi = up.min(), up.max()
            return (up - lo) / (hi - lo) * 2.0 - 1.0 if hi > lo else up

        return pixelation
    if name == "shot_noise":
        lam = p["lam"]
        kmax = int(lam + 12.0 * math.sqrt(lam) + 40)
        k = np.arange(kmax + 1, dtype=np.float64)
        pmf = np.exp(-lam + k * math.log(lam) - np.array([math.lgamma(v + 1) for v in k]))
        cdf = np.cumsum(pmf)
        cdf[-1] = 1.0
        neg_sf = -np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])

        def shot(u, i):  # inversion of the uniform field: u < F(k); 1 - u > S(k) above 1/2
            x = u / 255.0 * 2.0 - 1.0
            v = image_rng(i).random((28, 28))
            low = np.searchsorted(cdf, v, side="right")
            high = np.searchsorted(neg_sf, v - 1.0, side="right")
            return x + np.where(v >= 0.5, high, low)

        return shot if lam > 0 else (lambda u, i: u / 255.0 * 2.0 - 1.0 + 0.0)
    if name == "snow":
        k = p["k"] + 1 if p["k"] % 2 == 0 else p["k"]
        window = np.ones((k, k), np.uint8)

        def snow(u, i):  # Gauss_k(mask) == 1 exactly where the k x k window is all 1
            x = u / 255.0 * 2.0 - 1.0
            mask = (image_rng(i).random((28, 28)) < p["p"]).astype(np.uint8)
            flakes = cv2.erode(mask, window, borderType=reflect)
            return x + np.where(flakes > 0, p["amount"], 0.0)

        return snow
    if name == "zoom_blur":
        k = p["k"]
        weights = np.repeat((p["center"] - np.arange(k, dtype=np.float64))[:, None], k, axis=1)
        weights /= weights.sum()

        def zoom(u, i):
            return cv2.filter2D(u / 255.0 * 2.0 - 1.0, -1, weights, borderType=reflect)

        return zoom
    raise KeyError(f"no OpenCV reference for corruption {name!r}")


def to_uint8(y: np.ndarray) -> np.ndarray:
    """The pipeline's last step for one image: ``trunc((clip(y, -1, 1) * 0.5 + 0.5) * 255)``."""
    return ((np.clip(y, -1.0, 1.0) * 0.5 + 0.5) * 255.0).astype(np.uint8)


def off_by_truncation(ours: np.ndarray, reference_float: np.ndarray) -> tuple[int, int]:
    """Pixels where ``ours`` (uint8) differs from the reference: ``(all, not explained)``.

    A difference is explained when it is 1 grey level at a pixel whose reference value sits
    within 1e-9 of an integer before truncation (float rounding of a different but equivalent
    sum order, e.g. ``cv2.blur`` vs a running sum, decides which side it falls).
    """
    want = to_uint8(reference_float).astype(int)
    diff = np.abs(ours.astype(int) - want)
    scaled = (np.clip(reference_float, -1.0, 1.0) * 0.5 + 0.5) * 255.0
    on_edge = np.abs(scaled - np.round(scaled)) < 1e-9
    return int((diff > 0).sum()), int(((diff > 1) | ((diff == 1) & ~on_edge)).sum())
