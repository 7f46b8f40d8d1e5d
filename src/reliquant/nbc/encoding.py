"""The categories of a table's columns: :class:`CategoryEncoder` (paper 000's NBC is categorical).

:class:`CategoryEncoder` maps the columns of a pandas DataFrame to the integer codes the
classifier works with. Which columns it accepts, and where each column's categories come from:

* **declared categories** (a ``categories={column: [values, ...]}`` argument, or a pandas
  ``Categorical`` column, whose ``categories`` are used, unused ones included): every declared
  value gets a code, in the declared order, whether or not it occurs in training. A test
  value that is declared but unseen in training is scored with eq. 18's smoothing,
  ``p(f_i | c) = alpha / (n(c) + alpha |F_i|)`` with ``|F_i|`` the number of declared
  categories; a training value outside the declared ones is an error;
* **otherwise** the values seen in training, sorted: integers, strings, booleans, and
  integer-valued floats (``2.0`` and ``2`` are one category);
* a column holding **non-integer numbers** (raw measurements such as 5.1, 3.5, ...) that is
  not declared is refused at fit, naming the column: this classifier is categorical, so bin
  it first (``pandas.cut`` / ``pandas.qcut`` give a ``Categorical``) or declare its values.

A test value outside a column's categories, or a missing value, is an error naming the
column and the value (a test set encoded on its own would silently map its values to other
codes and give wrong robustness: eps_loc 0.140 became 0.011 in one case). Columns are matched
by name, in any order; a missing or extra column is refused with both lists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CategoryEncoder",
]


def _missing(values: pd.Series) -> np.ndarray:
    return values.isna().to_numpy()


def _shown(values: Sequence[Any], limit: int = 10) -> str:
    """``values`` as a list for an error message, cut after ``limit`` entries."""
    values = list(values)
    return f"{values[:limit]}{' ...' if len(values) > limit else ''}"


def _declared_categories(col: Any, values: Any, source: str) -> tuple[Any, ...]:
    """The declared categories of column ``col`` as normalised values, checked: a non-empty
    list without missing values or repeats."""
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise TypeError(f"{source} for column {col!r} must be a list of categories; got {values!r}")
    cats = [_normal_value(v) for v in values]
    if not cats:
        raise ValueError(f"{source} for column {col!r} is empty: declare at least one category")
    for v in cats:
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
            raise ValueError(f"{source} for column {col!r} holds a missing value ({v!r})")
    repeated = sorted({repr(v) for v in cats if cats.count(v) > 1})
    if repeated:
        raise ValueError(f"{source} for column {col!r} repeats {', '.join(repeated)}")
    return tuple(cats)


@dataclass(frozen=True)
class CategoryEncoder:
    """Per column, its categories: code ``k`` is the k-th. Declared categories (a
    ``categories=`` mapping or a pandas ``Categorical`` column) keep their declared order;
    otherwise the values seen in training, sorted (module docstring)."""

    columns: tuple[Any, ...]
    categories: tuple[tuple[Any, ...], ...]

    @classmethod
    def fit(
        cls, frame: pd.DataFrame, categories: Mapping[Any, Sequence[Any]] | None = None
    ) -> CategoryEncoder:
        """The categories of every column of the training table ``frame``.

        ``categories``: optional ``{column: [category, ...]}``, the column's possible values
        (training values must be among them; the others get eq. 18's smoothed probability).
        A pandas ``Categorical`` column declares its own ``categories``. A column holding
        non-integer numbers must be declared (or binned), else ``ValueError``.
        """
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"expected a pandas DataFrame; got {type(frame).__name__}")
        repeated = frame.columns[frame.columns.duplicated()].unique().tolist()
        if repeated:
            raise ValueError(f"column names must be unique; repeated: {repeated}")
        declared = {} if categories is None else dict(categories)
        unknown = [c for c in declared if c not in frame.columns]
        if unknown:
            raise ValueError(
                f"categories= names {unknown}, not columns of the table {list(frame.columns)}"
            )
        cats = []
        for col in frame.columns:
            values = frame[col]
            if _missing(values).any():
                row = frame.index[_missing(values)][0]
                raise ValueError(f"column {col!r} has a missing value in training row {row!r}")
            norm = _normalise(values)
            if col in declared:
                source = "categories="
                col_cats = _declared_categories(col, declared[col], source)
            elif isinstance(values.dtype, pd.CategoricalDtype):
                source = "the Categorical's categories"
                col_cats = _declared_categories(col, values.cat.categories.tolist(), source)
            else:
                _refuse_raw_numbers(col, norm)
                cats.append(tuple(sorted(set(norm), key=_sort_key)))
                continue
            known = set(col_cats)
            outside = [j for j, v in enumerate(norm) if v not in known]
            if outside:
                raise ValueError(
                    f"column {col!r} holds {norm[outside[0]]!r} in training row "
                    f"{frame.index[outside[0]]!r}, not among its declared categories "
                    f"{_shown(col_cats)} (from {source})"
                )
            cats.append(col_cats)
        return cls(tuple(frame.columns), tuple(cats))

    @property
    def n_values(self) -> list[int]:
        """``|F_i|`` of every column."""
        return [len(c) for c in self.categories]

    def transform(self, frame: pd.DataFrame, *, ignore: Sequence[Any] = ()) -> np.ndarray:
        """Integer codes (n, N) of ``frame``'s columns, matched by name (any order).

        A training column that ``frame`` lacks, or a column of ``frame`` that is neither a
        training column nor in ``ignore``, is refused with both lists of columns.
        """
        absent = [c for c in self.columns if c not in frame.columns]
        extra = [c for c in frame.columns if c not in self.columns and c not in ignore]
        if absent or extra:
            parts = [f"lacks the training columns {absent}"] if absent else []
            parts += [f"has columns not seen in training {extra}"] if extra else []
            raise ValueError(
                f"the table {' and '.join(parts)} (columns are matched by name; training "
                f"columns: {list(self.columns)}; given: {list(frame.columns)})"
            )
        out = np.empty((len(frame), len(self.columns)), dtype=np.int64)
        for i, (col, cats) in enumerate(zip(self.columns, self.categories, strict=True)):
            values = frame[col]
            if _missing(values).any():
                row = frame.index[_missing(values)][0]
                raise ValueError(f"column {col!r} has a missing value in row {row!r}")
            lookup = {v: k for k, v in enumerate(cats)}
            norm = _normalise(values)
            codes = [lookup.get(v, -1) for v in norm]
            if -1 in codes:
                bad = norm[codes.index(-1)]
                raise ValueError(
                    f"column {col!r} holds {bad!r}, a category neither seen in training nor "
                    f"declared (known: {_shown(cats)}; to score a value that training lacks, "
                    "declare it at fit: fit_table(..., categories={column: [...]}) or a "
                    "pandas Categorical column)"
                )
            out[:, i] = codes
        return out


def _refuse_raw_numbers(col: Any, norm: list[Any]) -> None:
    """Refuse an undeclared column holding non-integer numbers (module docstring)."""
    numbers = [v for v in norm if isinstance(v, float)]
    if numbers:
        raise ValueError(
            f"column {col!r} holds non-integer numbers ({len(set(norm))} distinct values, e.g. "
            f"{numbers[0]!r}): this Naive Bayes is categorical, so bin the column first, e.g. "
            f"table[{col!r}] = pandas.cut(table[{col!r}], bins=5) or pandas.qcut(..., q=4), "
            f"or declare its values with fit_table(..., categories={{{col!r}: [...]}})"
        )


def _normal_value(v: Any) -> Any:
    """A Python value, integer-valued floats as ints (2.0 and 2 are one category)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return v


def _normalise(values: pd.Series) -> list[Any]:
    """The column's values as Python values (:func:`_normal_value`)."""
    return [_normal_value(v) for v in values.tolist()]


def _sort_key(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, v)
