"""Data preparation of the tree experiments: resizing, Pima filtering, noise specifications."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from reliquant.core.datasets import IRIS_FEATURES
from reliquant.trees.reproduction.data import (
    PIMA_FEATURES,
    PIMA_ROWS,
    RESIZE_CHUNK,
    RESIZE_METHODS,
    MarginalSpec,
    adaptive_weights,
    area_weights,
    filter_pima,
    iris_marginals,
    iris_noise,
    marginals_at,
    mnist_features,
    ordered_weighted_sums,
    pima_marginals,
    pima_noise,
    random_correlation,
    resize_images,
    snr_noise_std,
    spearman_matrix,
)


# ----------------------------------------------------------------------------- resizing
def _block_mean(images: np.ndarray, k: int) -> np.ndarray:
    n, h, w = images.shape
    return images.reshape(n, k, h // k, k, w // k).mean(axis=(2, 4))


@pytest.mark.parametrize("k", [1, 2, 4, 7, 14, 28])
def test_area_resize_is_block_mean_for_integer_ratios(k):
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    expected = _block_mean(img.astype(np.float64) / 255.0, k)
    np.testing.assert_allclose(resize_images(img, k, "area"), expected, rtol=0, atol=1e-15)
    # PyTorch's mode="area" coincides with it for integer ratios
    np.testing.assert_allclose(resize_images(img, k, "adaptive"), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("k", [3, 5, 8, 10])
def test_area_resize_equals_supersampled_block_mean(k):
    """Independent construction: replicate each pixel k times per axis (28k x 28k grid),
    then take 28 x 28 block means; that is the exact area average for any ratio."""
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, size=(3, 28, 28), dtype=np.uint8)
    fine = np.repeat(np.repeat(img.astype(np.float64) / 255.0, k, axis=1), k, axis=2)
    expected = _block_mean(fine, k)
    np.testing.assert_allclose(resize_images(img, k, "area"), expected, atol=1e-14)


@pytest.mark.parametrize("k", [3, 5, 8, 10])
def test_adaptive_matches_torch_interpolate_area(k):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, size=(4, 28, 28), dtype=np.uint8)
    ref = torch.nn.functional.interpolate(
        torch.tensor(img / 255.0)[:, None], size=(k, k), mode="area"
    ).numpy()[:, 0]
    np.testing.assert_allclose(resize_images(img, k, "adaptive"), ref, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(
    value=st.integers(0, 255),
    k=st.integers(1, 28),
    method=st.sampled_from(["area", "adaptive"]),
)
def test_constant_image_stays_constant(value, k, method):
    img = np.full((2, 28, 28), value, dtype=np.uint8)
    out = resize_images(img, k, method)
    assert out.shape == (2, k, k)
    np.testing.assert_allclose(out, value / 255.0, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(n_in=st.integers(1, 40), data=st.data())
def test_area_weights_are_averages_preserving_total_mass(n_in, data):
    n_out = data.draw(st.integers(1, n_in))
    w = area_weights(n_in, n_out)
    assert np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-14)
    # every input pixel contributes its full area: column sums = n_out / n_in
    np.testing.assert_allclose(w.sum(axis=0), n_out / n_in, atol=1e-14)
    np.testing.assert_allclose(adaptive_weights(n_in, n_out).sum(axis=1), 1.0, atol=1e-14)


def test_mnist_features_flatten_row_major_and_stay_in_unit_interval():
    rng = np.random.default_rng(4)
    img = rng.integers(0, 256, size=(6, 28, 28), dtype=np.uint8)
    feats = mnist_features(img, 5)
    assert feats.shape == (6, 25)
    np.testing.assert_array_equal(feats.reshape(6, 5, 5), resize_images(img, 5))
    assert feats.min() >= 0.0 and feats.max() <= 1.0


def test_resize_rejects_bad_input():
    with pytest.raises(ValueError, match="resize method"):
        resize_images(np.zeros((1, 28, 28), np.uint8), 5, "bilinear")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        resize_images(np.full((1, 28, 28), 3.0), 5)
    with pytest.raises(ValueError, match="only downsamples"):
        area_weights(3, 5)


# ----------------------------------------------------------------------------- Pima
def _raw_pima(raw_dir) -> pd.DataFrame:
    path = raw_dir / "pima" / "diabetes.csv"
    if not path.exists():
        pytest.skip(f"{path} not vendored")
    return pd.read_csv(path)


def test_pima_filter_keeps_724_rows_and_7_features(raw_dir):
    raw = _raw_pima(raw_dir)
    out = filter_pima(raw)
    assert len(out) == PIMA_ROWS == 724
    assert list(out.columns) == [*PIMA_FEATURES, "Outcome"]
    assert "SkinThickness" not in out.columns
    assert (out[["Glucose", "BloodPressure", "BMI"]] != 0).all().all()
    # independent count: rows whose three columns are all non-zero
    expected = raw[(raw.Glucose > 0) & (raw.BloodPressure > 0) & (raw.BMI > 0)]
    np.testing.assert_array_equal(out["Glucose"].to_numpy(), expected["Glucose"].to_numpy())


def test_pima_filter_checks_row_count_and_columns():
    frame = pd.DataFrame(
        {c: [1, 0, 2] for c in [*PIMA_FEATURES, "SkinThickness", "Outcome"]}, dtype=float
    )
    assert len(filter_pima(frame, expected_rows=2)) == 2
    with pytest.raises(ValueError, match="kept 2 rows, expected 724"):
        filter_pima(frame)
    with pytest.raises(ValueError, match="lacks columns"):
        filter_pima(frame.drop(columns="BMI"))


# ----------------------------------------------------------------------------- noise specs
@settings(max_examples=50, deadline=None)
@given(
    std=st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1e3)), min_size=1, max_size=8),
    snr=st.floats(0.5, 1e3),
)
def test_snr_scaling_formula(std, snr):
    std = np.array(std)
    sigma = snr_noise_std(std, snr, "variance")
    # variance ratio: signal variance / noise variance = SNR
    np.testing.assert_allclose(sigma**2 * snr, std**2, rtol=1e-12)
    np.testing.assert_allclose(snr_noise_std(std, snr, "amplitude") * snr, std, rtol=1e-12)


def test_snr_rejects_bad_values():
    with pytest.raises(ValueError, match="positive"):
        snr_noise_std(np.ones(2), 0.0)
    with pytest.raises(ValueError, match="snr kind"):
        snr_noise_std(np.ones(2), 10.0, "power")


def test_pima_marginals_have_the_snr_scaled_standard_deviation():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 3)) * np.array([1.0, 5.0, 20.0])
    specs = pima_marginals(x, ["normal", "exponential", "exponential"], snr=10.0)
    target = x.std(axis=0, ddof=1) / np.sqrt(10.0)
    mu = np.array([1.0, 2.0, 3.0])
    for spec, m, s in zip(marginals_at(specs, mu), mu, target, strict=True):
        frozen = spec._frozen()
        np.testing.assert_allclose(frozen.std(), s, rtol=1e-12)
        assert frozen.support()[0] in (-np.inf, m)  # exponential support starts at mu
    with pytest.raises(ValueError, match="normal or exponential"):
        pima_marginals(x, ["normal", "lognormal", "normal"], snr=10.0)


@pytest.mark.parametrize(
    ("family", "shape"),
    [("normal", None), ("exponential", None), ("chi-square", 3.0), ("lognormal", 0.5)],
)
@pytest.mark.parametrize("centred", [False, True])
def test_marginal_spec_location(family, shape, centred):
    spec = MarginalSpec(family, 0.7, shape, centred)
    frozen = spec.at(2.5)._frozen()
    if family == "normal" or centred:
        assert frozen.mean() == pytest.approx(2.5, abs=1e-12)
    else:
        assert frozen.support()[0] == pytest.approx(2.5)
    # a sample of the frozen distribution has the spec's mean offset (closed form)
    expected_offset = 0.0 if centred else spec.noise_mean()
    assert frozen.mean() - 2.5 == pytest.approx(expected_offset, abs=1e-12)


@pytest.mark.parametrize(
    ("family", "shape"),
    [("normal", None), ("exponential", None), ("chi-square", 3.0), ("lognormal", 0.5)],
)
@pytest.mark.parametrize("centred", [False, True])
def test_located_marginals_give_the_numbers_of_their_frozen_distribution(family, shape, centred):
    # the Located* marginals skip scipy's per-call freeze: the numbers must be bit-identical
    marginal = MarginalSpec(family, 0.7, shape, centred).at(2.5)
    frozen = marginal._frozen()
    x = np.linspace(-3.0, 12.0, 2001)
    u = np.linspace(0.0, 1.0, 2001)
    for name, values in (("cdf", x), ("sf", x), ("ppf", u), ("isf", u)):
        np.testing.assert_array_equal(
            getattr(marginal, name)(values), getattr(frozen, name)(values)
        )


def test_marginal_spec_validation():
    with pytest.raises(ValueError, match="family"):
        MarginalSpec("gamma", 1.0)
    with pytest.raises(ValueError, match="shape"):
        MarginalSpec("chi-square", 1.0)
    with pytest.raises(ValueError, match="scale"):
        MarginalSpec("normal", 0.0)


def test_spearman_matrix_matches_scipy():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(100, 4))
    x[:, 1] = np.round(x[:, 0] + 0.5 * x[:, 1])  # ties
    expected = stats.spearmanr(x).statistic
    np.testing.assert_allclose(spearman_matrix(x), expected, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(2, 6))
def test_random_correlation_in_range_and_reproducible(seed, d):
    c = random_correlation(d, 0.1, 0.3, np.random.default_rng(seed))
    off = c[~np.eye(d, dtype=bool)]
    assert np.all((off >= 0.1) & (off <= 0.3))
    np.testing.assert_array_equal(c, c.T)
    np.testing.assert_array_equal(np.diag(c), 1.0)
    assert np.linalg.eigvalsh(c).min() > 0
    np.testing.assert_array_equal(c, random_correlation(d, 0.1, 0.3, np.random.default_rng(seed)))


def test_iris_marginals_from_config():
    cfg = [
        {"family": "normal", "scale": 0.2},
        {"family": "exponential", "scale": 0.1},
        {"family": "chi-square", "scale": 0.05, "shape": 2},
        {"family": "lognormal", "scale": 0.1, "shape": 0.5},
    ]
    specs = iris_marginals(cfg)
    assert [s.family for s in specs] == ["normal", "exponential", "chi-square", "lognormal"]
    assert len(specs) == len(IRIS_FEATURES)
    with pytest.raises(ValueError, match="need 4"):
        iris_marginals(cfg[:3])


@pytest.mark.parametrize(
    ("snr_kind", "noise_variance"),
    [("variance", lambda s: s**2 / 10.0), ("amplitude", lambda s: (s / 10.0) ** 2)],
)
def test_pima_noise_variance_follows_the_snr_reading(snr_kind, noise_variance):
    """variance reading: noise variance s^2 / 10; amplitude reading: noise sd s / 10."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(100, len(PIMA_FEATURES))) * np.arange(1, len(PIMA_FEATURES) + 1)
    families = {f: ("normal" if i % 3 else "exponential") for i, f in enumerate(PIMA_FEATURES)}
    specs, _ = pima_noise(x, families=families, snr=10.0, snr_kind=snr_kind, centred=False)
    frozen = [m._frozen() for m in marginals_at(specs, x[0])]
    s = x.std(axis=0, ddof=1)
    np.testing.assert_allclose([f.var() for f in frozen], noise_variance(s), rtol=1e-10)


