"""The failure-detection comparators of a fitted model, for :func:`reliquant.compare.score_predictions`
(issue 44): DOCTOR from its probabilities, the maximum logit and the energy from its logits,
and the trust score, Mahalanobis and k-NN distance on its raw features.

Every score is oriented **higher = more reliable** and computed by this package's public
functions (:mod:`reliquant.compare.logit_scores`, :mod:`reliquant.compare.feature_scores`):

===================== ==================================================== ====================
column                applies to                                           computed by
===================== ==================================================== ====================
doctor_alpha,         any model with class probabilities                   :func:`doctor_alpha`,
doctor_beta                                                                :func:`doctor_beta`
max_logit,            a model whose logits are known (:func:`model_logits`) :func:`max_logit`,
energy_score                                                               :func:`energy_score`
trust_score,          a model with numeric inputs, with ``X_train`` and    :func:`fit_trust_score`,
negative_mahalanobis, ``y_train`` (the raw features, standardised by the   :func:`fit_mahalanobis`,
negative_knn_distance training columns' mean and standard deviation)       :func:`fit_knn_distance`
===================== ==================================================== ====================

**Which models have logits** (:func:`model_logits`). Logits are the numbers whose softmax
(sigmoid for two classes) *is* the model's ``predict_proba``: XGBoost's margins
(``predict(X, output_margin=True)``), LightGBM's raw scores (``raw_score=True``), and the
``decision_function`` of scikit-learn's ``LogisticRegression``, gradient boosting and
``HistGradientBoostingClassifier`` (a ``Pipeline`` ending in one: its transformed input).
Every candidate is checked: its softmax must reproduce ``predict_proba`` within
:data:`LOGIT_TOL`, else the scores are skipped with the largest difference named. This keeps
out the scores that are not logits although they look like them: an SVM's margins (its
probabilities come from a separate Platt fit), one-vs-rest models (a per-class sigmoid,
normalised), ``SGDClassifier``'s hinge loss (no probabilities at all). A random forest, a
single tree, k-NN or a Naive Bayes has no logits: their probabilities are averages of leaf
frequencies, neighbour votes or a normalised product, not a softmax, and ``ln p`` would be
logits only up to a constant per row, which is exactly what the maximum logit and the energy
depend on (:mod:`reliquant.compare.logit_scores`). A binary model's single margin ``f`` is
the two logits ``[0, f]`` (:func:`decision_logits`) only by convention; on those both scores
rank by the evidence for the second class, not for the predicted one (the caveat of
:mod:`reliquant.compare.logit_scores`), so a binary model gets neither
(:data:`BINARY_LOGITS` in ``attrs["skipped"]``).

**Feature space.** The distances live in the model's input space (its raw features, in the
model's feature order, :class:`reliquant.compare.model_inputs.ModelRows`), each column
standardised by the training rows' mean and standard deviation (``ddof = 0``; a constant
column is only centred), since Euclidean distances depend on the units
(:mod:`reliquant.compare.feature_scores`); the Mahalanobis distance does not. Settings: the
trust score with ``alpha = 0`` (no density filter, the authors' default), the k-NN distance
with ``k = min(50, N_train)`` (Sun et al.'s value) and no normalisation onto the unit sphere
(that is their choice for a network's embeddings, not for raw columns). The labels are
``y_train`` matched to the model's classes by value; the distances are to the **predicted**
class. A categorical Naive Bayes (its features are categories) and an ``X`` with non-numeric
columns get none of them.

Public API: :data:`COMPARATOR_SCORES`, :data:`LOGIT_TOL`, :data:`KNN_K`, :func:`model_logits`,
:func:`probability_comparators`, :func:`logit_comparators`, :func:`feature_comparators`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reliquant.compare.feature_scores import fit_knn_distance, fit_mahalanobis, fit_trust_score
from reliquant.compare.logit_scores import (
    decision_logits,
    doctor_alpha,
    doctor_beta,
    energy_score,
    max_logit,
)
from reliquant.compare.model_inputs import ModelRows, is_pipeline

__all__ = [
    "COMPARATOR_SCORES",
    "KNN_K",
    "LOGIT_TOL",
    "feature_comparators",
    "logit_comparators",
    "model_logits",
    "probability_comparators",
]

#: The comparators' columns, in :data:`reliquant.compare.MODEL_SCORES` order.
COMPARATOR_SCORES = (
    "doctor_alpha",
    "doctor_beta",
    "max_logit",
    "energy_score",
    "trust_score",
    "negative_mahalanobis",
    "negative_knn_distance",
)
_PROBABILITY = COMPARATOR_SCORES[:2]
_LOGIT = COMPARATOR_SCORES[2:4]
_FEATURE = COMPARATOR_SCORES[4:]
#: Largest absolute difference between ``softmax(logits)`` and ``predict_proba`` accepted
#: (XGBoost and LightGBM compute in float32).
LOGIT_TOL = 1e-5
#: The k-NN distance's ``k`` (Sun et al., ICML 2022), at most the number of training rows.
KNN_K = 50


def probability_comparators(proba: np.ndarray) -> dict[str, np.ndarray]:
    """DOCTOR's two scores without input perturbation (:func:`doctor_alpha`,
    :func:`doctor_beta`) from class probabilities ``(n, K)``."""
    return {"doctor_alpha": doctor_alpha(proba), "doctor_beta": doctor_beta(proba)}


def _raw_margins(model: Any, rows: ModelRows) -> tuple[Any, str]:
    """The model's raw margins or decision function on ``rows``, or ``(None, why not)``."""
    last = model.steps[-1][1] if is_pipeline(model) else model
    data = model[:-1].transform(rows.data) if is_pipeline(model) else rows.data
    module = type(last).__module__
    name = type(last).__name__
    if module.startswith("xgboost"):
        return last.predict(data, output_margin=True), ""
    if module.startswith("lightgbm"):
        return last.predict(data, raw_score=True), ""
    try:
        decision = last.decision_function
    except AttributeError:  # scikit-learn's available_if: not for this model's settings
        decision = None
    if not callable(decision):
        return None, (
            f"{name} has no logits: no decision_function or raw margins (a forest's, tree's, "
            "k-NN's or Naive Bayes' probabilities are not the softmax of any logits)"
        )
    return decision(data), ""


