"""Per-block seeding: deterministic, order-free, distinct across blocks."""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.core.seeding import block_int_seed, block_rng


def test_same_key_same_stream_regardless_of_order():
    a_first = block_rng(7, "fog", 3).random(5)
    block_rng(7, "snow", 1).random(100)  # drawing another block in between changes nothing
    a_again = block_rng(7, "fog", 3).random(5)
    np.testing.assert_array_equal(a_first, a_again)


@pytest.mark.parametrize("other", [(8, "fog", 3), (7, "fog", 4), (7, "frost", 3), (7, "fog", 3, 0)])
def test_different_keys_differ(other):
    assert not np.array_equal(block_rng(7, "fog", 3).random(4), block_rng(*other).random(4))


def test_int_seed_fits_63_bits_and_is_stable():
    seeds = {block_int_seed(0, "cnn", k) for k in range(50)}
    assert len(seeds) == 50
    assert all(0 <= s < 2**63 for s in seeds)
    assert block_int_seed(0, "cnn", 1) == block_int_seed(0, "cnn", 1)


def test_bad_key_parts_are_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        block_rng(1, -3)
    with pytest.raises(TypeError, match="int or str"):
        block_rng(1, 2.5)
