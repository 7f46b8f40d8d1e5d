"""XGBoost classifiers read into a :class:`~reliquant.trees.structure.TreeEnsemble`.

Read: ``XGBClassifier`` and ``Booster`` (``gbtree``) with objective ``binary:logistic``
(label ``sigmoid32(margin) > 0.5``), ``multi:softprob`` (first argmax of the float32 softmax)
or ``multi:softmax`` (first argmax of the margins), numerical splits only, parsed from the
booster's saved JSON. Rule ``lt32``: ``float32(x) < float32(threshold)`` goes left (split
conditions are float32 and parsed as float32); aggregation ``margin``: base margin plus the
leaf values of each class's trees, in float32, in tree order (see
:mod:`reliquant.trees.structure`). The parsed base margin is checked against the booster's own
margins on probe inputs. Refused: regressors and rankers, other objectives and boosters,
multi-target and vector-leaf models, categorical splits. A model fitted on a DataFrame keeps
its feature names (``Booster.feature_names``, also in a saved ``.json``/``.ubj``) in
``TreeEnsemble.feature_names``.
"""

from __future__ import annotations

import json
import math

import numpy as np

from reliquant.trees.readers.checks import SUPPORTED, classes_or_range, known_feature_names
from reliquant.trees.structure import Tree, TreeEnsemble
from reliquant.trees.tree_checks import MalformedTreeError

__all__ = ["accepts", "parse_base_score", "read"]

#: XGBoost objective -> link (``multi:softmax`` takes the argmax of the margins).
LINKS = {"binary:logistic": "sigmoid32", "multi:softprob": "softmax32"}


def accepts(model) -> bool:
    """Whether ``model`` comes from XGBoost (this reader then reads or refuses it)."""
    return type(model).__module__.startswith("xgboost")


def parse_base_score(text: str | float) -> np.ndarray:
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


def _booster(model):
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


def _tree(k: int, tj: dict) -> Tree:
    if int(tj["tree_param"].get("size_leaf_vector", "1")) > 1:
        raise ValueError(
            "vector-leaf (multi_output_tree) XGBoost models are not supported; "
            f"supported: {SUPPORTED}"
        )
    if any(int(s) != 0 for s in tj.get("split_type", [])):
        raise ValueError(f"tree {k} has a categorical split: not supported")
    n = len(tj["left_children"])
    for key in ("right_children", "split_conditions", "split_indices"):
        if len(tj[key]) != n:
            raise MalformedTreeError(
                f"tree {k}: {key} has {len(tj[key])} entries but left_children {n}: one per node"
            )
    # int64 (no wrap-around), checked by TreeEnsemble before anything walks them
    left = np.asarray(tj["left_children"], dtype=np.int64)
    right = np.asarray(tj["right_children"], dtype=np.int64)
    leaf = left == -1  # XGBoost's kInvalidNodeId
    # float32, as XGBoost stores and compares them
    cond = np.asarray(tj["split_conditions"], dtype=np.float32)
    feature = np.where(leaf, -1, np.asarray(tj["split_indices"], dtype=np.int64))
    threshold = np.where(leaf, np.nan, cond.astype(np.float64))
    value = np.where(leaf, cond.astype(np.float64), 0.0)[:, None]
    # the nodes its pruning deleted stay in the arrays, as leaves no node points to
    deleted = int(tj["tree_param"].get("num_deleted", "0"))
    return Tree(feature, threshold, left, right, value, n_deleted=deleted)


def read(model) -> TreeEnsemble:
    """An XGBoost classifier (``XGBClassifier`` or ``Booster``) as a TreeEnsemble."""
    booster, classes = _booster(model)
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
    if objective == "binary:logistic":
        n_classes = 2
    elif objective in ("multi:softprob", "multi:softmax"):
        n_classes = int(params.get("num_class", "0"))
    else:
        raise ValueError(
            f"unsupported XGBoost objective {objective!r} (binary:logistic, multi:softprob, "
            "multi:softmax): robustness of a label needs a classifier"
        )
    trees = [_tree(k, tj) for k, tj in enumerate(model_json["trees"])]
    _check_groups(model_json, len(trees), 1 if objective == "binary:logistic" else n_classes)
    base = parse_base_score(params["base_score"])
    if objective == "binary:logistic":
        p = float(base[0])
        if not 0 < p < 1:
            raise ValueError(f"binary:logistic base_score must be in (0, 1); got {p}")
        base_margin = np.array([0.0, math.log(p / (1 - p))])
        tree_class = np.ones(len(trees), dtype=np.int64)
    else:
        base_margin = np.broadcast_to(base, (n_classes,)).astype(np.float64).copy()
        tree_class = np.asarray(model_json["tree_info"], dtype=np.int64)
    ens = TreeEnsemble(
        trees=tuple(trees),
        n_features=int(params["num_feature"]),
        n_classes=n_classes,
        rule="lt32",
        aggregation="margin",
        classes=classes_or_range(classes, n_classes),
        tree_class=tree_class,
        base_margin=base_margin,
        source=f"xgboost {objective}",
        link=LINKS.get(objective, "argmax"),
        feature_names=known_feature_names(booster.feature_names, int(params["num_feature"])),
    )
    _verify_margin(ens, booster, objective)
    return ens


def _check_groups(model_json: dict, n_trees: int, n_groups: int) -> None:
    """``tree_info`` (the output each tree adds to) and ``iteration_indptr`` as XGBoost's
    ``predict`` indexes with them: one group ``0 .. n_groups-1`` per tree, iterations that
    cover the trees in order (an edited file otherwise corrupts its memory)."""
    info = np.asarray(model_json.get("tree_info", []), dtype=np.int64)
    if info.shape != (n_trees,) or np.any((info < 0) | (info >= n_groups)):
        raise MalformedTreeError(
            f"tree_info {info.tolist()[:10]} must give each of the {n_trees} trees an output "
            f"0 .. {n_groups - 1}"
        )
    indptr = np.asarray(model_json.get("iteration_indptr", [0, n_trees]), dtype=np.int64)
    if (
        indptr.ndim != 1
        or indptr.size < 1
        or indptr[0] != 0
        or indptr[-1] != n_trees
        or np.any(np.diff(indptr) < 0)
    ):
        raise MalformedTreeError(
            f"iteration_indptr {indptr.tolist()[:10]} must rise from 0 to the {n_trees} trees"
        )


def _verify_margin(ens: TreeEnsemble, booster, objective: str) -> None:
    """Check the parsed base margin against XGBoost's own margins on probe inputs."""
    import xgboost as xgb

    rng = np.random.default_rng(0)
    probe = np.vstack([np.zeros(ens.n_features), rng.normal(size=(7, ens.n_features))])
    # a model fitted on a DataFrame checks the names (and types) of what it predicts on
    dmat = xgb.DMatrix(
        probe, feature_names=booster.feature_names, feature_types=booster.feature_types
    )
    theirs = booster.predict(dmat, output_margin=True)
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
