"""Robustness scores: black-box Monte Carlo against the exact tree engine, trees and NBC
wrappers against their packages, the batching's independence, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from reliquant.compare import (
    black_box_robustness,
    black_box_throughput,
    clopper_pearson_interval,
    nbc_robustness,
    tree_robustness,
)
from reliquant.nbc import fit_table
from reliquant.nbc import robustness as nbc_reference
from reliquant.trees import Gaussian, exact_robustness, extract_ensemble

VARIANCE = 0.1


@pytest.fixture(scope="module")
def forest() -> tuple[RandomForestClassifier, np.ndarray]:
    """The Table 2-like setting: 5 trees of depth 3 on Iris."""
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    return rf, X[::25]  # 6 samples across the three classes


def exact(rf, X: np.ndarray) -> np.ndarray:
    ens = extract_ensemble(rf)
    return np.array(
        [exact_robustness(ens, Gaussian(VARIANCE).bind(x, 4), x, tol=0).robustness for x in X]
    )


def test_black_box_agrees_with_exact_engine(forest) -> None:
    rf, X = forest
    ref = exact(rf, X)
    assert ref.min() < 0.9  # not a trivial all-robust case
    res = black_box_robustness(rf.predict, X, VARIANCE, n_draws=20_000, seed=1, confidence=0.999)
    assert (res.ci_low <= ref).all() and (ref <= res.ci_high).all(), (res.to_frame(), ref)
    np.testing.assert_array_equal(res.label, rf.predict(X))
    assert res.n_evaluated == 6 * 20_000
    assert np.abs(res.estimate - ref).max() < 0.02
    # the tree package's own estimate (certified, then sampled; deterministic mode) agrees too
    det = {"max_boxes": 100_000, "max_draws": 20_000}
    est = tree_robustness(rf, X, Gaussian(VARIANCE), seed=0, **det)
    np.testing.assert_allclose(est, ref, atol=1e-6)
    frame = tree_robustness(rf, X[:2], Gaussian(VARIANCE), time_budget=0.2, return_frame=True)
    assert {"estimate", "ci_low", "ci_high", "label"} <= set(frame.columns)


def test_independent_of_batching_and_common_noise(forest) -> None:
    rf, X = forest
    a = black_box_robustness(rf.predict, X, VARIANCE, n_draws=500, seed=3, batch_rows=64)
    b = black_box_robustness(rf.predict, X, VARIANCE, n_draws=500, seed=3, batch_rows=10_000)
    np.testing.assert_array_equal(a.n_agree, b.n_agree)
    other = X.copy()
    other[0] = X[-1]  # another first sample: the others' draws do not change
    c = black_box_robustness(rf.predict, other, VARIANCE, n_draws=500, seed=3, batch_rows=700)
    np.testing.assert_array_equal(a.n_agree[1:], c.n_agree[1:])
    d = black_box_robustness(rf.predict, X, VARIANCE, n_draws=500, seed=3, common_noise=True)
    e = black_box_robustness(
        rf.predict, X, VARIANCE, n_draws=500, seed=3, common_noise=True, batch_rows=77
    )
    np.testing.assert_array_equal(d.n_agree, e.n_agree)
    zero = black_box_robustness(rf.predict, X, 0.0, n_draws=10)
    assert (zero.estimate == 1).all()
    clipped = black_box_robustness(rf.predict, X, 100.0, n_draws=50, clip=(4.0, 4.5))
    assert (clipped.estimate >= 0).all()
    speed = black_box_throughput(rf.predict, X, VARIANCE, n_draws=100)
    assert speed["noisy_inputs"] == 600 and speed["inputs_per_second"] > 0


def test_clopper_pearson_matches_scipy() -> None:
    k, n = np.array([0, 3, 10, 10]), np.array([10, 10, 10, 40])
    lo, hi = clopper_pearson_interval(k, n, 0.9)
    for i in range(4):
        ci = stats.binomtest(int(k[i]), int(n[i])).proportion_ci(0.9, method="exact")
        assert lo[i] == pytest.approx(ci.low) and hi[i] == pytest.approx(ci.high)


def test_black_box_bad_input(forest) -> None:
    rf, X = forest
    with pytest.raises(ValueError, match="variance must be finite and >= 0"):
        black_box_robustness(rf.predict, X, -1.0)
    with pytest.raises(ValueError, match="does not broadcast"):
        black_box_robustness(rf.predict, X, np.ones(3))
    with pytest.raises(ValueError, match="n_draws must be an integer >= 1"):
        black_box_robustness(rf.predict, X, 0.1, n_draws=0)
    with pytest.raises(ValueError, match="predict must return one label per row"):
        black_box_robustness(rf.predict_proba, X, 0.1)
    with pytest.raises(ValueError, match="X must be finite"):
        black_box_robustness(rf.predict, np.full((2, 4), np.nan), 0.1)


def test_nbc_robustness_matches_the_package() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 3, 120), "b": rng.integers(0, 2, 120)})
    frame["y"] = (frame["a"] + rng.integers(0, 2, 120)) % 3
    fitted = fit_table(frame, "y", alpha=1.0)
    X = frame.drop(columns="y")
    out = nbc_robustness(fitted, X)
    ref = nbc_reference(fitted, X)
    np.testing.assert_array_equal(out["prediction"], ref["prediction"].to_numpy())
    np.testing.assert_allclose(out["eps_glob"], ref["eps_glob"])
    np.testing.assert_allclose(out["eps_loc"], ref["eps_loc"])


def test_black_box_on_the_mlm_cnn_images() -> None:
    torch = pytest.importorskip("torch")
    from reliquant.mlm import build_cnn, predict_softmax

    torch.manual_seed(0)
    cnn = build_cnn()

    def predict(batch: np.ndarray) -> np.ndarray:
        pre = lambda b: torch.from_numpy(b).mul(2).sub(1).unsqueeze(1)  # noqa: E731
        return predict_softmax(cnn, batch, batch_size=256, preprocess=pre).argmax(1)

    images = np.random.default_rng(0).random((3, 28, 28), dtype=np.float32)
    res = black_box_robustness(predict, images, 0.01, n_draws=100, clip=(0.0, 1.0), batch_rows=128)
    assert (
        res.estimate.shape == (3,)
        and ((res.ci_low <= res.estimate) & (res.estimate <= res.ci_high)).all()
    )
    again = black_box_robustness(predict, images, 0.01, n_draws=100, clip=(0.0, 1.0))
    np.testing.assert_array_equal(res.n_agree, again.n_agree)


def monte_carlo_in_model_order(model, frame: pd.DataFrame, variance, n: int = 20_000):
    """Independent Monte Carlo of R(x) = P(predict(x') = predict(x)), x' ~ N(x, diag(variance)),
    through the model's own predict on DataFrames in its training column order; returns the
    Clopper-Pearson interval at 0.999 per row."""
    names = list(model.feature_names_in_)
    x = frame[names].to_numpy(dtype=np.float64)
    sd = np.sqrt(np.broadcast_to(np.asarray(variance, dtype=np.float64), (len(names),)))
    rng = np.random.default_rng(12345)
    agree = []
    for row in x:
        noisy = pd.DataFrame(row + rng.standard_normal((n, len(names))) * sd, columns=names)
        clean = model.predict(pd.DataFrame(row[None], columns=names))[0]
        agree.append(int((model.predict(noisy) == clean).sum()))
    return clopper_pearson_interval(np.array(agree), n, 0.999)


def test_tree_robustness_matches_dataframe_columns_by_name() -> None:
    """Iris rows with their columns reversed were read by position (robustness about 1 for
    every row); they must give the result of the rows in the model's order, and both the
    result of an independent Monte Carlo through the model's predict."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    rf = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    rows = X.iloc[[0, 60, 120]]
    det = {"max_boxes": 100_000, "max_draws": 20_000}
    ordered = tree_robustness(rf, rows, Gaussian(0.5), seed=0, **det)
    reversed_ = tree_robustness(rf, rows[rows.columns[::-1]], Gaussian(0.5), seed=0, **det)
    np.testing.assert_array_equal(reversed_, ordered)
    lo, hi = monte_carlo_in_model_order(rf, rows, 0.5)
    assert ordered.min() < 0.9  # not a trivial all-robust case
    assert ((lo <= ordered) & (ordered <= hi)).all(), (ordered, lo, hi)
    with pytest.raises(ValueError, match="features are matched by name"):
        tree_robustness(rf, rows.rename(columns=str.upper), Gaussian(0.5), seed=0, **det)


def test_tree_robustness_xgboost_per_feature_variances_follow_the_columns() -> None:
    xgb = pytest.importorskip("xgboost")
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = xgb.XGBClassifier(n_estimators=6, max_depth=2, random_state=0).fit(X, y)
    rows = X.iloc[[0, 50, 70, 100, 120, 140]]
    variance = np.array([0.05, 0.02, 0.3, 0.1])  # in the model's (= rows') column order
    det = {"max_boxes": 100_000, "max_draws": 20_000}
    ordered = tree_robustness(model, rows, Gaussian(variance), seed=0, **det)
    flipped = rows[rows.columns[::-1]]
    named = pd.Series(variance, index=rows.columns)  # by name: matched like the columns
    got = tree_robustness(model, flipped, Gaussian(named[::-1]), seed=0, **det)
    np.testing.assert_array_equal(got, ordered)
    with pytest.raises(ValueError, match="not clear which feature each entry belongs to"):
        tree_robustness(model, flipped, Gaussian(variance[::-1]), seed=0, **det)  # plain
    lo, hi = monte_carlo_in_model_order(model, rows, variance)
    assert ordered.min() < 0.9
    assert ((lo <= ordered) & (ordered <= hi)).all(), (ordered, lo, hi)


def test_black_box_refuses_labels_that_never_equal_the_predictions(forest) -> None:
    """String labels '0', '1', '2' against integer predictions counted every draw as a change
    (robustness 0.0 for every row): a model's own ``predict`` with ``classes_`` matches them
    by value; any other ``predict`` refuses them naming both types, and a missing label."""
    rf, X = forest
    right = black_box_robustness(rf.predict, X, VARIANCE, n_draws=300, seed=2)
    assert right.estimate.min() > 0
    as_strings = rf.predict(X).astype(int).astype(str)
    for labels in (rf.predict(X).tolist(), as_strings, rf.predict(X).astype(np.float64)):
        given = black_box_robustness(rf.predict, X, VARIANCE, n_draws=300, seed=2, labels=labels)
        np.testing.assert_array_equal(given.n_agree, right.n_agree)
    with pytest.raises(ValueError, match=r"labels hold strings \(dtype <U\d+\) but predict "
                                         r"returns numbers \(dtype int64\)"):  # fmt: skip
        black_box_robustness(lambda b: rf.predict(b), X, VARIANCE, n_draws=300, labels=as_strings)
    missing = rf.predict(X).astype(np.float64)
    missing[5] = np.nan
    with pytest.raises(ValueError, match=r"labels: row 5 has no label"):
        black_box_robustness(lambda b: rf.predict(b), X, VARIANCE, n_draws=300, labels=missing)
    with pytest.raises(ValueError, match=r"labels: row 5 has no label"):
        black_box_robustness(rf.predict, X, VARIANCE, n_draws=300, labels=missing)
    with pytest.raises(ValueError, match=r"labels: row 0 holds 7, which is none of the classes "
                                         r"\[0, 1, 2\]"):  # fmt: skip
        black_box_robustness(rf.predict, X, VARIANCE, n_draws=300, labels=np.full(len(X), 7))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"batch_rows": 2.5}, TypeError, r"batch_rows must be an integer >= 1; got 2.5 \(float\)"),
        ({"batch_rows": np.nan}, TypeError, r"batch_rows must be an integer >= 1; got nan"),
        ({"confidence": "0.95"}, TypeError, r"confidence must be a finite number > 0 and < 1"),
        ({"seed": None}, TypeError, r"seed must be an integer >= 0; got None \(NoneType\)"),
        ({"seed": 1.5}, TypeError, r"seed must be an integer >= 0; got 1.5 \(float\)"),
        ({"n_draws": 0}, ValueError, r"n_draws must be an integer >= 1; got 0"),
    ],
)
def test_black_box_arguments_are_named(forest, kwargs, error, message) -> None:
    rf, X = forest
    with pytest.raises(error, match=message):
        black_box_robustness(rf.predict, X, VARIANCE, **{"n_draws": 10, **kwargs})


