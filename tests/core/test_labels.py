"""reliquant.core.labels: labels compared by value whatever their types, missing ones refused
naming the row, spellings that are no class refused naming both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.core.labels import factorize_labels, label_key, match_labels


def _spell(value: int, how: int):
    """One of the ways a file can hand over the class ``value``."""
    return [value, float(value), str(value), f"{value}.0", np.int64(value), np.float32(value),
            f" {value} ", f"{value}e0"][how]  # fmt: skip


def test_every_spelling_of_a_number_is_its_class():
    """Random labels, each spelled one of eight ways, map to the classes they were drawn
    from (the codes known by construction)."""
    rng = np.random.default_rng(0)
    classes = [3, 7, 11]
    codes = rng.integers(0, 3, 500)
    labels = [
        _spell(classes[c], int(h)) for c, h in zip(codes, rng.integers(0, 8, 500), strict=True)
    ]
    np.testing.assert_array_equal(match_labels(labels, classes), codes)
    for spelled in (np.array(classes, dtype=np.float64), [str(c) for c in classes]):
        np.testing.assert_array_equal(match_labels(labels, spelled), codes)
    series = pd.Series(np.array(classes)[codes], dtype="Int64")  # pandas' nullable integers
    np.testing.assert_array_equal(match_labels(series, classes), codes)


def test_keys_say_what_a_label_is():
    assert label_key(1) == label_key(1.0) == label_key("1") == label_key(np.uint8(1))
    assert label_key(1.5) == label_key("1.5") != label_key(1)
    assert label_key(True) == label_key("TRUE") == label_key(np.bool_(True)) == ("bool", True)
    assert label_key(True) != label_key(1)
    assert label_key("yes") == ("text", "yes") != label_key("Yes")
    for missing in (None, np.nan, pd.NA, pd.NaT, "", "  ", np.float32("nan")):
        assert label_key(missing) is None, missing


def test_booleans_match_booleans_and_their_text_only():
    np.testing.assert_array_equal(
        match_labels(["true", "False", True, np.bool_(False)], [False, True]), [1, 0, 1, 0]
    )
    with pytest.raises(ValueError, match=r"row 1 holds 1, which is none of the classes "
                       r"\[False, True\] \(1 is a number, the classes are booleans\)"):  # fmt: skip
        match_labels([True, 1], [False, True])
    with pytest.raises(ValueError, match=r"\(True is a boolean, the classes are numbers\)"):
        match_labels(np.array([True, False]), np.array([0, 1]))


@pytest.mark.parametrize(
    ("labels", "row"),
    [
        (np.array([1.0, 2.0, np.nan, 1.0]), 2),
        ([1, 2, 1, None], 3),
        (pd.Series([1, 2, None, None], dtype="Int64"), 2),
        (np.array(["1", "", "2", "1"], dtype=object), 1),
    ],
)
def test_a_missing_label_is_refused_naming_its_first_row(labels, row):
    with pytest.raises(ValueError, match=rf"truth: row {row} has no label \(NaN, None or an "
                       r"empty cell\)"):  # fmt: skip
        match_labels(labels, [1, 2], what="truth")


def test_other_spellings_and_ambiguous_classes_are_refused_naming_both():
    with pytest.raises(ValueError, match=r"truth: row 2 holds 'Yes', which is none of the "
                       r"classes \['no', 'yes'\]; 2 rows hold labels"):  # fmt: skip
        match_labels(["yes", "no", "Yes", "Yes"], ["no", "yes"], what="truth")
    with pytest.raises(ValueError, match=r"row 0 holds 'a', which is none of the classes \[1, 2\] "
                       r"\('a' is text, the classes are numbers\)"):  # fmt: skip
        match_labels(["a"], [1, 2])
    # an exact spelling decides; a value that two classes spell is refused
    np.testing.assert_array_equal(match_labels(["1", 1], [1, "1"]), [1, 0])
    with pytest.raises(ValueError, match=r"row 0 holds 1.0, which matches the classes 1 and '1'"):
        match_labels([1.0], [1, "1"])


def test_factorize_by_value_equals_pandas_on_one_type_and_merges_spellings():
    rng = np.random.default_rng(1)
    values = rng.integers(0, 9, 300) * 10 + 3
    codes, uniques = factorize_labels(values)
    want_codes, want_uniques = pd.factorize(values, sort=False)
    np.testing.assert_array_equal(codes, want_codes)
    assert uniques.tolist() == want_uniques.tolist()
    mixed = [_spell(int(v), int(h)) for v, h in zip(values, rng.integers(0, 8, 300), strict=True)]
    codes, uniques = factorize_labels(mixed)
    np.testing.assert_array_equal(codes, want_codes)
    assert [label_key(u) for u in uniques] == [label_key(u) for u in want_uniques]
    with pytest.raises(ValueError, match="groups: row 1 has no label"):
        factorize_labels([1, np.nan], what="groups")
