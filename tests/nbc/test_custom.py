"""reliquant.nbc.custom: a ``custom:`` case's tables refused with the case and table named."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from reliquant.core.io import read_table_file
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


def test_the_figure_legend_covers_no_bar_and_ticks_do_not_overlap():
    """Rendered: the correct/wrong legend lies outside both panels; no two tick labels of
    an axis overlap, even for epsilons of order 1e-4."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
    import pandas as pd

    from reliquant.nbc.custom import _figure

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"eps_glob": rng.exponential(0.002, 300),
                          "eps_loc": rng.exponential(0.0004, 300),
                          "correct": rng.random(300) < 0.8})  # fmt: skip
    fig = _figure(table, {"name": "loans"})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    for ax in fig.axes:
        labels = [t.get_window_extent(renderer) for t in ax.xaxis.get_ticklabels() if t.get_text()]
        assert len(labels) >= 2
        assert not any(a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1 :])


# ------------------------------------------------------------- test labels compared by value
def _numbered(tmp_path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The issue's reproducer: training labels written 1/2 in a CSV file (read as integers),
    the test table the same rows; returns the train table, the test table and the case."""
    rng = np.random.default_rng(3)
    colour = rng.choice(["r", "g", "b"], 80)
    y = np.where((colour == "r") ^ (rng.random(80) < 0.2), 1, 2)
    train = pd.DataFrame({"colour": colour, "size": rng.integers(1, 4, 80), "y": y})
    train.to_csv(tmp_path / "train.csv", index=False)
    case = {**CASE, "train": "my/train.csv", "test": "my/test.csv"}
    return read_table_file(tmp_path / "train.csv"), train.iloc[:50].reset_index(drop=True), case


def _reference_accuracy(train: pd.DataFrame, test: pd.DataFrame) -> float:
    """Accuracy computed apart: the fitted model's predictions against the integer labels."""
    from reliquant.nbc.scoring import fit_table, robustness

    fitted = fit_table(train, "y", alpha=1.0)
    predicted = robustness(fitted, test[["colour", "size"]])["prediction"].to_numpy()
    return float(np.mean(predicted.astype(np.int64) == test["y"].to_numpy()))


def test_float_test_labels_of_an_integer_train_table_give_the_right_accuracy(tmp_path):
    """Test labels read as floats (1.0/2.0, as a CSV with a float cell reads them) are the
    classes 1/2: the accuracy is the integer-label one, not 0.0000."""
    train, test, case = _numbered(tmp_path)
    floats = test.assign(y=test["y"].astype(np.float64))
    floats.to_csv(tmp_path / "test.csv", index=False, float_format="%.1f")
    read = read_table_file(tmp_path / "test.csv")
    assert read["y"].dtype == np.float64  # as the user's file reads
    expected = _reference_accuracy(train, test)
    assert 0.5 < expected < 1.0
    for table in (test, read, test.assign(y=test["y"].astype(str))):
        result = run_case(train, table, case=case)
        assert result.table["correct"].mean() == pytest.approx(expected)
        assert f"Accuracy {expected:.4f}." in result.markdown
        assert result.table["truth"].tolist() == test["y"].tolist()  # the classes' spelling
        assert result.schema.field("truth").type == pa.int64()


def test_an_empty_test_label_cell_is_refused_naming_its_row(tmp_path):
    train, test, case = _numbered(tmp_path)
    test.to_csv(tmp_path / "test.csv", index=False)
    lines = (tmp_path / "test.csv").read_text().splitlines()
    lines[1 + 7] = lines[1 + 7].rsplit(",", 1)[0] + ","  # row 7's label cell left empty
    (tmp_path / "test.csv").write_text("\n".join(lines) + "\n")
    read = read_table_file(tmp_path / "test.csv")
    with pytest.raises(ValueError, match=r"custom case 'mine', test table my/test.csv, column "
                       r"'y': row 7 has no label \(NaN, None or an empty cell\)"):  # fmt: skip
        run_case(train, read, case=case)


@pytest.mark.parametrize(
    ("labels", "words"),
    [
        (["one"] * 50, [r"row 0 holds 'one'", r"none of the classes \[1, 2\]",
                        r"'one' is text, the classes are numbers"]),
        ([True] * 50, [r"row 0 holds True", r"a boolean, the classes are numbers"]),
        ([1] * 49 + [3], [r"row 49 holds 3, which is none of the classes \[1, 2\]",
                          r"can be declared with `categories: \{y: \[...\]\}`"]),
    ],
)  # fmt: skip
def test_a_test_label_of_another_spelling_is_refused_naming_both(tmp_path, labels, words):
    train, test, case = _numbered(tmp_path)
    with pytest.raises(ValueError) as info:
        run_case(train, test.assign(y=pd.Series(labels, dtype=object)), case=case)
    for word in words:
        assert re.search(word, str(info.value)), (word, str(info.value))


def test_string_classes_match_only_their_own_spelling():
    """Text classes ('yes'/'no') compare exactly: 'No' is refused with both spellings."""
    train, test = _tables()
    ref = run_case(train, test, case=CASE).table
    assert ref["truth"].tolist() == test["y"].tolist()
    with pytest.raises(ValueError, match=r"row 0 holds 'No', which is none of the classes "
                       r"\['no', 'yes'\]"):  # fmt: skip
        run_case(train, test.assign(y=test["y"].str.capitalize()), case=CASE)
