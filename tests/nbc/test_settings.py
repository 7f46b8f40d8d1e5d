"""reliquant.nbc.reproduction.settings: constraints between keys of the ``nbc`` section."""

from pathlib import Path

import pytest

from reliquant.core.config import load_config
from reliquant.nbc.reproduction.settings import check_settings

REPO = Path(__file__).resolve().parents[2]


def _nbc(**changes):
    nbc = load_config(REPO / "config.yaml")["nbc"]
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        nbc[section][key] = value
    return nbc


def test_default_nbc_settings_are_consistent():
    check_settings(_nbc())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"design__class_probs": [0.4, 0.4, 0.4]}, r"class_probs \[0.4, 0.4, 0.4\] sums to 1.2"),
        ({"design__favoured": [[0, 0, 0, 0]] * 2}, "favoured has 2 rows; it needs one per class"),
        ({"design__favoured": [[0, 0, 0]] * 3}, r"favoured\[0\] has 3 values"),
        ({"design__favoured": [[2, 0, 0, 0]] * 3}, r"favoured\[0\]\[0\] = 2 is not a value"),
        ({"grid__n_train": [5, 50], "fit__cv_folds": 10}, "cv_folds = 10 needs at least"),
        ({"grid__gamma": [0.2, 0.2000001]}, "0.2 and 0.2000001 name the same cell file"),
        ({"grid__n_train": [25, 25]}, "n_train lists 25 twice"),
    ],
)
def test_inconsistent_nbc_settings_are_named(changes, message):
    with pytest.raises(ValueError, match=message):
        check_settings(_nbc(**changes))
