"""Frost and motion blur as the authors' generator made the paper's data set.

Written from shared/docs/perturbed-mnist-paper-schedule.md (the frost row and the motion
blur row), independently of the library: per-image numpy/scipy code with the page's
constants typed in here, compared with the batch implementation on the same random fields
(reliquant.pmnist.fields, i.e. the per-block seeding of reliquant.core.seeding) and on real
MNIST test digits (the vendored data/raw/mnist).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.ndimage as ndi
import scipy.stats

from reliquant.core.config import config_section
from reliquant.core.datasets import read_idx
from reliquant.pmnist import corruptions as C
from reliquant.pmnist import registry as R
from reliquant.pmnist.fields import draw_fields

REPO = Path(__file__).resolve().parents[2]
PAPER = config_section("pmnist", REPO / "config.yaml")["corruptions"]
SEED = 20240611
N = 28
#: The first 200 MNIST test digits (real strokes, for the pixel counts of the page).
DIGITS = read_idx(REPO / "data/raw/mnist/t10k-images-idx3-ubyte.gz")[:200]

# The page's frost row, typed in: levels 1..10 and the constants.
FROST_LEVELS = [6, 8, 10, 11, 12, 13, 14, 16, 17, 18]
FROST_S, FROST_THRESHOLD, FROST_NOISE, FROST_KSIZE, FROST_SIGMA = 1.0, 0.1, 0.1, 5, 1.0


# ---------------------------------------------------------------- frost


def gauss2d(ksize: int, sigma: float) -> np.ndarray:
    """The 2-D Gaussian kernel (OpenCV GaussianBlur: centred, sum 1)."""
    c = (ksize - 1) / 2
    a = np.arange(ksize) - c
    g = np.exp(-(a[:, None] ** 2 + a[None, :] ** 2) / (2 * sigma**2))
    return g / g.sum()


def frost_description(
    x: np.ndarray, level: float, z1: np.ndarray, z2: np.ndarray, z3: np.ndarray, old: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """One image, frost as the page describes it: returns (corrupted float image, noised mask).

    ``old``: the earlier 0/1 variant (mask 1 above the threshold, clip to [0, 1], noise where
    the blurred mask < 0.45), only to show that the tests tell the two apart.
    """
    field = FROST_S * z1  # N(0, s)
    if old:
        mask = np.clip(np.where(field > FROST_THRESHOLD, 1.0, 0.0) + FROST_NOISE * z2, 0.0, 1.0)
        below = 0.45
    else:
        mask = np.where(field < FROST_THRESHOLD, -1.0, 1.0)  # -1 below, +1 at or above
        mask = np.clip(mask + FROST_NOISE * z2, -1.0, 1.0)
        below = 0.0
    blurred = ndi.correlate(mask, gauss2d(FROST_KSIZE, FROST_SIGMA), mode="mirror")  # 2-D
    noised = blurred < below
    return x + np.where(noised, level * FROST_NOISE * z3, 0.0), noised


def zs(fields: dict, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Image ``i``'s three frost fields (z1, z2, z3)."""
    return fields["z1"][i], fields["z2"][i], fields["z3"][i]


def test_config_frost_is_the_pages_frost() -> None:
    f = PAPER["frost"]
    assert f["level"] == FROST_LEVELS
    assert (f["field_std"], f["threshold"], f["mask_noise_std"]) == (1.0, 0.1, 0.1)
    assert (f["blur_ksize"], f["blur_sigma"], f["mask_below"], f["add_noise_std"]) == (
        5,
        1.0,
        0.0,
        0.1,
    )


