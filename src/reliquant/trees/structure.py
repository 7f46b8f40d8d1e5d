"""The split structure of fitted tree ensembles, read with each library's own comparison rule.

Papers 001/002 (Section 2.1) cut the feature space into boxes at the split thresholds of a
fitted tree model. Getting a box's label *exactly* right needs the library's real rule:

* scikit-learn (``rule="le32"``): an inner node sends ``float32(x) <= t`` left, ``t`` the
  float64 threshold (``predict`` casts ``X`` to float32 first).
* XGBoost (``rule="lt32"``): ``float32(x) < float32(t)`` goes left; split conditions are
  float32 and are parsed from the saved JSON model as float32.

Both rules are monotone in ``x``, so each is equivalent to a plain float64 rule
``x <= b`` with an *effective boundary* ``b`` (:func:`effective_boundary`), exact for every
float64 ``x``. :attr:`Tree.boundary` holds it; every box method (grid, exact engine) cuts at
boundaries, so a box never straddles the model's real decision surface.

Aggregation (``TreeEnsemble.aggregation``):

* ``"mean_proba"`` (scikit-learn): score = sum over trees, in tree order, of the leaf's
  class-probability vector, divided by the number of trees; label = first argmax (soft
  voting, as ``RandomForestClassifier.predict``). Random-forest leaves are normalised as
  ``DecisionTreeClassifier.predict_proba`` does; a single decision tree keeps ``tree_.value``.
* ``"margin"`` (XGBoost): score[k] = base_margin[k] + sum of the leaf values of the trees
  that score class ``k`` (``tree_info``), accumulated in float32 in tree order; binary
  models use the two scores ``(0, margin)`` so that label 1 iff ``margin > 0``.

Public API: :class:`Tree`, :class:`TreeEnsemble` (``predict``, ``predict_index``,
``scores``, ``leaf_indices``, ``label_from_leaves``, ``thresholds``), :func:`extract_ensemble`,
:func:`effective_boundary`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

RULES = ("le32", "lt32")
AGGREGATIONS = ("mean_proba", "margin")


# --------------------------------------------------------------------------------------
# effective float64 boundaries
# --------------------------------------------------------------------------------------
def _float32_le_boundary(a32: np.ndarray) -> np.ndarray:
    """Largest float64 ``b`` with ``float32(x) <= a32  <=>  x <= b`` (``a32`` float32).

    ``float32(x)`` rounds to nearest, ties to even, so ``float32(x) <= a`` iff ``x`` is below
    the midpoint ``m`` between ``a`` and the next float32, the midpoint itself included iff
    ``a`` has an even significand (the tie then rounds down to ``a``).
    """
    a32 = np.asarray(a32, dtype=np.float32)
    nxt = np.nextafter(a32, np.float32(np.inf), dtype=np.float32)
    m = (a32.astype(np.float64) + nxt.astype(np.float64)) / 2.0  # exact in float64
    even = (a32.view(np.uint32) & np.uint32(1)) == 0
    b = np.where(even, m, np.nextafter(m, -np.inf))
    # a32 == max float32: everything finite below overflow goes left
    return np.where(np.isinf(nxt), np.inf, b)


def effective_boundary(threshold: np.ndarray, rule: str) -> np.ndarray:
    """Float64 boundaries ``b`` such that the library's rule sends ``x`` left iff ``x <= b``.

    ``rule="le32"`` (scikit-learn): left iff ``float32(x) <= t`` (``t`` float64). With ``a``
    the largest float32 ``<= t``, that is ``float32(x) <= a``.
    ``rule="lt32"`` (XGBoost): left iff ``float32(x) < c`` (``c = float32(t)``), i.e.
    ``float32(x) <= a`` with ``a`` the float32 just below ``c``.
    Exact for every finite float64 ``x`` (checked by brute force in the tests).
    """
    t = np.asarray(threshold, dtype=np.float64)
    if rule == "le32":
        a = t.astype(np.float32)
        too_big = a.astype(np.float64) > t
        a = np.where(too_big, np.nextafter(a, np.float32(-np.inf), dtype=np.float32), a)
    elif rule == "lt32":
        a = np.nextafter(t.astype(np.float32), np.float32(-np.inf), dtype=np.float32)
    else:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    return _float32_le_boundary(a)


# --------------------------------------------------------------------------------------
# data classes
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tree:
    """One binary tree in flat arrays (node 0 is the root).

    feature: int32[n_nodes], split feature, -1 at leaves.
    threshold: float64[n_nodes], the threshold as the library stores it (NaN at leaves).
    left, right: int32[n_nodes], child ids, -1 at leaves.
    value: float64[n_nodes, n_outputs], the leaf's contribution (see module docstring).
    boundary: float64[n_nodes], effective float64 boundary (``x <= boundary`` goes left),
    filled by :class:`TreeEnsemble` from ``threshold`` and the ensemble's ``rule``.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    boundary: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.left < 0

    def leaf_boxes(self, n_features: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(leaf_ids, lo, hi)``: each leaf's box ``lo < x <= hi`` in boundary semantics."""
        ids, los, his = [], [], []
        stack = [(0, np.full(n_features, -np.inf), np.full(n_features, np.inf))]
        while stack:
            node, lo, hi = stack.pop()
            if self.left[node] < 0:
                ids.append(node)
                los.append(lo)
                his.append(hi)
                continue
            f, b = self.feature[node], self.boundary[node]
            lo_l, hi_l = lo.copy(), hi.copy()
            hi_l[f] = min(hi_l[f], b)
            lo_r, hi_r = lo.copy(), hi.copy()
            lo_r[f] = max(lo_r[f], b)
            stack.append((int(self.right[node]), lo_r, hi_r))
            stack.append((int(self.left[node]), lo_l, hi_l))
        return np.array(ids, dtype=np.int64), np.array(los), np.array(his)


@dataclass(frozen=True)
class TreeEnsemble:
    """A fitted tree model reduced to arrays.

    trees: the trees in the library's order.
    n_features: input dimension.
    n_classes: number of classes (2 for a binary XGBoost model).
    rule: ``"le32"`` (scikit-learn) or ``"lt32"`` (XGBoost), see module docstring.
    aggregation: ``"mean_proba"`` or ``"margin"``.
    classes: the labels ``predict`` returns (``classes[argmax]``).
    tree_class: int[n_trees], the class a margin tree scores (all -1 for mean_proba).
    base_margin: float64[n_classes], starting scores of a margin model (zeros otherwise).
    source: a short description of the model it came from.
    """

    trees: tuple[Tree, ...]
    n_features: int
    n_classes: int
    rule: str
    aggregation: str
    classes: np.ndarray
    tree_class: np.ndarray
    base_margin: np.ndarray
    source: str = ""
    _leaf_values: np.ndarray = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}; got {self.rule!r}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}; got {self.aggregation!r}")
        fixed = []
        for tree in self.trees:
            if tree.boundary is None:
                b = np.full(tree.n_nodes, np.nan)
                inner = tree.left >= 0
                b[inner] = effective_boundary(tree.threshold[inner], self.rule)
                tree = Tree(tree.feature, tree.threshold, tree.left, tree.right, tree.value, b)
            fixed.append(tree)
        object.__setattr__(self, "trees", tuple(fixed))
        # per-tree full score vectors (n_nodes, n_classes) in the aggregation's arithmetic
        vals = []
        for k, tree in enumerate(self.trees):
            if self.aggregation == "mean_proba":
                vals.append(np.asarray(tree.value, dtype=np.float64))
            else:
                v = np.zeros((tree.n_nodes, self.n_classes), dtype=np.float32)
                v[:, int(self.tree_class[k])] = tree.value[:, 0].astype(np.float32)
                vals.append(v)
        object.__setattr__(self, "_leaf_values", tuple(vals))

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def tree_scores(self, k: int) -> np.ndarray:
        """Score vectors ``(n_nodes, n_classes)`` that tree ``k`` adds (float64 or float32)."""
        return self._leaf_values[k]

    # ---------------------------------------------------------------- prediction
    def _check_X(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"expected X of shape (n, {self.n_features}); got {X.shape}")
        if np.isnan(X).any():
            raise ValueError("X contains NaN: missing-value routing is not supported")
        return X

    def leaf_indices(self, X: np.ndarray) -> np.ndarray:
        """Leaf node id per row and tree, ``(n, n_trees)``, with the library's own rule."""
        X = self._check_X(X)
        X32 = X.astype(np.float32)
        out = np.empty((X.shape[0], self.n_trees), dtype=np.int64)
        rows = np.arange(X.shape[0])
        for k, tree in enumerate(self.trees):
            node = np.zeros(X.shape[0], dtype=np.int64)
            while True:
                inner = tree.left[node] >= 0
                if not inner.any():
                    break
                f = np.where(inner, tree.feature[node], 0)
                x = X32[rows, f]
                if self.rule == "le32":
                    go_left = x.astype(np.float64) <= tree.threshold[node]
                else:
                    go_left = x < tree.threshold[node].astype(np.float32)
                nxt = np.where(go_left, tree.left[node], tree.right[node])
                node = np.where(inner, nxt, node)
            out[:, k] = node
        return out

    def scores_from_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """Class scores ``(n, n_classes)`` from leaf ids, in the library's arithmetic."""
        leaves = np.asarray(leaves, dtype=np.int64)
        n = leaves.shape[0]
        if self.aggregation == "mean_proba":
            s = np.zeros((n, self.n_classes), dtype=np.float64)
            for k in range(self.n_trees):
                s += self._leaf_values[k][leaves[:, k]]
            if self.n_trees > 1:
                s /= self.n_trees
            return s
        s = np.tile(self.base_margin.astype(np.float32), (n, 1))
        for k in range(self.n_trees):
            c = int(self.tree_class[k])
            s[:, c] += self.trees[k].value[leaves[:, k], 0].astype(np.float32)
        if self.n_classes == 2 and np.all(self.tree_class == 1):
            s[:, 0] = 0.0
        return s

    def label_from_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """Class index (first argmax of the scores) per row of leaf ids."""
        return np.argmax(self.scores_from_leaves(leaves), axis=1)

    def scores(self, X: np.ndarray) -> np.ndarray:
        """Class scores ``(n, n_classes)`` (mean probabilities or margins)."""
        return self.scores_from_leaves(self.leaf_indices(X))

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Predicted class index per row (index into :attr:`classes`)."""
        return self.label_from_leaves(self.leaf_indices(X))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted labels, equal to the fitted model's ``predict``."""
        return self.classes[self.predict_index(X)]

    # ---------------------------------------------------------------- structure
    def thresholds(self) -> list[np.ndarray]:
        """Sorted unique effective boundaries per feature (the paper's tau_i, Section 2.1).

        These are the cuts of the box grid: the library's thresholds moved to the float64
        value where its float32 rule really switches (at most one float32 ulp away).
        """
        per = [[] for _ in range(self.n_features)]
        for tree in self.trees:
            inner = tree.left >= 0
            for f, b in zip(tree.feature[inner], tree.boundary[inner], strict=True):
                per[int(f)].append(b)
        return [np.unique(np.asarray(p, dtype=np.float64)) for p in per]

    def n_grid_boxes(self) -> int:
        """Number of boxes of the full grid, eq. (3): prod_i (|tau_i| + 1)."""
        return math.prod(len(t) + 1 for t in self.thresholds())


