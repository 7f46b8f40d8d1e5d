"""LightGBM classifiers read into a :class:`~reliquant.trees.structure.TreeEnsemble`.

Read: ``LGBMClassifier`` / ``Booster`` (objective ``binary`` or ``multiclass``), from
``booster.dump_model()`` (thresholds and leaf values printed with 17 digits, equal to
``model_to_string()``'s; as ``predict``, up to ``best_iteration`` when there is one). The reader
keeps the library's own split rule, summation order and label rule, so that
``TreeEnsemble.predict`` equals the model's ``predict`` for every float64 input, thresholds
included, and the scores equal its raw output to the last bit (:mod:`reliquant.trees.structure`):

* rule ``le64z``: ``x <= threshold`` in float64 after ``|x| <= 1e-35f`` is read as 0;
* raw score (``aggregation="margin64"``) = sum of the tree outputs in tree order (tree ``i``
  scores class ``i % num_tree_per_iteration``), starting from 0 (the initial score is in the
  first trees' leaves);
* label: ``sigmoid64`` (binary, with the model's ``sigmoid``) or ``softmax64``.

Refused: regressors and rankers, categorical splits, ``missing_type == "Zero"`` splits (zero
read as missing changes the routing at x == 0), linear trees, ``boosting="rf"`` (averaged
output), custom and other objectives (``multiclassova``, ``cross_entropy``, regression,
ranking). Missing-value routing is never needed (continuous noise draws no NaN).
"""

from __future__ import annotations

import numpy as np

from reliquant.trees.readers.checks import (
    classes_or_range,
    known_feature_names,
    probe_inputs,
    refuse,
    verify_scores,
)
from reliquant.trees.readers.lightgbm_text import check_model_text
from reliquant.trees.structure import Tree, TreeEnsemble

__all__ = ["OBJECTIVES", "accepts", "read"]

#: LightGBM objective -> link.
OBJECTIVES = {"binary": "sigmoid64", "multiclass": "softmax64"}


def accepts(model) -> bool:
    """Whether ``model`` comes from LightGBM (this reader then reads or refuses it)."""
    return type(model).__module__.startswith("lightgbm")


def _booster(model):
    """(booster, classes or None) of a LightGBM classifier; clear errors otherwise."""
    import lightgbm as lgb

    if isinstance(model, lgb.LGBMModel):
        if not isinstance(model, lgb.LGBMClassifier):
            refuse(
                f"{type(model).__name__} is a regressor or ranker: robustness is the "
                "probability that the predicted label stays, defined for classifiers"
            )
        if not model.__sklearn_is_fitted__():
            refuse(f"{type(model).__name__} is not fitted")
        if callable(model.objective):
            refuse("a LightGBM model with a custom objective predicts raw scores, not labels")
        return model.booster_, np.asarray(model.classes_)
    if isinstance(model, lgb.Booster):
        return model, None
    refuse(f"unsupported LightGBM model {type(model).__name__}")


def _tree(k: int, root: dict) -> Tree:
    """Flatten one ``dump_model`` tree (nested dicts) into arrays, node 0 the root."""
    feature, threshold, left, right, value = [], [], [], [], []
    stack = [(root, -1, 0)]  # (node, parent, 1 = left child / 2 = right child)
    while stack:
        node, parent, side = stack.pop()
        i = len(feature)
        if parent >= 0:
            (left if side == 1 else right)[parent] = i
        feature.append(-1)
        threshold.append(np.nan)
        left.append(-1)
        right.append(-1)
        value.append(0.0)
        if "leaf_value" in node or "split_feature" not in node:
            if "leaf_coeff" in node or "leaf_const" in node:
                refuse(f"LightGBM tree {k} is a linear tree (linear_tree=True): not supported")
            value[i] = float(node["leaf_value"])
            continue
        if node.get("decision_type", "<=") != "<=":
            refuse(
                f"LightGBM tree {k} has a categorical split (decision_type "
                f"{node.get('decision_type')!r}): categorical splits are not supported"
            )
        if node.get("missing_type") == "Zero":
            refuse(
                f"LightGBM tree {k} has a split with missing_type 'Zero' (zero_as_missing): "
                "zero read as missing changes the routing at x == 0; not supported"
            )
        feature[i] = int(node["split_feature"])
        threshold[i] = float(node["threshold"])
        stack.append((node["right_child"], i, 2))
        stack.append((node["left_child"], i, 1))
    return Tree(
        np.asarray(feature, dtype=np.int32),
        np.asarray(threshold, dtype=np.float64),
        np.asarray(left, dtype=np.int32),
        np.asarray(right, dtype=np.int32),
        np.asarray(value, dtype=np.float64)[:, None],
    )


def read(model) -> TreeEnsemble:
    """A LightGBM classifier (``LGBMClassifier`` or ``Booster``) as a TreeEnsemble."""
    booster, classes = _booster(model)
    # dump_model and predict walk the trees as LightGBM holds them: check them first
    check_model_text(
        booster.model_to_string(), f"malformed model (lightgbm {type(model).__name__})"
    )
    doc = booster.dump_model()
    objective = str(doc.get("objective", "")).split()
    name = objective[0] if objective else ""
    params = dict(p.split(":", 1) for p in objective[1:] if ":" in p)
    if name not in OBJECTIVES:
        refuse(
            f"unsupported LightGBM objective {' '.join(objective) or 'custom'!r}: only "
            "'binary' and 'multiclass' (softmax) classifiers are supported"
        )
    if doc.get("average_output", False):
        refuse("LightGBM boosting='rf' (average_output) is not supported")
    n_classes = 2 if name == "binary" else int(params["num_class"])
    per_iter = int(doc.get("num_tree_per_iteration", 1))
    trees = [_tree(k, ti["tree_structure"]) for k, ti in enumerate(doc["tree_info"])]
    if name == "binary":
        tree_class = np.ones(len(trees), dtype=np.int64)
    else:
        tree_class = np.arange(len(trees), dtype=np.int64) % per_iter
    ens = TreeEnsemble(
        trees=tuple(trees),
        n_features=int(doc["max_feature_idx"]) + 1,
        n_classes=n_classes,
        rule="le64z",
        aggregation="margin64",
        classes=classes_or_range(classes, n_classes),
        tree_class=tree_class,
        base_margin=np.zeros(n_classes),
        source=f"lightgbm {' '.join(objective)}",
        link=OBJECTIVES[name],
        link_scale=float(params.get("sigmoid", 1.0)),
        feature_names=known_feature_names(
            doc.get("feature_names"), int(doc["max_feature_idx"]) + 1
        ),
    )
    probe = probe_inputs(ens.n_features)
    theirs = np.asarray(booster.predict(probe, raw_score=True), dtype=np.float64)
    verify_scores(ens, theirs.reshape(len(probe), -1), "LightGBM raw scores")
    return ens
