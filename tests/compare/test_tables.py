"""The per-prediction table: columns, explicit schema, checks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from reliquant.compare.reproduction.tables import (
    BASE_COLUMNS,
    SCORE_FAMILY,
    family_of,
    prediction_frame,
    prediction_schema,
    score_columns,
)


def _frame(**over):
    kw = dict(
        dataset="pima_xgb",
        case="clean",
        condition="clean",
        item=[0, 1, 2],
        label=[0, 1, 1],
        prediction=[0, 0, 1],
        scores={"tree_robustness": [1.0, 0.5, 0.9], "margin": [0.8, 0.1, 0.4]},
    )
    kw.update(over)
    return prediction_frame(**kw)


def test_frame_columns_correctness_and_schema_round_trip() -> None:
    frame = _frame()
    assert list(frame.columns) == [*BASE_COLUMNS, "tree_robustness", "margin"]
    assert frame["correct"].tolist() == [True, False, True]
    assert score_columns(frame) == ["tree_robustness", "margin"]
    schema = prediction_schema(score_columns(frame))
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    assert table.schema.field("margin").type == pa.float64()
    assert table.schema.field("label").type == pa.int16()


def test_per_row_case_and_condition() -> None:
    frame = _frame(case=["clean", "noise", "noise"], condition=["clean", "shifted", "shifted"])
    assert frame["condition"].tolist() == ["clean", "shifted", "shifted"]


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"dataset": "nope"}, "unknown data set"),
        ({"condition": "drifted"}, "condition must be one of"),
        ({"scores": {"margin": [0.1, np.nan, 0.2]}}, "NaN"),
        ({"scores": {"margin": [0.1, 0.2]}}, "shape"),
        ({"scores": {"made_up": [0.1, 0.2, 0.3]}}, "unknown score"),
        ({"case": ["a", "b"]}, "one value or one per row"),
    ],
)
def test_bad_input_is_refused(over, match) -> None:
    with pytest.raises((ValueError, KeyError), match=match):
        _frame(**over)


def test_families_are_robustness_or_uncertainty() -> None:
    assert set(SCORE_FAMILY.values()) == {"robustness", "uncertainty"}
    assert family_of("eps_loc") == "robustness"
    assert family_of("negative_entropy") == "uncertainty"
