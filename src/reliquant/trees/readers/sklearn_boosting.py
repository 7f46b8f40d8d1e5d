"""scikit-learn gradient boosting read into a :class:`~reliquant.trees.structure.TreeEnsemble`.

The reader keeps the library's own split rule, summation order and label rule, so that
``TreeEnsemble.predict`` equals the model's ``predict`` for every float64 input, thresholds
included, and the scores equal its ``decision_function`` to the last bit
(``aggregation="margin64"``, :mod:`reliquant.trees.structure`):

* ``HistGradientBoostingClassifier``: ``_predictors`` (iterations x classes of
  ``TreePredictor``), rule ``le64`` (its ``X`` is float64), raw = ``_baseline_prediction``
  plus the trees in iteration order; label ``argmax`` (binary: margin > 0). Refused:
  categorical features (their preprocessing reorders the columns) and categorical splits.
* ``GradientBoostingClassifier``: ``estimators_`` (stages x classes of
  ``DecisionTreeRegressor``), rule ``le32`` (its ``X`` is cast to float32), raw = the init
  estimator's constant raw prediction plus, stage by stage, ``learning_rate * value`` (the
  product rounded first, as ``predict_stages`` adds it); label ``ge0`` (binary: margin >= 0)
  or ``argmax``. Refused: an init estimator other than ``"zero"`` or a constant
  ``DummyClassifier``.

Missing-value routing is never needed (continuous noise draws no NaN).
"""

from __future__ import annotations

import numpy as np

from reliquant.trees.readers.checks import (
    check_sklearn_classifier,
    known_feature_names,
    probe_for,
    probe_inputs,
    refuse,
    verify_scores,
)
from reliquant.trees.structure import Tree, TreeEnsemble

__all__ = ["accepts", "read"]


def accepts(model) -> bool:
    """Whether ``model`` is a scikit-learn ``GradientBoostingClassifier`` or
    ``HistGradientBoostingClassifier`` (other scikit-learn models go to
    :mod:`reliquant.trees.readers.sklearn_trees`)."""
    if not type(model).__module__.startswith("sklearn"):
        return False
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    return isinstance(model, HistGradientBoostingClassifier | GradientBoostingClassifier)


def _hgb_tree(k: int, nodes: np.ndarray) -> Tree:
    leaf = nodes["is_leaf"].astype(bool)
    if np.any(nodes["is_categorical"].astype(bool) & ~leaf):
        refuse(f"HistGradientBoostingClassifier tree {k} has a categorical split: not supported")
    return Tree(
        np.where(leaf, -1, nodes["feature_idx"].astype(np.int64)),
        np.where(leaf, np.nan, nodes["num_threshold"]).astype(np.float64),
        np.where(leaf, -1, nodes["left"].astype(np.int64)),
        np.where(leaf, -1, nodes["right"].astype(np.int64)),
        np.where(leaf, nodes["value"], 0.0).astype(np.float64)[:, None],
    )


def _hist_parts(model) -> tuple:
    cats = getattr(model, "is_categorical_", None)
    if getattr(model, "_preprocessor", None) is not None or (cats is not None and np.any(cats)):
        refuse(
            "HistGradientBoostingClassifier with categorical features: categorical splits "
            "are not supported"
        )
    per_iter = int(model.n_trees_per_iteration_)
    trees, tree_class = [], []
    for it in model._predictors:
        for k, predictor in enumerate(it):
            trees.append(_hgb_tree(len(trees), predictor.nodes))
            tree_class.append(k if per_iter > 1 else 1)
    baseline = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    return trees, tree_class, baseline, "le64", "argmax"


def _gb_init_raw(model, d: int) -> np.ndarray:
    """The init estimator's raw prediction, refused unless constant by construction."""
    from sklearn.dummy import DummyClassifier

    init = model.init_
    zero = isinstance(init, str) and init == "zero"
    constant = isinstance(init, DummyClassifier) and init.strategy != "stratified"
    if not (zero or constant):
        refuse(
            f"GradientBoostingClassifier with init estimator {type(init).__name__}: only "
            "init='zero' or a constant DummyClassifier (the default) is supported"
        )
    probe = probe_inputs(d).astype(np.float32)
    raw = np.asarray(model._raw_predict_init(probe), dtype=np.float64)
    if np.any(raw != raw[:1]):  # pragma: no cover - constant by construction
        refuse("GradientBoostingClassifier's init raw prediction is not constant")
    return raw[0]


def _sk_tree_scaled(est, scale: float) -> Tree:
    t = est.tree_
    left = np.asarray(t.children_left, dtype=np.int64)  # checked by TreeEnsemble
    leaf = left == -1  # scikit-learn's TREE_LEAF
    # predict_stages adds ``scale * value`` (double product, then the sum)
    value = np.where(leaf, scale * t.value[:, 0, 0], 0.0)
    return Tree(
        np.where(leaf, -1, t.feature).astype(np.int64),
        np.where(leaf, np.nan, t.threshold).astype(np.float64),
        left,
        np.asarray(t.children_right, dtype=np.int64),
        value[:, None],
    )


def _gb_parts(model) -> tuple:
    est = np.asarray(model.estimators_, dtype=object)
    if est.ndim != 2:  # pragma: no cover - scikit-learn always stores (n_stages, K)
        refuse("unexpected GradientBoostingClassifier.estimators_ shape")
    lr = float(model.learning_rate)
    per_iter = est.shape[1]
    trees, tree_class = [], []
    for i in range(est.shape[0]):
        for k in range(per_iter):
            trees.append(_sk_tree_scaled(est[i, k], lr))
            tree_class.append(k if per_iter > 1 else 1)
    base = _gb_init_raw(model, int(model.n_features_in_))
    link = "ge0" if per_iter == 1 else "argmax"
    return trees, tree_class, base, "le32", link


def read(model) -> TreeEnsemble:
    """A fitted ``HistGradientBoostingClassifier`` or ``GradientBoostingClassifier``."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    check_sklearn_classifier(model)
    hist = isinstance(model, HistGradientBoostingClassifier)
    trees, tree_class, base, rule, link = (_hist_parts if hist else _gb_parts)(model)
    n_classes = len(model.classes_)
    base_margin = np.r_[0.0, base] if len(base) == 1 else base.copy()
    if len(base_margin) != n_classes:  # pragma: no cover
        refuse(f"{type(model).__name__}: {len(base)} raw outputs for {n_classes} classes")
    ens = TreeEnsemble(
        trees=tuple(trees),
        n_features=int(model.n_features_in_),
        n_classes=n_classes,
        rule=rule,
        aggregation="margin64",
        classes=np.asarray(model.classes_),
        tree_class=np.asarray(tree_class, dtype=np.int64),
        base_margin=base_margin,
        source=type(model).__name__,
        link=link,
        feature_names=known_feature_names(
            getattr(model, "feature_names_in_", None), int(model.n_features_in_)
        ),
    )
    probe = probe_for(ens)
    theirs = np.asarray(model.decision_function(probe), dtype=np.float64)
    verify_scores(ens, theirs.reshape(len(probe), -1), "decision_function")
    return ens
