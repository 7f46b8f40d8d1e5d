"""reliquant.mlm.custom: a ``custom:`` case's ``label`` column compared by value, whatever its
file's types; a missing label refused naming its row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.core.io import read_table_file
from reliquant.mlm import misclassification_likelihood
from reliquant.mlm.custom import run_case

CASE = {"name": "mine", "kind": "mlm", "softmax": "my/softmax.csv", "refine": False}


def _softmax(n: int = 60, k: int = 3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % k
    logits = 2.0 * np.eye(k)[labels] + rng.normal(size=(n, k))
    s = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return pd.DataFrame(s, columns=[f"p{c}" for c in range(k)]).assign(label=labels)


def test_labels_as_floats_or_text_are_the_same_classes(tmp_path):
    """The table of integer labels, computed apart by the library call, equals that of the
    same labels read as floats from a CSV file or written as text in a parquet file."""
    frame = _softmax()
    expected = misclassification_likelihood(
        frame[["p0", "p1", "p2"]].to_numpy(), frame["label"].to_numpy(), refine=False
    ).to_frame()
    frame.assign(label=[f"{v:.1f}" for v in frame["label"]]).to_csv(tmp_path / "f.csv", index=False)
    as_float = read_table_file(tmp_path / "f.csv")
    assert as_float["label"].dtype == np.float64
    frame.assign(label=frame["label"].astype(str)).to_parquet(tmp_path / "s.parquet")
    as_text = read_table_file(tmp_path / "s.parquet")
    assert not pd.api.types.is_numeric_dtype(as_text["label"])
    for table in (frame, as_float, as_text):
        pd.testing.assert_frame_equal(run_case(table, case=CASE).table, expected)


def test_a_missing_or_foreign_label_is_refused_naming_its_row():
    frame = _softmax()
    missing = frame.assign(label=frame["label"].astype(object))
    missing.loc[11, "label"] = None
    with pytest.raises(ValueError, match=r"custom case 'mine', key 'softmax', column 'label': "
                       r"row 11 has no label"):  # fmt: skip
        run_case(missing, case=CASE)
    foreign = frame.assign(label=frame["label"].astype(object))
    foreign.loc[4, "label"] = "cat"
    with pytest.raises(ValueError, match=r"row 4 holds 'cat', which is none of the classes "
                       r"\[0, 1, 2\] \('cat' is text, the classes are numbers\)"):  # fmt: skip
        run_case(foreign, case=CASE)
