"""reliquant.nbc.reproduction.distributions: P_fix (eq. 17), mixtures, sampling, the long table format."""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.core.io import read_frame, write_frame
from reliquant.nbc.reproduction.distributions import (
    d_test_schema,
    distribution_tables,
    distributions_from_tables,
    distributions_schema,
    make_distributions,
    mix,
    p_fix,
    sample_joint,
    table_from_frame,
    table_to_frame,
)

DESIGN = {
    "class_probs": [0.4, 0.35, 0.25],
    "n_values": [2, 3, 3, 4],
    "favoured": [[0, 0, 0, 0], [1, 1, 1, 1], [0, 2, 2, 3]],
    "p_favoured": 0.85,
    "beta": 0.3,
    "n_shift": 2,
    "n_test": 200,
}


def test_p_fix_is_the_stated_naive_bayes_joint() -> None:
    t = p_fix(DESIGN["class_probs"], DESIGN["n_values"], DESIGN["favoured"], 0.85)
    assert t.shape == (3, 2, 3, 3, 4)
    np.testing.assert_allclose(t.sum(), 1.0)
    np.testing.assert_allclose(t.sum(axis=(1, 2, 3, 4)), DESIGN["class_probs"])
    for c in range(3):
        cond = t[c] / t[c].sum()
        margins = [cond.sum(axis=tuple(j for j in range(4) if j != i)) for i in range(4)]
        for i, v in enumerate(DESIGN["n_values"]):
            expect = np.full(v, 0.15 / (v - 1))
            expect[DESIGN["favoured"][c][i]] = 0.85
            np.testing.assert_allclose(margins[i], expect)
        # eq. 17: the joint given c is the product of its margins
        outer = margins[0][:, None, None, None] * margins[1][None, :, None, None]
        outer = outer * margins[2][None, None, :, None] * margins[3][None, None, None, :]
        np.testing.assert_allclose(cond, outer)
    with pytest.raises(ValueError, match="favoured values of feature 0"):
        p_fix([0.5, 0.5], [2], [[0], [2]], 0.85)


def test_mixtures_sampling_and_frames() -> None:
    d = make_distributions(DESIGN, seed=5)
    np.testing.assert_allclose(d["test"], 0.7 * d["fix"] + 0.3 * d["rand"])
    np.testing.assert_allclose(
        mix(d["test"], d["shift"][1], 0.4), 0.6 * d["test"] + 0.4 * d["shift"][1]
    )
    for t in [d["rand"], *d["shift"]]:
        np.testing.assert_allclose(t.sum(), 1.0)
        assert np.all(t > 0)
    again = make_distributions(DESIGN, seed=5)
    for k in d:
        np.testing.assert_array_equal(d[k], again[k])
    assert not np.array_equal(d["shift"][0], d["shift"][1])
    # Monte Carlo: empirical cell frequencies match the joint (5 sigma)
    X, y = sample_joint(np.random.default_rng(0), d["test"], 200_000)
    counts = np.zeros(d["test"].shape)
    np.add.at(counts, (y, *X.T), 1)
    p = d["test"]
    assert np.all(np.abs(counts / 200_000 - p) < 5 * np.sqrt(p * (1 - p) / 200_000) + 1e-12)
    # frame round trip
    frame = table_to_frame({"test": d["test"][None], "shift": d["shift"]})
    np.testing.assert_array_equal(table_from_frame(frame, "shift"), d["shift"])
    np.testing.assert_array_equal(table_from_frame(frame, "test")[0], d["test"])
    with pytest.raises(ValueError, match="'fix' not found"):
        table_from_frame(frame, "fix")


def test_tables_round_trip_through_parquet_with_their_schemas(tmp_path) -> None:
    """What rule nbc_distributions writes and nbc_cell reads back is make_distributions."""
    tables, test = distribution_tables(DESIGN, seed=7)
    assert sorted(tables["distribution"].unique()) == ["fix", "rand", "shift", "test"]
    assert list(test.columns) == ["index", "label", "x0", "x1", "x2", "x3"]
    write_frame(tables, tmp_path / "d.parquet", distributions_schema(4))
    write_frame(test.iloc[::-1], tmp_path / "t.parquet", d_test_schema(4))  # order is restored
    back = distributions_from_tables(
        read_frame(tmp_path / "d.parquet"), read_frame(tmp_path / "t.parquet")
    )
    d = make_distributions(DESIGN, seed=7)
    for key in ["test", "shift", "X_test", "y_test"]:
        np.testing.assert_array_equal(back[key], d[key])
    assert back["X_test"].dtype == np.int64 and back["y_test"].dtype == np.int64
