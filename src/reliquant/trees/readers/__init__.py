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
dispatch          :data:`READERS` and :func:`extract_ensemble` (re-exported here)

Every tree a reader reads is checked before the library or the engine walks it (the
:class:`~reliquant.trees.structure.TreeEnsemble` it builds runs
:func:`reliquant.trees.tree_checks.check_trees`; a LightGBM text first by
:mod:`reliquant.trees.readers.lightgbm_text`): a malformed model is refused naming the tree and the node.

Each library module has ``accepts(model) -> bool`` and ``read(model) -> TreeEnsemble``;
:func:`extract_ensemble` asks the modules of :data:`READERS` in order and the first that
accepts the model reads it (or refuses it with a ``ValueError`` saying what is supported).
"""

from __future__ import annotations

from reliquant.trees.readers.checks import SUPPORTED
from reliquant.trees.readers.dispatch import READERS, extract_ensemble
from reliquant.trees.readers.model_files import load_model

__all__ = ["READERS", "SUPPORTED", "extract_ensemble", "load_model"]
