"""Batch corruptions against slow, per-pixel references written here (no library code reused).

Each reference loops over pixels with an explicit reflect-101 index map, explicit kernels
anchored at k // 2 and exact (Fraction) box overlaps for area resampling. The random
fields are the library's (their derivation is tested in tests/test_fields.py); the
parameters are the paper preset of config.yaml.
"""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from reliquant.core.config import config_section
from reliquant.core.datasets import read_idx
from reliquant.pmnist import corruptions as C
from reliquant.pmnist import fused as F
from reliquant.pmnist import registry as R
from reliquant.pmnist.fields import draw_fields
from reliquant.pmnist.reproduction.partitions import generate_block

SEED = 12345
N = 28
REPO = Path(__file__).resolve().parents[2]
#: The paper preset, from its one home (config.yaml).
PAPER = config_section("pmnist", REPO / "config.yaml")["corruptions"]


def synthetic_digits(n: int, seed: int = 0) -> np.ndarray:
    """Digit-like uint8 images: black background, a few bright strokes, some grey edges."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, N, N), dtype=np.uint8)
    for i in range(n):
        img = np.zeros((N, N))
        for _ in range(3):
            r0, c0 = rng.integers(5, 23, size=2)
            dr, dc = rng.integers(-1, 2, size=2)
            for t in range(rng.integers(5, 12)):
                r, c = r0 + dr * t, c0 + dc * t
                if 0 <= r < N and 0 <= c < N:
                    img[max(0, r - 1) : r + 2, max(0, c - 1) : c + 2] += rng.uniform(0.3, 1)
        out[i] = np.clip(img * 255, 0, 255).astype(np.uint8)
    return out


IMAGES = synthetic_digits(3)
TEST_INDEX = np.array([4, 17, 9001])


# ---------------------------------------------------------------- reference helpers


def r101(i: int, n: int = N) -> int:
    """Reflect-101 index: ... 2 1 | 0 1 2 ... n-1 | n-2 n-3 ..."""
    while i < 0 or i >= n:
        i = -i if i < 0 else 2 * (n - 1) - i
    return i


def ref_float(u: np.ndarray) -> np.ndarray:
    return np.array([[u[i, j] / 255 * 2 - 1 for j in range(N)] for i in range(N)])


def ref_uint8(v: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape, dtype=np.uint8)
    for i in range(N):
        for j in range(N):
            y = min(max(float(v[i, j]), -1.0), 1.0)
            out[i, j] = int((y * 0.5 + 0.5) * 255)
    return out


def ref_correlate(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """2-D correlation, kernel anchored at (kh // 2, kw // 2), reflect-101 border."""
    kh, kw = kernel.shape
    out = np.zeros_like(x)
    for i in range(N):
        for j in range(N):
            s = 0.0
            for a in range(kh):
                for b in range(kw):
                    s += kernel[a, b] * x[r101(i - kh // 2 + a), r101(j - kw // 2 + b)]
            out[i, j] = s
    return out


def ref_gauss_kernel2d(k: int, sigma: float) -> np.ndarray:
    c = (k - 1) / 2
    g = np.array(
        [
            [math.exp(-((a - c) ** 2 + (b - c) ** 2) / (2 * sigma**2)) for b in range(k)]
            for a in range(k)
        ]
    )
    return g / g.sum()


def ref_area(x: np.ndarray, side: int) -> np.ndarray:
    """Exact box-overlap average of the 28 x 28 image over each of side x side cells."""
    w = Fraction(N, side)

    def overlap(o: int, j: int) -> Fraction:
        lo, hi = o * w, (o + 1) * w
        return max(Fraction(0), min(hi, Fraction(j + 1)) - max(lo, Fraction(j)))

    out = np.zeros((side, side))
    for o1 in range(side):
        rows = [(j, overlap(o1, j)) for j in range(N) if overlap(o1, j) > 0]
        for o2 in range(side):
            cols = [(j, overlap(o2, j)) for j in range(N) if overlap(o2, j) > 0]
            s = 0.0
            for j1, w1 in rows:
                for j2, w2 in cols:
                    s += float(w1 * w2) * x[j1, j2]
            out[o1, o2] = s / float(w * w)
    return out


def reference(name: str, x: np.ndarray, p: dict, f: dict) -> np.ndarray:
    """One image, one corruption, written the slow way."""
    y = np.zeros_like(x)
    if name == "brightness":
        return x + p["b"]
    if name == "contrast":
        mean = math.fsum(x.ravel()) / x.size
        return (x - mean) * (1 + p["c"])
    if name == "defocus_blur":
        k = p["k"]
        blur = ref_correlate(x, np.full((k, k), 1 / k**2))
        return blur * p["a"] + x * (1 - p["a"])
    if name == "fog":
        for i in range(N):
            for j in range(N):
                ri, rj = -1 + 2 * i / (N - 1), -1 + 2 * j / (N - 1)
                r = math.hypot(ri, rj)
                m = math.exp(-((r / p["f"]) ** 2)) + p["noise_std"] * f["z"][i, j]
                m = min(max(m, 0.0), 1.0)
                y[i, j] = x[i, j] * (1 - p["f"]) + m * p["f"]
        return y
    if name == "frost":
        # a -1/+1 mask: -1 below the threshold, +1 at or above
        mask = np.where(p["field_std"] * f["z1"] >= p["threshold"], 1.0, -1.0)
        mask = np.clip(mask + p["mask_noise_std"] * f["z2"], -1, 1)
        blurred = ref_correlate(mask, ref_gauss_kernel2d(p["blur_ksize"], p["blur_sigma"]))
        for i in range(N):
            for j in range(N):
                add = p["level"] * p["add_noise_std"] * f["z3"][i, j]
                y[i, j] = x[i, j] + (add if blurred[i, j] < p["mask_below"] else 0.0)
        return y
    if name == "gaussian_noise":
        return x + p["mean"] + p["std"] * f["z"]
    if name == "impulse_noise":
        keys = f["u"].ravel()
        chosen = sorted(range(N * N), key=lambda t: keys[t])[: int(p["density"] * N * N)]
        y = x.copy().ravel()
        for t in chosen:
            y[t] += p["amount"]
        return y.reshape(N, N)
    if name == "motion_blur":
        # the authors' kernel: ones in row int((k - 1) / 2) of a k x k matrix, normalised,
        # turned 90 degrees (a column); centred: the line through the anchor k // 2 instead
        k = p["k"]
        kernel = np.zeros((k, k))
        kernel[k // 2 if p["centred"] else int((k - 1) / 2), :] = 1 / k
        return ref_correlate(x, np.rot90(kernel))
    if name == "pixelation":
        side = int(28 // p["f"])
        small = ref_area(x, side)
        up = np.array([[small[i * side // N, j * side // N] for j in range(N)] for i in range(N)])
        lo, hi = up.min(), up.max()
        return (up - lo) / (hi - lo) * 2 - 1 if hi > lo else up
    if name == "shot_noise":
        for i in range(N):
            for j in range(N):
                k = 0
                while f["u"][i, j] >= scipy.stats.poisson.cdf(k, p["lam"]):
                    k += 1
                y[i, j] = x[i, j] + k
        return y
    if name == "snow":
        k = p["k"] + 1 if p["k"] % 2 == 0 else p["k"]
        mask = np.where(f["u"] < p["p"], 1.0, 0.0)
        blurred = ref_correlate(mask, ref_gauss_kernel2d(k, 1.0))
        return x + np.where(blurred >= 1 - 1e-9, p["amount"], 0.0)
    if name == "zoom_blur":
        k = p["k"]
        w = np.array([[p["center"] - a for _ in range(k)] for a in range(k)], dtype=float)
        return ref_correlate(x, w / w.sum())
    raise AssertionError(name)


# ---------------------------------------------------------------- one test per corruption


@pytest.mark.parametrize(
    ("name", "overrides"),
    [(name, {}) for name in R.CORRUPTIONS]
    + [("motion_blur", {"centred": True})]
    # k = 1: the identity branch (an element-by-element copy) of the two box filters
    + [("motion_blur", {"k": [1] * R.N_LEVELS}), ("defocus_blur", {"k": [1] * R.N_LEVELS})],
)
def test_corruption_matches_per_pixel_reference(name: str, overrides: dict) -> None:
    schedule = {**PAPER[name], **overrides}
    levels = range(1, 11) if name not in {"shot_noise", "pixelation"} else (1, 2, 5, 7, 10)
    for level in levels:
        p = R.level_params(name, schedule, level)
        fields = draw_fields(name, SEED, level, TEST_INDEX)
        lib_float = R.apply_float(name, C.to_float(IMAGES), p, fields)
        lib_u8 = R.corrupt(IMAGES, name, p, fields)
        for i in range(len(IMAGES)):
            f_i = {k: v[i] for k, v in fields.items()}
            ref = reference(name, ref_float(IMAGES[i]), p, f_i)
            np.testing.assert_allclose(lib_float[i], ref, atol=1e-9, err_msg=f"{name} L{level}")
            # truncation may differ only where the exact value sits on an integer
            diff = lib_u8[i].astype(int) != ref_uint8(ref).astype(int)
            scaled = (np.clip(ref, -1, 1) * 0.5 + 0.5) * 255
            on_edge = np.abs(scaled - np.round(scaled)) < 1e-9
            assert not (diff & ~on_edge).any(), f"{name} L{level}"


# ---------------------------------------------------------------- pipeline and quirks


@given(st.integers(0, 255))
def test_uint8_round_trip_is_u_or_u_minus_one(u: int) -> None:
    img = np.full((1, N, N), u, dtype=np.uint8)
    back = int(C.to_uint8(C.to_float(img))[0, 0, 0])
    assert back == int(((u / 255 * 2 - 1) * 0.5 + 0.5) * 255)
    assert back in (u, u - 1)


def test_paper_quirks() -> None:
    s = PAPER
    assert [C.pixelation_side(f) for f in s["pixelation"]["f"]] == [40, 14, 11, 9, 8, 7, 7, 6, 5, 4]
    x = C.to_float(IMAGES)
    for name in ("motion_blur", "zoom_blur"):
        p = R.level_params(name, s[name], 1)
        np.testing.assert_array_equal(R.apply_float(name, x, p, {}), x)
    p6, p7 = (R.level_params("pixelation", s["pixelation"], lv) for lv in (6, 7))
    np.testing.assert_array_equal(
        R.corrupt(IMAGES, "pixelation", p6, {}), R.corrupt(IMAGES, "pixelation", p7, {})
    )
    # impulse noise on black background gives mid grey 127
    p = R.level_params("impulse_noise", s["impulse_noise"], 1)
    blank = np.zeros((1, N, N), dtype=np.uint8)
    out = R.corrupt(blank, "impulse_noise", p, draw_fields("impulse_noise", SEED, 1, np.array([0])))
    assert set(np.unique(out).tolist()) == {0, 127}
    assert (out == 127).sum() == 196


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 30.0), st.floats(0.0, 1.0, exclude_max=True))
@example(lam=1.0, u=0.9999999999999999)  # the CDF's cumulative sum saturates below u here
@example(lam=30.0, u=1.0 - 2.0**-53)
def test_poisson_inversion_matches_scipy_ppf(lam: float, u: float) -> None:
    got = C.poisson_from_uniform(np.array([u]), lam)[0]
    if lam == 0:
        assert got == 0
        return
    want = scipy.stats.poisson.ppf(u, lam)
    # ppf: smallest k with F(k) >= u; inversion uses u < F(k): equal except on F(k) == u
    assert got in (want, want + 1)
    assert scipy.stats.poisson.cdf(got - 1, lam) <= u + 1e-12


# ---------------------------------------------------------------- bad input


def test_bad_images_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"uint8 array of shape \(n, 28, 28\)"):
        C.to_float(np.zeros((2, 28, 28), dtype=np.float32))
    with pytest.raises(ValueError, match="got dtype uint8 and shape"):
        C.to_float(np.zeros((2, 28, 27), dtype=np.uint8))


# ---------------------------------------------------------------- the compiled pipeline

CONFIG = config_section("pmnist", REPO / "config.yaml")
#: Real digits (the compiled pipeline must match on real strokes, not only on blobs).
DIGITS = read_idx(REPO / "data/raw/mnist/t10k-images-idx3-ubyte.gz")[:100]
#: SHA-256 (first 32 hex digits) of the 10 levels of each corruption on DIGITS, the paper
#: preset of config.yaml and its seed, made by the code before the compiled pipeline existed.
#: The data set's bytes (and the docs' numbers) depend on them: a change to the paper preset
#: on purpose re-pins them, anything else that changes them is a bug.
PAPER_DIGESTS = {
    "brightness": "cf5c05862112137cb972de649287393d",
    "contrast": "2297968190a9d0d4b380825675998957",
    "defocus_blur": "bc4c48e38ea613808f54eefab6abbf72",
    "fog": "effa2312462ff9346d5e7e76f6df599a",
    "frost": "891bae407e228cfed9119b400d42a070",
    "gaussian_noise": "5a7cd27c81ee19b7c46f9c9812ec756f",
    "impulse_noise": "cf68c2f1ce93f62eda6a15390fa3635d",
    "motion_blur": "7e03db6ebf115bcb12ae499ee942c2c8",
    "pixelation": "dd1573e0b6aa719634acbc85e394653d",
    "shot_noise": "e7bfc5979c5d237913e88c0976eb5131",
    "snow": "7854324627f01da159948871f4433f15",
    "zoom_blur": "664703076d882b36a5f738167e1b4c4c",
}


@pytest.mark.parametrize("name", R.CORRUPTIONS)
def test_paper_preset_bytes_are_pinned(name: str) -> None:
    h = hashlib.sha256()
    idx = np.arange(len(DIGITS))
    for level in range(1, R.N_LEVELS + 1):
        out = generate_block(DIGITS, idx, name, level, PAPER[name], CONFIG["seed"])
        h.update(out.tobytes())
    assert h.hexdigest()[:32] == PAPER_DIGESTS[name], (
        f"{name}: the paper preset's images changed (re-pin only if config.yaml's schedule "
        "or seed changed on purpose)"
    )


@pytest.mark.parametrize(
    ("name", "overrides"),
    [(name, {}) for name in R.CORRUPTIONS]
    + [("motion_blur", {"centred": True})]
    # k = 1: the identity branch (an element-by-element copy) of the two box filters
    + [("motion_blur", {"k": [1] * R.N_LEVELS}), ("defocus_blur", {"k": [1] * R.N_LEVELS})],
)
def test_compiled_pipeline_is_the_batch_code(name: str, overrides: dict) -> None:
    """corrupt_block == corrupt(draw_fields(...)) byte for byte, every level, any index order."""
    schedule = {**PAPER[name], **overrides}
    idx = (np.arange(len(DIGITS)) * 7919) % 10_000  # out of order and far apart
    for level in range(1, R.N_LEVELS + 1):
        p = R.level_params(name, schedule, level)
        want = R.corrupt(DIGITS, name, p, draw_fields(name, SEED, level, idx))
        got = F.corrupt_block(DIGITS, idx, name, p, SEED, level)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} L{level}")


def param_strategy(param: R.Param) -> st.SearchStrategy:
    """Any allowed value of ``param`` (unbounded floats within +-3, wide ranges capped)."""
    if param.kind is bool:
        return st.booleans()
    lo = -3.0 if param.lo is None else param.lo
    hi = 3.0 if param.hi is None else param.hi
    if param.kind is int:
        ints = st.integers(int(lo), int(hi))
        return ints.filter(lambda v: v % 2 == 1) if param.odd else ints
    return st.floats(lo, min(hi, lo + 60.0), allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.data())
@pytest.mark.slow
def test_compiled_pipeline_is_the_batch_code_for_any_parameters(data) -> None:
    name = data.draw(st.sampled_from(R.CORRUPTIONS))
    p = {k: data.draw(param_strategy(v), label=k) for k, v in R.REGISTRY[name].params.items()}
    if name == "zoom_blur":  # weights (center - row) / sum: a zero sum gives no kernel
        assume((p["center"] - np.arange(p["k"])).sum() != 0)
    images = np.concatenate([DIGITS[:4], IMAGES])
    idx = np.array(data.draw(st.lists(st.integers(0, 2**24 - 1), min_size=7, max_size=7)))
    want = R.corrupt(images, name, p, draw_fields(name, SEED, 3, idx))
    got = F.corrupt_block(images, idx, name, p, SEED, 3)
    np.testing.assert_array_equal(got, want, err_msg=f"{name} {p}")


@pytest.mark.parametrize("lam", [0.1, 0.35, 0.57, 1.0, 4.5, 30.0, 1000.0])
def test_poisson_steps_are_the_inversion(lam: float) -> None:
    """#{steps <= u} equals poisson_from_uniform at every step, one 2^-53 either side, and at
    random uniforms (the values a uniform field takes: multiples of 2^-53)."""
    steps = F.poisson_breaks(lam)
    assert steps is not None and np.all(np.diff(steps) >= 0)
    ulp = 2.0**-53
    u = np.concatenate([steps - ulp, steps, steps + ulp, [0.0, 0.5 - ulp, 0.5, 1 - ulp]])
    rng = np.random.default_rng(int(lam * 100))
    u = np.concatenate([u, rng.random(20_000)])
    u = u[(u >= 0) & (u < 1)]
    np.testing.assert_array_equal(
        np.searchsorted(steps, u, side="right").astype(np.float64), C.poisson_from_uniform(u, lam)
    )


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(1e-3, 1e6))
def test_sum784_is_numpys_pairwise_sum(seed: int, scale: float) -> None:
    a = np.random.default_rng(seed).normal(size=784) * scale
    assert F.sum784(a) == a.sum()
    x = C.to_float(DIGITS[seed % 100 : seed % 100 + 1]).reshape(-1)
    assert F.sum784(x) == x.sum()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 784))
def test_salt_threshold_picks_the_m_smallest_keys(seed: int, m: int) -> None:
    u = np.random.default_rng(seed).random(784)
    thr, tied = F.salt_threshold(u, m)
    assert not tied
    np.testing.assert_array_equal(np.sort(np.flatnonzero(u <= thr)), np.sort(np.argsort(u)[:m]))
    if 0 < m < 784:  # a key equal to the m-th one makes the set ambiguous: reported
        v = u.copy()
        v[np.argsort(u)[m]] = np.sort(u)[m - 1]
        assert F.salt_threshold(v, m)[1]
