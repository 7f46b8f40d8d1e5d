"""Certified selection (issue 43): the guarantee measured by simulation on populations whose
selective risk is known at every threshold, SGR against a transcription of the paper's
Algorithm 1, Learn-then-Test against a transcription of its grid and test, ties, errors."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from scipy import optimize, stats

from reliquant.compare import (
    CERTIFICATE_COLUMNS,
    certify_rows,
    certify_threshold,
    selective_risk_curve,
)

# ----------------------------------------------------------------------------- populations
# Scores uniform on a grid u_1 < ... < u_G of (0, 1]; a prediction of score u is wrong with
# probability e(u). Keeping score >= t, the selective risk is exactly the mean of e over the
# grid values >= t and the coverage the share of grid values >= t.
B = 2000  # calibration sets per setting


def _grid(g: int) -> np.ndarray:
    return (np.arange(g) + 1.0) / g


def _decreasing(u: np.ndarray, risk: float) -> np.ndarray:
    return 0.4 * (1.0 - u) ** 2 + 0.002


def _flat(u: np.ndarray, risk: float) -> np.ndarray:
    """Just above the target everywhere: every certificate is a violation (the hardest case
    for the guarantee)."""
    return np.full(u.shape, risk * 1.001)


POPULATIONS = {"decreasing": (2000, _decreasing), "tied": (20, _decreasing), "flat": (2000, _flat)}
# (population, n, risk, delta)
SETTINGS = [
    ("decreasing", 300, 0.10, 0.10),
    ("decreasing", 1000, 0.05, 0.10),
    ("decreasing", 500, 0.10, 0.05),
    ("tied", 500, 0.05, 0.10),
    ("tied", 300, 0.10, 0.20),
    ("flat", 500, 0.05, 0.10),
]
EASY = ("decreasing", 500, 0.10, 0.05)


def exact_risk(
    u: np.ndarray, e: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Population selective risk and coverage of ``score >= t`` per threshold (0 and 0 at
    ``t = inf``: nothing kept, no violation)."""
    keep = u[None, :] >= np.asarray(thresholds, dtype=float)[:, None]
    m = keep.sum(axis=1)
    risk = np.where(m > 0, (keep * e[None, :]).sum(axis=1) / np.maximum(m, 1), 0.0)
    return risk, m / u.size


@cache
def calibration_sets(population: str, n: int, risk: float) -> tuple:
    g, error = POPULATIONS[population]
    u = _grid(g)
    e = error(u, risk)
    rng = np.random.default_rng([43, g, n, int(risk * 1000)])
    idx = rng.integers(0, g, size=(B, n))
    return u, e, u[idx], rng.random((B, n)) >= e[idx]


def oracle_coverage(u: np.ndarray, e: np.ndarray, risk: float) -> float:
    r, cov = exact_risk(u, e, u)
    return float(cov[r <= risk].max()) if (r <= risk).any() else 0.0


def mc_limit(delta: float) -> float:
    return delta + 3.0 * math.sqrt(delta * (1.0 - delta) / B)


@pytest.mark.parametrize("method", ["sgr", "ltt"])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-n{s[1]}-r{s[2]}-d{s[3]}")
def test_violation_rate_is_at_most_delta(setting, method):
    """P(R(threshold) > risk) over thousands of calibration sets <= delta + 3 Monte Carlo
    standard errors; coverage against the oracle's (the largest coverage whose exact risk is
    at most the target), reported and not trivially zero where the target is easy."""
    population, n, risk, delta = setting
    u, e, scores, correct = calibration_sets(population, n, risk)
    table = certify_rows(scores, correct, risk=risk, delta=delta, method=method)
    true_risk, true_cov = exact_risk(u, e, table["threshold"].to_numpy())
    violated = table["certified"].to_numpy() & (true_risk > risk)
    rate, coverage = violated.mean(), np.where(table["certified"], true_cov, 0.0).mean()
    oracle = oracle_coverage(u, e, risk)
    print(f"{setting} {method}: violation {rate:.4f} (delta {delta}), coverage {coverage:.3f} "
          f"vs oracle {oracle:.3f}, certified {table['certified'].mean():.3f}")  # fmt: skip
    assert rate <= mc_limit(delta)
    # the certified bound holds too, wherever a threshold is certified
    assert (table["bound"] < risk)[table["certified"]].all()
    if setting == EASY:
        assert coverage >= 0.6 * oracle > 0


