"""The one entry point of the readers: :func:`extract_ensemble` asks the library modules of
:data:`READERS` in order, and the first that accepts the model reads it (or refuses it with a
``ValueError`` saying what is supported). Re-exported by :mod:`reliquant.trees.readers`;
its own module so that :mod:`reliquant.trees.readers.model_files` can check the trees of the
model a file holds without importing the package it belongs to.

Public API: :data:`READERS`, :func:`extract_ensemble`.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

from reliquant.trees.readers import (
    lightgbm_models,
    sklearn_boosting,
    sklearn_trees,
    xgboost_models,
)
from reliquant.trees.readers.checks import SUPPORTED
from reliquant.trees.structure import TreeEnsemble

__all__ = ["READERS", "extract_ensemble"]

#: The library readers, asked in this order (the more specific first: scikit-learn's gradient
#: boosting before the reader that takes every other scikit-learn model).
READERS = (sklearn_boosting, sklearn_trees, xgboost_models, lightgbm_models)


def extract_ensemble(model) -> TreeEnsemble:
    """Read a fitted model into a :class:`TreeEnsemble`.

    Supports scikit-learn ``DecisionTreeClassifier``, ``ExtraTreeClassifier``,
    ``RandomForestClassifier``, ``ExtraTreesClassifier``, ``HistGradientBoostingClassifier``,
    ``GradientBoostingClassifier``, XGBoost ``XGBClassifier`` / ``Booster`` (binary:logistic,
    multi:softprob, multi:softmax) and LightGBM ``LGBMClassifier`` / ``Booster`` (binary,
    multiclass); anything else (regressors, multi-output models, pipelines, categorical
    splits) raises a ``ValueError`` that says what is supported. Missing-value routing is
    irrelevant for continuous noise (no NaN is ever drawn); :meth:`TreeEnsemble.predict`
    rejects NaN inputs.

    The library's own output on the probe inputs is computed on one thread (OpenMP and BLAS
    pools limited by ``threadpoolctl``): a dozen rows gain nothing from threads, and on a
    busy machine OpenMP's barriers made reading a HistGradientBoostingClassifier take
    seconds instead of 0.1 s.
    """
    for reader in READERS:
        if reader.accepts(model):
            with threadpool_limits(limits=1):  # the probe is a few rows
                return reader.read(model)
    raise ValueError(
        f"unsupported model type {type(model).__module__}.{type(model).__name__}: expected a "
        f"{SUPPORTED}; for a pipeline pass its final estimator and the transformed sample"
    )
