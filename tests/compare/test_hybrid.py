"""The RQ + UQ hybrid: rank normalisation, finite weights, held-out AU-ARC."""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.compare import auarc, evaluate_hybrid, fit_hybrid, fit_rank_transform


def synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Correctness driven by two independent factors; RQ sees one, UQ the other."""
    rng = np.random.default_rng(seed)
    z1, z2 = rng.normal(size=n), rng.normal(size=n)
    correct = rng.random(n) < 1 / (1 + np.exp(-(0.5 + 1.5 * z1 + 1.5 * z2)))
    rq = np.exp(z1 + 0.3 * rng.normal(size=n))  # another unit: ranks make them comparable
    uq = -np.round(-z2 + 0.3 * rng.normal(size=n), 1)  # coarse: ties
    return rq, uq, correct


def test_hybrid_beats_the_weaker_score_with_finite_weights() -> None:
    rq_v, uq_v, c_v = synthetic(2000, 1)
    rq_t, uq_t, c_t = synthetic(2000, 2)
    out = evaluate_hybrid(rq_v, uq_v, c_v, rq_t, uq_t, c_t)
    assert np.isfinite([out["weight_rq"], out["weight_uq"], out["intercept"]]).all()
    assert out["weight_rq"] > 0 and out["weight_uq"] > 0
    assert 0.3 < out["importance_rq"] < 0.7  # the two factors weigh the same
    assert out["auarc_hybrid"] >= min(out["auarc_rq"], out["auarc_uq"])
    assert out["auarc_hybrid"] > max(out["auarc_rq"], out["auarc_uq"])  # complementary
    hybrid = fit_hybrid(rq_v, uq_v, c_v)
    assert auarc(hybrid(rq_t, uq_t), c_t) == pytest.approx(out["auarc_hybrid"])
    assert hybrid.importance_rq + hybrid.importance_uq == pytest.approx(1.0)


def test_rank_transform() -> None:
    t = fit_rank_transform([1.0, 2.0, 2.0, 4.0])
    np.testing.assert_allclose(t.values, [1, 2, 4])
    np.testing.assert_allclose(t.ranks, [1 / 8, 4 / 8, 7 / 8])  # mid-ranks
    np.testing.assert_allclose(t([0.0, 1.0, 3.0, 9.0]), [1 / 8, 1 / 8, 11 / 16, 7 / 8])


def test_errors() -> None:
    rq, uq, c = synthetic(50, 0)
    with pytest.raises(ValueError, match="both right and wrong"):
        fit_hybrid(rq, uq, np.ones(50, bool))
    with pytest.raises(ValueError, match="rq_val, uq_val and correct_val must have the same"):
        fit_hybrid(rq, uq[:10], c)
    with pytest.raises(ValueError, match="uq_val has 1 NaN"):
        fit_hybrid(rq, np.r_[np.nan, uq[1:]], c)


def test_c_is_named_with_its_value() -> None:
    rq, uq, c = synthetic(50, 0)
    with pytest.raises(TypeError, match=r"C must be a finite number > 0; got '1' \(str\)"):
        fit_hybrid(rq, uq, c, C="1")
    with pytest.raises(ValueError, match=r"C must be a finite number > 0; got 0"):
        fit_hybrid(rq, uq, c, C=0)
