"""Reliability scores from a model's logits (maximum logit, energy) and DOCTOR's from its
probabilities.

Every score is oriented **higher = more reliable**. With ``f(x)`` a row of ``K >= 2`` logits
(the inputs of the softmax, ``p = softmax(f)``) and ``p`` a row of probabilities:

=================== ========================================= ==================================
score               formula                                   source
=================== ========================================= ==================================
max_logit           ``max_k f_k(x)``                          Hendrycks et al., "Scaling
                                                              out-of-distribution detection for
                                                              real-world settings", ICML 2022
energy_score        ``-E(x) = T ln sum_k exp(f_k(x) / T)``    Liu et al., "Energy-based
                                                              out-of-distribution detection",
                                                              NeurIPS 2020, eq. (5)
doctor_alpha        ``-D_alpha = -(1 - g(x)) / g(x)``,        Granese et al., "DOCTOR",
                    ``g(x) = sum_k p_k^2``                    NeurIPS 2021, arXiv 2106.02395
doctor_beta         ``-D_beta = -(1 - p_(1)) / p_(1)``        the same (its second discriminator)
=================== ========================================= ==================================

**Which models have logits.** A network's pre-softmax outputs (the CNN of paper 004); the
raw margins of a gradient-boosted ensemble (XGBoost ``predict(..., output_margin=True)``,
LightGBM ``raw_score=True``, scikit-learn's ``GradientBoostingClassifier.decision_function``),
whose softmax (multi-class) or sigmoid (binary) is ``predict_proba``; and
``decision_function`` of linear models (``LogisticRegression``: exactly the logits whose
softmax, or sigmoid for two classes, is its ``predict_proba``; SVMs and one-vs-rest models:
scores whose softmax is not their ``predict_proba``). A random forest, a single tree, k-NN or Naive Bayes
has no logits (their probabilities are averages, leaf frequencies or a normalised product,
not a softmax); ``ln p`` would be logits only up to the row's constant, which is exactly what
these two scores depend on: they are *not* invariant to adding a constant to a row, which the
softmax ignores. A binary ``decision_function`` or margin is one number ``f`` per row, the
log-odds of the second class: :func:`decision_logits` turns it into the two-class logits
``[0, f]`` (``softmax([0, f]) = [1 - sigmoid(f), sigmoid(f)]``). On those, the maximum logit
is ``max(0, f)`` (every prediction of the first class ties at 0) and the energy
``ln(1 + e^f)`` rises with ``f``: both rank by the evidence for the *second* class, not for
the predicted one. They are comparators for multi-class logits; on a binary model report
them with this caveat.

**DOCTOR without input perturbation.** DOCTOR's totally-black-box discriminators need only
the probabilities (with their temperature ``T``: ``scipy.special.softmax(logits / T,
axis=1)``). ``D_alpha = 1 / g - 1`` is decreasing in ``g = sum_k p_k^2``, as is the Gini
impurity ``1 - g``, so ``-D_alpha`` ranks every set of predictions exactly as ``g`` (minus the
Gini impurity) does: the same order, the same ties, the same accuracy-rejection curve.
``-D_beta = 1 - 1 / p_(1)`` ranks exactly as the maximum probability. Their input
perturbation (a gradient step on the input) is what could make them differ, and it needs the
network's gradients; it is not done here.

Logits must be a finite 2-D real array with ``K >= 2`` columns and at least one row
(:func:`check_logits`); probabilities are checked by
:func:`reliquant.compare.probability_scores.check_probabilities`. A ``ValueError`` names the
argument.

Public API: :func:`check_logits`, :func:`decision_logits`, :func:`max_logit`,
:func:`energy_score`, :func:`doctor_alpha`, :func:`doctor_beta`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from reliquant.compare.probability_scores import DEFAULT_SUM_TOL, check_probabilities
from reliquant.core.arguments import check_real

__all__ = [
    "check_logits",
    "decision_logits",
    "doctor_alpha",
    "doctor_beta",
    "energy_score",
    "max_logit",
]


def check_logits(logits: ArrayLike, *, name: str = "logits") -> np.ndarray:
    """``logits`` as float64 ``(n, K)`` after checking it: 2-D, real-valued, ``n >= 1`` rows,
    ``K >= 2`` columns, every entry finite. ``ValueError`` naming ``name`` otherwise (a 1-D
    binary margin: pass it through :func:`decision_logits`)."""
    f = np.asarray(logits)
    if f.ndim != 2:
        hint = " (a binary margin? use decision_logits)" if f.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D, shape (n, K){hint}; got shape {f.shape}")
    if f.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be real-valued; got dtype {f.dtype}")
    if f.shape[1] < 2:
        raise ValueError(f"{name} must have at least two classes (columns); got shape {f.shape}")
    if f.shape[0] == 0:
        raise ValueError(f"{name} is empty: need at least one row")
    f = f.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(f).all(axis=1))
    if bad.size:
        raise ValueError(f"{name} has NaN or inf in {bad.size} row(s), first row {bad[0]}")
    return f


def decision_logits(decision: ArrayLike) -> np.ndarray:
    """Logits ``(n, K)`` from a ``decision_function`` or raw margin.

    A 1-D array (a binary model: ``f`` = the log-odds of the second class, scikit-learn's
    ``decision_function``, XGBoost's binary ``output_margin``) becomes ``[0, f]`` per row,
    the two logits whose softmax is ``[1 - sigmoid(f), sigmoid(f)]``. A 2-D ``(n, K)`` array
    (multi-class) is returned as checked by :func:`check_logits`. See the module docstring
    for what the maximum logit and the energy mean on ``[0, f]``.
    """
    f = np.asarray(decision)
    if f.ndim == 1:
        if f.dtype.kind not in "biuf":
            raise ValueError(f"decision must be real-valued; got dtype {f.dtype}")
        return check_logits(np.column_stack([np.zeros(f.shape), f]), name="decision")
    return check_logits(f, name="decision")


def max_logit(logits: ArrayLike) -> np.ndarray:
    """``max_k f_k(x)``, the largest logit per row (Hendrycks et al., ICML 2022, the MaxLogit
    baseline), ``(n,)``; higher = more reliable. Not invariant to a constant added to a row."""
    return check_logits(logits).max(axis=1)


def energy_score(logits: ArrayLike, *, temperature: float = 1.0) -> np.ndarray:
    """Minus the free energy of Liu et al. (NeurIPS 2020, eq. (5)), ``(n,)``:

        -E(x; f) = T ln sum_k exp(f_k(x) / T),

    higher = more reliable (lower energy = more in-distribution). ``temperature`` ``T > 0``
    (Liu et al. score with ``T = 1``, the default); as ``T -> 0`` it tends to
    :func:`max_logit`. Computed stably (``scipy.special.logsumexp``); ``-E(f + c) = -E(f) +
    c``, so it too depends on the constant a softmax ignores.
    """
    t = check_real(temperature, "temperature", low=0.0, low_open=True)
    from scipy.special import logsumexp  # here: the package loads no scipy

    return t * logsumexp(check_logits(logits) / t, axis=1)


def doctor_alpha(proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL) -> np.ndarray:
    """Minus DOCTOR's ``D_alpha`` (Granese et al., NeurIPS 2021), ``(n,)``, in ``[1 - K, 0]``:

        D_alpha(x) = (1 - g(x)) / g(x),   g(x) = sum_k p_k(x)^2,

    without input perturbation; higher = more reliable. ``g >= 1 / K > 0``, so it is always
    finite. Ranks exactly as minus the Gini impurity ``1 - g`` (module docstring).
    """
    g = np.square(check_probabilities(proba, sum_tol=sum_tol)).sum(axis=1)
    return -(1.0 - g) / g


def doctor_beta(proba: ArrayLike, *, sum_tol: float = DEFAULT_SUM_TOL) -> np.ndarray:
    """Minus DOCTOR's ``D_beta = (1 - p_(1)) / p_(1)`` (Granese et al., NeurIPS 2021),
    ``(n,)``, with ``p_(1) = max_k p_k`` the probability of the prediction; higher = more
    reliable. Ranks exactly as the maximum probability (module docstring)."""
    p1 = check_probabilities(proba, sum_tol=sum_tol).max(axis=1)
    return -(1.0 - p1) / p1
