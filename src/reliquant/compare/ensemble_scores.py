"""Deep-ensemble scores from a stack of member probabilities: mean maximum probability and
mutual information.

A deep ensemble (Lakshminarayanan, Pritzel, Blundell, "Simple and scalable predictive
uncertainty estimation using deep ensembles", NeurIPS 2017) is ``M >= 2`` networks trained
from independent random initialisations; its prediction is the class of the largest **mean**
probability ``pbar_k(x) = (1 / M) sum_m p_mk(x)`` (their Section 2.4). The input is the
members' probabilities stacked as ``(M, n, K)``: member ``m``'s ``predict_proba`` (or
softmax) on the same ``n`` inputs in the same order, ``K >= 2`` classes in the same column
order for every member. Every score is oriented **higher = more reliable**:

=============================== =============================================================
score                           formula
=============================== =============================================================
ensemble_max_probability        ``max_k pbar_k(x)``, the mean softmax's maximum (FD-Shifts'
                                "DE" maximum softmax response)
negative_mutual_information     ``-I(x) = -[H(pbar(x)) - (1 / M) sum_m H(p_m(x))]``
=============================== =============================================================

with ``H(p) = -sum_k p_k ln p_k`` in nats (``0 ln 0 = 0``). The mutual information between
the label and the member (Houlsby et al., "Bayesian active learning for classification and
preference learning", 2011: BALD; Gal, Islam, Ghahramani, "Deep Bayesian active learning
with image data", ICML 2017; here the ensemble's members are the posterior samples, as in
FD-Shifts' "MI") is the total entropy minus the mean member entropy: the part of the
uncertainty that comes from the members disagreeing. It is ``>= 0`` (the entropy is concave)
and 0 exactly when every member gives the same probabilities; it is clipped at 0 against
rounding, so members that agree tie at 0. Its negative is the score. The ensemble's predictive
entropy is :func:`reliquant.compare.negative_entropy` of :func:`ensemble_probabilities`.

Every function checks the stack (:func:`check_member_probabilities`): 3-D, ``M >= 2``
members, each member's ``(n, K)`` valid probabilities
(:func:`reliquant.compare.probability_scores.check_probabilities`: ``K >= 2``, finite,
``>= 0``, rows summing to 1 within ``sum_tol``); a ``ValueError`` names the argument and the
member.

Public API: :func:`check_member_probabilities`, :func:`ensemble_probabilities`,
:func:`ensemble_max_probability`, :func:`negative_mutual_information`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from reliquant.compare.probability_scores import DEFAULT_SUM_TOL, check_probabilities

__all__ = [
    "check_member_probabilities",
    "ensemble_max_probability",
    "ensemble_probabilities",
    "negative_mutual_information",
]


def check_member_probabilities(
    member_proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL, name: str = "member_proba"
) -> np.ndarray:
    """``member_proba`` as float64 ``(M, n, K)`` after checking it: 3-D, ``M >= 2`` members,
    and every member's ``(n, K)`` slice class probabilities (``check_probabilities``, which
    names ``name[m]``). ``ValueError`` otherwise: a single model's ``(n, K)`` probabilities
    are not an ensemble (stack the members with ``np.stack``)."""
    p = np.asarray(member_proba)
    if p.ndim != 3:
        raise ValueError(
            f"{name} must be 3-D, shape (M members, n predictions, K classes); got shape "
            f"{p.shape} (stack the members' probabilities with np.stack)"
        )
    if p.shape[0] < 2:
        raise ValueError(f"{name} must hold at least two members (M >= 2); got M = {p.shape[0]}")
    return np.stack(
        [check_probabilities(p[m], sum_tol=sum_tol, name=f"{name}[{m}]") for m in range(len(p))]
    )


def ensemble_probabilities(
    member_proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL
) -> np.ndarray:
    """``pbar(x) = (1 / M) sum_m p_m(x)``, the ensemble's mean probabilities, ``(n, K)``
    (Lakshminarayanan et al. 2017, Section 2.4); its ``argmax`` is the ensemble's prediction."""
    return check_member_probabilities(member_proba, sum_tol=sum_tol).mean(axis=0)


def ensemble_max_probability(
    member_proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL
) -> np.ndarray:
    """``max_k pbar_k(x)``, the largest mean probability of the members, ``(n,)`` in
    ``[1 / K, 1]``; higher = more reliable."""
    return ensemble_probabilities(member_proba, sum_tol=sum_tol).max(axis=1)


def negative_mutual_information(
    member_proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL
) -> np.ndarray:
    """Minus the mutual information between label and member (BALD), ``(n,)`` in
    ``[-min(ln M, ln K), 0]`` (nats), higher = more reliable (the members agree):

        I(x) = H(pbar(x)) - (1 / M) sum_m H(p_m(x)),   H(p) = -sum_k p_k ln p_k,

    clipped at 0 from below against rounding (module docstring)."""
    p = check_member_probabilities(member_proba, sum_tol=sum_tol)
    from scipy.special import entr  # here: the package loads no scipy

    total = entr(p.mean(axis=0)).sum(axis=1)
    expected = entr(p).sum(axis=2).mean(axis=0)
    return -np.maximum(total - expected, 0.0)