# --------------------------------------------------------------------------------------
# extraction
# --------------------------------------------------------------------------------------
def _from_sklearn_tree(est, normalise: bool) -> Tree:
    t = est.tree_
    if t.n_outputs != 1:
        raise ValueError(f"multi-output trees are not supported (n_outputs={t.n_outputs})")
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


def _check_sklearn_missing(est) -> None:
    mgl = getattr(est.tree_, "missing_go_to_left", None)
    # Trees fitted on data with NaN route missing values; inputs here never contain NaN,
    # so the routing does not matter, and predict() rejects NaN inputs explicitly.
    del mgl


def _extract_sklearn(model) -> TreeEnsemble:
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

    if not hasattr(model, "classes_"):
        raise ValueError(f"{type(model).__name__} is not fitted")
    if np.ndim(model.classes_) != 1 or isinstance(model.classes_, list):
        raise ValueError("multi-output classifiers are not supported")
    if isinstance(model, DecisionTreeClassifier | ExtraTreeClassifier):
        trees = (_from_sklearn_tree(model, normalise=False),)
    elif isinstance(model, RandomForestClassifier | ExtraTreesClassifier):
        trees = tuple(_from_sklearn_tree(e, normalise=True) for e in model.estimators_)
    else:
        raise ValueError(f"unsupported scikit-learn model {type(model).__name__}")
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


