"""The Pima Indians diabetes table (its columns, types and physical ranges checked) and the
Iris table (scikit-learn's copy)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = [
    "IRIS_FEATURES",
    "IRIS_SCHEMA",
    "PIMA_COLUMNS",
    "PIMA_RANGES",
    "PIMA_SCHEMA",
    "iris_table",
    "pima_table",
]


PIMA_COLUMNS = {
    "Pregnancies": pa.int64(),
    "Glucose": pa.int64(),
    "BloodPressure": pa.int64(),
    "SkinThickness": pa.int64(),
    "Insulin": pa.int64(),
    "BMI": pa.float64(),
    "DiabetesPedigreeFunction": pa.float64(),
    "Age": pa.int64(),
    "Outcome": pa.int64(),
}
PIMA_SCHEMA = pa.schema([pa.field(n, t, nullable=False) for n, t in PIMA_COLUMNS.items()])
#: Physically possible range of each Pima column (0 marks a missing measurement in this
#: data set, as the UCI description says, so 0 is allowed where it occurs).
PIMA_RANGES = {
    "Pregnancies": (0, 30),
    "Glucose": (0, 400),
    "BloodPressure": (0, 250),
    "SkinThickness": (0, 120),
    "Insulin": (0, 1000),
    "BMI": (0.0, 100.0),
    "DiabetesPedigreeFunction": (0.0, 5.0),
    "Age": (0, 120),
    "Outcome": (0, 1),
}

IRIS_FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
IRIS_SCHEMA = pa.schema(
    [pa.field(n, pa.float64(), nullable=False) for n in IRIS_FEATURES]
    + [pa.field("target", pa.int64(), nullable=False), pa.field("target_name", pa.string())]
)


def pima_table(csv_path: str | os.PathLike) -> pa.Table:
    """The Pima Indians Diabetes CSV as an Arrow table with the explicit schema.

    Raises a ValueError naming the file, the row (1-based, as in the CSV with its header line
    counted) and the column for a non-UTF-8 file, a missing or non-numeric value, or a value
    outside :data:`PIMA_RANGES`.
    """
    raw = Path(csv_path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{csv_path}: line {line} is not valid UTF-8 (byte {raw[err.start]:#x})"
        ) from None
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    if list(frame.columns) != list(PIMA_COLUMNS):
        raise ValueError(
            f"{csv_path}: expected columns {list(PIMA_COLUMNS)}, found {list(frame.columns)}"
        )
    for column, typ in PIMA_COLUMNS.items():
        frame[column] = _pima_column(frame[column], column, typ, csv_path)
    return pa.Table.from_pandas(frame, schema=PIMA_SCHEMA, preserve_index=False)


def _pima_column(text: pd.Series, column: str, typ: pa.DataType, csv_path) -> pd.Series:
    """One Pima column parsed to ``typ`` and checked against :data:`PIMA_RANGES`."""
    values = pd.to_numeric(text.str.strip(), errors="coerce")
    low, high = PIMA_RANGES[column]
    integral = pa.types.is_integer(typ)
    bad = values.isna() | (values < low) | (values > high)
    if integral:
        bad |= values.notna() & (values != values.round())
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        kind = "an integer" if integral else "a number"
        raise ValueError(
            f"{csv_path}: line {row + 2}, column {column}: value {text.iloc[row]!r} is not "
            f"{kind} in [{low}, {high}]"
        )
    return values.astype("int64" if integral else "float64")


def iris_table() -> pa.Table:
    """Iris (150 rows) from scikit-learn with snake_case feature names."""
    from sklearn.datasets import load_iris

    bunch = load_iris()
    columns = {name: bunch.data[:, i] for i, name in enumerate(IRIS_FEATURES)}
    columns["target"] = bunch.target.astype(np.int64)
    columns["target_name"] = np.asarray(bunch.target_names)[bunch.target]
    return pa.table(columns, schema=IRIS_SCHEMA)
