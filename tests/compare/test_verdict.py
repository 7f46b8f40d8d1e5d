"""which_score: the ranked table, the best robustness score against the best uncertainty
score cross-fitted (each group, or fold of the predictions, judged by the picks made without
it), the t-interval over the units, the verdict, the sentence, the plot, the traps a user
hits; checked against brute force and scipy."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from scipy import stats  # noqa: E402

from reliquant.compare import (  # noqa: E402
    JUDGED_COLUMNS,
    SCORE_FAMILY,
    SCORE_VERDICTS,
    VERDICT_COLUMNS,
    accuracy_rejection_curve,
    paired_t,
    plot_accuracy_rejection,
    probability_scores,
    which_score,
)
from reliquant.compare.reproduction import evaluation, tables  # noqa: E402


def brute_curve(score: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Accuracy of the ``n - k`` highest scores, ``k = 0..n-1``, by sorting (scores without
    ties between different predictions: copies of one prediction may tie, they are alike)."""
    c = np.asarray(correct, dtype=float)[np.argsort(-np.asarray(score), kind="stable")]
    n = c.size
    return np.array([c[: n - k].mean() for k in range(n)])


def brute_auarc(score: np.ndarray, correct: np.ndarray) -> float:
    return float(brute_curve(score, correct).mean())


