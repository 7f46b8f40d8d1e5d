"""The OpenCV per-image reference gives our images (its speed is timed in bench/pmnist.py).

The benchmark compares our batch generation with per-image code written the way a user of
OpenCV writes the authors' generator (``cv2`` filters and resizes, numpy, one numpy
Generator position per image). The ratio means something only if both make the same images:
here every corruption and level, on real MNIST digits, in float (before clipping) and in bytes.
Needs ``opencv-python-headless`` (the ``bench`` extra); skipped without it (the tie test
below runs without it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reliquant.core.config import config_section
from reliquant.core.datasets import read_idx
from reliquant.pmnist import corruptions as C
from reliquant.pmnist import registry as R
from reliquant.pmnist.fields import draw_fields
from reliquant.pmnist.reproduction.opencv_reference import (
    off_by_truncation,
    opencv_reference,
    to_uint8,
)
from reliquant.pmnist.reproduction.partitions import generate_block

#: Why the comparison is skipped without OpenCV (the module itself imports without it).
NO_CV2 = "opencv-python-headless is a bench-only extra: pip install -e '.[bench]'"

REPO = Path(__file__).resolve().parents[2]
CONFIG = config_section("pmnist", REPO / "config.yaml")
PAPER = CONFIG["corruptions"]
SEED = CONFIG["seed"]
#: Real digits, with test indices out of order and far apart.
DIGITS = read_idx(REPO / "data/raw/mnist/t10k-images-idx3-ubyte.gz")[:60]
TEST_INDEX = (np.arange(60) * 7919) % 10_000


@pytest.mark.parametrize(
    ("name", "overrides"),
    [(name, {}) for name in R.CORRUPTIONS] + [("motion_blur", {"centred": True})],
)
def test_opencv_reference_makes_our_images(name: str, overrides: dict) -> None:
    pytest.importorskip("cv2", reason=NO_CV2)
    schedule = {**PAPER[name], **overrides}
    for level in range(1, R.N_LEVELS + 1):
        p = R.level_params(name, schedule, level)
        ref = opencv_reference(name, schedule, level, SEED)
        theirs = np.stack([ref(u, i) for u, i in zip(DIGITS, TEST_INDEX, strict=True)])
        fields = draw_fields(name, SEED, level, TEST_INDEX)
        ours = R.apply_float(name, C.to_float(DIGITS), p, fields)
        np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-12, err_msg=f"{name} L{level}")
        ours_u8 = generate_block(DIGITS, TEST_INDEX, name, level, schedule, SEED)
        # a different sum order (cv2.blur, filter2D, resize) may flip truncation ties only
        _, unexplained = off_by_truncation(ours_u8, theirs)
        assert unexplained == 0, f"{name} L{level}: {unexplained} bytes differ beyond a tie"


def test_off_by_truncation_tells_ties_from_errors() -> None:
    y = np.array([[0.0, 0.5]])  # 127.5 and 191.25 before truncation: no tie
    want = to_uint8(y)
    assert off_by_truncation(want, y) == (0, 0)
    assert off_by_truncation(want + np.uint8(1), y) == (2, 2)
    tie = np.array([[128 / 255 * 2 - 1]])  # 128 up to rounding: either side is right
    got = to_uint8(tie)
    assert off_by_truncation(got + np.uint8(1), tie) == (1, 0)
    assert off_by_truncation(got + np.uint8(2), tie) == (1, 1)