@pytest.mark.parametrize("level", range(1, 11))
def test_frost_matches_the_description_per_image(level: int) -> None:
    """Batch frost = the page's per-image frost on the same fields, pixel for pixel."""
    idx = np.arange(40) * 7
    images = DIGITS[:40]
    fields = draw_fields("frost", SEED, level, idx)
    p = R.level_params("frost", PAPER["frost"], level)
    x = C.to_float(images)
    lib = R.apply_float("frost", x, p, fields)
    lib_u8 = R.corrupt(images, "frost", p, fields)
    for i in range(len(images)):
        ref, noised = frost_description(x[i], FROST_LEVELS[level - 1], *zs(fields, i))
        np.testing.assert_array_equal(lib[i] != x[i], noised)  # the same pixels get noise
        np.testing.assert_allclose(lib[i], ref, rtol=0, atol=1e-12)
        ref_u8 = ((np.clip(ref, -1, 1) * 0.5 + 0.5) * 255).astype(np.uint8)
        scaled = (np.clip(ref, -1, 1) * 0.5 + 0.5) * 255
        on_edge = np.abs(scaled - np.round(scaled)) < 1e-9  # truncation of an exact integer
        assert not ((lib_u8[i] != ref_u8) & ~on_edge).any()


def test_frost_noises_about_60_percent_of_pixels() -> None:
    """About 60 % of pixels get noise (the old 0/1 variant: about 47 %), at every level."""
    idx = np.arange(100)
    x = np.zeros((len(idx), N, N))  # mid grey: the added noise is visible everywhere
    for level in range(1, 11):
        fields = draw_fields("frost", SEED, level, idx)
        p = R.level_params("frost", PAPER["frost"], level)
        frac = float((R.apply_float("frost", x, p, fields) != x).mean())
        old_noised = [frost_description(x[i], 1.0, *zs(fields, i), old=True)[1] for i in idx]
        old = float(np.mean(old_noised))
        assert 0.585 < frac < 0.625, (level, frac)
        assert 0.45 < old < 0.485, (level, old)


@pytest.mark.parametrize("level", [1, 5, 10])
def test_frost_pixel_statistics_per_level(level: int) -> None:
    """Noise where added is ``level * N(0, 0.1)``; uint8 means on black images as described."""
    idx = np.arange(100)
    fields = draw_fields("frost", SEED, level, idx)
    p = R.level_params("frost", PAPER["frost"], level)
    sigma = FROST_LEVELS[level - 1] * FROST_NOISE
    # mid grey: the increments are the noise itself (nothing clipped in float)
    grey = np.zeros((len(idx), N, N))
    d = R.apply_float("frost", grey, p, fields)
    noised = d != 0
    z = d[noised] / sigma
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert scipy.stats.kstest(z[::7], "norm").pvalue > 1e-3
    # black images in uint8: the page's pipeline gives v = trunc(127.5 clip(sigma z, 0, 2))
    # on the noised pixels, so E[v] = sum_{n=1..255} P(127.5 sigma z >= n)
    black = np.zeros((len(idx), N, N), dtype=np.uint8)
    out = R.corrupt(black, "frost", p, fields)
    e_v = sum(scipy.stats.norm.sf(n / (127.5 * sigma)) for n in range(1, 256))
    frac = noised.mean()
    assert math.isclose(out.mean(), frac * e_v, rel_tol=0.03), (out.mean(), frac * e_v)
    assert math.isclose(
        (out > 0).mean(), frac * scipy.stats.norm.sf(1 / (127.5 * sigma)), rel_tol=0.03
    )
    # and the page's per-image version gives the same bytes
    level_value = FROST_LEVELS[level - 1]
    ref = np.stack(
        [frost_description(-np.ones((N, N)), level_value, *zs(fields, i))[0] for i in idx]
    )
    np.testing.assert_array_equal(out, ((np.clip(ref, -1, 1) * 0.5 + 0.5) * 255).astype(np.uint8))


# ---------------------------------------------------------------- motion blur


def line_kernel(k: int, row: int) -> np.ndarray:
    """k x k zeros with ones in ``row``, normalised, turned 90 degrees (np.rot90)."""
    kernel = np.zeros((k, k))
    kernel[row, :] = 1.0
    return np.rot90(kernel / kernel.sum())


