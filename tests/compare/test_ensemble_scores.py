"""Deep-ensemble scores against explicit loops over members with scipy.stats.entropy, their
extremes (agreeing members, members certain of different classes), and bad stacks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import entropy

from reliquant.compare import negative_entropy
from reliquant.compare.ensemble_scores import (
    check_member_probabilities,
    ensemble_max_probability,
    ensemble_probabilities,
    negative_mutual_information,
)


@pytest.fixture
def members() -> np.ndarray:
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.full(3, 0.6), size=(5, 80))  # M = 5 members, n = 80, K = 3
    p[:, 0] = [0.2, 0.3, 0.5]  # every member agrees: mutual information 0
    p[:, 1] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0, 0], [0, 1.0, 0]]
    return p


def test_scores_equal_loops_over_members(members) -> None:
    m, n, k = members.shape
    mean = [[sum(members[j, i, c] for j in range(m)) / m for c in range(k)] for i in range(n)]
    np.testing.assert_allclose(ensemble_probabilities(members), mean, rtol=1e-12)
    np.testing.assert_allclose(ensemble_max_probability(members), [max(r) for r in mean])
    mi = [entropy(mean[i]) - sum(entropy(members[j, i]) for j in range(m)) / m for i in range(n)]
    np.testing.assert_allclose(negative_mutual_information(members), -np.array(mi), atol=1e-13)
    # the ensemble's predictive entropy is the probability score on the mean
    np.testing.assert_allclose(
        negative_entropy(ensemble_probabilities(members)), [-entropy(r) for r in mean]
    )


def test_extremes(members) -> None:
    mi = -negative_mutual_information(members)
    assert mi[0] == 0.0  # members agree (clipped at 0, never a rounding -1e-17)
    assert (mi >= 0).all()
    # members certain of different classes: I = H(mean) = H([2/5, 2/5, 1/5])
    assert mi[1] == pytest.approx(-(2 * 0.4 * math.log(0.4) + 0.2 * math.log(0.2)))
    assert (mi <= min(math.log(5), math.log(3)) + 1e-12).all()
    same = np.stack([members[0]] * 4)  # identical members
    np.testing.assert_array_equal(negative_mutual_information(same), 0.0)
    np.testing.assert_allclose(ensemble_max_probability(same), members[0].max(axis=1))


def test_bad_stacks_name_the_argument(members) -> None:
    with pytest.raises(ValueError, match="member_proba must be 3-D.*np.stack"):
        ensemble_max_probability(members[0])
    with pytest.raises(ValueError, match="at least two members.*M = 1"):
        negative_mutual_information(members[:1])
    bad = members.copy()
    bad[3, 10, 0] = np.nan
    with pytest.raises(ValueError, match=r"member_proba\[3\] has NaN or inf.*first row 10"):
        ensemble_probabilities(bad)
    with pytest.raises(ValueError, match=r"member_proba\[2\] rows must sum to 1"):
        members_bad = members.copy()
        members_bad[2] *= 2.0
        check_member_probabilities(members_bad)
    with pytest.raises(ValueError, match="at least two classes"):
        ensemble_max_probability(np.ones((3, 4, 1)))
