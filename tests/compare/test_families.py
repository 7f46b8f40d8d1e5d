"""The two families and the five comparator families of every score the library computes."""

from __future__ import annotations

import pytest

from reliquant.compare import (
    COMPARATOR_FAMILIES,
    MODEL_SCORES,
    SCORE_COMPARATOR_FAMILY,
    SCORE_FAMILY,
    comparator_family,
)
from reliquant.compare.families import PAPER_ROBUSTNESS


def test_every_score_has_a_family_and_a_comparator_family():
    assert set(MODEL_SCORES) <= set(SCORE_FAMILY)
    assert set(SCORE_COMPARATOR_FAMILY) == set(SCORE_FAMILY)
    assert set(SCORE_COMPARATOR_FAMILY.values()) == set(COMPARATOR_FAMILIES)


def test_the_robustness_comparator_family_is_the_papers_scores():
    robust = {s for s, f in SCORE_COMPARATOR_FAMILY.items() if f == "robustness"}
    assert robust == PAPER_ROBUSTNESS
    # every other score of the robustness side is read from the probabilities
    others = {s for s, f in SCORE_FAMILY.items() if f == "robustness"} - robust
    assert others == {"log_ratio"} and comparator_family("log_ratio") == "probability"
    assert all(SCORE_FAMILY[s] == "uncertainty" for s in set(SCORE_FAMILY) - robust - others)


@pytest.mark.parametrize(
    ("score", "family"),
    [("energy_score", "logit"), ("trust_score", "feature distance"),
     ("negative_u_e", "ensemble"), ("doctor_alpha", "probability")],
)  # fmt: skip
def test_known_families(score, family):
    assert comparator_family(score) == family


def test_an_unknown_score_is_refused_by_name():
    with pytest.raises(ValueError, match="'odin'.*no known comparator family"):
        comparator_family("odin")
