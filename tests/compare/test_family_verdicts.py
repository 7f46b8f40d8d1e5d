"""The paper's score against the best of each comparator family: picked on the validation
parts, judged on the test parts by a paired t-test over splits, Holm over the whole table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reliquant.compare.reproduction.evaluation import holm, split_auarc
from reliquant.compare.reproduction.family_verdicts import (
    FAMILY_VERDICT_SCHEMA,
    family_markdown,
    family_table,
)
from reliquant.compare.reproduction.tables import assign_parts, prediction_frame

COMPARISONS = {"pima_xgb": {"paper": ["tree_robustness"], "uncertainty": ["margin"]}}


def _table(n: int = 160, n_splits: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = []
    for split in range(n_splits):
        for case, condition in (("clean", "clean"), ("noise", "shifted")):
            label = rng.integers(0, 2, n)
            right = rng.random(n) < 0.7
            noise = lambda sd: rng.normal(0, sd, n)  # noqa: E731
            parts.append(prediction_frame(
                dataset="pima_xgb", case=case, condition=condition, item=np.arange(n),
                label=label, prediction=np.where(right, label, 1 - label), split=split,
                scores={"tree_robustness": right + noise(0.7), "margin": right + noise(1.5),
                        "max_probability": rng.random(n), "max_logit": right + noise(0.3),
                        "trust_score": rng.random(n), "negative_knn_distance": right + noise(3)},
            ))  # fmt: skip
    return assign_parts(pd.concat(parts, ignore_index=True), validation_fraction=0.5, seed=2)


def test_each_family_meets_its_best_validation_score_on_the_test_parts() -> None:
    frame = _table()
    split = split_auarc([frame], metrics=False)
    table = family_table([frame], split, COMPARISONS, confidence=0.95)
    assert table.columns.tolist() == FAMILY_VERDICT_SCHEMA.names
    # no ensemble score in the table: no ensemble row; three families per condition
    assert table["family"].tolist() == ["probability", "logit", "feature distance"] * 2
    for r in table.itertuples(index=False):
        rows = split[(split["case"] == r.case) & (split["dataset"] == "pima_xgb")]
        val = rows[rows["part"] == "validation"].pivot(index="split", columns="score",
                                                        values="auarc")  # fmt: skip
        test = rows[rows["part"] == "test"].pivot(index="split", columns="score", values="auarc")
        family = {"probability": ["margin", "max_probability"], "logit": ["max_logit"],
                  "feature distance": ["trust_score", "negative_knn_distance"]}[r.family]  # fmt: skip
        assert r.comparator == val[family].mean().idxmax()
        d = test["tree_robustness"] - test[r.comparator]
        assert r.diff_mean == pytest.approx(d.mean(), abs=1e-12)
        assert r.p_value == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, rel=1e-9)
    np.testing.assert_allclose(table["p_holm"], holm(table["p_value"]))
    # the strong logit score beats the paper's, the near-random probability scores do not
    logit = table[table["family"] == "logit"]
    assert (logit["verdict"] == "uncertainty").all()
    prob = table[table["family"] == "probability"]
    assert (prob["verdict"] == "robustness").all()
    text = family_markdown(table)
    assert "- logit: under shift the paper's score is better on 0 and worse on 1 of 1" in text


def test_the_account_says_where_a_stronger_family_changes_the_headline_verdict() -> None:
    """The headline (paper score against its declared comparator) says ``robustness``; the
    logit family's strong score says ``uncertainty``: the account marks the condition
    changed, its largest shift is the largest |family difference - headline difference|,
    and the README line counts each family's shifted verdicts."""
    from reliquant.compare.reproduction.family_verdicts import family_account, family_blocks

    frame = _table()
    table = family_table([frame], split_auarc([frame], metrics=False), COMPARISONS,
                         confidence=0.95)  # fmt: skip
    prob = table[table["family"] == "probability"]
    headline = pd.DataFrame({"dataset": prob["dataset"], "condition": prob["condition"],
                             "comparator": "margin", "verdict": prob["verdict"],
                             "diff_mean": prob["diff_mean"]})  # fmt: skip
    account = family_account(table, headline)
    assert account["changed"].tolist() == [True, True]
    for a in account.itertuples(index=False):
        rows = table[table["condition"] == a.condition]
        assert a.families == dict(zip(rows["family"], rows["verdict"], strict=True))
        assert a.largest_shift == pytest.approx((rows["diff_mean"] - a.headline_diff).abs().max())
    unchanged = family_account(table[table["family"] == "probability"], headline)
    assert not unchanged["changed"].any()
    # the headline's own comparison read otherwise (Holm over a larger table) is not a change
    holm_only = headline.assign(comparator=prob["comparator"].to_numpy(), verdict="undecided")
    same = family_account(table[table["family"] == "probability"], holm_only)
    assert not same["changed"].any()
    assert (
        "the headline's comparison; Holm over the larger table"
        in family_blocks(table[table["family"] == "probability"], holm_only)["compare_families"]
    )
    blocks = family_blocks(table, headline)
    assert set(blocks) == {"compare_families", "readme_families"}
    assert "**changed**" in blocks["compare_families"]
    assert "logit 0 better / 1 worse of 1" in blocks["readme_families"]
    assert "probability 1 better / 0 worse of 1" in blocks["readme_families"]
