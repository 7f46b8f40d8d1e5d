"""reliquant.nbc.custom: a ``custom:`` case's tables refused with the case and table named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.nbc.custom import run_case

CASE = {"name": "mine", "kind": "nbc", "train": "my/train.csv", "test": "my/test.csv",
        "target": "y", "alpha": 1.0}  # fmt: skip


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    train = pd.DataFrame(
        {"colour": rng.choice(["r", "g", "b"], 40), "size": rng.integers(1, 4, 40)}
    )
    train["y"] = np.where(train["colour"] == "r", "yes", "no")
    return train, train.iloc[:10].reset_index(drop=True)


def test_a_raw_float_train_column_is_refused_naming_the_case_and_column():
    train, test = _tables()
    train["weight"] = np.random.default_rng(1).normal(size=len(train))
    with pytest.raises(ValueError, match=r"custom case 'mine', train table my/train.csv: column "
                       r"'weight' holds non-integer numbers .*bin the column"):  # fmt: skip
        run_case(train, test, case=CASE)


def test_test_columns_are_matched_by_name_and_a_missing_one_is_named():
    train, test = _tables()
    ref = run_case(train, test, case=CASE).table
    shuffled = test[["y", "size", "colour"]].assign(id=np.arange(len(test)))
    pd.testing.assert_frame_equal(run_case(train, shuffled, case=CASE).table, ref)
    with pytest.raises(ValueError, match=r"custom case 'mine', test table my/test.csv: the table "
                       r"lacks the training columns \['size'\]"):  # fmt: skip
        run_case(train, test.drop(columns="size"), case=CASE)
