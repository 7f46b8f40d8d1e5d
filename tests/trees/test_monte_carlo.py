"""Monte Carlo baseline: CI coverage and agreement with a closed form; the compiled kernel's
Monte Carlo against the models' own predict."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.monte_carlo import clopper_pearson, monte_carlo_robustness


def test_threshold_classifier_closed_form():
    """f(x) = 1[x_0 > 0.3]; mu_0 = 0.5, sigma 0.2: R = P(x_0 > 0.3) = Phi(1)."""
    mu = np.array([0.5, 0.0])

    def predict(X):
        return (X[:, 0] > 0.3).astype(int)

    res = monte_carlo_robustness(
        predict, IndependentNormal(mu, 0.2), mu, 200_000, np.random.default_rng(0), chunk=30_000
    )
    truth = stats.norm.cdf(1.0)
    assert res.ci_low <= truth <= res.ci_high
    assert res.n_draws == 200_000
    assert res.estimate == res.n_agree / res.n_draws


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)
    with pytest.raises(ValueError):
        clopper_pearson(5, 3)


@pytest.mark.parametrize("n", [1, 7, 100, 12_345, 10**6])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.999])
def test_clopper_pearson_equals_scipy_binomtest(n, confidence):
    from scipy import stats

    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
        lo, hi = clopper_pearson(k, n, confidence)
        assert lo == pytest.approx(ci.low, abs=1e-11)
        assert hi == pytest.approx(ci.high, abs=1e-11)


def test_reproducible_with_seed():
    mu = np.zeros(3)

    def predict(X):
        return (X.sum(axis=1) > 0.1).astype(int)

    a = monte_carlo_robustness(
        predict, IndependentNormal(mu, 1.0), mu, 5000, np.random.default_rng(7)
    )
    b = monte_carlo_robustness(
        predict, IndependentNormal(mu, 1.0), mu, 5000, np.random.default_rng(7)
    )
    assert a.n_agree == b.n_agree


# ------------------------------------------------------------------ the compiled kernel
# The experiments' Monte Carlo baseline (Tables 2 and 3 of 002) runs on the compiled kernel:
# the same estimator (plain draws, R_hat = n_agree / n) with another random stream. Checked
# here against the models' own predict, draw by draw and in distribution. A statistical
# check fails when two independent estimates of one probability differ by more than 4.5
# standard deviations of their difference (chance below 1e-5 per check).
def _forest_and_noises():
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    from reliquant.trees.noise import Gaussian, Norta
    from reliquant.trees.reproduction.data import MarginalSpec

    X, y = make_classification(600, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=2)
    model = RandomForestClassifier(8, max_depth=4, random_state=0).fit(X, y)
    corr = np.array(
        [[1.0, 0.4, 0.1, 0.0], [0.4, 1.0, 0.2, 0.0], [0.1, 0.2, 1.0, -0.3], [0.0, 0.0, -0.3, 1.0]]
    )
    specs = [MarginalSpec("normal", 0.6), MarginalSpec("exponential", 0.5)] * 2
    noises = {"gaussian": Gaussian(0.4), "norta": Norta(specs, corr)}
    return X, model, noises


def _inputs_of_bins(plan, bins: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """One raw input per row of ``bins``: each in-play feature at the right edge of its bin
    (bin j is (c_{j-1}, c_j], the last bin at c_{m-1} + 1), the other features at ``mu``."""
    X = np.tile(mu, (len(bins), 1))
    for a, f in enumerate(plan.features):
        cuts = plan.xcut[plan.off[a] : plan.off[a + 1]]
        edges = np.r_[cuts, cuts[-1] + 1.0]
        X[:, f] = edges[bins[:, a]]
    return X


@pytest.mark.parametrize("noise_name", ["gaussian", "norta"])
def test_compiled_draws_carry_the_label_predict_gives_their_inputs(noise_name):
    """Per draw: the kernel's label equals model.predict on an input of the drawn bins, and
    the evaluator's label of numpy-perturbed inputs equals predict on those inputs."""
    from reliquant.trees.kernel import bins_of, labels_of_bins, sample_bins
    from reliquant.trees.plan import build_plan
    from reliquant.trees.readers import extract_ensemble

    X, model, noises = _forest_and_noises()
    ens = extract_ensemble(model)
    for i, mu in enumerate(X[:3]):
        noise = noises[noise_name].bind(mu, 4)
        plan = build_plan(ens, noise, int(ens.predict_index(mu)[0]))
        bins, labels = sample_bins(plan, 11 + i, 4000)
        assert bins.shape == (4000, plan.n_in_play) and plan.n_in_play > 0
        inputs = _inputs_of_bins(plan, bins, mu)
        np.testing.assert_array_equal(ens.classes[labels], model.predict(inputs))
        np.testing.assert_array_equal(bins_of(plan, inputs), bins)
        perturbed = noise.sample(4000, np.random.default_rng(i))
        got = labels_of_bins(plan, bins_of(plan, perturbed))
        np.testing.assert_array_equal(ens.classes[got], model.predict(perturbed))


