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