def filter2d(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """OpenCV-style filter2D on one image, brute force: anchor (k // 2, k // 2), reflect-101."""
    k = kernel.shape[0]
    xp = np.pad(x, k, mode="reflect")  # numpy 'reflect' is reflect-101 (d c b | a b c d)
    out = np.zeros_like(x)
    for a in range(k):
        for b in range(k):
            r0, c0 = k + a - k // 2, k + b - k // 2
            out += kernel[a, b] * xp[r0 : r0 + N, c0 : c0 + N]
    return out


def motion(k: int, centred: bool) -> dict:
    return R.level_params("motion_blur", {"k": [k] * 10, "centred": centred}, 1)


def test_paper_motion_blur_is_the_default() -> None:
    assert PAPER["motion_blur"]["centred"] is False
    assert PAPER["motion_blur"]["k"] == list(range(1, 11))


@pytest.mark.parametrize("k", [1, 3, 5, 7, 9, 11, 27])
def test_motion_blur_odd_k_paper_equals_centred(k: int) -> None:
    x = C.to_float(DIGITS)
    paper = R.apply_float("motion_blur", x, motion(k, False), {})
    np.testing.assert_array_equal(paper, R.apply_float("motion_blur", x, motion(k, True), {}))
    assert C.motion_line_offset(k) == 0
    for i in range(3):  # and both are the page's kernel (line in the centre row = anchor)
        ref = filter2d(x[i], line_kernel(k, int((k - 1) / 2)))
        np.testing.assert_allclose(paper[i], ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [2, 4, 6, 8, 10, 28])
def test_motion_blur_even_k_paper_is_shifted_one_pixel(k: int) -> None:
    x = C.to_float(DIGITS)
    paper = R.apply_float("motion_blur", x, motion(k, False), {})
    centred = R.apply_float("motion_blur", x, motion(k, True), {})
    kernel = line_kernel(k, int((k - 1) / 2))
    assert np.flatnonzero(kernel.sum(axis=0)).tolist() == [k // 2 - 1]  # one left of the anchor
    for i in range(5):
        ref = filter2d(x[i], kernel)
        np.testing.assert_allclose(paper[i], ref, rtol=0, atol=1e-12)
        # scipy's correlate anchors at k // 2 with origin 0, as OpenCV does
        np.testing.assert_allclose(ndi.correlate(x[i], kernel, mode="mirror"), ref, atol=1e-12)
        # the centred variant: the line through the anchor (column k // 2)
        through = np.zeros((k, k))
        through[:, k // 2] = 1.0 / k
        np.testing.assert_allclose(centred[i], filter2d(x[i], through), rtol=0, atol=1e-12)
    # exactly the centred blur moved one column right (column 0 reads column 1)
    np.testing.assert_array_equal(paper[:, :, 1:], centred[:, :, :-1])
    np.testing.assert_array_equal(paper[:, :, 0], centred[:, :, 1])
    if k <= 10:  # the page: 22-40 % of the pixels differ at k = 2, 4, ..., 10
        diff = (C.to_uint8(paper) != C.to_uint8(centred)).mean()
        assert 0.2 < diff < 0.45, diff


def test_motion_blur_centred_switch_is_validated() -> None:
    k = PAPER["motion_blur"]["k"]
    for bad in (0, 1, "false", None, 0.0):
        with pytest.raises(
            R.CorruptionConfigError, match=r"motion_blur\.centred must be true or false"
        ):
            R.validate_schedule({"motion_blur": {"k": k, "centred": bad}})
    with pytest.raises(R.CorruptionConfigError, match="missing parameter 'centred'"):
        R.validate_schedule({"motion_blur": {"k": k}})
    with pytest.raises(
        R.CorruptionConfigError, match=r"motion_blur\.centred must be true or false"
    ):
        R.validate_schedule({"motion_blur": {"k": k, "centred": [False] * 10}})
    R.validate_schedule({"motion_blur": {"k": k, "centred": True}})
    assert R.level_params("motion_blur", {"k": k, "centred": np.bool_(True)}, 2)["centred"] is True