def test_the_simulation_catches_a_rule_without_guarantee():
    """The same simulation flags the rule a user might write by hand (the largest coverage
    whose empirical risk is at most the target): its violation rate is far above delta."""
    population, n, risk, delta = "decreasing", 1000, 0.05, 0.10
    u, e, scores, correct = calibration_sets(population, n, risk)
    chosen = []
    for s, c in zip(scores[:300], correct[:300], strict=True):
        thr, _, emp = selective_risk_curve(s, c)
        chosen.append(thr[emp <= risk][-1] if (emp <= risk).any() else np.inf)
    true_risk, _ = exact_risk(u, e, np.array(chosen))
    assert (true_risk > risk).mean() > 3 * mc_limit(delta)


def test_rows_equal_single_calls():
    u, e, scores, correct = calibration_sets("tied", 300, 0.10)
    for method in ("sgr", "ltt"):
        table = certify_rows(scores[:25], correct[:25], risk=0.1, delta=0.2, method=method)
        assert tuple(table.columns) == CERTIFICATE_COLUMNS
        for i in range(25):
            one = certify_threshold(scores[i], correct[i], risk=0.1, delta=0.2, method=method)
            row = table.iloc[i]
            assert one.threshold == row["threshold"] and one.n_accepted == row["n_accepted"]
            assert one.n_errors == row["n_errors"] and one.certified == row["certified"]
            assert one.bound == pytest.approx(row["bound"], rel=1e-12)


# ----------------------------------------------------------------------------- SGR
def sgr_paper(kappa: list[float], correct: list[bool], r_star: float, delta: float) -> list:
    """Geifman & El-Yaniv (NeurIPS 2017), Algorithm 1, as printed: sort S_m by kappa;
    z_min = 1, z_max = m; for i = 1..ceil(log2 m): z = ceil((z_min + z_max) / 2), theta =
    kappa(x_z), g_theta keeps kappa >= theta, r_hat its empirical selective risk, b*_i from
    Lemma 3.1 (B* solving Binom-CDF(m_theta r_hat; m_theta, b) = delta / ceil(log2 m), by root
    finding on scipy's binomial CDF), z_max = z if b*_i < r* else z_min = z. Returns the steps'
    (theta, b*); the paper outputs the last one."""
    m = len(kappa)
    ordered = sorted(kappa)
    k = math.ceil(math.log2(m))
    d = delta / k
    z_min, z_max, steps = 1, m, []
    for _ in range(k):
        z = math.ceil((z_min + z_max) / 2)
        theta = ordered[z - 1]
        kept = [c for s, c in zip(kappa, correct, strict=True) if s >= theta]
        m_theta = len(kept)
        errors = round(m_theta * (sum(not c for c in kept) / m_theta))
        if errors == m_theta:
            b = 1.0
        else:
            b = optimize.brentq(lambda p, e=errors, t=m_theta: stats.binom.cdf(e, t, p) - d, 0, 1,
                                xtol=1e-15, rtol=1e-14)  # fmt: skip
        steps.append((theta, b))
        if b < r_star:
            z_max = z
        else:
            z_min = z
    return steps