def test_pima_noise_scales_by_snr_and_maps_spearman_to_normal():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(300, len(PIMA_FEATURES))) * np.arange(1, len(PIMA_FEATURES) + 1)
    x[:, 1] += 0.8 * x[:, 0]  # a correlated pair
    families = {f: ("exponential" if i % 2 else "normal") for i, f in enumerate(PIMA_FEATURES)}
    specs, corr = pima_noise(x, families=families, snr=10.0, snr_kind="variance", centred=False)
    assert [s.family for s in specs] == [families[f] for f in PIMA_FEATURES]
    np.testing.assert_allclose(
        [s.scale for s in specs], x.std(axis=0, ddof=1) / np.sqrt(10.0), rtol=1e-12
    )
    rho = stats.spearmanr(x).statistic
    np.testing.assert_allclose(corr, 2 * np.sin(np.pi * rho / 6), atol=1e-12)
    assert corr[0, 1] > 0.3


def test_iris_noise_passes_centred_and_draws_the_correlation_from_rng():
    marginals = [
        {"family": "normal", "scale": 0.3},
        {"family": "exponential", "scale": 0.2},
        {"family": "chi-square", "scale": 0.1, "shape": 2.0},
        {"family": "lognormal", "scale": 0.1, "shape": 0.5},
    ]
    kwargs = {"marginals": marginals, "centred": True, "corr_low": 0.1, "corr_high": 0.3}
    specs, corr = iris_noise(**kwargs, rng=np.random.default_rng(4))
    assert all(s.centred for s in specs) and [s.scale for s in specs] == [0.3, 0.2, 0.1, 0.1]
    np.testing.assert_array_equal(corr, random_correlation(4, 0.1, 0.3, np.random.default_rng(4)))


