"""Class labels of a user's table matched to a model's classes by value, whatever the file's types.

One label column reads differently from one file to the next: integers from a CSV file, floats
when one of its cells is empty (``1.0``, ``2.0``, NaN), strings from a parquet file written that
way. Compared as they come, ``1.0`` never equals the class ``1`` and ``"1"`` never equals
``1``: every prediction counts as wrong and the accuracy reads 0, silently. Here labels are
compared by what they say:

* **numbers** are one class when they are one number: ``1``, ``1.0``, ``numpy.int64(1)`` and the
  text ``"1"`` (or ``" 1.0"``, ``"1e0"``) are the same label; ``1.5`` is its own;
* **booleans** are ``True``/``False`` or the text ``"true"``/``"false"`` in any case; a boolean
  is never a number's class (``True`` does not match the class ``1``: a file that spells a
  class both ways is refused rather than guessed);
* any other **text** is compared exactly (``"yes"`` is not ``"Yes"``, nor ``"yes "``);
* a **missing** label (NaN, None, ``pandas.NA``, an empty or blank cell) is refused, naming its
  row: it is no class, and counting it as a wrong prediction would lower the accuracy.

:func:`label_key` is a label's comparison key; :func:`match_labels` maps labels onto a model's
classes (codes ``0 .. K-1``) and refuses a label that is none of them, naming its row, its
spelling and the classes; :func:`factorize_labels` numbers the distinct labels of one column by
value, in order of first appearance (as ``pandas.factorize`` does by type).

Public API: :func:`label_key`, :func:`match_labels`, :func:`factorize_labels`.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["factorize_labels", "label_key", "match_labels"]

_INTEGER = re.compile(r"[+-]?\d+")
_REAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity)", re.IGNORECASE)
#: The kinds of :func:`label_key`, for messages: one label's, several classes'.
_KIND = {"number": "a number", "bool": "a boolean", "text": "text", "other": "another type"}
_KINDS = {"number": "numbers", "bool": "booleans", "text": "text", "other": "other types"}
_SHOWN = 20  # classes named in a message


def _python(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _number(value: float) -> tuple[str, Any] | None:
    if math.isnan(value):
        return None
    return ("number", int(value) if value.is_integer() else value)


def label_key(value: Any) -> tuple[str, Any] | None:
    """The key by which a label is compared (module docstring), ``None`` for a missing one.

    ``("number", n)`` with ``n`` an int when the number is whole (``1``, ``1.0``, ``"1"`` ->
    ``("number", 1)``), ``("bool", b)``, ``("text", s)`` (exact), or ``("other", type name,
    value)`` for any other hashable value.
    """
    value = _python(value)
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, numbers.Integral):
        return ("number", int(value))
    if isinstance(value, numbers.Real):
        return _number(float(value))
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text.lower() in ("true", "false"):
            return ("bool", text.lower() == "true")
        if _INTEGER.fullmatch(text):
            return ("number", int(text))
        if _REAL.fullmatch(text):
            return _number(float(text))
        return ("text", value)
    return ("other", type(value).__name__, value)


def _values(labels: ArrayLike, what: str) -> np.ndarray:
    if isinstance(labels, list | tuple):  # numpy would turn [1, True] into [1, 1]
        values = np.empty(len(labels), dtype=object)
        values[:] = labels
    else:
        values = np.asarray(labels.to_numpy() if isinstance(labels, pd.Series) else labels)
    if values.ndim != 1:
        raise ValueError(f"{what} must be 1-D, one label per row; got shape {values.shape}")
    return values


def _distinct(values: np.ndarray, what: str) -> tuple[list[Any], np.ndarray]:
    """The distinct values (Python objects; ``1`` and ``1.0`` and ``True`` apart) and, per
    row, the index of its value."""
    if values.dtype.kind in "biufU":  # one numpy type: numpy's unique is by value
        uniq, inverse = np.unique(values, return_inverse=True)
        return [_python(u) for u in uniq], inverse.reshape(-1).astype(np.int64)
    seen: dict[tuple[type, Any], int] = {}
    items: list[Any] = []
    inverse = np.empty(values.size, dtype=np.int64)
    for row, v in enumerate(values.tolist()):
        v = _python(v)
        try:
            j = seen.setdefault((type(v), v), len(items))
        except TypeError:
            raise ValueError(f"{what}: row {row} holds {v!r}, which is not a label") from None
        if j == len(items):
            items.append(v)
        inverse[row] = j
    return items, inverse


def _keys(items: list[Any], inverse: np.ndarray, what: str) -> list[tuple]:
    """:func:`label_key` of every distinct value; a missing one refused with its first row."""
    keys = [label_key(v) for v in items]
    missing = [j for j, k in enumerate(keys) if k is None]
    if missing:
        rows = np.flatnonzero(np.isin(inverse, missing))
        more = f" ({rows.size} rows have none)" if rows.size > 1 else ""
        raise ValueError(
            f"{what}: row {rows[0]} has no label (NaN, None or an empty cell){more}; every "
            "row needs its true class: fill it in or drop the row"
        )
    return keys


def _shown(classes: Sequence[Any]) -> str:
    shown = list(classes)
    return f"{shown[:_SHOWN]}{' ...' if len(shown) > _SHOWN else ''}"


def match_labels(
    labels: ArrayLike, classes: Sequence[Any] | np.ndarray, *, what: str = "labels"
) -> np.ndarray:
    """Each label's class as an index into ``classes``, matched by value (module docstring).

    ``labels``: one label per row (a sequence, numpy array or pandas Series); ``classes``: the
    model's classes (e.g. ``classes_``, ``fit_table``'s ``classes``, ``range(K)``), compared to
    the labels by :func:`label_key`, an exact match (same type and value) first. Returns
    int64 codes ``(n,)`` with ``classes[codes[i]]`` the class of row ``i``.

    Raises ``ValueError`` starting with ``what`` and naming the row: a missing label, a label
    that is none of the classes (both spellings named, with their kinds when they differ:
    ``'a'`` is text, the classes are numbers), or one that matches two classes by value
    (``1.0`` when the classes hold both ``1`` and ``'1'``).
    """
    values = _values(labels, what)
    items, inverse = _distinct(values, what)
    keys = _keys(items, inverse, what)
    spelled = [_python(c) for c in np.asarray(classes, dtype=object).reshape(-1).tolist()]
    exact: dict[tuple[type, Any], int] = {}
    by_key: dict[tuple, list[int]] = {}
    for i, c in enumerate(spelled):
        exact.setdefault((type(c), c), i)
        key = label_key(c)
        if key is not None:
            by_key.setdefault(key, []).append(i)
    codes = np.full(len(items), -1, dtype=np.int64)
    for j, (v, key) in enumerate(zip(items, keys, strict=True)):
        hit = exact.get((type(v), v))
        candidates = by_key.get(key, []) if hit is None else [hit]
        if len(candidates) == 1:
            codes[j] = candidates[0]
        elif len(candidates) > 1:
            row = int(np.flatnonzero(inverse == j)[0])
            both = " and ".join(repr(spelled[i]) for i in candidates)
            raise ValueError(
                f"{what}: row {row} holds {v!r}, which matches the classes {both} by value: "
                f"the classes {_shown(spelled)} spell one value twice; give each class once"
            )
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        rows = np.flatnonzero(np.isin(inverse, bad))
        v = items[int(inverse[rows[0]])]
        kind = label_key(v)[0]
        kinds = sorted({_KINDS[k[0]] for k in by_key} - {_KINDS[kind]})
        why = f" ({v!r} is {_KIND[kind]}, the classes are {' and '.join(kinds)})" if kinds else ""
        more = (
            f"; {rows.size} rows hold labels that are none of the classes" if rows.size > 1 else ""
        )
        raise ValueError(
            f"{what}: row {rows[0]} holds {v!r}, which is none of the classes "
            f"{_shown(spelled)}{why}{more}. Labels are compared by value (1, 1.0 and '1' are "
            "one class; True is not 1; other text must match exactly)"
        )
    return codes[inverse]


def factorize_labels(labels: ArrayLike, *, what: str = "labels") -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of one column of labels, by value: ``codes`` int64 ``(n,)``
    numbering the distinct labels ``0, 1, ...`` in order of first appearance, ``uniques`` (an
    object array) the first spelling of each (``[1, 1.0, '1', 2]`` -> codes ``[0, 0, 0, 1]``,
    uniques ``[1, 2]``). A missing label is refused naming its row (``ValueError`` starting
    with ``what``)."""
    values = _values(labels, what)
    items, inverse = _distinct(values, what)
    keys = _keys(items, inverse, what)
    first = np.full(len(items), values.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(values.size, dtype=np.int64))
    group_of: dict[tuple, int] = {}
    groups = np.empty(len(items), dtype=np.int64)
    spellings: list[Any] = []
    for j in np.argsort(first, kind="stable"):
        g = group_of.setdefault(keys[j], len(spellings))
        if g == len(spellings):
            spellings.append(items[j])
        groups[j] = g
    uniques = np.empty(len(spellings), dtype=object)
    uniques[:] = spellings
    return groups[inverse], uniques