def _data(n_groups: int = 8, n: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    size = n_groups * n
    groups = np.repeat(np.arange(n_groups) * 10 + 3, n)  # labels need not be 0..G-1
    correct = rng.random(size) < 0.75
    scores = {
        "mc_robustness": correct + rng.normal(0, 0.9, size),
        "log_ratio": correct + rng.normal(0, 1.2, size),
        "max_probability": correct + rng.normal(0, 1.0, size),
        "margin": correct + rng.normal(0, 1.1, size),
    }
    return scores, correct, groups


def brute_cross_fit(per: dict, labels, fold_of: dict, rob: list, unc: list):
    """Leave-out picks by brute force: for each unit, each family's best mean AU-ARC over
    the units of the other folds; returns ``{unit: (r, u, d)}``."""
    out = {}
    for g in labels:
        rest = [h for h in labels if fold_of[h] != fold_of[g]]
        r = max(rob, key=lambda k: np.mean([per[k][h] for h in rest]))
        u = max(unc, key=lambda k: np.mean([per[k][h] for h in rest]))
        out[g] = (r, u, per[r][g] - per[u][g])
    return out


def test_groups_verdict_is_a_cross_fitted_t_test_over_every_group():
    """Leave one group out: each group judged by the picks on the other seven, the paired
    t-interval over all eight (scipy), 7 degrees of freedom, in the sentence too."""
    scores, correct, groups = _data()
    v = which_score(scores, correct, groups=groups, confidence=0.9, seed=3)
    labels = np.unique(groups)
    assert (v.n_units, v.n_folds, v.dof, v.method) == (8, 8, 7, "groups")
    per = {k: {g: brute_auarc(s[groups == g], correct[groups == g]) for g in labels}
           for k, s in scores.items()}  # fmt: skip
    fit = brute_cross_fit(per, labels, {g: g for g in labels}, ["mc_robustness"],
                          ["max_probability", "margin"])  # fmt: skip
    d = np.array([fit[g][2] for g in labels])
    lo, hi = stats.t.interval(0.9, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert v.diff == pytest.approx(d.mean(), abs=1e-12)
    assert (v.ci_low, v.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    assert v.p_value == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)
    expected = ("undecided" if v.p_value >= 0.1
                else "robustness better" if d.mean() > 0 else "uncertainty better")  # fmt: skip
    assert v.verdict == expected
    assert "7 degrees of freedom" in v.recommendation and "8 groups" in v.recommendation
    judged = v.judged.set_index("unit")
    assert list(judged.index) == list(labels)  # every group once, by label
    for g in labels:
        assert tuple(judged.loc[g, ["robustness", "uncertainty"]]) == fit[g][:2]
        assert judged.loc[g, "diff"] == pytest.approx(fit[g][2], abs=1e-12)
        assert judged.loc[g, "n"] == (groups == g).sum()
    # the scores named: each family's best on all groups (the log-ratio stands aside)
    means = {k: np.mean(list(per[k].values())) for k in scores}
    assert v.robustness == "mc_robustness"
    assert v.uncertainty == max(("max_probability", "margin"), key=means.get)
    # the table: every score on all groups, mean AU-ARC and its t-interval, best first
    t = v.table
    assert list(t.columns) == list(VERDICT_COLUMNS)
    assert list(t["score"]) == sorted(scores, key=means.get, reverse=True)
    for row in t.itertuples(index=False):
        a = np.array(list(per[row.score].values()))
        lo, hi = stats.t.interval(0.9, a.size - 1, loc=a.mean(), scale=stats.sem(a))
        assert (row.auarc, row.ci_low, row.ci_high) == pytest.approx((a.mean(), lo, hi), abs=1e-12)
        assert row.family == SCORE_FAMILY[row.score]
        assert row.picked == (row.score in (v.robustness, v.uncertainty))
        n_picked = sum(fit[g][0] == row.score or fit[g][1] == row.score for g in labels)
        assert row.folds_picked == n_picked
    best = np.array(list(per[t["score"].iloc[0]].values()))
    worst = np.array(list(per[t["score"].iloc[-1]].values()))
    dw = worst - best
    lo, hi = stats.t.interval(0.9, dw.size - 1, loc=dw.mean(), scale=stats.sem(dw))
    assert (t["diff_vs_best"].iloc[-1], t["diff_ci_low"].iloc[-1], t["diff_ci_high"].iloc[-1]) \
        == pytest.approx((dw.mean(), lo, hi), abs=1e-12)  # fmt: skip
    assert t["diff_vs_best"].iloc[0] == 0.0
    # leave one group out draws nothing: another seed, the same answer
    other = which_score(scores, correct, groups=groups, confidence=0.9, seed=11)
    assert other.recommendation == v.recommendation
    pd.testing.assert_frame_equal(other.table, v.table, check_exact=True)


def test_every_group_is_judged_exactly_once_by_picks_made_without_its_fold():
    """Eight groups in three folds: each group appears once in ``judged``, with its fold's
    picks, which brute force makes on the groups of the other two folds only."""
    scores, correct, groups = _data(seed=5)
    v = which_score(scores, correct, groups=groups, folds=3, seed=2)
    labels = np.unique(groups)
    assert sorted(v.judged["unit"]) == list(labels) and v.judged["unit"].is_unique
    assert (v.n_units, v.n_folds, v.dof) == (8, 3, 7)
    fold_of = dict(zip(v.judged["unit"], v.judged["fold"], strict=True))
    assert sorted(np.bincount(list(fold_of.values()))) == [2, 3, 3]  # dealt evenly
    for g in labels:  # a prediction's fold is its group's
        assert set(v.fold[groups == g]) == {fold_of[g]}
    per = {k: {g: brute_auarc(s[groups == g], correct[groups == g]) for g in labels}
           for k, s in scores.items()}  # fmt: skip
    fit = brute_cross_fit(per, labels, fold_of, ["mc_robustness"], ["max_probability", "margin"])
    judged = v.judged.set_index("unit")
    for g in labels:
        assert tuple(judged.loc[g, ["robustness", "uncertainty"]]) == fit[g][:2]
    d = np.array([fit[g][2] for g in labels])
    assert v.diff == pytest.approx(d.mean(), abs=1e-12)
    assert "8 groups in 3 folds" in v.recommendation


def test_without_groups_ten_deals_of_ten_folds_are_judged_and_averaged():
    """The predictions sorted on their contents, dealt into 10 folds 10 times (the streams the
    docstring names); every fold of every deal judged by the picks on its other folds; the
    mean of the differences and the mean of the deals' variances (t, 9 degrees of
    freedom)."""
    from reliquant.core.seeding import block_rng

    rng = np.random.default_rng(1)
    n = 400
    correct = rng.random(n) < 0.7
    scores = {"mc_robustness": correct + rng.normal(0, 0.8, n),
              "max_probability": correct + rng.normal(0, 1.0, n),
              "margin": correct + rng.normal(0, 1.2, n)}  # fmt: skip
    v = which_score(scores, correct, n_boot=40, confidence=0.9, seed=5)
    assert (v.method, v.n_units, v.n_folds, v.n_deals, v.dof) == ("folds", 10, 10, 10, 9)
    order = np.lexsort([correct.astype(np.int8), *[scores[k] for k in reversed(scores)]])
    labels, diffs = np.arange(10), []
    for deal in range(10):
        canon = np.empty(n, dtype=int)
        canon[block_rng(5, "which_score", "folds", deal).permutation(n)] = np.arange(n) % 10
        fold = np.empty(n, dtype=int)
        fold[order] = canon
        if deal == 0:
            assert np.array_equal(v.fold, fold) and sorted(np.bincount(fold)) == [40] * 10
        per = {k: {f: brute_auarc(s[fold == f], correct[fold == f]) for f in labels}
               for k, s in scores.items()}  # fmt: skip
        fit = brute_cross_fit(per, labels, {f: f for f in labels}, ["mc_robustness"],
                              ["max_probability", "margin"])  # fmt: skip
        rows = v.judged[v.judged["deal"] == deal].set_index("unit")
        for f in labels:
            assert tuple(rows.loc[f, ["robustness", "uncertainty"]]) == fit[f][:2]
            assert rows.loc[f, "diff"] == pytest.approx(fit[f][2], abs=1e-12)
        diffs.append([fit[f][2] for f in labels])
    d = np.array(diffs)
    se = np.sqrt(d.var(axis=1, ddof=1).mean() / 10)
    half = stats.t.ppf(0.95, 9) * se
    assert (v.diff, v.ci_low, v.ci_high) == pytest.approx(
        (d.mean(), d.mean() - half, d.mean() + half), abs=1e-12
    )
    assert v.p_value == pytest.approx(2 * stats.t.sf(abs(d.mean()) / se, 9), rel=1e-9)
    assert "test predictions only" in v.recommendation and "groups=" in v.recommendation
    assert "10 folds of the predictions dealt 10 times" in v.recommendation
    assert "9 degrees of freedom" in v.recommendation
    # the ranked table: compare_scores on all predictions (in the order of their contents)
    from reliquant.compare import compare_scores

    ranked = compare_scores({k: s[order] for k, s in scores.items()}, correct[order],
                            n_boot=40, confidence=0.9, seed=5).set_index("score")  # fmt: skip
    table = v.table.set_index("score")
    for k in scores:
        assert table.loc[k, "auarc"] == pytest.approx(brute_auarc(scores[k], correct), abs=1e-12)
        assert table.loc[k, "ci_low"] == ranked.loc[k, "ci_low"]
        assert table.loc[k, "diff_ci_high"] == ranked.loc[k, "diff_ci_high"]


@pytest.mark.parametrize("with_groups", [False, True])
def test_the_comparator_is_picked_without_the_unit_it_judges(with_groups):
    """max_probability is nearly perfect everywhere but on one unit, where it is noise;
    margin is mediocre everywhere. The fold of that unit picks max_probability (on the
    others) and is judged by it: its difference shows the noise."""
    rng = np.random.default_rng(2)
    n = 600
    correct = rng.random(n) < 0.7
    groups = np.repeat(np.arange(6), n // 6) if with_groups else None
    base = {"mc_robustness": correct + rng.normal(0, 0.7, n)}
    # the first score's values are distinct, so they alone fix the rows' order and the folds
    fold = which_score({**base, "max_probability": rng.random(n)}, correct, groups=groups,
                       n_boot=40, seed=7).fold  # fmt: skip
    bad = fold == 0
    noise = rng.normal(0, 1, n)
    trial = {**base, "max_probability": np.where(bad, noise, correct + 0.05 * noise),
             "margin": correct + 1.0 * noise}  # fmt: skip
    v = which_score(trial, correct, groups=groups, n_boot=40, seed=7)
    assert np.array_equal(v.fold, fold)
    assert v.uncertainty == "max_probability"
    row = v.judged[v.judged["deal"] == 0].set_index("fold").loc[0]
    assert row["uncertainty"] == "max_probability"  # picked on the units where it shines
    on_bad = brute_auarc(trial["max_probability"][bad], correct[bad])
    assert row["auarc_uncertainty"] == pytest.approx(on_bad, abs=1e-12)
    assert on_bad < brute_auarc(trial["margin"][bad], correct[bad])  # margin did better there
    assert row["auarc_robustness"] == pytest.approx(
        brute_auarc(trial["mc_robustness"][bad], correct[bad]), abs=1e-12
    )


def _two_class(n: int = 300, seed: int = 4):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([1, 1], n)
    sc = probability_scores(p)
    correct = sc.pop("prediction").to_numpy() == (rng.random(n) < p[:, 1])
    return sc, correct


@pytest.mark.parametrize(
    ("pair", "families"),
    [(("log_ratio", "max_probability"), None),
     (("max_probability", "margin"), {"margin": "robustness"})],
)  # fmt: skip
def test_two_class_scores_that_rank_alike_say_identical_ranking(pair, families):
    sc, correct = _two_class()
    v = which_score(sc[list(pair)], correct, families=families, n_boot=40)
    assert v.verdict == "identical ranking"
    assert v.diff == 0.0 and v.ci_low == 0.0 and v.ci_high == 0.0
    assert "use either" in v.recommendation
    # three classes: log-ratio and margin order differently, a real comparison
    rng = np.random.default_rng(5)
    p3 = probability_scores(rng.dirichlet([1, 1, 1], 300))
    c3 = p3.pop("prediction").to_numpy() == rng.integers(0, 3, 300)
    v3 = which_score(p3[["log_ratio", "margin"]], c3, n_boot=40)
    assert v3.verdict != "identical ranking"


def test_a_score_without_a_family_is_refused_with_the_fix():
    rng = np.random.default_rng(0)
    correct = rng.random(50) < 0.8
    mine = {"my_score": rng.random(50), "max_probability": rng.random(50)}
    with pytest.raises(ValueError, match=r"'my_score' has no known family.*families=\{'my_score'"):
        which_score(mine, correct)
    v = which_score(mine, correct, families={"my_score": "robustness"}, n_boot=40)
    assert v.table.set_index("score").loc["my_score", "family"] == "robustness"
    with pytest.raises(ValueError, match="negative_entropy"):
        which_score({"entropy": rng.random(50), "margin": rng.random(50)}, correct)
    with pytest.raises(ValueError, match=r"\['my_scor'\], not among the scores"):
        which_score(mine, correct, families={"my_scor": "robustness"})
    with pytest.raises(ValueError, match="'robust'"):
        which_score(mine, correct, families={"my_score": "robust"})


def test_one_family_only_gives_no_comparison_and_still_the_table():
    scores, correct, _ = _data()
    only = {k: scores[k] for k in ("max_probability", "margin")}
    v = which_score(only, correct, n_boot=40)
    assert v.verdict == "no comparison" and "no robustness score" in v.reason
    assert v.robustness is None and v.uncertainty is None  # nothing compared
    assert set(v.table["score"]) == set(only) and not v.table["picked"].any()
    assert np.isnan(v.diff)
    best = max(only, key=lambda k: brute_auarc(only[k], correct))
    assert v.table["score"].iloc[0] == best and best in v.recommendation


def test_bad_groups_folds_and_resamples_are_refused():
    scores, correct, groups = _data()
    with pytest.raises(ValueError, match="2 distinct group"):
        which_score(scores, correct, groups=groups < 20)
    with pytest.raises(ValueError, match="n_boot=10 is too few"):
        which_score(scores, correct, n_boot=10)
    with pytest.raises(ValueError, match="groups must give one group per prediction"):
        which_score(scores, correct, groups=groups[:-1])
    with pytest.raises(ValueError, match="folds=9 is more than the 8 groups"):
        which_score(scores, correct, groups=groups, folds=9)
    with pytest.raises(ValueError, match="folds must be an integer >= 3"):
        which_score(scores, correct, folds=2)


def test_two_predictions_are_refused_not_called_identical():
    """The user's trap: two predictions used to answer "identical ranking ... AU-ARC 1.000
    each ... use either"; a fold of the predictions needs two of them."""
    s = {"mc_robustness": np.array([0.1, 0.9]), "max_probability": np.array([0.3, 0.2])}
    with pytest.raises(ValueError, match=r"2 prediction\(s\) cannot fill 10 folds.*at least 6"):
        which_score(s, np.array([True, False]))
    with pytest.raises(ValueError, match="2 distinct group"):
        which_score(s, np.array([True, False]), groups=np.array(["a", "b"]))


def test_one_prediction_per_group_is_refused_naming_the_mistake():
    """groups= given the row ids (one prediction each) made every score tie on every group."""
    rng = np.random.default_rng(0)
    n = 60
    correct = rng.random(n) < 0.7
    s = {"mc_robustness": correct + rng.normal(0, 1, n), "max_probability": rng.random(n)}
    with pytest.raises(ValueError, match=r"60 group\(s\) of a single prediction \(e.g. 0\)"):
        which_score(s, correct, groups=np.arange(n))
    groups = np.r_[np.repeat([1, 2, 3, 4, 5], 11), 6, 7, 8, 9, 10]
    with pytest.raises(ValueError, match=r"5 group\(s\) of a single prediction \(e.g. 6\)"):
        which_score(s, correct, groups=groups)


def test_few_groups_warn_and_all_right_predictions_say_no_comparison():
    rng = np.random.default_rng(3)
    n = 80
    correct = rng.random(n) < 0.7
    s = {"mc_robustness": correct + rng.normal(0, 1, n), "max_probability": rng.random(n)}
    with pytest.warns(UserWarning, match="groups has 4 distinct groups: 4 units give a "
                                         "t-interval with 3 degrees of freedom"):  # fmt: skip
        v = which_score(s, correct, groups=np.arange(n) % 4)
    assert v.dof == 3 and v.verdict in SCORE_VERDICTS
    with pytest.warns(UserWarning, match="only right or only wrong predictions"):
        v = which_score(s, np.ones(n, dtype=bool), groups=np.arange(n) % 6)
    assert v.verdict == "no comparison" and "no score can be told apart" in v.recommendation
    assert "identical" not in v.recommendation and "use either" not in v.recommendation
    assert list(v.judged.columns) == list(JUDGED_COLUMNS) and len(v.judged) == 6


def test_interval_bounds_stay_inside_the_range_of_an_auarc():
    """Three groups with AU-ARCs near 1: the t-interval of the mean reaches past 1 (the
    user's 1.000288); the table clips it to [0, 1], the difference to [-1, 1]."""
    rng = np.random.default_rng(4)
    groups = np.repeat(["g1", "g2", "g3"], 40)
    correct = rng.random(120) < 0.9
    perfect = correct + 0.01 * rng.random(120)
    noisy = perfect + np.where(groups == "g3", rng.normal(0, 2, 120), 0)
    s = {"mc_robustness": noisy, "max_probability": perfect}
    with pytest.warns(UserWarning, match="3 degrees|2 degrees"):
        v = which_score(s, correct, groups=groups)
    per = [brute_auarc(noisy[groups == g], correct[groups == g]) for g in ("g1", "g2", "g3")]
    raw = stats.t.interval(0.95, 2, loc=np.mean(per), scale=stats.sem(per))
    assert raw[1] > 1 and raw[0] < 1  # the case is what it claims
    row = v.table.set_index("score").loc["mc_robustness"]
    assert row["ci_high"] == 1.0 and row["ci_low"] == pytest.approx(raw[0], abs=1e-12)
    assert (v.table[["ci_low", "ci_high"]].to_numpy() <= 1.0).all()
    assert (v.table[["diff_ci_low", "diff_ci_high"]].abs().to_numpy() <= 1.0).all()
    assert -1.0 <= v.ci_low <= v.ci_high <= 1.0
    text = repr(v)
    assert "AU-ARC (all): on all predictions (mean over groups)" in text
    assert "held out" in text and "held-out AU-ARC" in v.recommendation


def test_pandas_inputs_are_matched_by_index_label():
    scores, correct, groups = _data(n_groups=5, n=30)
    n = correct.size
    frame = pd.DataFrame(scores, index=[f"row{i}" for i in range(n)])
    order = np.random.default_rng(3).permutation(n)
    c = pd.Series(correct, index=frame.index)[frame.index[order]]  # another order
    g = pd.Series(groups, index=frame.index)[frame.index[order[::-1]]]  # a third one
    got = which_score(frame, c, groups=g, seed=1)
    want = which_score({k: v[order] for k, v in scores.items()}, correct[order],
                       groups=groups[order], seed=1)  # fmt: skip
    pd.testing.assert_frame_equal(got.table, want.table, check_exact=True)
    assert (got.robustness, got.uncertainty, got.diff) == (want.robustness, want.uncertainty,
                                                           want.diff)  # fmt: skip
    with pytest.raises(ValueError, match="groups and correct hold different index labels"):
        which_score(frame, c, groups=g.rename(lambda s: s + "x"))


def test_plot_draws_one_line_per_score_and_the_band_over_groups():
    scores, correct, groups = _data(n_groups=5, n=30)
    v = which_score(scores, correct, groups=groups, seed=2, curve_points=20)
    ax = v.plot()
    lines = ax.get_lines()
    assert len(lines) == len(scores)
    grid = np.arange(20) / 20
    labels = np.unique(groups)
    per = {}
    for name, s in scores.items():
        curves = []
        for gl in labels:
            m = groups == gl
            full = brute_curve(s[m], correct[m])
            curves.append(full[np.floor(grid * m.sum() + 1e-9).astype(int)])
        per[name] = np.array(curves)
    for line in lines:
        name = line.get_label().split(" ")[0]
        np.testing.assert_allclose(line.get_xdata(), grid, atol=0)
        np.testing.assert_allclose(line.get_ydata(), per[name].mean(axis=0), atol=1e-12)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # the two compared
    t = stats.t.ppf(0.975, len(labels) - 1)
    compared = [s for s in v.table["score"] if s in (v.robustness, v.uncertainty)]  # drawn order
    for name, band in zip(compared, bands, strict=True):
        mean, sd = per[name].mean(axis=0), per[name].std(axis=0, ddof=1)
        half = t * sd / np.sqrt(len(labels))
        lo, hi = np.clip(mean - half, 0, 1), np.clip(mean + half, 0, 1)
        ys = band.get_paths()[0].vertices[:, 1]
        assert ys.min() == pytest.approx(lo.min(), abs=1e-12)
        assert ys.max() == pytest.approx(hi.max(), abs=1e-12)
        assert np.all(np.isclose(ys[:, None], np.r_[lo, hi][None, :], atol=1e-12).any(axis=1))
    assert len([c for c in v.plot(bands="all").collections if isinstance(c, PolyCollection)]) == 4
    plt.close("all")
    text = repr(v)
    assert v.recommendation in text and all(s in text for s in scores)
    assert "<table" in v._repr_html_()


def test_plot_accuracy_rejection_draws_the_arrays_it_is_given():
    rng = np.random.default_rng(6)
    correct = rng.random(80) < 0.6
    curves = {k: accuracy_rejection_curve(correct + rng.normal(0, 1, 80), correct)
              for k in ("a", "b")}  # fmt: skip
    band = (curves["a"][1] - 0.05, curves["a"][1] + 0.05)
    fig, ax = plt.subplots()
    assert plot_accuracy_rejection(curves, bands={"a": band}, ax=ax) is ax
    for line, (x, y) in zip(ax.get_lines(), curves.values(), strict=True):
        assert np.array_equal(line.get_xdata(), x) and np.array_equal(line.get_ydata(), y)
    (poly,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    ys = poly.get_paths()[0].vertices[:, 1]
    assert ys.max() == pytest.approx(band[1].max()) and ys.min() == pytest.approx(band[0].min())
    with pytest.raises(ValueError, match="bands \\['c'\\] have no curve"):
        plot_accuracy_rejection(curves, bands={"c": band})
    with pytest.raises(ValueError, match="curves\\['a'\\]"):
        plot_accuracy_rejection({"a": (np.arange(3), np.arange(4))})
    plt.close("all")


def test_the_workflow_uses_the_public_code():
    """One t-interval, one verdict rule, one family mapping: the compare topic's evaluation
    and tables read the library's."""
    assert evaluation.paired_t is paired_t
    assert tables.SCORE_FAMILY is SCORE_FAMILY
    assert evaluation.identical_ranking is which_score.__globals__["identical_ranking"]


def test_groups_are_compared_by_value():
    """Group labels spelled 13, 13.0 and "13" (splits read from files of other types) are one
    group: the verdict equals that of the integer labels; a missing group is refused."""
    scores, correct, groups = _data(n_groups=5, n=30)
    want = which_score(scores, correct, groups=groups, seed=1)
    mixed = groups.astype(object)
    mixed[1::3] = groups[1::3].astype(np.float64)
    mixed[2::3] = groups[2::3].astype(str)
    got = which_score(scores, correct, groups=mixed, seed=1)
    pd.testing.assert_frame_equal(got.table, want.table, check_exact=True)
    assert (got.robustness, got.uncertainty, got.diff) == (want.robustness, want.uncertainty,
                                                           want.diff)  # fmt: skip
    mixed[7] = ""
    with pytest.raises(ValueError, match="groups: row 7 has no label"):
        which_score(scores, correct, groups=mixed, seed=1)
