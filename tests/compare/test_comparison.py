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
    table = compare_scores(scores, ones, n_boot=40)
    assert (table["auarc"] == 1).all() and (table["ci_low"] == 1).all()
    with pytest.raises(ValueError, match=r"scores\['weak'\] and correct must have the same"):
        compare_scores(scores, ones[:10], n_boot=40)
    with pytest.raises(ValueError, match=r"scores\['x'\] has 1 NaN"):
        compare_scores({"x": np.r_[np.nan, np.zeros(299)]}, ones, n_boot=40)
    with pytest.raises(ValueError, match="correct must be boolean"):
        compare_scores(scores, np.full(300, 0.5), n_boot=40)
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


def brute_force_auarc(score: np.ndarray, correct: np.ndarray) -> float:
    """Mean accuracy of the m most reliable predictions, m = n..1 (scores without ties)."""
    kept = correct[np.argsort(-score)]
    return float(np.mean([kept[:m].mean() for m in range(1, kept.size + 1)]))


def test_pandas_inputs_are_matched_by_index_not_position(data) -> None:
    """Scores as a shuffled DataFrame with `correct` as a Series in the original order were
    read by position: the AU-ARC of mismatched pairs. They are matched by index label."""
    scores, correct = data
    frame = pd.DataFrame({"weak": scores["weak"], "good": scores["good"]})
    shuffled = frame.sample(frac=1.0, random_state=0)
    assert not shuffled.index.equals(frame.index)
    got = compare_scores(shuffled, pd.Series(correct), n_boot=100, seed=5)
    expected = compare_scores(frame.to_dict("series"), correct, n_boot=100, seed=5)
    pd.testing.assert_frame_equal(got, expected)
    for name in ["weak", "good"]:
        row = got.set_index("score").loc[name]
        assert row["auarc"] == pytest.approx(brute_force_auarc(scores[name], correct), abs=1e-12)
    # Series among the scores, each in its own order, are matched too
    mixed = {"weak": shuffled["weak"], "good": frame["good"].iloc[::-1]}
    pd.testing.assert_frame_equal(
        compare_scores(mixed, pd.Series(correct), n_boot=100, seed=5), expected
    )
    # correct in another order than the scores: the table follows correct's order
    order = np.random.default_rng(1).permutation(correct.size)
    pd.testing.assert_frame_equal(
        compare_scores(frame, pd.Series(correct).iloc[order], n_boot=100, seed=5),
        compare_scores(frame.iloc[order].to_dict("list"), correct[order], n_boot=100, seed=5),
    )


def test_misaligned_or_duplicated_indexes_are_refused(data) -> None:
    scores, correct = data
    frame = pd.DataFrame(scores)
    with pytest.raises(ValueError, match=r"scores and correct hold different index labels "
                                         r"\(e.g. 1000 only in scores\)"):  # fmt: skip
        compare_scores(frame.set_axis(frame.index + 1000), pd.Series(correct), n_boot=40)
    twice = pd.Series(correct, index=np.r_[0, np.arange(correct.size - 1)])
    with pytest.raises(ValueError, match=r"correct has the index label 0 more than once"):
        compare_scores(frame, twice, n_boot=40)
    with pytest.raises(ValueError, match=r"scores has the duplicated column\(s\) \['good'\]"):
        compare_scores(frame[["good", "weak", "good"]], correct, n_boot=40)


def test_bootstrap_chunks_do_not_change_the_result(data, monkeypatch) -> None:
    """The resamples are drawn and scored in chunks: a chunk of one resample, of a few, or
    all at once give identical bits (and the resamples of integers(size=(n_boot, n)))."""
    from reliquant.compare import comparison
    from reliquant.compare.rejection import auarc_rows
    from reliquant.core.seeding import block_rng

    scores, correct = data
    runs = []
    for chunk in [1, 7 * correct.size, 10**9]:
        monkeypatch.setattr(comparison, "_CHUNK_ELEMENTS", chunk)
        runs.append(bootstrap_auarc(scores, correct, n_boot=23, seed=4)[1])
    np.testing.assert_array_equal(runs[0], runs[2])
    np.testing.assert_array_equal(runs[1], runs[2])
    idx = block_rng(4, "compare_bootstrap").integers(0, correct.size, size=(23, correct.size))
    for j, name in enumerate(scores):
        np.testing.assert_allclose(runs[0][j], auarc_rows(scores[name][idx], correct[idx]),
                                   atol=1e-12)  # fmt: skip


def test_memory_does_not_grow_with_n_boot() -> None:
    """All (n_boot, n) resample indices were allocated at once (10^6 predictions at the
    default n_boot: 7.45 GiB). The peak of the bootstrap's allocations stays at a few chunks,
    whatever n_boot (speed is measured in bench/compare.py, not here)."""
    from reliquant.core.benchmarks import traced_memory_peak

    rng = np.random.default_rng(0)
    n = 10_000
    correct = rng.random(n) < 0.7
    score = {"s": correct + rng.normal(0.0, 1.0, n)}
    peaks = []
    for n_boot in [40, 400]:
        with traced_memory_peak() as peak:
            bootstrap_auarc(score, correct, n_boot=n_boot)
        peaks.append(peak.mb)
    assert peaks[1] < 12, peaks  # the index alone was 400 x 10^4 x 8 bytes = 30.5 MiB
    assert peaks[1] < 1.5 * peaks[0] + 1, peaks


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_boot": 1}, ValueError, r"n_boot=1 is too few .* 0.95 .* need n_boot >= 40"),
        ({"n_boot": 39}, ValueError, r"need n_boot >= 40"),
        ({"n_boot": 100, "confidence": 0.99}, ValueError, r"need n_boot >= 200"),
        ({"n_boot": 2.5}, TypeError, r"n_boot must be an integer >= 1; got 2.5 \(float\)"),
        ({"confidence": "0.95"}, TypeError, r"confidence must be .* < 1; got '0.95' \(str\)"),
        ({"seed": None}, TypeError, r"seed must be an integer >= 0; got None"),
        ({"seed": 1.5}, TypeError, r"seed must be an integer >= 0; got 1.5 \(float\)"),
    ],
)
def test_settings_are_named(data, kwargs, error, message) -> None:
    scores, correct = data
    with pytest.raises(error, match=message):
        compare_scores(scores, correct, **{"n_boot": 100, **kwargs})


def test_fewest_resamples_give_an_interval_around_the_estimate(data) -> None:
    from reliquant.compare import min_boot

    assert [min_boot(c) for c in (0.5, 0.9, 0.95, 0.99)] == [4, 20, 40, 200]
    scores, correct = data
    table = compare_scores(scores, correct, n_boot=min_boot(0.95), seed=0)
    assert (table["ci_low"] <= table["auarc"]).all() and (table["auarc"] <= table["ci_high"]).all()
