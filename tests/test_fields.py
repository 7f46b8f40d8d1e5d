"""Random fields: per-image, counter-based draws from the block stream of block_rng."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from reliquant.core.seeding import block_rng
from reliquant.pmnist.fields import IMAGE_STRIDE, draw_fields
from reliquant.pmnist.registry import CORRUPTIONS, REGISTRY

SEED = 12345
N = 28
TEST_INDEX = np.array([4, 17, 9001])


def test_fields_are_per_image_block_rng_draws() -> None:
    fields = draw_fields("frost", SEED, 3, TEST_INDEX)
    assert IMAGE_STRIDE == 2**40
    for row, i in enumerate(TEST_INDEX):
        rng = block_rng(SEED, "frost", 3)
        rng.bit_generator.advance(int(i) * 2**40)
        for key in ("z1", "z2", "z3"):
            np.testing.assert_array_equal(fields[key][row], rng.standard_normal((N, N)))
    sub = draw_fields("frost", SEED, 3, TEST_INDEX[1:])
    np.testing.assert_array_equal(sub["z2"], fields["z2"][1:])
    other = draw_fields("frost", SEED, 4, TEST_INDEX)
    assert not np.array_equal(other["z1"], fields["z1"])


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_fields_follow_the_registry(name: str) -> None:
    fields = draw_fields(name, SEED, 1, TEST_INDEX)
    assert list(fields) == [f for f, _ in REGISTRY[name].fields]
    for f, kind in REGISTRY[name].fields:
        assert fields[f].shape == (3, N, N) and fields[f].dtype == np.float64
        if kind == "uniform":
            assert ((fields[f] >= 0) & (fields[f] < 1)).all()


def test_field_distributions() -> None:
    idx = np.arange(200)
    z = draw_fields("gaussian_noise", SEED, 5, idx)["z"].ravel()
    u = draw_fields("snow", SEED, 5, idx)["u"].ravel()
    assert scipy.stats.kstest(z, "norm").pvalue > 1e-3
    assert scipy.stats.kstest(u, "uniform").pvalue > 1e-3


def test_bad_test_indices() -> None:
    with pytest.raises(ValueError, match="test indices must be in"):
        draw_fields("snow", SEED, 1, np.array([-1, 3]))
    with pytest.raises(ValueError, match="test indices must be in"):
        draw_fields("snow", SEED, 1, np.array([2**24]))
