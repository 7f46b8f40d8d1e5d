"""The checks every reader does: what is supported, refusals, and the probe that compares a
parsed :class:`~reliquant.trees.structure.TreeEnsemble` with the library's own output.

* :data:`SUPPORTED`: the models :func:`reliquant.trees.readers.extract_ensemble` reads, named
  in every refusal so that the user sees what to pass instead;
* :func:`refuse`: a ``ValueError`` that says what is wrong and what is supported;
* :func:`check_sklearn_classifier`: clear errors for scikit-learn pipelines, regressors,
  unfitted estimators and multi-output classifiers (every scikit-learn reader calls it first);
* :func:`probe_inputs` and :func:`verify_scores`: the parsed model's scores against the
  library's raw output on fixed probe inputs (a changed model format fails loudly);
* :func:`classes_or_range`: the model's labels, or ``0 .. n_classes - 1`` for a bare booster;
* :func:`known_feature_names`: the feature names a model was fitted with (``None`` when it
  knows none), kept in ``TreeEnsemble.feature_names`` so that named inputs are matched by name;
* :func:`probe_for`: the probe inputs as the model's own ``predict`` wants them (a DataFrame
  with its feature names when it has them).
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "SUPPORTED",
    "check_sklearn_classifier",
    "classes_or_range",
    "known_feature_names",
    "probe_for",
    "probe_inputs",
    "refuse",
    "verify_scores",
]

#: Every model a reader of this package reads (named in every refusal).
SUPPORTED = (
    "scikit-learn DecisionTreeClassifier, ExtraTreeClassifier, RandomForestClassifier, "
    "ExtraTreesClassifier, HistGradientBoostingClassifier, GradientBoostingClassifier, an "
    "XGBoost XGBClassifier / Booster (binary:logistic, multi:softprob, multi:softmax), or a "
    "LightGBM LGBMClassifier / Booster (binary, multiclass), with numerical splits"
)


def refuse(what: str) -> NoReturn:
    """Raise a ``ValueError``: ``what`` is wrong, followed by :data:`SUPPORTED`."""
    raise ValueError(f"{what}; supported: {SUPPORTED}")


def check_sklearn_classifier(model) -> None:
    """Clear errors for pipelines, regressors, unfitted estimators and multi-output
    classifiers of scikit-learn (``ValueError`` naming :data:`SUPPORTED`)."""
    from sklearn.base import is_regressor
    from sklearn.pipeline import Pipeline

    name = type(model).__name__
    if isinstance(model, Pipeline):
        raise ValueError(
            "pipelines are not supported: pass the final estimator (pipeline[-1]) and the "
            "transformed sample (pipeline[:-1].transform(x)), with the noise described in that "
            f"transformed space; supported estimators: {SUPPORTED}"
        )
    if is_regressor(model):
        raise ValueError(
            f"{name} is a regressor: robustness is the probability that the predicted label "
            f"stays the same, defined for classifiers; supported: {SUPPORTED}"
        )
    if not hasattr(model, "classes_"):
        raise ValueError(f"{name} is not fitted (or not a classifier); supported: {SUPPORTED}")
    if isinstance(model.classes_, list) or np.ndim(model.classes_) != 1:
        raise ValueError(
            f"multi-output classifiers are not supported ({name} was fitted on a 2-D y); "
            f"supported: {SUPPORTED}, fitted on a one-dimensional y"
        )


def classes_or_range(classes: np.ndarray | None, n_classes: int) -> np.ndarray:
    """``classes`` when it is a 1-D array of ``n_classes`` labels, else ``arange(n_classes)``
    (a bare booster knows no labels: ``predict`` then returns class indices)."""
    if classes is None or classes.ndim != 1 or len(classes) != n_classes:
        return np.arange(n_classes)
    return classes


def known_feature_names(names, n_features: int) -> tuple[str, ...] | None:
    """The feature names a model knows, as a tuple of ``n_features`` strings, or ``None``
    when it knows none: ``names`` absent, or LightGBM's defaults ``Column_0, Column_1, ...``
    (a model fitted on an array)."""
    if names is None:
        return None
    names = tuple(str(n) for n in names)
    if len(names) != n_features or names == tuple(f"Column_{i}" for i in range(n_features)):
        return None
    return names


def probe_for(ens: TreeEnsemble):
    """:func:`probe_inputs` for ``ens``: a DataFrame with the model's feature names when it
    knows them (its library then checks them instead of warning), else the array."""
    probe = probe_inputs(ens.n_features)
    if ens.feature_names is None:
        return probe
    import pandas as pd

    return pd.DataFrame(probe, columns=list(ens.feature_names))


def probe_inputs(d: int) -> np.ndarray:
    """Fixed probe inputs of ``d`` features: zeros, 7 standard normal rows, 4 rows scaled by
    1e3 (seeded, the same on every call)."""
    rng = np.random.default_rng(0)
    return np.vstack([np.zeros(d), rng.normal(size=(7, d)), 1e3 * rng.normal(size=(4, d))])


def verify_scores(ens: TreeEnsemble, theirs: np.ndarray, what: str) -> None:
    """Check the parsed model's scores on :func:`probe_inputs` against the library's own raw
    output ``theirs`` (``(n_probe, n_scores)``; one column: the binary margin), to a relative
    1e-9; a ``ValueError`` naming ``what`` otherwise."""
    ours = ens.scores(probe_inputs(ens.n_features))
    if theirs.shape[1] == 1:
        ours = ours[:, 1:]
    if theirs.shape != ours.shape or np.any(np.abs(theirs - ours) > 1e-9 * (1 + np.abs(ours))):
        raise ValueError(
            f"the parsed {ens.source} model does not reproduce the library's {what}; its "
            "format may have changed"
        )
