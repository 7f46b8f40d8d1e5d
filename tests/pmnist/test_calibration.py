"""Calibrated preset: searches recover severities known in closed form."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.pmnist.registry import CorruptionConfigError, validate_schedule
from reliquant.pmnist.reproduction import calibration as K

N_IMG = 1000


def brightness_oracle():
    """Black images; the 'model' is right on image i iff its mean intensity < threshold_i.

    Brightness b makes every pixel trunc(127.5 b), so with thresholds 0.255, 0.51, ... 255
    the accuracy is exactly 1 - b / 2 (to within 1/N_IMG): closed form for the search.
    """
    images = np.zeros((N_IMG, 28, 28), dtype=np.uint8)
    labels = (np.arange(N_IMG) % 10).astype(np.uint8)
    thresholds = (np.arange(N_IMG) + 1) * 255.0 / N_IMG

    def predict(u8: np.ndarray) -> np.ndarray:
        mean = u8.reshape(len(u8), -1).mean(axis=1)
        return np.where(mean < thresholds, labels, (labels + 1) % 10)

    return images, labels, predict


def test_targets_are_a_straight_line() -> None:
    t = K.target_accuracies(0.98, 0.4)
    assert t[0] == pytest.approx(0.98) and t[-1] == pytest.approx(0.4)
    np.testing.assert_allclose(np.diff(t), (0.4 - 0.98) / 9)
    with pytest.raises(ValueError, match="floor"):
        K.target_accuracies(0.9, 1.5)


def test_brightness_calibration_recovers_closed_form() -> None:
    images, labels, predict = brightness_oracle()
    sched = K.calibrate(
        predict,
        images,
        labels,
        np.arange(N_IMG),
        seed=1,
        floor=0.5,
        corruptions={"brightness": {}},
        tol=0.001,
        max_iter=30,
    )
    assert sched["clean_accuracy"] == 1.0
    b = np.array(sched["corruptions"]["brightness"]["b"])
    # accuracy(b) = 1 - b/2 and target_L = 1 - 0.5 (L-1)/9  =>  b_L = (L-1)/9
    np.testing.assert_allclose(b, np.arange(10) / 9, atol=0.01)
    np.testing.assert_allclose(sched["achieved"]["brightness"], sched["targets"], atol=0.002)
    validate_schedule(sched["corruptions"])


@settings(max_examples=30, deadline=None)
@given(st.floats(0.05, 0.95), st.integers(5, 40))
def test_integer_search_picks_closest_integer(target: float, n: int) -> None:
    """evaluate(k) = 1 - k / n on integers 1..n: the answer is the integer nearest to n (1 - target)."""
    value, acc, _ = K._search_level(lambda v: 1 - v / n, 1, n, target, True, 1e-9, 50)
    assert float(value).is_integer()
    best = min(range(1, n + 1), key=lambda k: (abs(1 - k / n - target), k))
    assert acc == pytest.approx(1 - best / n)


def test_search_handles_decreasing_parameter_and_unreachable_targets() -> None:
    # contrast-like: severity grows as the parameter goes from 3 down to -1
    value, acc, _ = K._search_level(lambda v: (v + 1) / 4, 3.0, -1.0, 0.5, False, 1e-6, 60)
    assert value == pytest.approx(1.0, abs=1e-4)
    value, acc, _ = K._search_level(lambda v: 0.9, 0.0, 1.0, 0.2, False, 1e-6, 60)
    assert acc == 0.9  # target unreachable: the search reports what it got


def test_schedule_section_keeps_constants_and_fixed_params() -> None:
    res = [K.LevelResult(L, 0.1 * L, 0.9, 0.9, 1) for L in range(1, 11)]
    sec = K.schedule_section("snow", res, constants={"amount": 0.5})
    assert sec["k"] == [3] * 10 and sec["amount"] == 0.5
    np.testing.assert_allclose(sec["p"], 0.1 * np.arange(1, 11))
    # constants come from the caller's schedule (config), never from defaults in the code
    with pytest.raises(CorruptionConfigError, match="missing parameter 'amount'"):
        K.schedule_section("snow", res)


def test_calibration_needs_no_other_paper_package() -> None:
    """Any classifier plugs in through ``predict``: the pmnist package imports no mlm code."""
    import subprocess
    import sys

    code = (
        "import sys, reliquant.pmnist, reliquant.pmnist.reproduction.calibration, reliquant.pmnist.reproduction.figures;"
        "print(sorted(m for m in sys.modules if m.startswith(('reliquant.mlm', 'torch'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
