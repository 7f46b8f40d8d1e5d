"""reliquant.compare.rejection re-exports the one implementation of reliquant.core.rejection
(tested there against a brute force over every ordering of ties)."""

from __future__ import annotations

import numpy as np
import pytest

import reliquant.compare as compare
import reliquant.compare.rejection as rejection
import reliquant.core.rejection as core_rejection


def test_every_public_name_is_core_s() -> None:
    assert rejection.__all__ == core_rejection.__all__
    for name in rejection.__all__:
        assert getattr(rejection, name) is getattr(core_rejection, name), name
    for name in ("accuracy_rejection_curve", "auarc", "expected_kept_correct"):
        assert getattr(compare, name) is getattr(core_rejection, name), name


def test_reexported_auarc_on_a_known_value() -> None:
    assert rejection.auarc([3.0, 2.0, 1.0], [True, True, False]) == pytest.approx(
        (2 / 3 + 1 + 1) / 3
    )
    _, acc = rejection.accuracy_rejection_curve(np.zeros(4), [True, False, False, True])
    np.testing.assert_allclose(acc, 0.5)
    with pytest.raises(ValueError, match="score has 1 NaN"):
        rejection.auarc([1.0, np.nan], [True, False])