def _fixed_input(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = rng.random(n)  # distinct scores
    return s, rng.random(n) >= 0.3 * (1 - s) ** 2


# fixed inputs: the last step passes (257, 1000, 1024), it fails after an earlier pass (400),
# nothing passes (50, 1000 at 2 %, 300)
SGR_CASES = [(50, 0, 0.2, 0.1), (257, 1, 0.05, 0.1), (1000, 2, 0.05, 0.1), (1000, 3, 0.02, 0.05),
             (1024, 4, 0.08, 0.2), (300, 5, 0.01, 0.1), (400, 7, 0.05, 0.1)]  # fmt: skip


@pytest.mark.parametrize(("n", "seed", "risk", "delta"), SGR_CASES)
def test_sgr_equals_the_papers_algorithm(n, seed, risk, delta):
    """Same threshold and bound as the transcription: the paper's output when its last step
    passes; otherwise the last step that passed (the largest certified coverage), or none."""
    s, c = _fixed_input(n, seed)
    steps = sgr_paper(s.tolist(), c.tolist(), risk, delta)
    got = certify_threshold(s, c, risk=risk, delta=delta, method="sgr")
    assert got.n_tests == len(steps) == math.ceil(math.log2(n))
    assert got.level == pytest.approx(delta / len(steps))
    passed = [st for st in steps if st[1] < risk]
    if steps[-1][1] < risk:
        assert (got.threshold, got.bound) == pytest.approx(steps[-1], rel=1e-9)
    if passed:
        assert got.certified
        assert got.threshold == passed[-1][0]
        assert got.bound == pytest.approx(passed[-1][1], rel=1e-9)
        assert got.n_accepted == int((s >= got.threshold).sum())
        assert got.n_errors == int((~c[s >= got.threshold]).sum())
    else:
        assert not got.certified and got.threshold == np.inf and got.coverage == 0
        assert "no threshold certifies" in got.message


def test_sgr_cases_cover_both_endings():
    """The fixed inputs above hold a case whose last step passes, one whose last step fails
    after an earlier pass, and one where nothing passes."""
    kinds = set()
    for n, seed, risk, delta in SGR_CASES:
        steps = sgr_paper(*(v.tolist() for v in _fixed_input(n, seed)), risk, delta)
        ok = [b < risk for _, b in steps]
        kinds.add("last passes" if ok[-1] else "earlier pass" if any(ok) else "none")
    assert kinds == {"last passes", "earlier pass", "none"}


# ----------------------------------------------------------------------------- LTT
def ltt_by_hand(s: np.ndarray, c: np.ndarray, risk: float, delta: float) -> tuple | None:
    """Learn-then-Test as the module docstring states it, written out: J = ceil(log2 n)
    counts from N_min = ceil(ln(delta/J) / ln(1 - risk)) to n, T_j the (N_j + 1)-th largest
    score, kept s > T_j, p_j = sum of binomial pmf up to the errors, Bonferroni at delta / J;
    the largest kept count. Returns (T, kept, errors) or None."""
    n = s.size
    j = max(1, math.ceil(math.log2(n)))
    n_min = math.ceil(math.log(delta / j) / math.log(1 - risk))
    if n_min > n:
        return None
    grid = sorted({int(round(x)) for x in np.linspace(n_min, n, j)})
    desc = sorted(s.tolist(), reverse=True)
    best = None
    for count in grid:
        t = desc[count] if count < n else -math.inf
        kept = s > t if count < n else np.ones(n, dtype=bool)
        m, k = int(kept.sum()), int((~c[kept]).sum())
        p = sum(stats.binom.pmf(i, m, risk) for i in range(k + 1)) if m else 1.0
        if p <= delta / len(grid) and (best is None or m > best[1]):
            best = (t, m, k)
    return best


@pytest.mark.parametrize(("n", "seed", "risk", "delta"), [
    (500, 0, 0.1, 0.1), (1000, 1, 0.05, 0.1), (200, 2, 0.02, 0.1), (400, 3, 0.2, 0.05),
])  # fmt: skip
@pytest.mark.parametrize("tied", [False, True])
def test_ltt_equals_a_transcription(n, seed, risk, delta, tied):
    s, c = _fixed_input(n, seed)
    if tied:
        s = np.floor(s * 8) / 8  # 8 values
    want = ltt_by_hand(s, c, risk, delta)
    got = certify_threshold(s, c, risk=risk, delta=delta, method="ltt")
    if want is None:
        assert not got.certified
        return
    t, m, k = want
    assert got.certified and (got.n_accepted, got.n_errors) == (m, k)
    assert got.n_accepted == int((s >= got.threshold).sum())  # s >= threshold <=> s > T
    if t == -math.inf:  # the grid's last count: keep all
        assert got.threshold == -math.inf
    else:
        assert got.threshold > t and not ((s > t) & (s < got.threshold)).any()
    assert got.bound <= risk


def test_ltt_too_few_predictions_says_how_many_are_needed():
    s, c = _fixed_input(40, 0)
    got = certify_threshold(s, c, risk=0.01, delta=0.1, method="ltt")
    j = math.ceil(math.log2(40))
    need = math.ceil(math.log(0.1 / j) / math.log(0.99))
    assert not got.certified and got.n_tests == 0 and f"{need} kept" in got.message


# ----------------------------------------------------------------------------- ties
@pytest.mark.parametrize("method", ["sgr", "ltt"])
def test_heavily_tied_scores(method):
    """Four score values: a threshold never splits a value, and the row order never matters."""
    rng = np.random.default_rng(7)
    s = rng.integers(0, 4, 800).astype(float)
    c = rng.random(800) >= np.array([0.4, 0.1, 0.03, 0.01])[s.astype(int)]
    got = certify_threshold(s, c, risk=0.1, delta=0.1, method=method)
    assert got.certified
    assert got.n_accepted == int((s >= got.threshold).sum())
    assert got.n_errors == int((~c[s >= got.threshold]).sum())
    if method == "sgr":
        assert got.threshold in set(s.tolist())
    else:  # just above a value, below the next
        below = s[s < got.threshold].max()
        assert got.threshold == np.nextafter(below, np.inf)
    perm = rng.permutation(800)
    again = certify_threshold(s[perm], c[perm], risk=0.1, delta=0.1, method=method)
    assert again == got
    # within a tied value, which rows are wrong does not matter either
    flipped = c.copy()
    for v in range(4):
        at = np.flatnonzero(s == v)
        flipped[at] = rng.permutation(c[at])
    assert certify_threshold(s, flipped, risk=0.1, delta=0.1, method=method) == got


def test_one_distinct_value_keeps_all_or_nothing():
    s, c = np.ones(400), np.r_[np.zeros(4, bool), np.ones(396, bool)]
    for method in ("sgr", "ltt"):
        got = certify_threshold(s, c, risk=0.05, delta=0.1, method=method)
        assert got.certified and got.n_accepted == 400 and got.n_errors == 4
        assert got.accepts(s).all()


def test_selective_risk_curve_by_hand():
    thr, cov, risk = selective_risk_curve(
        [1, 1, 2, 3, 3, 3], [True, False, True, True, False, True]
    )
    np.testing.assert_array_equal(thr, [3, 2, 1])
    np.testing.assert_allclose(cov, [3 / 6, 4 / 6, 1])
    np.testing.assert_allclose(risk, [1 / 3, 1 / 4, 2 / 6])


def test_not_certified_accepts_nothing():
    got = certify_threshold([np.inf, 1.0, 0.0], [True, True, False], risk=0.01, delta=0.1)
    assert not got.certified and not got.accepts([np.inf, 5.0]).any()
    assert math.isnan(got.empirical_risk) and got.bound == 1.0


# ----------------------------------------------------------------------------- errors
GOOD = {"score": [0.1, 0.5, 0.9], "correct": [True, False, True], "risk": 0.1, "delta": 0.1}


@pytest.mark.parametrize(("change", "name"), [
    ({"risk": 0.0}, "risk"), ({"risk": 1.0}, "risk"), ({"risk": 1.5}, "risk"),
    ({"risk": float("nan")}, "risk"), ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"),
    ({"delta": -0.1}, "delta"), ({"score": [0.1, 0.5]}, "same length"),
    ({"correct": [0.5, 1.0, 0.0]}, "correct"), ({"correct": ["yes", "no", "yes"]}, "correct"),
    ({"score": [0.1, float("nan"), 0.9]}, "score"), ({"method": "bonferroni"}, "method"),
    ({"n_grid": 0}, "n_grid"), ({"score": []}, "score"),
])  # fmt: skip
def test_bad_arguments_are_named(change, name):
    kwargs = {**GOOD, **change}
    score, correct = kwargs.pop("score"), kwargs.pop("correct")
    with pytest.raises((ValueError, TypeError), match=name):
        certify_threshold(score, correct, **kwargs)


def test_bad_rows_are_named():
    with pytest.raises(ValueError, match="2-D"):
        certify_rows([0.1, 0.2], [True, False], risk=0.1, delta=0.1)
    with pytest.raises(ValueError, match=r"score\[1\]"):
        certify_rows([[0.1, 0.2], [np.nan, 0.3]], [[True, False]] * 2, risk=0.1, delta=0.1)
