"""reliquant.core.arguments: every refusal names the argument, the value and what is expected;
wrong types are TypeError, values out of range ValueError."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reliquant.core.arguments import check_int, check_level, check_real, check_seed


def test_integers_and_seeds():
    assert check_int(np.int32(3), "batch_rows", minimum=1) == 3
    assert check_seed(0) == 0 and isinstance(check_seed(np.uint8(7)), int)
    for bad in [2.5, 2.0, math.nan, "2", None, True]:
        with pytest.raises(TypeError, match=rf"batch_rows must be an integer >= 1; got {bad!r}"):
            check_int(bad, "batch_rows", minimum=1)
    with pytest.raises(ValueError, match=r"batch_rows must be an integer >= 1; got 0 \(int\)"):
        check_int(0, "batch_rows", minimum=1)
    with pytest.raises(TypeError, match=r"seed must be an integer >= 0; got None \(NoneType\)"):
        check_seed(None)
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0; got -1"):
        check_seed(-1)


def test_reals_and_levels():
    assert check_real(np.float32(0.5), "C", low=0.0, low_open=True) == 0.5
    assert check_real(0, "sum_tol", low=0.0) == 0.0
    assert check_level(0.95) == 0.95
    with pytest.raises(TypeError, match=r"confidence must be a finite number > 0 and < 1; "
                                        r"got '0.95' \(str\)"):  # fmt: skip
        check_level("0.95")
    for bad in [0.0, 1.0, math.nan, math.inf]:
        with pytest.raises(ValueError, match="confidence must be a finite number > 0 and < 1"):
            check_level(bad)
    with pytest.raises(ValueError, match=r"sum_tol must be a finite number >= 0; got nan"):
        check_real(math.nan, "sum_tol", low=0.0)
    with pytest.raises(ValueError, match=r"floor must be a finite number > 0 and <= 0.5"):
        check_real(0.6, "floor", low=0.0, low_open=True, high=0.5)
    with pytest.raises(TypeError, match=r"C must be a finite number > 0; got True \(bool\)"):
        check_real(True, "C", low=0.0, low_open=True)
