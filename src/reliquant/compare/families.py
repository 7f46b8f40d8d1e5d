"""The two families of reliability scores, and the family of every score this library computes.

A reliability score (higher = more reliable) is a *robustness* score when it measures whether
the prediction survives a perturbation (of the input: tree robustness, the black-box Monte
Carlo; of the model: ``eps_glob``, ``eps_loc`` of paper 000; and the log-ratio of the two
largest probabilities, robustness quantification for discriminative classifiers after
Lassance & De Bock, arXiv 2603.23318), an *uncertainty* score when it is read from the
predicted distribution (maximum probability, negative entropy, margin, centroid proximity,
the negated ``u_*`` of paper 000). :data:`SCORE_FAMILY` names the scores this library computes
(the workflow's compare topic reads the same mapping); :func:`reliquant.compare.which_score`'s
``families=`` adds or overrides names (:func:`check_families`).

The log-ratio is a transform of the probabilities (with two classes it ranks exactly as the
maximum probability): it is the robustness side of a verdict only when no other robustness
score is given (:data:`PROBABILITY_ROBUSTNESS`).

**Comparator families** (issue 44). The uncertainty side splits by what a score is read
from, the families of comparators the failure-detection literature uses
(:data:`COMPARATOR_FAMILIES`, :data:`SCORE_COMPARATOR_FAMILY`, :func:`comparator_family`):

================= =========================================================================
family            scores
================= =========================================================================
probability       read from one model's class probabilities: maximum probability, negative
                  entropy, margin, the log-ratio, centroid proximity, DOCTOR's two, the
                  negated ``u_m`` and ``u_H`` of paper 000
logit             read from the logits: maximum logit, energy
feature distance  distances in the model's input (or embedding) space, fitted on the training
                  data: trust score, minus the Mahalanobis distance, minus the k-NN distance
ensemble          read from the disagreement of several models: the deep ensemble's mean
                  maximum probability and minus its mutual information, paper 000's bootstrap
                  ensemble's negated ``u_a``, ``u_t`` (its total entropy), ``u_e``
robustness        the papers' robustness scores (:data:`PAPER_ROBUSTNESS`): whether the
                  prediction survives a perturbation of the input or of the model
================= =========================================================================

The log-ratio is a transform of the probabilities: in the two-family split it is a
robustness score (after Lassance & De Bock), among the comparator families a probability
score, so that "the paper's robustness score against the best probability score" includes it.

Public API: :data:`FAMILIES`, :data:`SCORE_FAMILY`, :data:`PROBABILITY_ROBUSTNESS`,
:data:`COMPARATOR_FAMILIES`, :data:`SCORE_COMPARATOR_FAMILY`, :data:`PAPER_ROBUSTNESS`,
:func:`score_family`, :func:`check_families`, :func:`comparator_family`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "COMPARATOR_FAMILIES",
    "FAMILIES",
    "PAPER_ROBUSTNESS",
    "PROBABILITY_ROBUSTNESS",
    "SCORE_COMPARATOR_FAMILY",
    "SCORE_FAMILY",
    "check_families",
    "comparator_family",
    "score_family",
]

#: The two families of reliability scores.
FAMILIES = ("robustness", "uncertainty")

#: Every score this library computes (under the name its functions and the workflow give it)
#: -> its family. Read-only: pass ``families=`` to :func:`reliquant.compare.which_score` for
#: other names.
SCORE_FAMILY: Mapping[str, str] = MappingProxyType(
    {
        "mc_robustness": "robustness",
        "tree_robustness": "robustness",
        "eps_glob": "robustness",
        "eps_loc": "robustness",
        "log_ratio": "robustness",
        "max_probability": "uncertainty",
        "negative_entropy": "uncertainty",
        "margin": "uncertainty",
        "centroid_proximity": "uncertainty",
        "negative_u_m": "uncertainty",
        "negative_u_H": "uncertainty",
        "negative_u_a": "uncertainty",
        "negative_u_t": "uncertainty",
        "negative_u_e": "uncertainty",
        "doctor_alpha": "uncertainty",
        "doctor_beta": "uncertainty",
        "max_logit": "uncertainty",
        "energy_score": "uncertainty",
        "trust_score": "uncertainty",
        "negative_mahalanobis": "uncertainty",
        "negative_knn_distance": "uncertainty",
        "ensemble_max_probability": "uncertainty",
        "negative_mutual_information": "uncertainty",
    }
)

#: The comparator families (module docstring), the robustness family last.
COMPARATOR_FAMILIES = ("probability", "logit", "feature distance", "ensemble", "robustness")

#: The papers' own robustness scores: the robustness comparator family.
PAPER_ROBUSTNESS = frozenset({"mc_robustness", "tree_robustness", "eps_glob", "eps_loc"})

_BY_COMPARATOR_FAMILY = {
    "probability": ("max_probability", "negative_entropy", "margin", "log_ratio",
                    "centroid_proximity", "doctor_alpha", "doctor_beta", "negative_u_m",
                    "negative_u_H"),
    "logit": ("max_logit", "energy_score"),
    "feature distance": ("trust_score", "negative_mahalanobis", "negative_knn_distance"),
    "ensemble": ("ensemble_max_probability", "negative_mutual_information", "negative_u_a",
                 "negative_u_t", "negative_u_e"),
    "robustness": tuple(sorted(PAPER_ROBUSTNESS)),
}  # fmt: skip

#: Every score of :data:`SCORE_FAMILY` -> its comparator family (module docstring).
SCORE_COMPARATOR_FAMILY: Mapping[str, str] = MappingProxyType(
    {s: family for family, names in _BY_COMPARATOR_FAMILY.items() for s in names}
)

#: Robustness scores computed from the predicted probabilities alone (module docstring): the
#: robustness side of a verdict is one of them only when no other robustness score is given.
PROBABILITY_ROBUSTNESS = frozenset({"log_ratio"})

#: Uncertainties in their source orientation (higher = less reliable) -> the negated score's
#: name, for the message that refuses them.
_NEGATE = {
    "entropy": "negative_entropy",
    "u_m": "negative_u_m",
    "u_H": "negative_u_H",
    "u_a": "negative_u_a",
    "u_t": "negative_u_t",
    "u_e": "negative_u_e",
}


def score_family(name: str, families: Mapping[str, str] | None = None) -> str:
    """The family (``"robustness"`` or ``"uncertainty"``) of score ``name``: from
    ``families`` if it names it, else from :data:`SCORE_FAMILY`. An unknown name raises a
    ``ValueError`` that names it and the fix (``families={name: "robustness"}``); an
    uncertainty in its source orientation (``entropy``, ``u_m``, ...) names its negation."""
    if families is not None and name in families:
        family = families[name]
        if family not in FAMILIES:
            raise ValueError(
                f"families[{name!r}] = {family!r}: a family is 'robustness' or 'uncertainty'"
            )
        return family
    if name in SCORE_FAMILY:
        return SCORE_FAMILY[name]
    if name in _NEGATE:
        raise ValueError(
            f"score {name!r} is an uncertainty (higher = less reliable); every score here is "
            f"higher = more reliable: pass its negation as {_NEGATE[name]!r}"
        )
    raise ValueError(
        f"score {name!r} has no known family (known: {', '.join(SCORE_FAMILY)}); say which "
        f"it is: families={{{name!r}: 'robustness'}} (or 'uncertainty')"
    )


def check_families(names: list[str], families: Mapping[str, str] | None) -> list[str]:
    """The family of each score of ``names`` (:func:`score_family`). ``families`` must be a
    mapping (``TypeError``) whose every key is one of ``names`` (``ValueError`` naming the
    misspelt ones)."""
    if families is not None:
        if not isinstance(families, Mapping):
            raise TypeError(
                f"families must be a mapping score name -> 'robustness' | 'uncertainty'; got "
                f"{type(families).__name__}"
            )
        unknown = sorted(set(map(str, families)) - set(names))
        if unknown:
            raise ValueError(
                f"families names {unknown}, not among the scores ({', '.join(names)}): check "
                "the spelling"
            )
    return [score_family(n, families) for n in names]


def comparator_family(name: str) -> str:
    """The comparator family of score ``name`` (:data:`COMPARATOR_FAMILIES`: ``"probability"``,
    ``"logit"``, ``"feature distance"``, ``"ensemble"`` or ``"robustness"``); an unknown name
    raises a ``ValueError`` naming the known ones."""
    if name not in SCORE_COMPARATOR_FAMILY:
        raise ValueError(
            f"score {name!r} has no known comparator family (known: "
            f"{', '.join(SCORE_COMPARATOR_FAMILY)})"
        )
    return SCORE_COMPARATOR_FAMILY[name]
