"""scikit-learn's ``CategoricalNB`` (alone or as a ``Pipeline``'s last step) read as our
:class:`reliquant.nbc.NBCModel` (:func:`from_sklearn`), and a table's columns matched to its
``feature_names_in_`` (:func:`sklearn_columns`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reliquant.nbc.classifier import (
    NBCModel,
)

__all__ = [
    "from_sklearn",
    "sklearn_columns",
    "unpipe",
]


def _is_pipeline(model: Any) -> bool:
    return type(model).__name__ == "Pipeline" and hasattr(model, "steps")


def unpipe(model: Any, X: Any) -> tuple[Any, Any]:
    """A scikit-learn ``Pipeline`` whose last step is a ``CategoricalNB``, as that step and
    ``X`` transformed by the steps before it (``pipeline[:-1].transform(X)``, what the
    pipeline's own ``predict`` does); any other model and ``X`` as they come. A pipeline
    that ends otherwise is a TypeError naming its last step."""
    if not _is_pipeline(model):
        return model, X
    last = model.steps[-1][1]
    if type(last).__name__ != "CategoricalNB":
        raise TypeError(
            f"the pipeline's last step is {type(last).__name__}: a pipeline is scored through "
            "its last step, which must be a fitted sklearn.naive_bayes.CategoricalNB"
        )
    return last, model[:-1].transform(X) if len(model.steps) > 1 else X


def from_sklearn(model: Any) -> NBCModel:
    """Our :class:`NBCModel` holding a fitted scikit-learn ``CategoricalNB``'s probabilities.

    ``CategoricalNB`` smooths only the conditionals (its prior is the plain relative
    frequency, unlike eq. 18), so the result reproduces *its* predictions exactly; features
    are its integer codes ``0 .. n_categories_[i] - 1``.
    """
    if _is_pipeline(model):
        raise TypeError(
            "from_sklearn takes the CategoricalNB itself: from_sklearn(pipeline[-1]), with "
            "the inputs transformed as pipeline[:-1].transform(X); robustness(pipeline, X) "
            "takes the whole pipeline"
        )
    if type(model).__name__ != "CategoricalNB" or not hasattr(model, "feature_log_prob_"):
        raise TypeError(
            f"expected a fitted sklearn.naive_bayes.CategoricalNB; got {type(model).__name__}"
        )
    return NBCModel(
        log_prior=np.asarray(model.class_log_prior_, dtype=np.float64),
        log_cond=tuple(np.asarray(t, dtype=np.float64) for t in model.feature_log_prob_),
        alpha=float(model.alpha),
    )


def sklearn_columns(model: Any, X: pd.DataFrame | np.ndarray) -> pd.DataFrame | np.ndarray:
    """``X``'s columns in the order of a ``CategoricalNB`` fitted on a DataFrame
    (``feature_names_in_``), matched by name; missing or extra names are refused."""
    names = getattr(model, "feature_names_in_", None)
    if names is None or not isinstance(X, pd.DataFrame):
        return X
    names = list(names)
    absent = [c for c in names if c not in X.columns]
    extra = [c for c in X.columns if c not in names]
    if absent or extra:
        raise ValueError(
            f"the table's columns do not match the model's features: missing {absent}, "
            f"extra {extra} (the model's features: {names}; given: {list(X.columns)})"
        )
    return X[names]
