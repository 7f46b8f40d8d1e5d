"""Bootstrap comparison of several scores: determinism, pairing, the table's columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reliquant.compare import COMPARISON_COLUMNS, auarc, bootstrap_auarc, compare_scores


@pytest.fixture
def data() -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(3)
    correct = rng.random(300) < 0.75
    good = correct + rng.normal(0, 0.6, 300)
    weak = correct + rng.normal(0, 2.0, 300)
    coarse = np.round(good)  # many ties
    return {"weak": weak, "good": good, "coarse": coarse, "const": np.zeros(300)}, correct


def test_table_columns_best_and_point_values(data) -> None:
    scores, correct = data
    table = compare_scores(scores, correct, n_boot=200, seed=1)
    assert tuple(table.columns) == COMPARISON_COLUMNS
    assert list(table["score"]) == list(scores)
    assert table["best"].sum() == 1
    best = table[table["best"]].iloc[0]
    assert best["score"] == "good"
    assert best["diff_vs_best"] == best["diff_ci_low"] == best["diff_ci_high"] == 0.0
    for _, row in table.iterrows():
        assert row["auarc"] == pytest.approx(auarc(scores[row["score"]], correct))
        assert row["ci_low"] <= row["auarc"] <= row["ci_high"]
        assert row["diff_vs_best"] <= 0
    const = table.set_index("score").loc["const"]
    assert const["auarc"] == pytest.approx(correct.mean())
    # the weak and constant scores are clearly worse than the best: interval below 0
    assert table.set_index("score").loc["const", "diff_ci_high"] < 0


def test_deterministic_under_seed_and_paired(data) -> None:
    scores, correct = data
    a = compare_scores(scores, correct, n_boot=100, seed=5)
    b = compare_scores(pd.DataFrame(scores), correct, n_boot=100, seed=5)
    pd.testing.assert_frame_equal(a, b)
    c = compare_scores(scores, correct, n_boot=100, seed=6)
    assert not np.allclose(a["ci_low"], c["ci_low"])
    # same resamples for every score: a copy of a score differs from it by 0 on every one
    names, boot = bootstrap_auarc({"x": scores["good"], "y": scores["good"]}, correct, n_boot=50)
    assert names == ["x", "y"]
    np.testing.assert_array_equal(boot[0], boot[1])
    dup = compare_scores({"x": scores["good"], "y": scores["good"]}, correct, n_boot=50)
    assert (dup[["diff_vs_best", "diff_ci_low", "diff_ci_high"]].to_numpy() == 0).all()
    assert list(dup["best"]) == [True, False]  # first listed wins a tie


def test_defined_extremes_and_errors(data) -> None:
    scores, _ = data
    ones = np.ones(300, bool)
    table = compare_scores(scores, ones, n_boot=20)
    assert (table["auarc"] == 1).all() and (table["ci_low"] == 1).all()
    with pytest.raises(ValueError, match=r"scores\['weak'\] and correct must have the same"):
        compare_scores(scores, ones[:10], n_boot=20)
    with pytest.raises(ValueError, match=r"scores\['x'\] has 1 NaN"):
        compare_scores({"x": np.r_[np.nan, np.zeros(299)]}, ones, n_boot=20)
    with pytest.raises(ValueError, match="correct must be boolean"):
        compare_scores(scores, np.full(300, 0.5), n_boot=20)
    with pytest.raises(ValueError, match="n_boot"):
        compare_scores(scores, ones, n_boot=0)
    with pytest.raises(ValueError, match="scores must be a non-empty"):
        compare_scores({}, ones)


def test_bootstrap_equals_auarc_of_each_resample(data) -> None:
    from reliquant.compare.rejection import auarc_rows
    from reliquant.core.seeding import block_rng

    scores, correct = data
    names, boot = bootstrap_auarc(scores, correct, n_boot=30, seed=9)
    idx = block_rng(9, "compare_bootstrap").integers(0, correct.size, size=(30, correct.size))
    for j, name in enumerate(names):
        np.testing.assert_allclose(boot[j], auarc_rows(scores[name][idx], correct[idx]), atol=1e-10)
