"""Shift conditions: the quantile split's sizes and order in closed form, the principal
feature against scikit-learn's PCA, the noise's spread within a Monte Carlo interval."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from reliquant.compare.reproduction.shift import (
    gaussian_noise_shift,
    principal_feature,
    quantile_shift_split,
)


def _classes(sizes: tuple[int, ...], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    z = rng.normal(size=y.size)
    x = np.column_stack(
        [
            z + 0.3 * rng.normal(size=y.size) + y,
            1000 * (z + 0.3 * rng.normal(size=y.size)),  # scale must not matter
            rng.normal(size=y.size),
            np.round(rng.normal(size=y.size)),  # integer values: many ties
        ]
    )
    return x, y


@pytest.mark.parametrize("feature", [None, 3])
@pytest.mark.parametrize("quantile", [0.3, 0.6])
def test_quantile_split_sizes_and_order_per_class(feature, quantile):
    sizes = (101, 57, 12)
    x, y = _classes(sizes)
    split = quantile_shift_split(
        x,
        y,
        quantile=quantile,
        validation_fraction=0.2,
        test_fraction=0.25,
        seed=5,
        key=("t", 1),
        feature=feature,
    )
    parts = [split.train, split.validation, split.clean_test, split.shifted_test]
    everything = np.concatenate(parts)
    assert np.array_equal(np.sort(everything), np.arange(y.size))  # disjoint, complete
    f = split.feature
    for c, n_c in enumerate(sizes):
        m_c = int(round(quantile * n_c))
        source = [p[y[p] == c] for p in parts[:3]]
        shifted = split.shifted_test[y[split.shifted_test] == c]
        assert sum(len(s) for s in source) == m_c and len(shifted) == n_c - m_c
        assert len(source[1]) == round(0.2 * m_c) and len(source[2]) == round(0.25 * m_c)
        # every source value at or below every shifted value of the class: the q-quantile cut
        assert x[np.concatenate(source), f].max() <= x[shifted, f].min()
    # the class shares survive the shift (no label shift) up to rounding
    share = np.bincount(y[split.shifted_test]) / len(split.shifted_test)
    np.testing.assert_allclose(share, np.array(sizes) / sum(sizes), atol=0.02)


def test_quantile_split_is_seeded():
    x, y = _classes((80, 40))
    args = dict(quantile=0.5, validation_fraction=0.25, test_fraction=0.25, feature=3)
    a = quantile_shift_split(x, y, seed=1, **args)
    b = quantile_shift_split(x, y, seed=1, **args)
    c = quantile_shift_split(x, y, seed=2, **args)
    assert all(
        np.array_equal(u, v)
        for u, v in zip(
            (a.train, a.validation, a.shifted_test),
            (b.train, b.validation, b.shifted_test),
            strict=True,
        )
    )
    assert not np.array_equal(a.validation, c.validation)  # another seed, other rows
    assert not np.array_equal(a.shifted_test, c.shifted_test)  # ties at the cut re-broken


def test_principal_feature_agrees_with_sklearn_pca_on_standardised_columns():
    for seed in range(5):
        x, _ = _classes((60, 60), seed)
        z = (x - x.mean(axis=0)) / x.std(axis=0)
        expected = int(np.argmax(np.abs(PCA(n_components=1).fit(z).components_[0])))
        assert principal_feature(x) == expected
    constant = np.column_stack([np.ones(50), np.random.default_rng(0).normal(size=(50, 2))])
    assert principal_feature(constant) in (1, 2)
    with pytest.raises(ValueError, match="every column is constant"):
        principal_feature(np.ones((5, 2)))


def test_quantile_split_refuses_bad_arguments():
    x, y = _classes((20, 20))
    with pytest.raises(ValueError, match="quantile must be in"):
        quantile_shift_split(x, y, quantile=1.0, validation_fraction=0.2, test_fraction=0.2, seed=0)
    with pytest.raises(ValueError, match="feature 9 is not a column"):
        quantile_shift_split(
            x, y, quantile=0.5, validation_fraction=0.2, test_fraction=0.2, seed=0, feature=9
        )
    with pytest.raises(ValueError, match="sum below 1"):
        quantile_shift_split(x, y, quantile=0.5, validation_fraction=0.6, test_fraction=0.4, seed=0)


def test_noise_sd_is_scale_times_the_training_sd_within_a_monte_carlo_interval():
    rng = np.random.default_rng(3)
    train = rng.normal(size=(40, 3)) * np.array([0.5, 2.0, 10.0]) + 7.0
    s = train.std(axis=0, ddof=1)
    test = np.tile(np.array([1.0, -2.0, 3.0]), (40_000, 1))
    scale = 0.8
    noisy = gaussian_noise_shift(test, train, scale=scale, seed=11, key=("noise", 0))
    noise = noisy - test
    n = noise.shape[0]
    sigma = scale * s
    # sample sd of n normals: relative standard error 1 / sqrt(2 (n - 1)); 5 of them allowed
    np.testing.assert_array_less(np.abs(noise.std(axis=0, ddof=1) / sigma - 1), 5 / np.sqrt(2 * n))
    np.testing.assert_array_less(np.abs(noise.mean(axis=0)), 5 * sigma / np.sqrt(n))
    corr = np.corrcoef(noise, rowvar=False)[np.triu_indices(3, 1)]
    np.testing.assert_array_less(np.abs(corr), 5 / np.sqrt(n))
    again = gaussian_noise_shift(test, train, scale=scale, seed=11, key=("noise", 0))
    assert np.array_equal(noisy, again)
    other = gaussian_noise_shift(test, train, scale=scale, seed=11, key=("noise", 1))
    assert not np.array_equal(noisy, other)
    assert np.array_equal(gaussian_noise_shift(test, train, scale=0.0, seed=1), test)
    with pytest.raises(ValueError, match=r"x_test must be \(m, 3\)"):
        gaussian_noise_shift(test[:, :2], train, scale=1.0, seed=1)