@pytest.mark.parametrize("noise_name", ["gaussian", "norta"])
def test_compiled_estimate_agrees_with_numpy_and_predict(noise_name):
    from reliquant.trees.monte_carlo import compiled_monte_carlo
    from reliquant.trees.readers import extract_ensemble

    X, model, noises = _forest_and_noises()
    ens = extract_ensemble(model)
    n = 100_000
    for i, mu in enumerate(X[:4]):
        noise = noises[noise_name].bind(mu, 4)
        ours = compiled_monte_carlo(ens, noise, mu, n, 100 + i)
        ref = monte_carlo_robustness(model.predict, noise, mu, n, np.random.default_rng(i))
        assert ours.n_draws == n and ours.estimate == ours.n_agree / n
        assert ours.label == ref.label
        assert ours.ci_low <= ours.estimate <= ours.ci_high
        p = (ours.estimate + ref.estimate) / 2
        sd = np.sqrt(2 * p * (1 - p) / n) + 1e-12
        assert abs(ours.estimate - ref.estimate) <= 4.5 * sd, (ours, ref)


def test_compiled_stump_matches_the_closed_form():
    """A one-split tree at t on feature 0, mu_0 = 0.5, sigma 0.2: R = P(x_0 > t)."""
    from sklearn.tree import DecisionTreeClassifier

    from reliquant.trees.monte_carlo import compiled_monte_carlo
    from reliquant.trees.readers import extract_ensemble

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 2))
    model = DecisionTreeClassifier(max_depth=1).fit(X, (X[:, 0] > 0.3).astype(int))
    t = float(model.tree_.threshold[0])
    mu = np.array([0.5, 0.0])
    res = compiled_monte_carlo(extract_ensemble(model), IndependentNormal(mu, 0.2), mu, 400_000, 5)
    truth = stats.norm.sf((t - 0.5) / 0.2)
    assert abs(res.estimate - truth) <= 4.5 * np.sqrt(truth * (1 - truth) / 400_000)
    assert res.ci_low <= truth <= res.ci_high


def test_compiled_estimate_is_seeded_and_independent_of_the_thread_count():
    import numba

    from reliquant.trees.monte_carlo import compiled_monte_carlo
    from reliquant.trees.readers import extract_ensemble

    X, model, noises = _forest_and_noises()
    ens = extract_ensemble(model)
    noise = noises["norta"].bind(X[1], 4)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = compiled_monte_carlo(ens, noise, X[1], 300_000, 9)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = compiled_monte_carlo(ens, noise, X[1], 300_000, 9)
    finally:
        numba.set_num_threads(before)
    assert one.n_agree == many.n_agree
    other = compiled_monte_carlo(ens, noise, X[1], 300_000, 10)
    assert other.n_agree != one.n_agree
