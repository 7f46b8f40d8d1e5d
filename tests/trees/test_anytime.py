"""The anytime robustness method (issue 16): exactness, certified bounds, coverage, errors.

False-failure rates: the coverage test fails by chance with probability below 1e-3 (a
binomial tail at the nominal level); the Monte Carlo comparisons use 4.5 standard
deviations (below 1e-5 each).
"""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees.anytime import robustness, robustness_batch, warm_up
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.engine import exact_robustness
from reliquant.trees.monte_carlo import monte_carlo_robustness
from reliquant.trees.noise import Gaussian, Norta
from reliquant.trees.norta import ExponentialMarginal, NormalMarginal
from reliquant.trees.readers import extract_ensemble

CORR = np.array(
    [[1.0, 0.4, 0.1, 0.0], [0.4, 1.0, 0.2, 0.0], [0.1, 0.2, 1.0, 0.3], [0.0] * 3 + [1.0]]
)
CORR[3, 2] = 0.3


@pytest.fixture(scope="module", autouse=True)
def compiled_kernel():
    """Compile the numba kernel first: timed tests must not spend their budget on it."""
    warm_up()


@pytest.fixture(scope="module")
def data():
    return make_classification(600, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=4)


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return RandomForestClassifier(8, max_depth=4, random_state=0).fit(X, y)


def _mc_check(model, noise, x, r, n=100_000, seed=0):
    """The model's own predict with plain draws agrees with the result's estimate."""
    mc = monte_carlo_robustness(model.predict, noise, x, n, np.random.default_rng(seed))
    sd = np.sqrt(max(mc.estimate * (1 - mc.estimate), 1e-6) / n)
    assert r.ci_low - 4.5 * sd <= mc.estimate <= r.ci_high + 4.5 * sd, (r, mc)


def test_small_model_is_exact_and_equals_the_engine(data):
    X, y = data
    model = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, y)
    ens = extract_ensemble(model)
    for x in X[:5]:
        r = robustness(model, x, Gaussian(0.3), time_budget=5.0)
        ref = exact_robustness(ens, IndependentNormal(x, np.sqrt(0.3)), x, tol=0.0)
        assert r.exact and r.stop == "exact" and r.n_draws == 0
        assert abs(r.estimate - ref.robustness) <= 1e-9
        assert r.ci_low <= ref.robustness + 1e-12 and ref.robustness - 1e-12 <= r.ci_high
        assert r.label == model.predict(x[None])[0]


@pytest.mark.parametrize(
    "noise",
    [
        Gaussian(np.array([0.4, 0.2, 0.6, 0.3])),
        Gaussian(CORR * 0.4),
        Norta([lambda v: NormalMarginal(v, 0.6), lambda v: ExponentialMarginal(v, 0.4)] * 2, CORR),
    ],
    ids=["diagonal", "correlated", "norta"],
)
def test_sampling_agrees_with_model_predict(noise, forest, data):
    X, _ = data
    for i, x in enumerate(X[:3]):
        r = robustness(forest, x, noise, time_budget=1.0, certify_fraction=0.0, seed=i)
        assert r.lower <= r.ci_low <= r.estimate <= r.ci_high <= r.upper
        assert r.n_draws > 0
        _mc_check(forest, noise.bind(x, 4), x, r, seed=i)


def test_certified_bounds_contain_the_exact_value(forest, data):
    X, _ = data
    ens = extract_ensemble(forest)
    for i, x in enumerate(X[:12]):
        exact = exact_robustness(ens, IndependentNormal(x, np.sqrt(0.5)), x, tol=0.0).robustness
        for frac in (0.0, 0.02, 0.2):
            r = robustness(forest, x, Gaussian(0.5), time_budget=0.4, certify_fraction=frac,
                           seed=i, max_draws=20_000)  # fmt: skip
            assert r.lower - 1e-12 <= exact <= r.upper + 1e-12
            assert r.lower <= r.ci_low <= r.ci_high <= r.upper


def test_interval_coverage_over_many_cases(data):
    """At confidence 0.8, 120 cases: misses must stay below the 1e-3 binomial tail."""
    X, y = data
    models = [RandomForestClassifier(6, max_depth=3, random_state=s).fit(X, y) for s in range(4)]
    misses = cases = 0
    for m, model in enumerate(models):
        ens = extract_ensemble(model)
        for j, x in enumerate(X[10:40]):
            var = (0.2, 0.6, 1.5)[j % 3]
            exact = exact_robustness(ens, IndependentNormal(x, np.sqrt(var)), x, tol=0.0)
            r = robustness(ens, x, Gaussian(var), time_budget=0.3, certify_fraction=0.01,
                           confidence=0.8, seed=100 * m + j, max_draws=3_000)  # fmt: skip
            if r.exact:
                continue
            cases += 1
            misses += not (r.ci_low <= exact.robustness <= r.ci_high)
    assert cases >= 80
    assert misses <= stats.binom.ppf(1 - 1e-3, cases, 0.2)


def test_batch_returns_one_row_per_sample(forest, data):
    X, _ = data
    df = robustness_batch(forest, X[:3], Gaussian(0.4), time_budget=0.3, max_draws=5000)
    assert list(df["sample"]) == [0, 1, 2]
    for col in ("label", "lower", "upper", "estimate", "ci_low", "ci_high", "exact", "n_draws",
                "seconds", "stop", "half_width"):  # fmt: skip
        assert col in df
    assert np.all(df["label"].to_numpy() == forest.predict(X[:3]))


