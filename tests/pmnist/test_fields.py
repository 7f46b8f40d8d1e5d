"""Random fields: per-image, counter-based draws from the block stream of block_rng, and the
compiled copy of NumPy's PCG64 stream they are drawn with (checked against NumPy)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from reliquant.core.seeding import block_rng
from reliquant.pmnist.fields import IMAGE_STRIDE, draw_fields, image_states
from reliquant.pmnist.registry import CORRUPTIONS, REGISTRY
from reliquant.pmnist.streams import MULT, fill_normal, fill_uniform, jump, split128

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


# ---------------------------------------------------------------- the compiled stream


def test_compiled_stream_is_numpys_pcg64_draw_for_draw() -> None:
    """fill_normal / fill_uniform continue NumPy's Generator exactly, over enough normals
    (400,000 per start) to take the ziggurat's wedge and tail paths hundreds of times."""
    for seed in (0, 1, 2):
        rng = np.random.Generator(np.random.PCG64(seed))
        rng.bit_generator.advance(seed * 2**70 + 12345)
        st = rng.bit_generator.state["state"]
        sh, sl = split128(st["state"])
        ih, il = split128(st["inc"])
        want_z = rng.standard_normal(400_000)
        want_u = rng.random(1001)
        want_tail = rng.standard_normal(3)
        z, u, tail = np.empty(400_000), np.empty(1001), np.empty(3)
        sh, sl = fill_normal(z, sh, sl, ih, il)
        sh, sl = fill_uniform(u, np.uint64(sh), np.uint64(sl), ih, il)
        sh, sl = fill_normal(tail, np.uint64(sh), np.uint64(sl), ih, il)
        np.testing.assert_array_equal(z, want_z)
        np.testing.assert_array_equal(u, want_u)
        np.testing.assert_array_equal(tail, want_tail)
        assert (int(sh) << 64) | int(sl) == rng.bit_generator.state["state"]["state"]
        assert (np.abs(want_z) > 3.6541528853610087).sum() > 20  # the tail was drawn


@pytest.mark.parametrize("delta", [0, 1, 7, 2**40, 9001 * 2**40, 2**64 - 1])
def test_jump_is_numpys_advance(delta: int) -> None:
    rng = block_rng(SEED, "fog", 2)
    st = rng.bit_generator.state["state"]
    ah, al, ch, cl = jump(np.uint64(delta), MULT[0], MULT[1], *split128(st["inc"]))
    a, c = (int(ah) << 64) | int(al), (int(ch) << 64) | int(cl)
    rng.bit_generator.advance(delta)
    assert (a * st["state"] + c) % 2**128 == rng.bit_generator.state["state"]["state"]


def test_image_states_in_any_order() -> None:
    idx = np.array([9001, 4, 4, 0, 2**24 - 1, 17, 5])
    states, ih, il = image_states(SEED, "snow", 7, idx)
    start = block_rng(SEED, "snow", 7).bit_generator.state["state"]
    assert (int(ih) << 64) | int(il) == start["inc"]
    for row, i in enumerate(idx):
        rng = block_rng(SEED, "snow", 7)
        rng.bit_generator.advance(int(i) * IMAGE_STRIDE)
        want = rng.bit_generator.state["state"]["state"]
        assert (int(states[row, 0]) << 64) | int(states[row, 1]) == want