#: Why a binary model gets no maximum logit or energy: its one margin ``f`` is the logits
#: ``[0, f]`` only by convention (``[-f / 2, f / 2]`` has the same softmax); on ``[0, f]`` both
#: scores rank every class-0 prediction at 0, below every class-1 prediction, whatever its
#: margin (measured on the README's logistic regression: accuracy falls as it rejects).
BINARY_LOGITS = (
    "a binary model's logits are [0, f] only by convention: the maximum logit and the energy "
    "would rank by the evidence for the second class, not for the predicted one"
)


def model_logits(model: Any, rows: ModelRows, proba: np.ndarray | None) -> tuple[Any, str]:
    """``(logits (n, K), "")`` when the model's logits are known (module docstring), else
    ``(None, why not)``: the candidate (margins, raw scores, ``decision_function``) must have
    ``K`` columns (one for a binary model) and its softmax must equal ``proba`` within
    :data:`LOGIT_TOL`."""
    from scipy.special import softmax  # here: the package loads no scipy

    name = type(model.steps[-1][1] if is_pipeline(model) else model).__name__
    if proba is None:
        return None, f"{name} has no predict_proba to check its logits against"
    raw, why = _raw_margins(model, rows)
    if raw is None:
        return None, why
    raw = np.asarray(raw, dtype=np.float64)
    k = proba.shape[1]
    if not (raw.shape == (proba.shape[0],) and k == 2) and raw.shape != proba.shape:
        return None, (
            f"{name}'s decision function has shape {raw.shape}, not one logit per class "
            f"{proba.shape}: not logits"
        )
    logits = decision_logits(raw)
    gap = float(np.abs(softmax(logits, axis=1) - proba).max())
    if gap > LOGIT_TOL:
        return None, (
            f"{name}'s decision function is not the logits of its predict_proba (their softmax "
            f"differs by up to {gap:.3g}; e.g. an SVM's margins or one-vs-rest scores)"
        )
    return logits, ""


def logit_comparators(
    model: Any, rows: ModelRows, proba: np.ndarray | None
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(columns, skipped)``: :func:`max_logit` and :func:`energy_score` (``T = 1``) of the
    model's logits (:func:`model_logits`), or the reason both are skipped."""
    logits, why = model_logits(model, rows, proba)
    if logits is None:
        return {}, dict.fromkeys(_LOGIT, why)
    if logits.shape[1] == 2:
        return {}, dict.fromkeys(_LOGIT, BINARY_LOGITS)
    return {"max_logit": max_logit(logits), "energy_score": energy_score(logits)}, {}


def _standardise(train: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(train, x)`` with each column centred at the training mean and divided by the
    training standard deviation (``ddof = 0``; a constant column only centred)."""
    mean = train.mean(axis=0)
    sd = train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (train - mean) / sd, (x - mean) / sd


def feature_comparators(
    rows: ModelRows,
    train_rows: ModelRows,
    train_codes: np.ndarray,
    predicted_codes: np.ndarray,
    *,
    progress: bool | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(columns, skipped)``: the trust score, minus the squared Mahalanobis distance and
    minus the k-NN distance (module docstring) of ``rows`` on the standardised raw features,
    fitted on ``train_rows`` with class codes ``train_codes``; ``predicted_codes`` the
    predictions as codes of the same classes. Skipped (with the reason) when a column of
    ``X`` or ``X_train`` is not numeric; the trust score also when ``y_train`` holds one
    class."""
    x, train = rows.values(), train_rows.values()
    if x is None or train is None:
        what = "X" if x is None else "X_train"
        return {}, dict.fromkeys(_FEATURE, f"{what} has non-numeric columns: no feature distance")
    bad = [w for w, a in (("X", x), ("X_train", train)) if not np.isfinite(a).all()]
    if bad:
        return {}, dict.fromkeys(_FEATURE, f"{bad[0]} has NaN or inf: no feature distance")
    z_train, z = _standardise(train, x)
    columns: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    if np.unique(train_codes).size < 2:
        skipped["trust_score"] = "y_train holds one class: no other class to be close to"
    else:
        trust = fit_trust_score(z_train, train_codes, progress=progress)
        columns["trust_score"] = trust.score(z, predicted_codes, progress=progress)
    maha = fit_mahalanobis(z_train, train_codes)
    columns["negative_mahalanobis"] = maha.score(z, predicted_codes)
    knn = fit_knn_distance(z_train, k=min(KNN_K, z_train.shape[0]), normalize=False)
    columns["negative_knn_distance"] = knn.score(z, progress=progress)
    return columns, skipped