def _sequential_resize(image: np.ndarray, w_h: np.ndarray, w_w: np.ndarray) -> np.ndarray:
    """The documented order written out in Python floats (no numpy arithmetic, no BLAS, no
    SIMD): ``r[h][j] = sum_w W_w[j][w] x[h][w]`` then ``out[i][j] = sum_h W_h[i][h] r[h][j]``,
    each sum from 0.0 over every index in ascending order, the zero weights included."""
    x = [[v / 255.0 for v in row] for row in image.tolist()]
    wh, ww = w_h.tolist(), w_w.tolist()
    r = []
    for row in x:
        sums = []
        for weights in ww:
            acc = 0.0
            for weight, value in zip(weights, row, strict=True):
                acc = acc + weight * value
            sums.append(acc)
        r.append(sums)
    out = []
    for weights in wh:
        cells = []
        for j in range(len(ww)):
            acc = 0.0
            for weight, sums in zip(weights, r, strict=True):
                acc = acc + weight * sums[j]
            cells.append(min(max(acc, 0.0), 1.0))
        out.append(cells)
    return np.array(out)


@pytest.mark.parametrize("method", RESIZE_METHODS)
def test_resize_is_the_documented_sequential_sum_bit_for_bit(method):
    """Each resized pixel is the sequential sum of the docstring, bit for bit, checked against
    a per-pixel loop in Python floats that also adds the zero-weight terms; uint8 input and
    its float ``x / 255`` give the same bytes."""
    img = np.random.default_rng(4).integers(0, 256, (6, 28, 28)).astype(np.uint8)
    img[0] = 255  # a full image: sums that round near 1
    weights = area_weights if method == "area" else adaptive_weights
    for size in (3, 5, 8, 10, 28):
        w = weights(28, size)
        out = resize_images(img, size, method)
        assert out.flags.c_contiguous  # (n, size, size) row-major: mnist_features is a view
        expected = np.stack([_sequential_resize(im, w, w) for im in img])
        assert out.tobytes() == expected.tobytes(), (size, np.abs(out - expected).max())
        assert resize_images(img / 255.0, size, method).tobytes() == out.tobytes()


