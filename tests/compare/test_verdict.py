"""which_score: the ranked table, the best robustness score against the best uncertainty
score picked on the selection part and judged on the rest, its interval (t over groups,
bootstrap over predictions), the verdict, the sentence, the plot; checked against brute force
and scipy."""

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
    SCORE_FAMILY,
    VERDICT_COLUMNS,
    accuracy_rejection_curve,
    paired_t,
    plot_accuracy_rejection,
    probability_scores,
    which_score,
)
from reliquant.compare.reproduction import evaluation, tables  # noqa: E402
from reliquant.core.seeding import block_rng  # noqa: E402


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


def test_groups_verdict_is_scipys_t_interval_of_the_per_group_auarc_differences():
    scores, correct, groups = _data()
    v = which_score(scores, correct, groups=groups, confidence=0.9, seed=3)
    labels = np.unique(groups)
    sel = np.unique(groups[v.selected])
    judged = np.unique(groups[~v.selected])
    assert len(sel) == 4 and len(judged) == 4 and set(sel).isdisjoint(judged)
    assert (v.n_selection, v.n_judged, v.method) == (4, 4, "groups")
    per = {k: {g: brute_auarc(s[groups == g], correct[groups == g]) for g in labels}
           for k, s in scores.items()}  # fmt: skip
    on_sel = {k: np.mean([per[k][g] for g in sel]) for k in scores}
    r = max(("mc_robustness", "log_ratio"), key=on_sel.get)
    u = max(("max_probability", "margin"), key=on_sel.get)
    assert (v.robustness, v.uncertainty) == (r, u)
    d = np.array([per[r][g] - per[u][g] for g in judged])
    lo, hi = stats.t.interval(0.9, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert v.diff == pytest.approx(d.mean(), abs=1e-12)
    assert (v.ci_low, v.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    assert v.p_value == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)
    expected = ("undecided" if v.p_value >= 0.1
                else "robustness better" if d.mean() > 0 else "uncertainty better")  # fmt: skip
    assert v.verdict == expected
    # the table: every score on all groups, mean AU-ARC and its t-interval, best first
    t = v.table
    assert list(t.columns) == list(VERDICT_COLUMNS)
    means = {k: np.mean(list(per[k].values())) for k in scores}
    assert list(t["score"]) == sorted(scores, key=means.get, reverse=True)
    for row in t.itertuples(index=False):
        a = np.array(list(per[row.score].values()))
        lo, hi = stats.t.interval(0.9, a.size - 1, loc=a.mean(), scale=stats.sem(a))
        assert (row.auarc, row.ci_low, row.ci_high) == pytest.approx((a.mean(), lo, hi), abs=1e-12)
        assert row.family == SCORE_FAMILY[row.score]
        assert row.picked == (row.score in (r, u))
        assert row.auarc_selection == pytest.approx(on_sel[row.score], abs=1e-12)
    best = np.array(list(per[t["score"].iloc[0]].values()))
    worst = np.array(list(per[t["score"].iloc[-1]].values()))
    dw = worst - best
    lo, hi = stats.t.interval(0.9, dw.size - 1, loc=dw.mean(), scale=stats.sem(dw))
    assert (t["diff_vs_best"].iloc[-1], t["diff_ci_low"].iloc[-1], t["diff_ci_high"].iloc[-1]) \
        == pytest.approx((dw.mean(), lo, hi), abs=1e-12)  # fmt: skip
    assert t["diff_vs_best"].iloc[0] == 0.0


def test_bootstrap_interval_is_a_brute_force_resample_loop():
    rng = np.random.default_rng(1)
    correct = rng.random(60) < 0.7
    scores = {"mc_robustness": correct + rng.normal(0, 0.8, 60),
              "max_probability": correct + rng.normal(0, 1.0, 60)}  # fmt: skip
    v = which_score(scores, correct, n_boot=40, confidence=0.9, seed=5)
    rows = np.flatnonzero(~v.selected)
    assert v.method == "bootstrap" and rows.size == v.n_judged == 30
    r, u, c = scores["mc_robustness"][rows], scores["max_probability"][rows], correct[rows]
    # the resamples bootstrap_auarc documents: row b of integers(0, m, size=(n_boot, m))
    idx = block_rng(5, "compare_bootstrap").integers(0, rows.size, size=(40, rows.size))
    d = [brute_auarc(r[i], c[i]) - brute_auarc(u[i], c[i]) for i in idx]
    assert (v.ci_low, v.ci_high) == pytest.approx(tuple(np.quantile(d, [0.05, 0.95])), abs=1e-12)
    assert v.diff == pytest.approx(brute_auarc(r, c) - brute_auarc(u, c), abs=1e-12)
    assert np.isnan(v.p_value)
    assert "test predictions only" in v.recommendation and "groups=" in v.recommendation


@pytest.mark.parametrize("with_groups", [False, True])
def test_the_comparator_is_picked_on_the_selection_part_only(with_groups):
    """max_probability is nearly perfect on the selection part and noise elsewhere; margin
    is the better one on all predictions. The pick must be max_probability."""
    rng = np.random.default_rng(2)
    n = 240
    correct = rng.random(n) < 0.7
    groups = np.repeat(np.arange(6), n // 6) if with_groups else None
    probe = {"mc_robustness": rng.random(n), "max_probability": rng.random(n)}
    sel = which_score(probe, correct, groups=groups, n_boot=40, seed=7).selected  # score-free
    noise = rng.normal(0, 1, n)
    scores = {
        "mc_robustness": correct + rng.normal(0, 0.7, n),
        "max_probability": np.where(sel, correct + 0.05 * noise, noise),
        "margin": np.where(sel, correct + 1.0 * noise, correct + 0.05 * noise),
    }
    v = which_score(scores, correct, groups=groups, n_boot=40, seed=7)
    assert np.array_equal(v.selected, sel)
    on_all = {k: brute_auarc(s, correct) for k, s in scores.items()}
    on_sel = {k: brute_auarc(s[sel], correct[sel]) for k, s in scores.items()}
    assert on_all["margin"] > on_all["max_probability"]  # the case is what it claims
    assert on_sel["max_probability"] > on_sel["margin"]
    assert v.uncertainty == "max_probability" and v.robustness == "mc_robustness"
    table = v.table.set_index("score")
    assert table.loc["margin", "auarc"] > table.loc["max_probability", "auarc"]
    assert bool(table.loc["max_probability", "picked"]) and not table.loc["margin", "picked"]
    judged = ~sel
    if not with_groups:
        expect = brute_auarc(scores["mc_robustness"][judged], correct[judged]) - brute_auarc(
            scores["max_probability"][judged], correct[judged]
        )
        assert v.diff == pytest.approx(expect, abs=1e-12)
        assert v.verdict == "robustness better"  # the noise part judges max_probability


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


def test_bad_groups_and_resamples_are_refused():
    scores, correct, groups = _data()
    with pytest.raises(ValueError, match="2 distinct group"):
        which_score(scores, correct, groups=groups < 20)
    with pytest.raises(ValueError, match="n_boot=10 is too few"):
        which_score(scores, correct, n_boot=10)
    with pytest.raises(ValueError, match="groups must give one group per prediction"):
        which_score(scores, correct, groups=groups[:-1])


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
