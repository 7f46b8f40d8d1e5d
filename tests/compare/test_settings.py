"""Cross-section checks of the compare config."""

from __future__ import annotations

import pytest

from reliquant.compare.reproduction.settings import check_settings, mnist_corruptions

NBC = {"grid": {"n_train": [25, 100], "gamma": [0.0, 0.4]},
       "fit": {"n_train_sets": 2}, "design": {"n_shift": 2}}  # fmt: skip


def _compare(corruptions=None, cells=None, train_set=0):
    return {"mnist": {"corruptions": corruptions},
            "nbc": {"cells": cells or [{"n_train": 25, "gamma": 0.4}], "train_set": train_set}}  # fmt: skip


def test_defaults_pass_and_null_means_every_mlm_partition() -> None:
    check_settings(_compare(), ["fog", "snow"], NBC)
    assert mnist_corruptions(_compare(), ["fog", "snow"]) == ["fog", "snow"]
    assert mnist_corruptions(_compare(["snow"]), ["fog", "snow"]) == ["snow"]


@pytest.mark.parametrize(
    ("compare", "match"),
    [
        (_compare(["frost"]), "not scored by the mlm topic"),
        (_compare(cells=[{"n_train": 50, "gamma": 0.4}]), "not a cell of the nbc grid"),
        (_compare(cells=[{"n_train": 25, "gamma": 0.0}] * 2), "twice"),
        (_compare(train_set=4), "train_set 4"),
    ],
)
def test_inconsistent_settings_are_named(compare, match) -> None:
    with pytest.raises(ValueError, match=match):
        check_settings(compare, ["fog", "snow"], NBC)