def test_ordered_weighted_sums_is_the_sequential_sum_and_checks_shapes():
    rng = np.random.default_rng(12)
    x = rng.random((9, 4, 3))
    weights = rng.random((5, 9)) * (rng.random((5, 9)) < 0.6)
    weights[:, 4] = 0.7  # no row without a non-zero weight
    out = ordered_weighted_sums(x, weights)
    expected = np.zeros((5, 4, 3))
    for j in range(5):
        for a in range(4):
            for b in range(3):
                acc = 0.0
                for k in range(9):
                    acc = acc + float(weights[j, k]) * float(x[k, a, b])
                expected[j, a, b] = acc
    assert out.tobytes() == expected.tobytes()
    with pytest.raises(ValueError, match=r"weights of shape \(5, 8\) do not match 9 terms"):
        ordered_weighted_sums(x, weights[:, :8])


@pytest.mark.parametrize("method", RESIZE_METHODS)
def test_resize_in_steps_is_the_whole_batch_bit_for_bit(method, monkeypatch):
    """:func:`resize_images` works :data:`RESIZE_CHUNK` images at a time: each image's pixels
    are the same bytes for any step (1 image, 7, 1,000, the default, the whole batch), for a
    batch of several default steps and a short last one, uint8 and float input; and within
    1e-12 of the float64 einsum of the whole batch (an independent product, summed in BLAS's
    own order)."""
    import reliquant.trees.reproduction.data as data_module

    n = 2 * RESIZE_CHUNK + 37
    img = np.random.default_rng(9).integers(0, 256, (n, 28, 28)).astype(np.uint8)
    weights = area_weights if method == "area" else adaptive_weights
    for size in (3, 10):
        w = weights(28, size)
        for images in (img, img / 255.0):
            default = resize_images(images, size, method)
            einsum = np.einsum("ih,nhw,jw->nij", w, img / 255.0, w)
            assert np.abs(default - einsum).max() <= 1e-12
            for chunk in (1, 7, 1000, n):
                monkeypatch.setattr(data_module, "RESIZE_CHUNK", chunk)
                part = images[:50] if chunk == 1 else images  # one image a step: slow
                out = resize_images(part, size, method)
                assert out.tobytes() == default[: len(part)].tobytes(), (size, chunk)
            monkeypatch.undo()


