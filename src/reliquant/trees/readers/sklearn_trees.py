"""scikit-learn trees and forests read into a :class:`~reliquant.trees.structure.TreeEnsemble`.

Read: ``DecisionTreeClassifier``, ``ExtraTreeClassifier``, ``RandomForestClassifier`` and
``ExtraTreesClassifier`` (numerical splits, one output). Rule ``le32``: an inner node sends
``float32(x) <= threshold`` left (``predict`` casts ``X`` to float32 first); aggregation
``mean_proba``: a forest's leaves normalised as ``DecisionTreeClassifier.predict_proba`` does
and averaged in tree order (soft voting), a single tree keeps ``tree_.value``. See
:mod:`reliquant.trees.structure` for the semantics.

This reader takes every scikit-learn model the gradient-boosting reader
(:mod:`reliquant.trees.readers.sklearn_boosting`) does not: pipelines, regressors, unfitted
and multi-output estimators and other classifiers are refused with a ``ValueError`` saying
what is supported (:func:`reliquant.trees.readers.checks.check_sklearn_classifier`).
"""

from __future__ import annotations

import numpy as np

from reliquant.trees.readers.checks import (
    SUPPORTED,
    check_sklearn_classifier,
    known_feature_names,
)
from reliquant.trees.structure import Tree, TreeEnsemble

__all__ = ["accepts", "read", "tree_arrays"]


def accepts(model) -> bool:
    """Whether ``model`` comes from scikit-learn (this reader then reads or refuses it)."""
    return type(model).__module__.startswith("sklearn")


def tree_arrays(est, normalise: bool) -> Tree:
    """One fitted scikit-learn tree (``est.tree_``) as a :class:`Tree`; ``normalise``: leaf
    values divided by their sum (``predict_proba`` of a forest's member)."""
    t = est.tree_
    if t.n_outputs != 1:
        raise ValueError(
            f"multi-output trees are not supported (n_outputs={t.n_outputs}); supported: "
            f"{SUPPORTED}, fitted on a one-dimensional y"
        )
    # int64 as stored (no wrap-around): TreeEnsemble checks them before anything walks them
    left = np.asarray(t.children_left, dtype=np.int64)
    right = np.asarray(t.children_right, dtype=np.int64)
    leaf = left == -1  # scikit-learn's TREE_LEAF
    feature = np.where(leaf, -1, t.feature).astype(np.int64)
    threshold = np.where(leaf, np.nan, t.threshold).astype(np.float64)
    value = np.asarray(t.value[:, 0, :], dtype=np.float64).copy()
    if normalise:  # as DecisionTreeClassifier.predict_proba
        norm = value.sum(axis=1)
        norm[norm == 0] = 1.0
        value = value / norm[:, None]
    return Tree(feature, threshold, left, right, value)


def read(model) -> TreeEnsemble:
    """A fitted scikit-learn tree or forest classifier as a TreeEnsemble (module docstring)."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

    check_sklearn_classifier(model)
    if isinstance(model, DecisionTreeClassifier | ExtraTreeClassifier):
        trees = (tree_arrays(model, normalise=False),)
    elif isinstance(model, RandomForestClassifier | ExtraTreesClassifier):
        trees = tuple(tree_arrays(e, normalise=True) for e in model.estimators_)
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
        feature_names=known_feature_names(
            getattr(model, "feature_names_in_", None), int(model.n_features_in_)
        ),
    )
