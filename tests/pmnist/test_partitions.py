"""Perturbed MNIST blocks: determinism, chunk-size independence, partitions and summaries."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from reliquant.core.config import config_section
from reliquant.pmnist.registry import CORRUPTIONS, N_LEVELS, CorruptionConfigError
from reliquant.pmnist.reproduction import partitions as P

REPO = Path(__file__).resolve().parents[2]
#: The paper preset, from its one home (config.yaml).
PAPER = config_section("pmnist", REPO / "config.yaml")["corruptions"]


def synthetic_digits(n: int, seed: int) -> np.ndarray:
    """Black images with a bright random blob: enough structure for every corruption."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 28, 28), dtype=np.uint8)
    for i in range(n):
        r, c = rng.integers(6, 20, size=2)
        out[i, r - 4 : r + 4, c - 2 : c + 3] = rng.integers(100, 256, size=(8, 5))
    return out


IMAGES = synthetic_digits(40, seed=3)
LABELS = np.arange(40, dtype=np.uint8) % 10
TEST_INDEX = np.arange(100, 140)
RANDOM = ("fog", "frost", "gaussian_noise", "impulse_noise", "shot_noise", "snow")


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_block_is_seeded_and_chunk_independent(name: str) -> None:
    params = PAPER[name]
    a = P.generate_block(IMAGES, TEST_INDEX, name, 4, params, seed=7, chunk_size=40)
    for chunk in (1, 3, 17):
        b = P.generate_block(IMAGES, TEST_INDEX, name, 4, params, seed=7, chunk_size=chunk)
        np.testing.assert_array_equal(a, b)
    # one image regenerated alone gives the same bytes
    one = P.generate_block(IMAGES[25:26], TEST_INDEX[25:26], name, 4, params, seed=7)
    np.testing.assert_array_equal(one[0], a[25])
    other_seed = P.generate_block(IMAGES, TEST_INDEX, name, 4, params, seed=8)
    assert np.array_equal(other_seed, a) == (name not in RANDOM)


def test_noise_depends_on_test_index_not_position() -> None:
    params = PAPER["gaussian_noise"]
    same = np.repeat(IMAGES[:1], 2, axis=0)
    out = P.generate_block(same, np.array([5, 6]), "gaussian_noise", 1, params, seed=1)
    assert not np.array_equal(out[0], out[1])
    swapped = P.generate_block(same, np.array([6, 5]), "gaussian_noise", 1, params, seed=1)
    np.testing.assert_array_equal(swapped[::-1], out)


def test_select_subset_first_k_per_class() -> None:
    labels = np.array([3, 1, 3, 3, 1, 0, 1, 0, 3], dtype=np.uint8)
    np.testing.assert_array_equal(P.select_subset(labels, 2), [0, 1, 2, 4, 5, 7])
    np.testing.assert_array_equal(P.select_subset(labels, None), np.arange(9))
    with pytest.raises(ValueError, match="images_per_class"):
        P.select_subset(labels, 0)


def _write(path, seed=7):
    tables = []
    for level in (1, 2, 3):
        imgs = P.generate_block(IMAGES, TEST_INDEX, "snow", level, PAPER["snow"], seed)
        tables.append(P.level_table(imgs, LABELS, TEST_INDEX, "snow", level))
    P.write_partition(path, tables)