# The resize in a fresh process under each OpenBLAS kernel and numpy SIMD level: prints the
# sha256 of the resized bytes, of the float64 einsum (BLAS's order, for the message), the
# kernel numpy's OpenBLAS reports (threadpoolctl) and the SIMD target of numpy's float64
# add and multiply loops (numpy >= 2).
_RESIZE_SCRIPT = """
import hashlib, json, os
import numpy as np
from threadpoolctl import threadpool_info
from reliquant.trees.reproduction.data import RESIZE_CHUNK, area_weights, resize_images
img = np.random.default_rng(9).integers(0, 256, (2 * RESIZE_CHUNK + 37, 28, 28)).astype(np.uint8)
out = {}
for method in ("area", "adaptive"):
    for size in (3, 5, 10):
        resized = resize_images(img, size, method)
        out[f"{method}{size}"] = hashlib.sha256(resized.tobytes()).hexdigest()
w = area_weights(28, 10)
einsum = np.einsum("ih,nhw,jw->nij", w, img / 255.0, w, optimize=True)
pools = [p for p in threadpool_info() if p["internal_api"] == "openblas"]
mine = [p for p in pools if "numpy" in p["filepath"]] or pools
kernels = sorted({p.get("architecture", "?") for p in mine})
try:
    from numpy.lib.introspect import opt_func_info
    info = opt_func_info(func_name="^(add|multiply)$", signature="float64")
    simd = sorted({loop["current"] for f in info.values() for loop in f.values()})
except ImportError:  # numpy < 2
    simd = ["?"]
print(json.dumps({"digests": out, "einsum": hashlib.sha256(einsum.tobytes()).hexdigest(),
                  "kernels": kernels, "simd": simd}))
"""


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _numpy_dispatch_targets() -> list[str]:
    """numpy's dispatched SIMD targets above its baseline (``NPY_DISABLE_CPU_FEATURES`` names)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__
    return list(__cpu_dispatch__)


def test_resize_bytes_are_the_same_under_every_openblas_kernel_and_simd_level():
    """A machine must not resize MNIST to other bytes than another: the resize runs in fresh
    processes under several ``OPENBLAS_CORETYPE`` values (only in the child processes; the
    AVX-512 ones where the CPU has AVX-512) and with numpy's SIMD loops at its baseline
    (``NPY_DISABLE_CPU_FEATURES``); every process gives the bytes of this one.
    The float64 einsum of the old resize is printed beside them: it changes with the kernel."""
    import hashlib
    import json
    import os
    import platform
    import subprocess
    import sys

    from threadpoolctl import threadpool_info

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("OPENBLAS_CORETYPE names x86-64 kernels")
    if not any(pool["internal_api"] == "openblas" for pool in threadpool_info()):
        pytest.skip("numpy does not use OpenBLAS here")
    coretypes = ["Prescott", "Nehalem", "Sandybridge", "Haswell", "Zen"]
    if "avx512f" in _cpu_flags():
        coretypes += ["SkylakeX", "Cooperlake", "SapphireRapids"]
    runs = {f"OPENBLAS_CORETYPE={c}": {"OPENBLAS_CORETYPE": c} for c in coretypes}
    dispatch = _numpy_dispatch_targets()
    if dispatch:  # numpy's element-wise loops at its baseline (SSE) instead of AVX2/AVX-512
        runs["NPY_DISABLE_CPU_FEATURES=<all>"] = {"NPY_DISABLE_CPU_FEATURES": " ".join(dispatch)}
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", _RESIZE_SCRIPT],
            env={**os.environ, **extra},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, extra in runs.items()
    }
    got = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name}: {stderr[-2000:]}"
        got[name] = json.loads(stdout.strip().splitlines()[-1])
    img = np.random.default_rng(9).integers(0, 256, (2 * RESIZE_CHUNK + 37, 28, 28))
    img = img.astype(np.uint8)
    here = {
        f"{method}{size}": hashlib.sha256(resize_images(img, size, method).tobytes()).hexdigest()
        for method in RESIZE_METHODS
        for size in (3, 5, 10)
    }
    report = "\n".join(
        f"{name}: OpenBLAS kernel {g['kernels']}, numpy SIMD {g['simd']}, resize "
        f"{'same' if g['digests'] == here else 'DIFFERENT'}, float64 einsum {g['einsum'][:12]}"
        for name, g in got.items()
    )
    kernels = {tuple(g["kernels"]) for g in got.values()}
    if len(kernels) < 2:
        pytest.skip(f"the installed OpenBLAS ignores OPENBLAS_CORETYPE:\n{report}")
    assert all(g["digests"] == here for g in got.values()), report
