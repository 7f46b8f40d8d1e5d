"""The workflow's ``custom:`` case of kind trees (reliquant.trees.custom), at library level.

Issue 22: a samples table with shuffled columns and a model that knows its feature names
(a ``.skops`` forest, an XGBoost ``.json``) is matched by name, as the model's own
``predict`` would be; a name the model does not know is refused before any job, naming both
lists; the figure shows the returned interval, and the certified bounds only where they say
more than [0, 1].
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
import xgboost as xgb
from sklearn.ensemble import RandomForestClassifier

from reliquant.core.custom import check_cases
from reliquant.core.io import read_table_file
from reliquant.trees import load_model
from reliquant.trees.custom import check_model, run_case

NAMES = ["a", "b", "c", "d"]
SHUFFLED = ["c", "d", "b", "a"]


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=NAMES)
    y = np.digitize(X["a"] + 0.5 * X["c"], [-0.6, 0.0, 0.6])  # 4 classes
    return X, y


def _case(**kw):
    case = {"name": "mine", "kind": "trees", "model": "my/model.skops", "samples": "my/s.csv",
            "noise": {"variance": 0.05}, "time_budget": 0.5, "seed": 2, "max_boxes": 30,
            "max_draws": 4096}  # fmt: skip
    return case | kw


def test_shuffled_samples_are_matched_by_name(table, tmp_path):
    X, y = table
    forest = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(X, y)
    sio.dump(forest, tmp_path / "model.skops")
    model = load_model(tmp_path / "model.skops")
    samples = X.iloc[:12].reset_index(drop=True)
    shuffled = samples[SHUFFLED].copy()
    shuffled.insert(0, "id", [f"s{i}" for i in range(12)])
    truth = forest.predict(samples)
    # by position these columns are other samples: some labels differ (the silent bug)
    assert (
        forest.predict(pd.DataFrame(shuffled[SHUFFLED].to_numpy(), columns=NAMES)) != truth
    ).any()
    right = run_case(model, samples, case=_case()).table
    for case in (_case(columns=SHUFFLED), _case(columns=["b", "a", "d", "c"])):
        got = run_case(model, shuffled, case=case).table
        assert list(got["label"]) == list(truth)
        for col in ("lower", "upper", "estimate", "ci_low", "ci_high", "n_draws", "status"):
            np.testing.assert_array_equal(got[col], right[col], err_msg=col)
    # a per-feature variance follows the order of `columns`
    var = {"a": 0.01, "b": 0.2, "c": 0.03, "d": 0.4}
    a = run_case(model, samples, case=_case(noise={"variance": [var[n] for n in NAMES]})).table
    b = run_case(model, shuffled, case=_case(columns=SHUFFLED,
                                             noise={"variance": [var[n] for n in SHUFFLED]})).table  # fmt: skip
    np.testing.assert_array_equal(a["estimate"], b["estimate"])


def test_names_the_model_does_not_know_are_refused_before_any_job(table, tmp_path):
    X, y = table
    forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    (tmp_path / "my").mkdir()
    sio.dump(forest, tmp_path / "my/model.skops")
    samples = X.iloc[:3].rename(columns={"d": "dd"})
    samples.to_csv(tmp_path / "my/s.csv", index=False)
    (line,) = check_model(_case(), tmp_path)
    assert line.startswith("custom case 'mine', key 'samples': the feature columns of my/s.csv")
    assert (
        "['a', 'b', 'c', 'dd'] do not match the model's feature names ['a', 'b', 'c', 'd']" in line
    )
    assert "lacks ['d']" in line and "does not know ['dd']" in line
    (line,) = check_model(_case(columns=["a", "b", "c"]), tmp_path)
    assert line.startswith("custom case 'mine', key 'columns':") and "lacks ['d']" in line
    assert "does not know ['dd']" in check_model(_case(columns=["c", "b", "a", "dd"]), tmp_path)[0]
    samples.rename(columns={"dd": "d"})[SHUFFLED].to_csv(tmp_path / "my/s.csv", index=False)
    assert check_model(_case(), tmp_path) == []  # every name known, in any order
    with pytest.raises(ValueError, match=r"custom case 'mine': the feature columns .*lacks"):
        run_case(forest, samples, case=_case())


def test_xgboost_json_fitted_on_a_dataframe(table, tmp_path):
    """Refused before issue 22 with XGBoost's 'data did not contain feature names'."""
    X, y = table
    model = xgb.XGBClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    model.save_model(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    samples = X.iloc[:6][SHUFFLED]
    got = run_case(loaded, samples, case=_case(model="m.json")).table
    assert list(got["label"]) == list(model.predict(X.iloc[:6]))


def test_a_model_without_names_reads_by_position(table):
    X, y = table
    plain = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X.to_numpy(), y)
    samples = X.iloc[:4][SHUFFLED]
    got = run_case(plain, samples, case=_case()).table
    assert list(got["label"]) == list(plain.predict(samples.to_numpy()))


def test_the_figure_shows_the_interval_not_empty_bounds(table):
    X, y = table
    forest = RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0).fit(X, y)
    case = {k: v for k, v in _case(noise={"variance": 0.5}).items() if k != "max_boxes"}
    result = run_case(forest, X.iloc[:5], case=dict(case, max_boxes=0))  # no certification
    table_ = result.table
    assert (table_["lower"] == 0).all() and (table_["upper"] == 1).all()
    left = result.figure.axes[0]
    labels = [c.get_label() for c in left.collections]
    assert "certified bounds" not in labels  # [0, 1] carries no information
    (interval,) = [c for c in left.collections if c.get_label() == "95% interval"]
    segs = interval.get_segments()
    np.testing.assert_allclose([s[0][1] for s in segs], table_["ci_low"])
    np.testing.assert_allclose([s[1][1] for s in segs], table_["ci_high"])
    assert (table_["ci_high"] - table_["ci_low"] < 0.1).all()
    informative = run_case(forest, X.iloc[:5], case=_case(noise={"variance": 0.01}))
    assert "certified bounds" in [c.get_label() for c in informative.figure.axes[0].collections]


