"""AURC, E-AURC, AUGRC, AUROC_f and risk at coverage against computations written from their
definitions (explicit loops over distinct thresholds), scikit-learn's ROC AUC, and brute
force over every order of the tied groups; inputs with ties throughout."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from reliquant.compare import auarc
from reliquant.compare.failure_metrics import (
    augrc,
    aurc,
    auroc_f,
    e_aurc,
    risk_at_coverage,
    risk_coverage_curve,
)


def reference_points(score, correct, *, generalized: bool) -> list[tuple[float, float]]:
    """(coverage, risk) per distinct threshold t, accepting score >= t; then coverage 0."""
    n = len(score)
    points = []
    for t in sorted(set(score)):
        kept = [i for i in range(n) if score[i] >= t]
        errors = sum(1 for i in kept if not correct[i])
        points.append((len(kept) / n, errors / n if generalized else errors / len(kept)))
    points.append((0.0, 0.0 if generalized else points[-1][1]))
    return points


def reference_area(score, correct, *, generalized: bool) -> float:
    p = reference_points(list(score), list(correct), generalized=generalized)
    return sum((p[j][0] - p[j + 1][0]) * (p[j][1] + p[j + 1][1]) / 2 for j in range(len(p) - 1))


def tied_inputs(seed: int, n: int = 60, levels: int = 7):
    """Scores on a few levels (large tied groups), correctness related to the score."""
    rng = np.random.default_rng(seed)
    score = rng.integers(0, levels, n).astype(float) / levels
    correct = rng.random(n) < 0.3 + 0.6 * score
    return score, correct


def tied_orders(score):
    """Every tie-free version of ``score``: one distinct score per order of each tied group."""
    values = sorted(set(score), reverse=True)
    groups = [[i for i in range(len(score)) if score[i] == v] for v in values]
    for perms in itertools.product(*(itertools.permutations(g) for g in groups)):
        ranked = [i for perm in perms for i in perm]  # most reliable first
        tie_free = np.empty(len(score))
        tie_free[ranked] = np.arange(len(score), 0, -1)
        yield tie_free


def test_hand_computed_curve() -> None:
    score = [0.9, 0.9, 0.5, 0.5, 0.1]
    correct = [True, False, True, True, False]
    cov, risk = risk_coverage_curve(score, correct)
    np.testing.assert_allclose(cov, [1.0, 0.8, 0.4, 0.0])
    np.testing.assert_allclose(risk, [0.4, 0.25, 0.5, 0.5])
    _, grisk = risk_coverage_curve(score, correct, risk="generalized")
    np.testing.assert_allclose(grisk, [0.4, 0.2, 0.2, 0.0])
    assert aurc(score, correct) == pytest.approx(0.2 * 0.65 / 2 + 0.4 * 0.75 / 2 + 0.4 * 1.0 / 2)
    assert augrc(score, correct) == pytest.approx(0.2 * 0.6 / 2 + 0.4 * 0.4 / 2 + 0.4 * 0.2 / 2)


@pytest.mark.parametrize("seed", range(6))
def test_areas_equal_loops_over_distinct_thresholds(seed) -> None:
    score, correct = tied_inputs(seed)
    if seed == 5:  # infinite scores tie with each other
        score[:5] = np.inf
        score[5:9] = -np.inf
    assert aurc(score, correct) == pytest.approx(reference_area(score, correct, generalized=False))
    assert augrc(score, correct) == pytest.approx(reference_area(score, correct, generalized=True))
    for kind, generalized in (("selective", False), ("generalized", True)):
        cov, risk = risk_coverage_curve(score, correct, risk=kind)
        ref = reference_points(list(score), list(correct), generalized=generalized)
        np.testing.assert_allclose(np.column_stack([cov, risk]), np.array(ref))


def test_row_order_does_not_matter() -> None:
    score, correct = tied_inputs(11)
    perm = np.random.default_rng(0).permutation(score.size)
    for metric in (aurc, augrc, e_aurc, auroc_f):
        assert metric(score[perm], correct[perm]) == metric(score, correct), metric.__name__


def test_constant_score_and_extremes() -> None:
    correct = np.array([True, False, True, True, False, True, True, True])
    err = 2 / 8
    assert aurc(np.ones(8), correct) == pytest.approx(err)
    assert augrc(np.ones(8), correct) == pytest.approx(err / 2)
    perfect = correct.astype(float) + np.arange(8) * 1e-3  # correct ones above, no ties
    assert augrc(perfect, correct) == pytest.approx(err**2 / 2)
    assert e_aurc(perfect, correct, optimal="empirical") == pytest.approx(0.0, abs=1e-15)
    assert aurc(np.arange(5.0), np.ones(5, bool)) == 0.0
    assert aurc(np.arange(5.0), np.zeros(5, bool)) == 1.0
    assert math.isnan(auroc_f(np.arange(5.0), np.ones(5, bool)))
    assert math.isnan(auroc_f(np.arange(5.0), np.zeros(5, int)))


def test_e_aurc_analytic_and_empirical_optimum() -> None:
    score, correct = tied_inputs(3)
    err = np.mean(~correct)
    assert e_aurc(score, correct) == pytest.approx(
        aurc(score, correct) - (err + (1 - err) * math.log(1 - err))
    )
    n = correct.size
    ranked = sorted(correct, reverse=True)  # correct first
    kept_errors = np.cumsum(~np.array(ranked))
    risks = [kept_errors[m - 1] / m for m in range(n, 0, -1)]  # coverage n/n .. 1/n
    risks.append(risks[-1])
    best = sum((risks[j] + risks[j + 1]) / 2 / n for j in range(n))
    assert e_aurc(score, correct, optimal="empirical") == pytest.approx(aurc(score, correct) - best)
    # two predictions, one wrong, ranked perfectly: AURC 0.125 below AURC* = 0.1534
    assert aurc([2.0, 1.0], [True, False]) == pytest.approx(0.125)
    assert e_aurc([2.0, 1.0], [True, False]) == pytest.approx(0.125 - (0.5 + 0.5 * math.log(0.5)))
    assert e_aurc([1.0], [False]) == pytest.approx(0.0)  # err = 1: 0 ln 0 = 0


@pytest.mark.parametrize("seed", range(4))
def test_auroc_f_is_sklearn_roc_auc_with_ties(seed) -> None:
    score, correct = tied_inputs(seed)
    assert auroc_f(score, correct) == pytest.approx(roc_auc_score(correct, score))


@pytest.mark.parametrize("seed", range(4))
def test_augrc_identity_with_auroc_f_is_exact_with_ties(seed) -> None:
    score, correct = tied_inputs(seed, n=45, levels=5)
    acc = correct.mean()
    expected = acc * (1 - acc) * (1 - roc_auc_score(correct, score)) + (1 - acc) ** 2 / 2
    assert augrc(score, correct) == pytest.approx(expected, rel=1e-12)


def small_tied_case():
    # groups of 3, 2 and 3 (72 orders); the lower groups err more often than those above
    score = np.array([3, 3, 3, 2, 2, 1, 1, 1], dtype=float)
    correct = np.array([True, True, False, True, False, False, True, False])
    return score, correct


def test_augrc_and_auroc_f_equal_their_mean_over_orders_of_ties() -> None:
    score, correct = small_tied_case()
    orders = list(tied_orders(score))
    assert len(orders) == 72
    assert augrc(score, correct) == pytest.approx(np.mean([augrc(o, correct) for o in orders]))
    assert auroc_f(score, correct) == pytest.approx(np.mean([auroc_f(o, correct) for o in orders]))


def test_aurc_against_au_arc_and_the_mean_over_orders() -> None:
    score, correct = small_tied_case()
    n, err = score.size, np.mean(~correct)
    orders = list(tied_orders(score))
    for tie_free in orders[:5]:  # without ties: AURC = 1 - AU-ARC - (err - r_1) / (2n)
        r1 = float(~correct[np.argmax(tie_free)])
        assert aurc(tie_free, correct) == pytest.approx(
            1 - auarc(tie_free, correct) - (err - r1) / (2 * n)
        )
    mean_over_orders = np.mean([aurc(o, correct) for o in orders])
    q_top = np.mean(~correct[score == score.max()])
    assert mean_over_orders == pytest.approx(1 - auarc(score, correct) - (err - q_top) / (2 * n))
    # FD-Shifts' straight line lies below the expected risk of groups that err more than
    # what is above them: its AURC is lower than the mean over orders
    assert aurc(score, correct) < mean_over_orders - 1e-3


@pytest.mark.parametrize("seed", range(3))
def test_risk_at_coverage_against_loops(seed) -> None:
    score, correct = tied_inputs(seed)
    points = reference_points(list(score), list(correct), generalized=False)[:-1]
    for target in (0.05, 0.2, 0.5, 0.8, 1.0):
        eligible = [(cov, r) for cov, r in points if cov >= target]
        assert risk_at_coverage(score, correct, target) == pytest.approx(
            min(r for _, r in eligible)
        )
        assert risk_at_coverage(score, correct, target, point="threshold") == pytest.approx(
            min(eligible)[1]
        )
    assert risk_at_coverage(score, correct, 1.0) == pytest.approx(np.mean(~correct))


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(ValueError, match="score has 1 NaN"):
        aurc([1.0, np.nan], [True, False])
    with pytest.raises(ValueError, match="same length"):
        augrc([1.0, 2.0, 3.0], [True, False])
    with pytest.raises(ValueError, match="correct must be boolean"):
        auroc_f([1.0, 2.0], [0.5, 1.0])
    with pytest.raises(ValueError, match="risk must be one of"):
        risk_coverage_curve([1.0], [True], risk="selective-risk")
    with pytest.raises(ValueError, match="optimal must be one of"):
        e_aurc([1.0], [True], optimal="fd-shifts")
    with pytest.raises(ValueError, match="point must be one of"):
        risk_at_coverage([1.0], [True], 0.5, point="nearest")
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="coverage must be"):
            risk_at_coverage([1.0], [True], bad)