def test_partition_round_trip_and_byte_identical(tmp_path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    _write(a)
    _write(b)
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
    pf = pq.ParquetFile(a)
    assert pf.num_row_groups == 3
    assert pf.schema_arrow.equals(P.PARTITION_SCHEMA)
    for g in range(3):
        assert set(pf.read_row_group(g, columns=["level"]).column(0).to_pylist()) == {g + 1}
    batches = list(P.iter_partition_batches(a, batch_size=16))
    assert max(len(x[0]) for x in batches) <= 16
    images = np.concatenate([x[0] for x in batches])
    levels = np.concatenate([x[3] for x in batches])
    idx = np.concatenate([x[2] for x in batches])
    np.testing.assert_array_equal(levels, np.repeat([1, 2, 3], 40))
    np.testing.assert_array_equal(idx, np.tile(TEST_INDEX, 3))
    np.testing.assert_array_equal(np.concatenate([x[1] for x in batches]), np.tile(LABELS, 3))
    want = P.generate_block(IMAGES, TEST_INDEX, "snow", 2, PAPER["snow"], 7)
    np.testing.assert_array_equal(images[40:80], want)
    got = P.read_images(a, [103])
    np.testing.assert_array_equal(got[(2, 103)], want[3])


def test_write_partition_rejects_mixed_levels(tmp_path) -> None:
    t1 = P.level_table(IMAGES, LABELS, TEST_INDEX, "snow", 2)
    t0 = P.level_table(IMAGES, LABELS, TEST_INDEX, "snow", 1)
    with pytest.raises(ValueError, match="increasing order"):
        P.write_partition(tmp_path / "x.parquet", [t1, t0])
    assert not (tmp_path / "x.parquet").exists()


def test_summary_matches_numpy_histogram() -> None:
    row = P.summarize_block(IMAGES, "clean", 0)
    flat = IMAGES.ravel().astype(float)
    assert row["mean_intensity"] == pytest.approx(flat.mean(), rel=1e-12)
    assert row["std_intensity"] == pytest.approx(flat.std(), rel=1e-9)
    hist, _ = np.histogram(flat, bins=16, range=(0, 256))
    np.testing.assert_allclose(row["histogram"], hist / flat.size)
    assert row["frac_black"] == pytest.approx((flat == 0).mean())
    table = P.summary_table([row])
    assert table.schema.equals(P.SUMMARY_SCHEMA)
    assert row["frac_changed"] == 0.0 and row["background_mean"] == 0.0


def test_summary_compares_the_block_with_its_clean_images() -> None:
    """Changed pixels, changed background (clean == 0) pixels, background mean, digest."""
    out = IMAGES.copy()
    background = np.argwhere(IMAGES == 0)[:7]
    stroke = np.argwhere(IMAGES > 0)[:3]
    for i, r, c in background:
        out[i, r, c] = 40
    for i, r, c in stroke:
        out[i, r, c] = 0 if IMAGES[i, r, c] != 0 else 1
    row = P.summarize_block(out, "snow", 1, IMAGES)
    n_bg = int((IMAGES == 0).sum())
    assert row["frac_changed"] == pytest.approx(10 / IMAGES.size)
    assert row["frac_background_changed"] == pytest.approx(7 / n_bg)
    assert row["background_mean"] == pytest.approx(7 * 40 / n_bg)
    assert row["sha256"] == hashlib.sha256(out.tobytes()).hexdigest()
    assert row["sha256"] != P.summarize_block(IMAGES, "snow", 1, IMAGES)["sha256"]
    with pytest.raises(ValueError, match="do not match the block"):
        P.summarize_block(out, "snow", 1, IMAGES[:2])


def numpy_summary_values(images: np.ndarray, clean: np.ndarray) -> dict:
    """The summary's statistics as NumPy takes them of the boolean and uint8 arrays."""
    changed = images != clean
    background = clean == 0
    counts = np.bincount(images.ravel(), minlength=256).astype(np.float64)
    total = max(1.0, counts.sum())
    values = np.arange(256, dtype=np.float64)
    mean = float((counts * values).sum() / total)
    return {
        "mean_intensity": mean,
        "std_intensity": float((counts * (values - mean) ** 2).sum() / total) ** 0.5,
        "histogram": (counts.reshape(16, 16).sum(axis=1) / total).tolist(),
        "frac_changed": float(changed.mean()),
        "frac_background_changed": float(changed[background].mean()) if background.any() else 0.0,
        "background_mean": float(images[background].mean()) if background.any() else np.nan,
        "sha256": hashlib.sha256(images.tobytes()).hexdigest(),
    }


@pytest.mark.parametrize("case", ["noise", "blob", "no_background", "all_background", "view"])
def test_summary_is_numpys_bit_for_bit(case: str) -> None:
    """Every statistic equals NumPy's mean/bincount of the arrays, to the last bit."""
    rng = np.random.default_rng(11)
    clean = synthetic_digits(300, seed=5)
    images = rng.integers(0, 256, size=clean.shape, dtype=np.uint8)
    if case == "blob":
        images = np.where(rng.random(clean.shape) < 0.7, clean, images).astype(np.uint8)
    elif case == "no_background":
        clean = clean | 1
    elif case == "all_background":
        clean = np.zeros_like(clean)
    elif case == "view":  # non-contiguous inputs
        clean, images = clean[::2, :, ::-1], images[1::2, ::-1]
    row = P.summarize_block(images, "fog", 3, clean)
    want = numpy_summary_values(np.ascontiguousarray(images), np.ascontiguousarray(clean))
    for key, value in want.items():
        got = row[key]
        assert (
            np.array_equal(np.float64(got), np.float64(value), equal_nan=True)
            if isinstance(value, float)
            else got == value
        ), key


def test_bad_images_and_preset() -> None:
    with pytest.raises(ValueError, match="uint8 array of shape"):
        P.generate_block(IMAGES.astype(np.int16), TEST_INDEX, "fog", 1, PAPER["fog"], 1)
    with pytest.raises(ValueError, match="test_index must have shape"):
        P.generate_block(IMAGES, TEST_INDEX[:3], "fog", 1, PAPER["fog"], 1)
    with pytest.raises(ValueError, match="preset must be"):
        P.resolve_schedule("trial_and_error", {}, None)
    with pytest.raises(ValueError, match="no calibrated schedule"):
        P.resolve_schedule("calibrated", {}, None)


def test_partition_writers_match_blocks_and_summaries(tmp_path) -> None:
    """The workflow's writers: level tables of generate_block, one summary row per level."""
    path = tmp_path / "fog.parquet"
    stats = P.write_corruption_partition(
        path, IMAGES, LABELS, TEST_INDEX, "fog", PAPER["fog"], seed=7, chunk_size=9
    )
    assert stats.schema.equals(P.SUMMARY_SCHEMA)
    assert stats.column("level").to_pylist() == list(range(1, N_LEVELS + 1))
    pf = pq.ParquetFile(path)
    assert pf.num_row_groups == N_LEVELS
    for level in (1, 6, 10):
        want = P.generate_block(IMAGES, TEST_INDEX, "fog", level, PAPER["fog"], 7)
        assert pf.read_row_group(level - 1).equals(
            P.level_table(want, LABELS, TEST_INDEX, "fog", level)
        )
        row = stats.slice(level - 1, 1).to_pylist()[0]
        assert row == P.summarize_block(want, "fog", level, IMAGES)
    clean = tmp_path / "clean.parquet"
    clean_stats = P.write_clean_partition(clean, IMAGES, LABELS, TEST_INDEX)
    assert pq.read_table(clean).equals(P.level_table(IMAGES, LABELS, TEST_INDEX, "clean", 0))
    assert clean_stats.to_pylist() == [P.summarize_block(IMAGES, "clean", 0)]


def test_corruption_partition_checks_every_level_before_writing(tmp_path) -> None:
    bad = dict(PAPER["fog"], f=[*PAPER["fog"]["f"][:9], 2.0])  # level 10 out of bounds
    with pytest.raises(CorruptionConfigError, match=r"fog\.f = 2\.0 is outside"):
        P.write_corruption_partition(
            tmp_path / "x.parquet", IMAGES, LABELS, TEST_INDEX, "fog", bad, seed=7
        )
    assert not (tmp_path / "x.parquet").exists()


def test_summary_markdown_frame_puts_clean_in_level_zero() -> None:
    rows = [P.summarize_block(IMAGES, "clean", 0)]
    for level in (1, 2):
        out = P.generate_block(IMAGES, TEST_INDEX, "brightness", level, PAPER["brightness"], 1)
        rows.append(P.summarize_block(out, "brightness", level))
    wide = P.summary_markdown_frame(P.summary_table(rows).to_pandas())
    assert list(wide.columns) == ["corruption", "L0", "L1", "L2"]
    expected = [rows[0]["mean_intensity"], rows[1]["mean_intensity"], rows[2]["mean_intensity"]]
    np.testing.assert_allclose(wide.iloc[0][["L0", "L1", "L2"]].astype(float), expected)
    assert isinstance(wide, pd.DataFrame) and wide["corruption"].tolist() == ["brightness"]