def _extract_xgboost(model) -> TreeEnsemble:
    import xgboost as xgb

    if isinstance(model, xgb.XGBModel):
        if not isinstance(model, xgb.XGBClassifier):
            raise ValueError(f"only XGBClassifier is supported; got {type(model).__name__}")
        booster = model.get_booster()
        classes = np.asarray(getattr(model, "classes_", None))
    elif isinstance(model, xgb.Booster):
        booster = model
        classes = None
    else:
        raise ValueError(f"unsupported model {type(model).__name__}")
    doc = json.loads(booster.save_raw(raw_format="json"))
    learner = doc["learner"]
    objective = learner["objective"]["name"]
    gb = learner["gradient_booster"]
    if gb.get("name") != "gbtree":
        raise ValueError(f"only the gbtree booster is supported; got {gb.get('name')!r}")
    model_json = gb["model"]
    params = learner["learner_model_param"]
    n_features = int(params["num_feature"])
    num_class = int(params.get("num_class", "0"))
    if int(params.get("num_target", "1")) != 1:
        raise ValueError("multi-target XGBoost models are not supported")
    if objective == "binary:logistic":
        n_classes = 2
    elif objective in ("multi:softprob", "multi:softmax"):
        n_classes = num_class
    else:
        raise ValueError(
            f"unsupported XGBoost objective {objective!r} (binary:logistic, multi:softprob, "
            "multi:softmax)"
        )
    tree_info = np.asarray(model_json["tree_info"], dtype=np.int64)
    trees = []
    for k, tj in enumerate(model_json["trees"]):
        if int(tj["tree_param"].get("size_leaf_vector", "1")) > 1:
            raise ValueError("vector-leaf (multi_output_tree) XGBoost models are not supported")
        if any(int(s) != 0 for s in tj.get("split_type", [])):
            raise ValueError(f"tree {k} has a categorical split: not supported")
        left = np.asarray(tj["left_children"], dtype=np.int32)
        right = np.asarray(tj["right_children"], dtype=np.int32)
        leaf = left < 0
        # float32, as XGBoost stores and compares them
        cond = np.asarray(tj["split_conditions"], dtype=np.float32)
        feature = np.where(leaf, -1, np.asarray(tj["split_indices"], dtype=np.int32)).astype(
            np.int32
        )
        threshold = np.where(leaf, np.nan, cond.astype(np.float64))
        value = np.where(leaf, cond.astype(np.float64), 0.0)[:, None]
        trees.append(Tree(feature, threshold, left, right, value))
    base = _parse_base_score(params["base_score"])
    if objective == "binary:logistic":
        p = float(base[0])
        if not 0 < p < 1:
            raise ValueError(f"binary:logistic base_score must be in (0, 1); got {p}")
        base_margin = np.array([0.0, math.log(p / (1 - p))])
        tree_class = np.ones(len(trees), dtype=np.int64)
    else:
        base_margin = np.broadcast_to(base, (n_classes,)).astype(np.float64).copy()
        tree_class = tree_info
    if classes is None or classes.ndim != 1 or len(classes) != n_classes:
        classes = np.arange(n_classes)
    ens = TreeEnsemble(
        trees=tuple(trees),
        n_features=n_features,
        n_classes=n_classes,
        rule="lt32",
        aggregation="margin",
        classes=classes,
        tree_class=tree_class,
        base_margin=base_margin,
        source=f"xgboost {objective}",
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


def extract_ensemble(model) -> TreeEnsemble:
    """Read a fitted model into a :class:`TreeEnsemble`.

    Supports scikit-learn ``DecisionTreeClassifier``, ``ExtraTreeClassifier``,
    ``RandomForestClassifier``, ``ExtraTreesClassifier`` and XGBoost ``XGBClassifier`` /
    ``Booster`` (objectives binary:logistic, multi:softprob, multi:softmax; numerical splits;
    a ``Booster`` predicts class indices). Anything else raises ``ValueError``.
    Missing-value routing is irrelevant for continuous noise (no NaN is ever drawn);
    :meth:`TreeEnsemble.predict` rejects NaN inputs.
    """
    mod = type(model).__module__
    if mod.startswith("sklearn"):
        return _extract_sklearn(model)
    if mod.startswith("xgboost"):
        return _extract_xgboost(model)
    raise ValueError(
        f"unsupported model type {type(model).__module__}.{type(model).__name__}: expected a "
        "scikit-learn decision tree / random forest / extra trees classifier or an XGBoost "
        "classifier"
    )
