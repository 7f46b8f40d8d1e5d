"""The failure-detection comparators in the compare topic's per-prediction tables (issue 44).

Beside the probability and robustness scores, each tabular or tree data set's table gets the
comparators that are cheap to compute from what its job already holds, with the settings of
:func:`reliquant.compare.score_predictions` (:mod:`reliquant.compare.model_comparators`):

* ``doctor_alpha`` (DOCTOR's ``-D_alpha``, ranks as minus the Gini impurity) wherever there
  are probabilities; ``doctor_beta`` is left out of the tables, as it ranks every set of
  predictions exactly as ``max_probability`` (:mod:`reliquant.compare.logit_scores`);
* ``max_logit`` and ``energy_score`` where the model's logits are known and it has more than
  two classes: the multiclass XGBoost models (MNIST, the multiclass benchmark sets fitted
  with XGBoost), their margins checked against ``predict_proba``
  (:func:`reliquant.compare.model_logits`); a binary model (Pima) has only a margin, whose
  two logits are a convention (:data:`reliquant.compare.model_comparators.BINARY_LOGITS`); a
  random forest and the Naive Bayes have none;
* ``trust_score``, ``negative_mahalanobis`` and ``negative_knn_distance`` on the model's input
  features, fitted on the split's training rows and labels, distances to the predicted class:
  standardised columns on the tables (Pima's seven measurements, the benchmark sets' features,
  the scikit-learn table's bin codes, which are what its Naive Bayes sees and where its value
  noise acts), raw pixels in ``[0, 1]`` on MNIST (a per-pixel standardisation would inflate
  the near-constant border pixels). Trust score without density filter (``alpha = 0``), k-NN
  distance with ``k = min(50, N_train)``, not normalised.

The CNN gets all six, from its own outputs on the compare subsample
(:mod:`reliquant.compare.reproduction.cnn_features`; the mlm topic's tables keep the softmax
alone): ``max_logit`` and ``energy_score`` of its ten logits (the input of its log-softmax,
checked against the stored softmax), and the three feature-space scores on its 128
penultimate features (``relu(fc1)``), fitted on those of ``compare.mnist.n_train`` training
images (the rows of the tree models' first split) with their true labels, the CNN's training
labels, not standardised: the features are the units ``fc2`` reads, and a standardisation
would inflate the ReLU units that are almost always zero, as it would the border pixels. The
NBC cells keep the nbc topic's scores alone (their rankings are the nbc topic's bit for bit).

Public API: :data:`TABLE_COMPARATORS`, :func:`comparator_columns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from reliquant.compare import (
    doctor_alpha,
    energy_score,
    fit_knn_distance,
    fit_mahalanobis,
    fit_trust_score,
    max_logit,
    model_logits,
)
from reliquant.compare.model_comparators import KNN_K
from reliquant.compare.model_inputs import ModelRows

__all__ = ["TABLE_COMPARATORS", "comparator_columns"]

#: The comparator columns a table can get, in table order.
TABLE_COMPARATORS = (
    "doctor_alpha",
    "max_logit",
    "energy_score",
    "trust_score",
    "negative_mahalanobis",
    "negative_knn_distance",
)


def _standardised(train: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns centred at the training mean and divided by its standard deviation (``ddof =
    0``; a constant column only centred)."""
    mean, sd = train.mean(axis=0), train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (train - mean) / sd, (x - mean) / sd


def comparator_columns(
    proba: np.ndarray,
    prediction: np.ndarray,
    *,
    model: Any = None,
    logits: np.ndarray | None = None,
    x: np.ndarray | None = None,
    x_train: np.ndarray | None = None,
    y_train: np.ndarray | None = None,
    standardise: bool = True,
) -> dict[str, np.ndarray]:
    """The comparator columns of one case (module docstring): ``proba`` ``(n, K)`` and
    ``prediction`` (class codes ``0..K-1``) of the rows ``x`` ``(n, d)``; ``model`` (for its
    logits, when it has them) scores ``x``, or its ``logits`` ``(n, K)`` are given (not
    both); ``x_train`` / ``y_train`` (codes) the split's training rows, for the feature-space
    scores (``standardise``: by the training columns)."""
    out = {"doctor_alpha": doctor_alpha(proba)}
    if model is not None and logits is not None:
        raise ValueError("pass the model (for its logits) or its logits, not both")
    if model is not None:
        logits, _ = model_logits(model, ModelRows(model, x, "x"), proba)
    if logits is not None and logits.shape[1] > 2:  # binary: BINARY_LOGITS
        out.update(max_logit=max_logit(logits), energy_score=energy_score(logits))
    if x_train is not None:
        with threadpool_limits(limits=1):  # a few hundred rows: threads cost 100x (measured)
            out.update(_feature_columns(x, x_train, y_train, prediction, standardise))
    return out


def _feature_columns(
    x: np.ndarray, x_train: np.ndarray, y_train: np.ndarray, prediction: np.ndarray,
    standardise: bool,
) -> dict[str, np.ndarray]:  # fmt: skip
    """The three feature-space scores of :func:`comparator_columns`."""
    train = np.asarray(x_train, dtype=np.float64)
    rows = np.asarray(x, dtype=np.float64)
    if standardise:
        train, rows = _standardised(train, rows)
    labels = np.asarray(y_train, dtype=np.int64)
    knn = fit_knn_distance(train, k=min(KNN_K, train.shape[0]), normalize=False)
    return {
        "trust_score": fit_trust_score(train, labels).score(rows, prediction),
        "negative_mahalanobis": fit_mahalanobis(train, labels).score(rows, prediction),
        "negative_knn_distance": knn.score(rows),
    }