def test_a_samples_parquet_written_by_pandas_with_its_index(table, tmp_path):
    """A user's ``DataFrame.to_parquet()`` of test rows keeps their non-default index
    (``__index_level_0__``); pandas restores it as the index, and so does the custom case:
    it was read as a fifth feature column and the case refused."""
    X, y = table
    forest = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    (tmp_path / "my").mkdir()
    sio.dump(forest, tmp_path / "my/model.skops")
    test_rows = X.iloc[200:210][SHUFFLED]  # index 200..209, columns in another order
    test_rows.to_parquet(tmp_path / "my/s.parquet")
    case = _case(samples="my/s.parquet")
    check_cases([case], tmp_path)  # no error
    assert check_model(case, tmp_path) == []
    samples = read_table_file(tmp_path / "my/s.parquet")
    pd.testing.assert_frame_equal(samples, pd.read_parquet(tmp_path / "my/s.parquet"))
    got = run_case(forest, samples, case=case).table
    assert list(got["label"]) == list(forest.predict(X.iloc[200:210]))
    right = run_case(forest, X.iloc[200:210].reset_index(drop=True), case=_case()).table
    np.testing.assert_array_equal(got["estimate"], right["estimate"])


def _overlaps(boxes) -> bool:
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_the_figure_shows_every_mark_and_nothing_overlaps(table):
    """What a user saw: the legend covered a point, a y-axis from 0.70 hid a certified
    lower bound of 0, tick labels overlapped. Rendered and measured: every certified bound
    lies inside the y-range, the legend's box meets neither panel, no two tick labels of an
    axis overlap (40 samples with 4-digit row numbers)."""
    from reliquant.trees.custom import _figure

    n = 40
    rng = np.random.default_rng(0)
    est = np.clip(0.9 + 0.05 * rng.normal(size=n), 0.75, 1.0)
    lower = np.where(np.arange(n) % 5 == 0, 0.0, est - 0.05)  # certified [0, 0.99]: informative
    frame = pd.DataFrame({"row": np.arange(1000, 1000 + n), "estimate": est, "ci_low": est - 0.01,
                          "ci_high": np.minimum(est + 0.01, 1.0), "lower": lower, "upper": 0.99,
                          "exact": np.arange(n) % 7 == 0, "confidence": 0.95})  # fmt: skip
    fig = _figure(frame, {"name": "mine"})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    left, right = fig.axes
    y0, y1 = left.get_ylim()
    assert y0 < 0.0 <= lower.min() and y1 >= 1.0
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    assert not any(box.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t.get_window_extent(renderer) for t in axis.get_ticklabels() if t.get_text()]
            assert len(labels) >= 2 and not _overlaps(labels)


def test_the_table_carries_overrun_as_the_library_result_does(table, monkeypatch, tmp_path):
    """A timed case's table has the library's ``overrun`` column: empty exactly where a
    sample stayed within its allowance, and a sample over its budget says why in the table
    and the page."""
    import reliquant.trees.custom as custom
    from reliquant.core.io import read_frame, write_frame
    from reliquant.trees.anytime import budget_allowance

    X, y = table
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    timed = _case()
    for key in ("max_boxes", "max_draws"):
        timed.pop(key)
    result = run_case(forest, X.iloc[:6], case=timed | {"time_budget": 0.05})
    got = result.table
    assert "overrun" in result.schema.names and result.schema.field("overrun").type == "string"
    within = got["seconds"] <= budget_allowance(0.05)
    assert ((got["overrun"] == "") == within).all(), got[["seconds", "overrun"]]
    real = custom.robustness_batch

    def slow_second_row(*args, **kwargs):
        frame = real(*args, **kwargs)
        frame.loc[1, "overrun"] = "0.31 s for a time_budget of 0.05 s: the machine was busy"
        return frame

    monkeypatch.setattr(custom, "robustness_batch", slow_second_row)
    result = run_case(forest, X.iloc[:6], case=_case())
    assert list(result.table["overrun"]) == ["", "0.31 s for a time_budget of 0.05 s: the "
                                             "machine was busy", "", "", "", ""]  # fmt: skip
    assert "Over their time budget: 1 of 6 samples" in result.markdown
    assert "row 1: 0.31 s for a time_budget of 0.05 s" in result.markdown
    write_frame(result.table, tmp_path / "case.parquet", result.schema)  # what the rule writes
    assert list(read_frame(tmp_path / "case.parquet")["overrun"]) == list(result.table["overrun"])


def test_a_model_file_with_a_cycle_stops_the_case_before_any_job(table, tmp_path):
    """Issue 40: a skops forest whose tree 1 was edited to point back to its root ran the
    case's job until killed (its time budget ignored); it is refused when the workflow loads,
    naming the case, the key, the file, the tree and the node."""
    X, y = table
    forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    forest.estimators_[1].tree_.children_left[0] = 0
    (tmp_path / "my").mkdir()
    sio.dump(forest, tmp_path / "my/model.skops")
    X.iloc[:3].to_csv(tmp_path / "my/s.csv", index=False)
    (line,) = check_model(_case(), tmp_path)
    assert line.startswith(f"custom case 'mine', key 'model': {tmp_path / 'my/model.skops'}: ")
    assert line.endswith("tree 1, node 0: its left child is itself: a cycle"), line
    with pytest.raises(ValueError, match=r"tree 1, node 0: its left child is itself: a cycle"):
        run_case(forest, X.iloc[:3], case=_case())
