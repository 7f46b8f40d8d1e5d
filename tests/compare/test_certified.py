"""Certified thresholds on the compare data sets (reproduction.certified): every number of the
per-split table, the summary and the claim against a by-hand computation on a synthetic
per-prediction table, and the settings' refusals."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reliquant.compare import certify_threshold, paired_t
from reliquant.compare.reproduction.certified import (
    CERTIFIED_CLAIMS_SCHEMA,
    CERTIFIED_SCHEMA,
    CERTIFIED_SUMMARY_SCHEMA,
    certified_answers,
    certified_claims,
    certified_figure,
    certified_markdown,
    certified_settings,
    certified_summary,
    certified_table,
    check_certified,
)
from reliquant.compare.reproduction.tables import assign_parts, prediction_frame

matplotlib.use("Agg")

COMPARISONS = {"pima_xgb": {"paper": ["tree_robustness"],
                            "uncertainty": ["max_probability", "margin"]}}  # fmt: skip
SETTINGS = {"delta": 0.1, "method": "sgr", "targets": [0.1, 0.2], "comparator": "max_probability",
            "datasets": {}}  # fmt: skip


def _table(n_splits: int = 6, n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Per split: clean predictions whose error falls with the score, and shifted ones whose
    errors the robustness score still ranks but max_probability no longer does."""
    rng = np.random.default_rng(seed)
    frames = []
    for split in range(n_splits):
        for condition in ("clean", "shifted"):
            u = rng.random(n)
            p_err = 0.4 * (1 - u) ** 2 if condition == "clean" else 0.6 * (1 - u) ** 2 + 0.05
            wrong = rng.random(n) < p_err
            label = rng.integers(0, 2, n)
            noise = rng.random(n) if condition == "shifted" else u + rng.normal(0, 0.05, n)
            frames.append(prediction_frame(
                dataset="pima_xgb", case=condition, condition=condition, item=np.arange(n),
                label=label, prediction=np.where(wrong, 1 - label, label), split=split,
                scores={"tree_robustness": u, "max_probability": noise,
                        "margin": u + rng.normal(0, 0.2, n)},
            ))  # fmt: skip
    return assign_parts(pd.concat(frames, ignore_index=True), validation_fraction=0.5, seed=1)


@pytest.fixture(scope="module")
def result():
    frame = _table()
    table = certified_table([frame], SETTINGS, COMPARISONS)
    return frame, table


def test_every_row_equals_a_by_hand_certificate(result):
    frame, table = result
    assert list(table.columns) == CERTIFIED_SCHEMA.names
    assert len(table) == 6 * 3 * 2 * 2  # splits x scores x targets x conditions
    for row in table.sample(12, random_state=0).itertuples(index=False):
        g = frame[frame["split"] == row.split]
        cal = g[(g["condition"] == "clean") & (g["part"] == "validation")]
        cert = certify_threshold(cal[row.score], cal["correct"], risk=row.target_risk, delta=0.1)
        assert (row.certified, row.threshold, row.bound) == (cert.certified, cert.threshold,
                                                             cert.bound)  # fmt: skip
        assert row.n_calibration == len(cal) and row.calibration_coverage == cert.coverage
        test = g[(g["condition"] == row.condition) & (g["part"] == "test")]
        kept = (
            test[row.score].to_numpy() >= row.threshold
            if cert.certified
            else np.zeros(len(test), bool)
        )
        assert row.n_test == len(test) and row.n_kept == kept.sum()
        assert row.coverage == pytest.approx(kept.mean())
        if kept.any():
            risk = 1 - test["correct"].to_numpy()[kept].mean()
            assert row.realised_risk == pytest.approx(risk)
            assert row.violated == (risk > row.target_risk)
        else:
            assert np.isnan(row.realised_risk) and not row.violated
    roles = dict(zip(table["score"], table["role"], strict=False))
    assert roles == {"tree_robustness": "paper", "max_probability": "comparator", "margin": "other"}


def test_summary_is_the_mean_over_splits_with_an_exact_interval(result):
    _, table = result
    summary = certified_summary(table, delta=0.1, confidence=0.95)
    assert list(summary.columns) == CERTIFIED_SUMMARY_SCHEMA.names
    for row in summary.itertuples(index=False):
        sub = table[(table["score"] == row.score) & (table["condition"] == row.condition)
                    & (table["target_risk"] == row.target_risk)]  # fmt: skip
        k = int(sub["violated"].sum())
        assert (row.n_splits, row.violations) == (len(sub), k)
        assert row.mean_coverage == pytest.approx(sub["coverage"].mean())
        ci = stats.binomtest(k, len(sub)).proportion_ci(0.95, method="exact")
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high))
        assert row.keeps == (ci.low <= 0.1)


def test_claim_is_the_paired_difference_of_violations(result):
    _, table = result
    claims = certified_claims(table, confidence=0.95)
    assert list(claims.columns) == CERTIFIED_CLAIMS_SCHEMA.names and len(claims) == 2
    shifted = table[table["condition"] == "shifted"]
    for c in claims.itertuples(index=False):
        sub = shifted[shifted["target_risk"] == c.target_risk]

        def v(score, sub=sub):
            return sub[sub["score"] == score].sort_values("split")["violated"].to_numpy(float)

        d = v("max_probability") - v("tree_robustness")
        want = paired_t(d, 0.95)
        assert c.diff_mean == pytest.approx(want["diff_mean"])
        assert c.paper_violation_rate == pytest.approx(v("tree_robustness").mean())
        assert c.verdict in {"robustness", "uncertainty", "undecided", "nothing certified"}
    # the synthetic shift breaks max_probability's ranking: its promise breaks more often
    assert (claims["comparator_violation_rate"] >= claims["paper_violation_rate"]).all()