def test_tree_robustness_arguments_are_named(forest) -> None:
    rf, X = forest
    with pytest.raises(TypeError, match=r"seed must be an integer >= 0; got None"):
        tree_robustness(rf, X, Gaussian(VARIANCE), seed=None)
    with pytest.raises(TypeError, match=r"time_budget must be a finite number > 0; got '1'"):
        tree_robustness(rf, X, Gaussian(VARIANCE), time_budget="1")


def test_tree_robustness_scores_each_row_once_within_its_budget(monkeypatch) -> None:
    """Rows whose certification used the whole budget used to be rerun silently with four
    times the budget (``seconds`` showing the last attempt only): now each row is one call
    of ``robustness``, and the whole call keeps ``n`` budgets plus the tolerance or says why
    not. Checked through the library's own accounting (``seconds``, ``overrun``), never
    against the wall clock of a possibly busy machine."""
    from sklearn.datasets import load_digits

    import reliquant.trees.anytime as anytime
    from reliquant.trees.anytime import budget_allowance

    X, y = load_digits(return_X_y=True)
    model = RandomForestClassifier(100, random_state=0).fit(X[:1200] / 16, y[:1200])
    calls = []
    real = anytime.robustness
    monkeypatch.setattr(anytime, "robustness", lambda *a, **k: calls.append(1) or real(*a, **k))
    frame = tree_robustness(model, X[1200:1215] / 16, Gaussian(0.01), time_budget=0.1,
                            return_frame=True)  # fmt: skip
    assert len(calls) == 15 and frame["estimate"].notna().all() and (frame["n_draws"] > 0).all()
    # each row's seconds is its one call, inside the batch's: a lost attempt would show
    assert frame["seconds"].sum() <= frame.attrs["seconds"]
    whole = budget_allowance(15 * 0.1)
    assert (frame.attrs["overrun"] != "") == (frame.attrs["seconds"] > whole), frame.attrs
    assert ((frame["seconds"] <= budget_allowance(0.1)) | (frame["overrun"] != "")).all()
    # the batch's budget, and each row's own (cut to at least half while the batch is late)
    assert frame.attrs["budget"] == "time_budget=0.1 s"
    budgets = frame["budget"].str.extract(r"^time_budget=([\d.]+) s$")[0].astype(float)
    assert budgets.between(0.05, 0.1).all(), frame["budget"]


def test_tree_robustness_is_reproducible_by_default(forest) -> None:
    """Two identical calls without a time budget give identical numbers (a fixed draw budget
    per row, named in the result); the timed mode says it is one."""
    from reliquant.compare.robustness_scores import SCORE_MAX_BOXES, SCORE_MAX_DRAWS

    rf, X = forest
    a = tree_robustness(rf, X, Gaussian(0.5), seed=4, return_frame=True)
    b = tree_robustness(rf, X, Gaussian(0.5), seed=4, return_frame=True)
    cols = ["estimate", "ci_low", "ci_high", "lower", "upper", "n_draws", "status"]
    pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=True)
    named = f"max_boxes={SCORE_MAX_BOXES}, max_draws={SCORE_MAX_DRAWS}"
    assert a.attrs["budget"] == named and (a["budget"] == named).all()
    assert (a["n_draws"] <= SCORE_MAX_DRAWS).all() and (
        a["n_boxes"] <= max(SCORE_MAX_BOXES, 1)
    ).all()
    other = tree_robustness(rf, X, Gaussian(0.5), seed=5)
    assert not np.array_equal(other, a["estimate"].to_numpy())  # the seed draws the noise
