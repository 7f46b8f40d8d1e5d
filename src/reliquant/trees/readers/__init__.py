"""Readers: a fitted classifier of a tree library, or a saved model file, as a
:class:`~reliquant.trees.structure.TreeEnsemble`.

Every reader keeps the library's own split rule, summation order and label rule, so that
``TreeEnsemble.predict`` equals the model's ``predict`` for every float64 input, and checks
its result against the library's own output on probe inputs.

Modules
-------
checks            what every reader checks: SUPPORTED, refusals, scikit-learn classifier
                  checks, probe inputs and the score comparison
sklearn_trees     scikit-learn DecisionTree / ExtraTree / RandomForest / ExtraTrees classifiers
sklearn_boosting  scikit-learn GradientBoostingClassifier and HistGradientBoostingClassifier
xgboost_models    XGBoost XGBClassifier / Booster (binary:logistic, multi:softprob/softmax)
lightgbm_models   LightGBM LGBMClassifier / Booster (binary, multiclass)
lightgbm_text     a LightGBM model text checked before LightGBM parses or walks it
model_files       a model file (XGBoost .json/.ubj, LightGBM .txt, scikit-learn .skops)
                  loaded safely, never by unpickling, its trees checked: :func:`load_model`

Every tree a reader reads is checked before the library or the engine walks it (the
:class:`~reliquant.trees.structure.TreeEnsemble` it builds runs
:func:`reliquant.trees.tree_checks.check_trees`; a LightGBM text first by
:mod:`reliquant.trees.readers.lightgbm_text`): a malformed model is refused naming the tree and the node.

Each library module has ``accepts(model) -> bool`` and ``read(model) -> TreeEnsemble``;
:func:`extract_ensemble` asks the modules of :data:`READERS` in order and the first that
accepts the model reads it (or refuses it with a ``ValueError`` saying what is supported).
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
from reliquant.trees.readers.model_files import load_model
from reliquant.trees.structure import TreeEnsemble

__all__ = ["READERS", "SUPPORTED", "extract_ensemble", "load_model"]

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