def test_nothing_certified_says_so():
    frame = _table(n_splits=3, n=40)
    table = certified_table([frame], {**SETTINGS, "targets": [0.01]}, COMPARISONS)
    assert not table["certified"].any() and not table["violated"].any()
    claims = certified_claims(table, confidence=0.95)
    assert (claims["verdict"] == "nothing certified").all()


def test_answers_markdown_and_figure(result):
    _, table = result
    summary = certified_summary(table, delta=0.1, confidence=0.95)
    answers = certified_answers(summary)
    clean = summary[summary["condition"] == "clean"]
    for a in answers.itertuples(index=False):
        sub = clean[clean["target_risk"] == a.target_risk]
        assert a.clean_coverage == sub["mean_coverage"].max()
    text = certified_markdown(summary, certified_claims(table, confidence=0.95), delta=0.1)
    assert "Pima, XGBoost" in text and "tree_robustness" in text
    fig = certified_figure(summary, delta=0.1)
    assert len(fig.axes) == 2


def test_settings_defaults_overrides_and_refusals():
    s = {**SETTINGS, "datasets": {"pima_xgb": {"targets": [0.3]}}}
    assert certified_settings(s, "pima_xgb") == {"targets": [0.3], "comparator": "max_probability"}
    check_certified(s, ["pima_xgb"], COMPARISONS)
    with pytest.raises(ValueError, match=r"compare.certified.datasets names \['cnn_mnist'\]"):
        check_certified({**SETTINGS, "datasets": {"cnn_mnist": {}}}, ["pima_xgb"], COMPARISONS)
    with pytest.raises(ValueError, match=r"compare.certified.comparator is 'negative_u_m'"):
        check_certified({**SETTINGS, "comparator": "negative_u_m"}, ["pima_xgb"], COMPARISONS)
    bad = {**SETTINGS, "datasets": {"pima_xgb": {"comparator": "eps_loc"}}}
    with pytest.raises(ValueError, match=r"datasets.pima_xgb.comparator"):
        check_certified(bad, ["pima_xgb"], COMPARISONS)


def test_the_default_config_fits_the_default_run():
    """config.yaml's compare.certified passes the check against its own data sets."""
    import yaml
    from workflow_helpers import REPO

    compare = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["compare"]
    datasets = ["cnn_mnist", "rf_mnist", "xgb_mnist", "pima_xgb", "nbc_synthetic", "table_nbc",
                *(f"bench_{b}" for b in compare["benchmarks"])]  # fmt: skip
    check_certified(compare["certified"], datasets, compare["comparisons"])


def test_generated_blocks(result):
    from reliquant.compare.reproduction.certified import certified_blocks

    _, table = result
    summary = certified_summary(table, delta=0.1, confidence=0.95)
    claims = certified_claims(table, confidence=0.95)
    blocks = certified_blocks(summary, claims)
    assert blocks["compare_certified"] == certified_markdown(summary, claims, delta=0.1)
    assert set(blocks) == {"compare_certified", "readme_certified"}
    readme = blocks["readme_certified"]
    counts = claims["verdict"].value_counts()
    assert f"better than its comparator on {counts.get('robustness', 0)} of {len(claims)}" in readme
    assert f"worse on {counts.get('uncertainty', 0)}," in readme


def test_lowest_certifiable_risk_is_the_zero_error_bound_and_no_certificate_beats_it():
    """``1 - delta ** (1 / n)`` in closed form; and no certificate of either method, on
    calibration sets of ``n`` predictions with or without errors and ties, carries a lower
    bound (a target below it is out of reach)."""
    from reliquant.compare import certify_threshold
    from reliquant.compare.reproduction.certified import lowest_certifiable_risk

    n = np.array([8, 42, 60, 500])
    assert lowest_certifiable_risk(n, 0.1) == pytest.approx(1 - 0.1 ** (1 / n))
    rng = np.random.default_rng(3)
    for size in (8, 42, 60):
        floor = float(lowest_certifiable_risk(size, 0.1))
        for _ in range(20):
            score = rng.integers(0, rng.integers(1, size + 1), size).astype(float)
            correct = rng.random(size) < 0.97
            for method in ("sgr", "ltt"):
                cert = certify_threshold(score, correct, risk=0.999, delta=0.1, method=method)
                assert not cert.certified or cert.bound >= floor - 1e-12, (size, method, cert)


def test_the_answer_table_names_the_calibration_size_and_its_floor(result):
    """A data set whose calibration parts cannot certify the target reads as such: its
    row carries the calibration size and the lowest certifiable risk."""
    from reliquant.compare.reproduction.certified import lowest_certifiable_risk

    _, table = result
    summary = certified_summary(table, delta=0.1, confidence=0.95)
    n = int(table["n_calibration"].min())
    assert (summary["n_calibration"] == n).all()
    text = certified_markdown(summary, certified_claims(table, confidence=0.95), delta=0.1)
    floor = 100 * float(lowest_certifiable_risk(n, 0.1))
    assert f"| {n} ({floor:.1f} %) |" in text
