"""Fitted scikit-learn, XGBoost and LightGBM classifiers read into a :class:`TreeEnsemble`.

Supported: scikit-learn ``DecisionTreeClassifier``, ``ExtraTreeClassifier``,
``RandomForestClassifier``, ``ExtraTreesClassifier``; XGBoost ``XGBClassifier`` and
``Booster`` with objective ``binary:logistic`` (label ``sigmoid32(margin) > 0.5``),
``multi:softprob`` (argmax of the float32 softmax) or ``multi:softmax`` (argmax of the
margins), numerical splits only (see :mod:`reliquant.trees.structure` for the semantics).
scikit-learn ``HistGradientBoostingClassifier`` and ``GradientBoostingClassifier`` and
LightGBM ``LGBMClassifier`` / ``Booster`` (binary, multiclass) are read by
:mod:`reliquant.trees.boosting`. Anything else raises a ``ValueError`` saying what is
supported: regressors (robustness is the probability that the *label* stays, which needs a
classifier), multi-output models, categorical splits, and pipelines (pass the final
estimator and the transformed sample instead).

Public API: :func:`extract_model` (re-exported as ``structure.extract_ensemble``).
"""

from __future__ import annotations

import json
import math

import numpy as np

from reliquant.trees.structure import Tree, TreeEnsemble

SUPPORTED = (
    "scikit-learn DecisionTreeClassifier, ExtraTreeClassifier, RandomForestClassifier, "
    "ExtraTreesClassifier, HistGradientBoostingClassifier, GradientBoostingClassifier, an "
    "XGBoost XGBClassifier / Booster (binary:logistic, multi:softprob, multi:softmax), or a "
    "LightGBM LGBMClassifier / Booster (binary, multiclass), with numerical splits"
)


def _from_sklearn_tree(est, normalise: bool) -> Tree:
    t = est.tree_
    if t.n_outputs != 1:
        raise ValueError(
            f"multi-output trees are not supported (n_outputs={t.n_outputs}); supported: "
            f"{SUPPORTED}, fitted on a one-dimensional y"
        )
    left = t.children_left.astype(np.int32)
    right = t.children_right.astype(np.int32)
    leaf = left < 0
    feature = np.where(leaf, -1, t.feature).astype(np.int32)
    threshold = np.where(leaf, np.nan, t.threshold).astype(np.float64)
    value = np.asarray(t.value[:, 0, :], dtype=np.float64).copy()
    if normalise:  # as DecisionTreeClassifier.predict_proba
        norm = value.sum(axis=1)
        norm[norm == 0] = 1.0
        value = value / norm[:, None]
    return Tree(feature, threshold, left, right, value)


def _refuse_sklearn(model) -> None:
    """Clear errors for pipelines, regressors and multi-output classifiers."""
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


def _extract_sklearn(model) -> TreeEnsemble:
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

    _refuse_sklearn(model)
    if isinstance(model, HistGradientBoostingClassifier | GradientBoostingClassifier):
        from reliquant.trees.boosting import extract_sklearn_boosting

        return extract_sklearn_boosting(model)
    if isinstance(model, DecisionTreeClassifier | ExtraTreeClassifier):
        trees = (_from_sklearn_tree(model, normalise=False),)
    elif isinstance(model, RandomForestClassifier | ExtraTreesClassifier):
        trees = tuple(_from_sklearn_tree(e, normalise=True) for e in model.estimators_)
    else:
        raise ValueError(f"unsupported scikit-learn model {type(model).__name__}; use {SUPPORTED}")
    n_classes = len(model.classes_)
    return TreeEnsemble(
        trees=trees,
        n_features=int(model.n_features_in_),
        n_classes=n_classes,
        rule="le32",
        aggregation="mean_proba",
        classes=np.asarray(model.classes_),
        tree_class=np.full(len(trees), -1, dtype=np.int64),
        base_margin=np.zeros(n_classes),
        source=type(model).__name__,
    )


def _parse_base_score(text: str | float) -> np.ndarray:
    """XGBoost base_score: a number, or xgboost 3's string forms ``"5E-1"``, ``"[4.89E-1]"``,
    ``"[0E0,0E0,0E0]"``."""
    if isinstance(text, int | float):
        return np.array([float(text)])
    s = str(text).strip()
    if s.startswith("[") and s.endswith("]"):
        s = s[1:-1]
    parts = [p for p in s.split(",") if p.strip()]
    try:
        return np.array([float(p) for p in parts], dtype=np.float64)
    except ValueError as err:
        raise ValueError(f"cannot parse XGBoost base_score {text!r}") from err


def _xgb_booster(model):
    """(booster, classes or None) of an XGBoost classifier; clear errors otherwise."""
    import xgboost as xgb

    if isinstance(model, xgb.XGBModel):
        if not isinstance(model, xgb.XGBClassifier):
            raise ValueError(
                f"only XGBClassifier is supported; got {type(model).__name__} (a regressor or "
                f"ranker: robustness of a label needs a classifier); supported: {SUPPORTED}"
            )
        return model.get_booster(), np.asarray(getattr(model, "classes_", None))
    if isinstance(model, xgb.Booster):
        return model, None
    raise ValueError(f"unsupported model {type(model).__name__}; use {SUPPORTED}")


