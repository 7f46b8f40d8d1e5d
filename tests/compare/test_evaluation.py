"""AU-ARC over splits, paired t-intervals, Holm, the declared comparisons, the headline's
comparator picked on validation parts, the hybrid over splits, and the curves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reliquant.compare import accuracy_rejection_curve, auarc, evaluate_hybrid, probability_scores
from reliquant.compare.reproduction.evaluation import (
    POOLED,
    curve_table,
    declared_table,
    headline_table,
    holm,
    hybrid_table,
    identical_ranking,
    noise_table,
    paired_t,
    pick_noise,
    pooled_case,
    split_auarc,
    tied_share,
)
from reliquant.compare.reproduction.tables import assign_parts, prediction_frame

COMPARISONS = {"cnn_mnist": {"paper": ["mc_robustness"],
                             "uncertainty": ["margin", "max_probability"]}}  # fmt: skip


CASES = (("clean", "clean"), ("level 1", "shifted"), ("level 5", "shifted"))


def _table(
    n: int = 200, seed: int = 0, accuracy: float = 0.7, n_splits: int = 4, cases=CASES
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for split in range(n_splits):
        for case, condition in cases:
            label = rng.integers(0, 3, n)
            right = rng.random(n) < accuracy
            pred = np.where(right, label, (label + 1) % 3)
            parts.append(
                prediction_frame(
                    dataset="cnn_mnist",
                    case=case,
                    condition=condition,
                    item=np.arange(n),
                    label=label,
                    prediction=pred,
                    split=split,
                    scores={
                        "mc_robustness": np.round(right + rng.normal(0, 0.8, n), 1),  # ties
                        "log_ratio": right + rng.normal(0, 1.5, n),
                        "margin": right + rng.normal(0, 1.0, n),
                        "max_probability": rng.random(n),
                    },
                )  # fmt: skip
            )
    return assign_parts(pd.concat(parts, ignore_index=True), validation_fraction=0.5, seed=1)


def test_split_auarc_is_the_auarc_of_each_split_case_and_part() -> None:
    frame = _table()
    table = split_auarc([frame])
    assert list(dict.fromkeys(table["case"])) == ["clean", "level 1", "level 5", POOLED]
    assert set(table["part"]) == {"all", "validation", "test"}
    for r in table.sample(40, random_state=0).itertuples(index=False):
        rows = frame[frame["split"] == r.split]
        rows = rows[rows["condition"] == "shifted"] if r.case == POOLED else rows[
            rows["case"] == r.case]  # fmt: skip
        if r.part != "all":
            rows = rows[rows["part"] == r.part]
        assert r.n == len(rows)
        assert r.auarc == pytest.approx(auarc(rows[r.score], rows["correct"]), abs=1e-12)


def test_several_clean_cases_pool_like_several_shifted_ones() -> None:
    """The full preset's NBC cells have two clean cases (gamma = 0 at N = 25 and N = 100): the
    clean condition is then those cases pooled per split, as the shifted one is, and every
    table that stands a case for a condition finds it (it raised a KeyError)."""
    cases = (("N=25, gamma=0", "clean"), ("N=100, gamma=0", "clean"),
             ("N=25, gamma=0.4", "shifted"), ("N=100, gamma=0.4", "shifted"))  # fmt: skip
    frame = _table(n=150, n_splits=3, cases=cases)
    split = split_auarc([frame])
    assert list(dict.fromkeys(split["case"])) == [c for c, _ in cases] + [
        pooled_case("clean"), POOLED]  # fmt: skip
    for r in split[split["case"] == pooled_case("clean")].itertuples(index=False):
        rows = frame[(frame["split"] == r.split) & (frame["condition"] == "clean")]
        rows = rows if r.part == "all" else rows[rows["part"] == r.part]
        assert r.n == len(rows)
        assert r.auarc == pytest.approx(auarc(rows[r.score], rows["correct"]), abs=1e-12)
    head = headline_table([frame], split, COMPARISONS, confidence=0.95)
    assert head["case"].tolist() == [pooled_case("clean"), POOLED]
    declared = declared_table([frame], split, COMPARISONS, confidence=0.95)
    assert {pooled_case("clean"), POOLED} <= set(declared["case"])
    assert hybrid_table([frame], head, C=1.0, confidence=0.95)["n_fitted"].tolist() == [3, 3]


def test_assign_parts_halves_every_split_and_case() -> None:
    frame = _table(n=101)
    counts = frame.groupby(["split", "case"])["part"].apply(lambda p: (p == "validation").sum())
    assert (counts == 50).all()  # round(0.5 * 101) = 50 (banker's rounding)


def test_paired_t_is_scipy_one_sample_t() -> None:
    d = np.array([0.01, -0.004, 0.02, 0.013, 0.0, 0.007])
    out = paired_t(d, 0.9)
    test = stats.ttest_1samp(d, 0.0)
    lo, hi = stats.t.interval(0.9, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert out["p_value"] == pytest.approx(test.pvalue, rel=1e-12)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((lo, hi), rel=1e-12)
    assert np.isnan(paired_t([0.3], 0.9)["ci_low"])


def test_holm_by_hand() -> None:
    # m = 3 tests: sorted 0.01, 0.03, 0.04 -> 0.03, 0.06, 0.04 -> running max 0.03, 0.06, 0.06
    adj = holm([0.01, 0.04, 0.03, np.nan])
    assert adj[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(adj[3])
    assert holm([0.9, 0.8]).tolist() == [1.0, 1.0]


def test_tied_share_counts_every_member_of_a_tie() -> None:
    assert tied_share(np.array([1.0, 2.0, 2.0, 3.0, 1.0])) == pytest.approx(0.8)
    assert tied_share(np.arange(5.0)) == 0.0


def test_log_ratio_ranks_like_max_probability_with_two_classes() -> None:
    rng = np.random.default_rng(4)
    p = rng.dirichlet([1, 1], 300)
    two = probability_scores(p)
    assert identical_ranking(two["log_ratio"].to_numpy(), two["max_probability"].to_numpy())
    three = probability_scores(rng.dirichlet([1, 1, 1], 300))
    assert not identical_ranking(three["log_ratio"].to_numpy(), three["margin"].to_numpy())


def _two_class_table(n_splits: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    parts = []
    for split in range(n_splits):
        for case, cond in (("clean", "clean"), ("noise", "shifted")):
            p = rng.dirichlet([2, 2], 150)
            label = (rng.random(150) < p[:, 1]).astype(int)
            sc = probability_scores(p)
            pred = sc.pop("prediction").to_numpy()
            right = pred == label
            parts.append(prediction_frame(
                dataset="pima_xgb", case=case, condition=cond, item=np.arange(150),
                label=label, prediction=pred, split=split,
                scores={"tree_robustness": np.clip(right + rng.normal(0, 0.7, 150), 0, 1),
                        **{k: sc[k].to_numpy() for k in ("log_ratio", "max_probability",
                                                         "margin")}},
            ))  # fmt: skip
    return assign_parts(pd.concat(parts, ignore_index=True), validation_fraction=0.5, seed=2)


def test_declared_table_says_identical_ranking_and_holms_the_rest() -> None:
    frame = _two_class_table()
    comparisons = {"pima_xgb": {"paper": ["tree_robustness"],
                                "uncertainty": ["max_probability", "margin"]}}  # fmt: skip
    table = declared_table([frame], split_auarc([frame]), comparisons, confidence=0.95)
    lr = table[table["score_a"] == "log_ratio"]
    assert (lr["role_a"] == "log-ratio").all()
    assert (lr["verdict"] == "identical ranking").all() and lr["p_holm"].isna().all()
    tested = table[table["verdict"] != "identical ranking"]
    assert len(tested) == 4  # tree_robustness x 2 scores x 2 cases
    assert tested["p_holm"].to_numpy() == pytest.approx(holm(tested["p_value"].to_numpy()))
    for r in tested.itertuples(index=False):
        rows = frame[frame["case"] == r.case]
        d = [auarc(g[r.score_a], g["correct"]) - auarc(g[r.score_b], g["correct"])
             for _, g in rows.groupby("split")]  # fmt: skip
        assert r.diff_mean == pytest.approx(np.mean(d), abs=1e-12)
        assert r.p_value == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)


def test_two_class_argument_overrides_rounding_ties() -> None:
    """With two classes the log-ratio ranks like the maximum probability even where rounding
    merged a few of its values (the data alone would say otherwise)."""
    frame = _two_class_table()
    frame["log_ratio"] = np.round(frame["log_ratio"], 2)
    comparisons = {"pima_xgb": {"paper": ["tree_robustness"],
                                "uncertainty": ["max_probability"]}}  # fmt: skip
    table = declared_table([frame], split_auarc([frame]), comparisons, confidence=0.95)
    assert (table.loc[table["score_a"] == "log_ratio", "verdict"] == "identical ranking").all()
    three = frame.assign(label=frame["label"].where(frame.index % 7 > 0, 2))
    table = declared_table([three], split_auarc([three]), comparisons, confidence=0.95)
    assert (table.loc[table["score_a"] == "log_ratio", "verdict"] != "identical ranking").all()


def test_declared_scores_must_exist() -> None:
    frame = _two_class_table(2)
    bad = {"pima_xgb": {"paper": ["eps_glob"], "uncertainty": ["margin"]}}
    with pytest.raises(ValueError, match=r"compare.comparisons.pima_xgb declares \['eps_glob'\]"):
        declared_table([frame], split_auarc([frame]), bad, confidence=0.95)
    with pytest.raises(KeyError, match="no entry for data set 'pima_xgb'"):
        declared_table([frame], split_auarc([frame]), {}, confidence=0.95)


def test_headline_comparator_is_picked_on_validation_not_on_test() -> None:
    frame = _table(n=300, n_splits=3)
    val = frame["part"] == "validation"
    right = frame["correct"].to_numpy()
    rng = np.random.default_rng(5)
    # margin informative on validation only, max_probability on test only
    frame["margin"] = np.where(val, right + rng.normal(0, 0.3, len(frame)), rng.random(len(frame)))
    frame["max_probability"] = np.where(val, rng.random(len(frame)),
                                        right + rng.normal(0, 0.3, len(frame)))  # fmt: skip
    head = headline_table([frame], split_auarc([frame]), COMPARISONS, confidence=0.95)
    assert head["comparator"].tolist() == ["margin", "margin"]
    assert head["case"].tolist() == ["clean", POOLED]
    # judged on the test parts: the comparator is useless there, robustness wins
    assert (head["verdict"] == "robustness").all()


def test_hybrid_over_splits_is_fitted_on_validation_and_scored_on_test() -> None:
    frame = _table(n=300, n_splits=3)
    head = headline_table([frame], split_auarc([frame]), COMPARISONS, confidence=0.95)
    table = hybrid_table([frame], head, C=1.0, confidence=0.95)
    assert table["n_fitted"].tolist() == [3, 3]
    r = table.iloc[0]
    gains = []
    for _, g in frame[frame["condition"] == "clean"].groupby("split"):
        v, t = g[g["part"] == "validation"], g[g["part"] == "test"]
        res = evaluate_hybrid(v[r.rq_score], v[r.uq_score], v["correct"], t[r.rq_score],
                              t[r.uq_score], t["correct"], C=1.0)  # fmt: skip
        gains.append(res["auarc_hybrid"] - max(res["auarc_rq"], res["auarc_uq"]))
    assert r.gain_mean == pytest.approx(np.mean(gains), abs=1e-12)
    assert r.gain_positive == pytest.approx(np.mean(np.array(gains) > 0))
    perfect = frame.assign(correct=True)
    table = hybrid_table([perfect], head, C=1.0, confidence=0.95)
    assert table["note"].str.contains("not fitted").all() and (table["n_fitted"] == 0).all()


def test_noise_scale_is_picked_on_validation_parts() -> None:
    """A grid score: the scale with the best validation AU-ARC is chosen even where another
    scale is better on the test parts; the chosen column then stands for the score."""
    frame = _table(n=200, n_splits=3).drop(columns="mc_robustness")
    val = (frame["part"] == "validation").to_numpy()
    right = frame["correct"].to_numpy()
    rng = np.random.default_rng(9)
    noise = rng.random(len(frame))
    good = right + rng.normal(0, 0.3, len(frame))
    frame.insert(
        frame.columns.get_loc("log_ratio"), "mc_robustness@0.1", np.where(val, good, noise)
    )
    frame.insert(frame.columns.get_loc("log_ratio"), "mc_robustness@1", np.where(val, noise, good))
    table = noise_table(split_auarc([frame]))
    assert set(table["condition"]) == {"clean", "shifted"}
    assert table.loc[table["chosen"], "scale"].unique().tolist() == [0.1]
    assert (table.groupby("scale")["auarc_test"].mean()[1.0]
            > table.groupby("scale")["auarc_test"].mean()[0.1])  # fmt: skip
    (picked,) = pick_noise([frame], table)
    assert "mc_robustness" in picked.columns and "mc_robustness@1" not in picked.columns
    assert (picked["mc_robustness"] == frame["mc_robustness@0.1"]).all()
    assert list(picked.columns).index("mc_robustness") == list(frame.columns).index(
        "mc_robustness@0.1")  # fmt: skip


def test_curves_match_the_library_curve() -> None:
    frame = _table(n=50, n_splits=1)
    curves = curve_table([frame], points=10)
    rows = frame[frame["condition"] == "shifted"]
    t, acc = accuracy_rejection_curve(rows["margin"], rows["correct"])
    c = curves[(curves["condition"] == "shifted") & (curves["score"] == "margin")]
    assert c["rejected"].tolist() == pytest.approx(np.arange(10) / 10)
    assert c["accuracy"].iloc[0] == pytest.approx(rows["correct"].mean())
    assert c["accuracy"].tolist() == pytest.approx(
        acc[np.round(np.arange(10) / 10 * 100).astype(int)]
    )


def _trapezoids(coverage: list[float], risk: list[float]) -> float:
    return sum((coverage[j] - coverage[j + 1]) * (risk[j] + risk[j + 1]) / 2
               for j in range(len(coverage) - 1))  # fmt: skip


def test_split_auarc_carries_fd_shifts_metrics_by_their_definition() -> None:
    """AURC, E-AURC, AUGRC and AUROC_f of a row equal a loop over distinct thresholds (one
    operating point per distinct score, trapezoids over coverage) and scipy's Mann-Whitney U,
    on the tied robustness score; ``metrics=False`` leaves them NaN."""
    frame = _table(n=120, n_splits=2)
    table = split_auarc([frame])
    for r in table.sample(12, random_state=1).itertuples(index=False):
        rows = frame[frame["split"] == r.split]
        rows = rows[rows["condition"] == "shifted"] if r.case == POOLED else rows[
            rows["case"] == r.case]  # fmt: skip
        if r.part != "all":
            rows = rows[rows["part"] == r.part]
        s, c = rows[r.score].to_numpy(), rows["correct"].to_numpy()
        cov, sel, gen = [], [], []
        for t in np.unique(s):
            kept = s >= t
            cov.append(kept.mean())
            sel.append((~c[kept]).mean())
            gen.append((~c & kept).mean())
        cov, sel, gen = [*cov, 0.0], [*sel, sel[-1]], [*gen, 0.0]
        err = (~c).mean()
        assert r.aurc == pytest.approx(_trapezoids(cov, sel), abs=1e-12)
        assert r.augrc == pytest.approx(_trapezoids(cov, gen), abs=1e-12)
        optimal = err + (1 - err) * np.log(1 - err)
        assert r.e_aurc == pytest.approx(_trapezoids(cov, sel) - optimal, abs=1e-12)
        u = stats.mannwhitneyu(s[c], s[~c]).statistic / (c.sum() * (~c).sum())
        assert r.auroc_f == pytest.approx(u, abs=1e-12)
    assert split_auarc([frame], metrics=False)["aurc"].isna().all()