def test_zero_variance_holds_a_feature_fixed(forest, data):
    X, _ = data
    x = X[7]
    var = np.array([0.5, 0.0, 0.5, 0.5])
    r = robustness(forest, x, Gaussian(var), time_budget=2.0)
    _mc_check(forest, IndependentNormal(x, np.sqrt(var)), x, r)
    # the same for a covariance with a zero row and column, and for plain sampling
    cov = CORR * 0.5
    cov[1, :] = cov[:, 1] = 0.0
    r2 = robustness(forest, x, Gaussian(cov), time_budget=1.0, certify_fraction=0.0)
    _mc_check(forest, Gaussian(cov).bind(x, 4), x, r2)
    r3 = robustness(forest, x, Gaussian(var), time_budget=0.5, certify_fraction=0.0)
    _mc_check(forest, IndependentNormal(x, np.sqrt(var)), x, r3)


def test_noise_of_another_dimension_is_refused(forest, data):
    X, _ = data
    x = X[0]
    with pytest.raises(ValueError, match="3 variances.*4 features"):
        robustness(forest, x, Gaussian(np.ones(3)))
    with pytest.raises(ValueError, match="3x3.*4 features"):
        robustness(forest, x, Gaussian(np.eye(3)))
    with pytest.raises(ValueError, match="3 marginals.*4 features"):
        robustness(forest, x, Norta([NormalMarginal(0, 1)] * 3, np.eye(3)))
    with pytest.raises(ValueError, match="correlation has shape.*4 features"):
        robustness(forest, x, Norta([NormalMarginal(0, 1)] * 4, np.eye(3)))
    with pytest.raises(ValueError, match="x has 3 features but the model has 4"):
        robustness(forest, x[:3], Gaussian(0.1))
    with pytest.raises(ValueError, match="noise has 3 features but the model has 4"):
        robustness(forest, x, IndependentNormal(x[:3], 1.0))


def test_unsupported_models_say_what_is_supported(data):
    X, y = data
    with pytest.raises(ValueError, match="regressor.*supported"):
        robustness(RandomForestRegressor(3).fit(X, y), X[0], Gaussian(0.1))
    with pytest.raises(ValueError, match="XGBClassifier"):
        robustness(xgb.XGBRegressor(n_estimators=2).fit(X, y), X[0], Gaussian(0.1))
    pipe = make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=2)).fit(X, y)
    with pytest.raises(ValueError, match=r"final estimator.*transform"):
        robustness(pipe, X[0], Gaussian(0.1))
    multi = RandomForestClassifier(3).fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="multi-output"):
        robustness(multi, X[0], Gaussian(0.1))


def test_xgboost_label_and_robustness_follow_predict(data):
    X, y = data
    model = xgb.XGBClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y == 1)
    for i, x in enumerate(X[:3]):
        r = robustness(model, x, Gaussian(0.3), time_budget=1.0, seed=i)
        assert r.label == model.predict(x[None])[0]
        _mc_check(model, IndependentNormal(x, np.sqrt(0.3)), x, r)


def test_deterministic_mode_repeats_exactly(forest, data):
    X, _ = data
    kw = {"max_boxes": 200, "max_draws": 50_000, "seed": 3, "half_width": 0.0}
    a = robustness(forest, X[2], Gaussian(0.6), **kw)
    b = robustness(forest, X[2], Gaussian(0.6), time_budget=1e-3, **kw)
    assert a.n_draws == b.n_draws == 50_000 and a.stop == "max_draws"
    for f in ("lower", "upper", "estimate", "ci_low", "ci_high"):
        assert getattr(a, f) == getattr(b, f)
    with pytest.raises(ValueError, match="max_draws"):
        robustness(forest, X[2], Gaussian(0.6), max_boxes=10)


def test_fixed_look_gives_the_clopper_pearson_interval(forest, data):
    """Deterministic mode with plain draws (correlated noise): the interval at the planned
    look ``max_draws`` lies inside the Clopper-Pearson interval at the level left to it."""
    from reliquant.trees.anytime import SEQ_SHARE
    from reliquant.trees.monte_carlo import clopper_pearson

    X, _ = data
    n = 40_000
    r = robustness(forest, X[4], Gaussian(CORR * 0.4), max_boxes=1, max_draws=n,
                   half_width=0.0, seed=5)  # fmt: skip
    assert r.n_draws == n and r.stop == "max_draws"
    lo, hi = clopper_pearson(round(r.estimate * n), n, 1 - (1 - SEQ_SHARE) * 0.05)
    assert lo - 1e-12 <= r.ci_low <= r.estimate <= r.ci_high <= hi + 1e-12
    _mc_check(forest, Gaussian(CORR * 0.4).bind(X[4], 4), X[4], r)


@pytest.mark.parametrize("p", [0.5, 0.9, 0.999, 1.0])
def test_planned_draws_reach_the_half_width(p):
    """The fixed look's plan: at the planned draws the Clopper-Pearson half-width (with the
    pilot's share as the truth) is at most the target, and not far below it."""
    from reliquant.trees.anytime import _draws_for
    from reliquant.trees.monte_carlo import clopper_pearson

    target, alpha = 2.5e-4, 0.04
    n = int(_draws_for(p, 10**9, target, alpha))  # a pilot this long: q = p
    lo, hi = clopper_pearson(round(p * n), n, 1 - alpha)
    assert (hi - lo) / 2 <= target
    m = int(n / 1.5)
    lo, hi = clopper_pearson(round(p * m), m, 1 - alpha)
    assert (hi - lo) / 2 > target
