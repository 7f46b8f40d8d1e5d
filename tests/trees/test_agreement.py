"""R^2 and the agreement summaries, against the direct formula, scikit-learn and per-group
loops written here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.trees.reproduction.agreement import (
    TABLE3_SCHEMA,
    mc_agreement,
    r2_by_group,
    r2_score,
    robustness_summary,
)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=30))
def test_r2_matches_direct_formula_and_sklearn(values):
    from sklearn.metrics import r2_score as sk_r2

    r = np.array([v[0] for v in values])
    e = np.array([v[1] for v in values])
    ss_tot = np.sum((r - r.mean()) ** 2)
    got = r2_score(r, e)
    if ss_tot > 1e-12:
        assert got == pytest.approx(1 - np.sum((r - e) ** 2) / ss_tot, rel=1e-9, abs=1e-9)
        assert got == pytest.approx(sk_r2(r, e), rel=1e-9, abs=1e-9)


def test_r2_edge_cases():
    assert r2_score([0.5, 0.5], [0.5, 0.5]) == 1.0
    assert np.isnan(r2_score([1.0, 1.0], [1.0, 0.9]))
    assert r2_score([0.0, 1.0], [0.0, 1.0]) == 1.0
    with pytest.raises(ValueError, match="equal-length"):
        r2_score([1.0], [1.0, 2.0])


def test_r2_by_group_matches_per_group_formula():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"g": np.repeat([1, 2], 6), "a": rng.uniform(size=12), "b": rng.uniform(size=12)}
    )
    frame.loc[3, "b"] = np.nan
    out = r2_by_group(frame, ["g"], "a", "b")
    for g, row in out.set_index("g").iterrows():
        sub = frame[(frame.g == g) & frame.b.notna()]
        assert row["n"] == len(sub)
        assert row["r2"] == pytest.approx(r2_score(sub.a, sub.b))
        assert row["max_abs_diff"] == pytest.approx(np.abs(sub.a - sub.b).max())


def _per_sample(seed: int = 0) -> pd.DataFrame:
    """Per-sample rows as rule trees_table3_size writes them, two sizes x two variances."""
    rng = np.random.default_rng(seed)
    rows = []
    for size, depth, acc in ((3, 4, 0.5), (5, 5, 0.7)):
        for variance in (1e-4, 0.1):
            for sample in range(1, 7):
                exact = rng.uniform()
                rows.append(
                    {
                        "size": size,
                        "depth": depth,
                        "variance": variance,
                        "sample": sample,
                        "robustness_exact": exact,
                        "robustness_pruned": exact - 0.001 if sample % 3 else np.nan,
                        "mc_estimate": exact + rng.normal(0, 0.01),
                        "mc_ci_low": exact - 0.02 if sample != 2 else exact + 0.001,
                        "mc_ci_high": exact + 0.02,
                        "accuracy": acc,
                    }
                )
    return pd.DataFrame(rows)


def test_mc_agreement_equals_a_loop_over_the_settings():
    per_sample = _per_sample()
    table = mc_agreement(per_sample)
    assert list(table.columns) == TABLE3_SCHEMA.names
    assert len(table) == 4
    for row in table.itertuples(index=False):
        g = per_sample[
            (per_sample["size"] == row.size)
            & (per_sample["depth"] == row.depth)
            & (per_sample["variance"] == row.variance)
        ]
        e, m = g["robustness_exact"].to_numpy(), g["mc_estimate"].to_numpy()
        assert row.n == 6
        assert row.r2 == pytest.approx(1 - np.sum((e - m) ** 2) / np.sum((e - e.mean()) ** 2))
        assert row.max_abs_diff == pytest.approx(np.max(np.abs(e - m)))
        grid = g[g["robustness_pruned"].notna()]
        assert row.n_grid == len(grid) == 4
        assert row.r2_grid_mc == pytest.approx(
            r2_score(grid["robustness_pruned"], grid["mc_estimate"])
        )
        assert row.frac_in_ci == pytest.approx(5 / 6)  # sample 2 lies below its interval
        assert row.accuracy == g["accuracy"].iloc[0]


def test_robustness_summary_counts():
    s = robustness_summary(np.array([0.34, 0.995, 1.0, 0.5]), 0.99)
    assert s == {"n": 4, "min": 0.34, "max": 1.0, "n_above": 2}
    assert robustness_summary(np.array([0.99, 0.5]), 0.99)["n_above"] == 0  # strictly above
