"""LightGBM and scikit-learn gradient boosting read into a :class:`TreeEnsemble`.

Each reader keeps the library's own split rule, summation order and label rule, so that
``TreeEnsemble.predict`` equals the model's ``predict`` for every float64 input, thresholds
included, and the scores equal its raw output to the last bit (``aggregation="margin64"``,
:mod:`reliquant.trees.structure`):

* LightGBM ``LGBMClassifier`` / ``Booster`` (objective ``binary`` or ``multiclass``), read
  from ``booster.dump_model()`` (thresholds and leaf values printed with 17 digits, equal to
  ``model_to_string()``'s; as ``predict``, up to ``best_iteration`` when there is one).
  Rule ``le64z``: ``x <= threshold`` in float64 after ``|x| <= 1e-35f`` is read as 0.
  Raw score = sum of the tree outputs in tree order (tree ``i`` scores class
  ``i % num_tree_per_iteration``), starting from 0 (the initial score is in the first
  trees' leaves). Label: ``sigmoid64`` (binary, with the model's ``sigmoid``) or
  ``softmax64``. Refused: categorical splits, ``missing_type == "Zero"`` splits (zero read as
  missing changes the routing at x == 0), linear trees, ``boosting="rf"`` (averaged output),
  custom and other objectives (``multiclassova``, ``cross_entropy``, regression, ranking).
* scikit-learn ``HistGradientBoostingClassifier``: ``_predictors`` (iterations x classes of
  ``TreePredictor``), rule ``le64`` (its ``X`` is float64), raw = ``_baseline_prediction``
  plus the trees in iteration order; label ``argmax`` (binary: margin > 0). Refused:
  categorical features (their preprocessing reorders the columns) and categorical splits.
* scikit-learn ``GradientBoostingClassifier``: ``estimators_`` (stages x classes of
  ``DecisionTreeRegressor``), rule ``le32`` (its ``X`` is cast to float32), raw = the init
  estimator's constant raw prediction plus, stage by stage, ``learning_rate * value`` (the
  product rounded first, as ``predict_stages`` adds it); label ``ge0`` (binary: margin >= 0)
  or ``argmax``. Refused: an init estimator other than ``"zero"`` or a constant
  ``DummyClassifier``.

Missing-value routing is never needed (continuous noise draws no NaN).

Public API: :func:`extract_lightgbm`, :func:`extract_sklearn_boosting` (both reached
through :func:`reliquant.trees.structure.extract_ensemble`).
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from reliquant.trees.structure import Tree, TreeEnsemble

LGBM_OBJECTIVES = {"binary": "sigmoid64", "multiclass": "softmax64"}


def _refuse(what: str) -> NoReturn:
    from reliquant.trees.extract import SUPPORTED

    raise ValueError(f"{what}; supported: {SUPPORTED}")


# --------------------------------------------------------------------------------------
# LightGBM
# --------------------------------------------------------------------------------------
def _lgb_booster(model):
    """(booster, classes or None) of a LightGBM classifier; clear errors otherwise."""
    import lightgbm as lgb

    if isinstance(model, lgb.LGBMModel):
        if not isinstance(model, lgb.LGBMClassifier):
            _refuse(
                f"{type(model).__name__} is a regressor or ranker: robustness is the "
                "probability that the predicted label stays, defined for classifiers"
            )
        if not model.__sklearn_is_fitted__():
            _refuse(f"{type(model).__name__} is not fitted")
        if callable(model.objective):
            _refuse("a LightGBM model with a custom objective predicts raw scores, not labels")
        return model.booster_, np.asarray(model.classes_)
    if isinstance(model, lgb.Booster):
        return model, None
    _refuse(f"unsupported LightGBM model {type(model).__name__}")


def _lgb_tree(k: int, root: dict) -> Tree:
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
                _refuse(f"LightGBM tree {k} is a linear tree (linear_tree=True): not supported")
            value[i] = float(node["leaf_value"])
            continue
        if node.get("decision_type", "<=") != "<=":
            _refuse(
                f"LightGBM tree {k} has a categorical split (decision_type "
                f"{node.get('decision_type')!r}): categorical splits are not supported"
            )
        if node.get("missing_type") == "Zero":
            _refuse(
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


def extract_lightgbm(model) -> TreeEnsemble:
    """A LightGBM classifier (``LGBMClassifier`` or ``Booster``) as a TreeEnsemble."""
    booster, classes = _lgb_booster(model)
    doc = booster.dump_model()
    objective = str(doc.get("objective", "")).split()
    name = objective[0] if objective else ""
    params = dict(p.split(":", 1) for p in objective[1:] if ":" in p)
    if name not in LGBM_OBJECTIVES:
        _refuse(
            f"unsupported LightGBM objective {' '.join(objective) or 'custom'!r}: only "
            "'binary' and 'multiclass' (softmax) classifiers are supported"
        )
    if doc.get("average_output", False):
        _refuse("LightGBM boosting='rf' (average_output) is not supported")
    n_classes = 2 if name == "binary" else int(params["num_class"])
    per_iter = int(doc.get("num_tree_per_iteration", 1))
    trees = [_lgb_tree(k, ti["tree_structure"]) for k, ti in enumerate(doc["tree_info"])]
    if name == "binary":
        tree_class = np.ones(len(trees), dtype=np.int64)
    else:
        tree_class = np.arange(len(trees), dtype=np.int64) % per_iter
    if classes is None or classes.ndim != 1 or len(classes) != n_classes:
        classes = np.arange(n_classes)
    ens = TreeEnsemble(
        trees=tuple(trees),
        n_features=int(doc["max_feature_idx"]) + 1,
        n_classes=n_classes,
        rule="le64z",
        aggregation="margin64",
        classes=classes,
        tree_class=tree_class,
        base_margin=np.zeros(n_classes),
        source=f"lightgbm {' '.join(objective)}",
        link=LGBM_OBJECTIVES[name],
        link_scale=float(params.get("sigmoid", 1.0)),
    )
    probe = _probe(ens.n_features)
    theirs = np.asarray(booster.predict(probe, raw_score=True), dtype=np.float64)
    _verify(ens, theirs.reshape(len(probe), -1), "LightGBM raw scores")
    return ens


# --------------------------------------------------------------------------------------
# scikit-learn gradient boosting
# --------------------------------------------------------------------------------------
def _hgb_tree(k: int, nodes: np.ndarray) -> Tree:
    leaf = nodes["is_leaf"].astype(bool)
    if np.any(nodes["is_categorical"].astype(bool) & ~leaf):
        _refuse(f"HistGradientBoostingClassifier tree {k} has a categorical split: not supported")
    return Tree(
        np.where(leaf, -1, nodes["feature_idx"]).astype(np.int32),
        np.where(leaf, np.nan, nodes["num_threshold"]).astype(np.float64),
        np.where(leaf, -1, nodes["left"].astype(np.int64)).astype(np.int32),
        np.where(leaf, -1, nodes["right"].astype(np.int64)).astype(np.int32),
        np.where(leaf, nodes["value"], 0.0).astype(np.float64)[:, None],
    )


def _extract_hist(model) -> tuple:
    cats = getattr(model, "is_categorical_", None)
    if getattr(model, "_preprocessor", None) is not None or (cats is not None and np.any(cats)):
        _refuse(
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
        _refuse(
            f"GradientBoostingClassifier with init estimator {type(init).__name__}: only "
            "init='zero' or a constant DummyClassifier (the default) is supported"
        )
    probe = _probe(d).astype(np.float32)
    raw = np.asarray(model._raw_predict_init(probe), dtype=np.float64)
    if np.any(raw != raw[:1]):  # pragma: no cover - constant by construction
        _refuse("GradientBoostingClassifier's init raw prediction is not constant")
    return raw[0]


def _sk_tree_scaled(est, scale: float) -> Tree:
    t = est.tree_
    left = t.children_left.astype(np.int32)
    leaf = left < 0
    # predict_stages adds ``scale * value`` (double product, then the sum)
    value = np.where(leaf, scale * t.value[:, 0, 0], 0.0)
    return Tree(
        np.where(leaf, -1, t.feature).astype(np.int32),
        np.where(leaf, np.nan, t.threshold).astype(np.float64),
        left,
        t.children_right.astype(np.int32),
        value[:, None],
    )


def _extract_gb(model) -> tuple:
    est = np.asarray(model.estimators_, dtype=object)
    if est.ndim != 2:  # pragma: no cover - scikit-learn always stores (n_stages, K)
        _refuse("unexpected GradientBoostingClassifier.estimators_ shape")
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


def extract_sklearn_boosting(model) -> TreeEnsemble:
    """A fitted ``HistGradientBoostingClassifier`` or ``GradientBoostingClassifier``."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    hist = isinstance(model, HistGradientBoostingClassifier)
    trees, tree_class, base, rule, link = (_extract_hist if hist else _extract_gb)(model)
    n_classes = len(model.classes_)
    base_margin = np.r_[0.0, base] if len(base) == 1 else base.copy()
    if len(base_margin) != n_classes:  # pragma: no cover
        _refuse(f"{type(model).__name__}: {len(base)} raw outputs for {n_classes} classes")
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
    )
    probe = _probe(ens.n_features)
    theirs = np.asarray(model.decision_function(probe), dtype=np.float64)
    _verify(ens, theirs.reshape(len(probe), -1), "decision_function")
    return ens


# --------------------------------------------------------------------------------------
def _probe(d: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.vstack([np.zeros(d), rng.normal(size=(7, d)), 1e3 * rng.normal(size=(4, d))])


def _verify(ens: TreeEnsemble, theirs: np.ndarray, what: str) -> None:
    """Check the parsed model against the library's own raw output on probe inputs."""
    ours = ens.scores(_probe(ens.n_features))
    if theirs.shape[1] == 1:
        ours = ours[:, 1:]
    if theirs.shape != ours.shape or np.any(np.abs(theirs - ours) > 1e-9 * (1 + np.abs(ours))):
        raise ValueError(
            f"the parsed {ens.source} model does not reproduce the library's {what}; its "
            "format may have changed"
        )