def _xgb_tree(k: int, tj: dict) -> Tree:
    if int(tj["tree_param"].get("size_leaf_vector", "1")) > 1:
        raise ValueError(
            "vector-leaf (multi_output_tree) XGBoost models are not supported; "
            f"supported: {SUPPORTED}"
        )
    if any(int(s) != 0 for s in tj.get("split_type", [])):
        raise ValueError(f"tree {k} has a categorical split: not supported")
    left = np.asarray(tj["left_children"], dtype=np.int32)
    right = np.asarray(tj["right_children"], dtype=np.int32)
    leaf = left < 0
    # float32, as XGBoost stores and compares them
    cond = np.asarray(tj["split_conditions"], dtype=np.float32)
    feature = np.where(leaf, -1, np.asarray(tj["split_indices"], dtype=np.int32)).astype(np.int32)
    threshold = np.where(leaf, np.nan, cond.astype(np.float64))
    value = np.where(leaf, cond.astype(np.float64), 0.0)[:, None]
    return Tree(feature, threshold, left, right, value)


def _extract_xgboost(model) -> TreeEnsemble:
    booster, classes = _xgb_booster(model)
    doc = json.loads(booster.save_raw(raw_format="json"))
    learner = doc["learner"]
    objective = learner["objective"]["name"]
    gb = learner["gradient_booster"]
    if gb.get("name") != "gbtree":
        raise ValueError(f"only the gbtree booster is supported; got {gb.get('name')!r}")
    model_json = gb["model"]
    params = learner["learner_model_param"]
    if int(params.get("num_target", "1")) != 1:
        raise ValueError(f"multi-target XGBoost models are not supported; supported: {SUPPORTED}")
    links = {"binary:logistic": "sigmoid32", "multi:softprob": "softmax32"}
    if objective == "binary:logistic":
        n_classes = 2
    elif objective in ("multi:softprob", "multi:softmax"):
        n_classes = int(params.get("num_class", "0"))
    else:
        raise ValueError(
            f"unsupported XGBoost objective {objective!r} (binary:logistic, multi:softprob, "
            "multi:softmax): robustness of a label needs a classifier"
        )
    trees = [_xgb_tree(k, tj) for k, tj in enumerate(model_json["trees"])]
    base = _parse_base_score(params["base_score"])
    if objective == "binary:logistic":
        p = float(base[0])
        if not 0 < p < 1:
            raise ValueError(f"binary:logistic base_score must be in (0, 1); got {p}")
        base_margin = np.array([0.0, math.log(p / (1 - p))])
        tree_class = np.ones(len(trees), dtype=np.int64)
    else:
        base_margin = np.broadcast_to(base, (n_classes,)).astype(np.float64).copy()
        tree_class = np.asarray(model_json["tree_info"], dtype=np.int64)
    if classes is None or classes.ndim != 1 or len(classes) != n_classes:
        classes = np.arange(n_classes)
    ens = TreeEnsemble(
        trees=tuple(trees),
        n_features=int(params["num_feature"]),
        n_classes=n_classes,
        rule="lt32",
        aggregation="margin",
        classes=classes,
        tree_class=tree_class,
        base_margin=base_margin,
        source=f"xgboost {objective}",
        link=links.get(objective, "argmax"),
    )
    _verify_xgb_margin(ens, booster, objective)
    return ens


def _verify_xgb_margin(ens: TreeEnsemble, booster, objective: str) -> None:
    """Check the parsed base margin against XGBoost's own margins on probe inputs."""
    import xgboost as xgb

    rng = np.random.default_rng(0)
    probe = np.vstack([np.zeros(ens.n_features), rng.normal(size=(7, ens.n_features))])
    theirs = booster.predict(xgb.DMatrix(probe), output_margin=True)
    ours = ens.scores(probe).astype(np.float64)
    if objective == "binary:logistic":
        ours = ours[:, 1]
        theirs = np.asarray(theirs).reshape(-1)
    diff = np.abs(np.asarray(theirs, dtype=np.float64) - ours)
    scale = 1.0 + np.abs(ours)
    if np.any(diff > 1e-4 * scale):
        raise ValueError(
            "parsed XGBoost model does not reproduce the booster's margins (max abs diff "
            f"{diff.max():.3g}); the base_score encoding may have changed"
        )


def extract_model(model) -> TreeEnsemble:
    """Read a fitted classifier into a :class:`TreeEnsemble` (module docstring).

    Missing-value routing is irrelevant for continuous noise (no NaN is ever drawn);
    :meth:`TreeEnsemble.predict` rejects NaN inputs.
    """
    mod = type(model).__module__
    if mod.startswith("sklearn"):
        return _extract_sklearn(model)
    if mod.startswith("xgboost"):
        return _extract_xgboost(model)
    if mod.startswith("lightgbm"):
        from reliquant.trees.boosting import extract_lightgbm

        return extract_lightgbm(model)
    raise ValueError(
        f"unsupported model type {type(model).__module__}.{type(model).__name__}: expected a "
        f"{SUPPORTED}; for a pipeline pass its final estimator and the transformed sample"
    )
