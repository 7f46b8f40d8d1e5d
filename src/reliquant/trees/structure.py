"""The split structure of fitted tree ensembles, read with each library's own comparison rule.

Papers 001/002 (Section 2.1) cut the feature space into boxes at the split thresholds of a
fitted tree model. Getting a box's label *exactly* right needs the library's real rule:

* scikit-learn (``rule="le32"``): an inner node sends ``float32(x) <= t`` left, ``t`` the
  float64 threshold (``predict`` casts ``X`` to float32 first).
* XGBoost (``rule="lt32"``): ``float32(x) < float32(t)`` goes left; split conditions are
  float32 and are parsed from the saved JSON model as float32.
* scikit-learn ``HistGradientBoostingClassifier`` (``rule="le64"``): ``x <= t`` in float64.
* LightGBM (``rule="le64z"``): ``z <= t`` in float64, where ``z`` is ``x`` except that
  ``|x| <= 1e-35f`` (``kZeroThreshold``) reads as 0: its predict keeps only the entries of a
  dense row above that in magnitude, so ``x = 1e-36`` goes where 0 goes.

All rules are monotone in ``x``, so each is equivalent to a plain float64 rule
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
  models use the two scores ``(0, margin)``.
* ``"margin64"`` (LightGBM, scikit-learn gradient boosting): as ``"margin"`` but in float64:
  score[k] = base_margin[k] + the leaf values of class ``k``'s trees, added in tree order
  (``GradientBoostingClassifier`` leaves hold ``learning_rate * value``, as it adds them).

Label (``TreeEnsemble.link``): ``"argmax"`` takes the first argmax of the scores
(scikit-learn; XGBoost ``multi:softmax``). XGBoost classifiers decide on float32
probabilities, so near-ties differ from the raw margin: ``"sigmoid32"`` (binary:logistic)
gives label 1 iff ``sigmoid32(margin) > 0.5`` and ``"softmax32"`` (multi:softprob) is the
first argmax of ``softmax32(scores)``, both in XGBoost's float32 arithmetic
(:func:`sigmoid32`, :func:`softmax32`; ``src/common/math.h``). Float64 links: ``"ge0"``
(``GradientBoostingClassifier``: label 1 iff margin >= 0; ``HistGradientBoostingClassifier``
says > 0, i.e. ``"argmax"`` of ``(0, margin)``), ``"sigmoid64"`` (LightGBM binary: with
``p = 1 / (1 + exp(-link_scale * margin))``, label 1 iff ``p > 1 - p``) and ``"softmax64"``
(LightGBM multiclass: first argmax of ``Common::Softmax``), with C's ``exp`` (``math.exp``)
wherever the rounding can matter (:func:`sigmoid64_label`, :func:`softmax64_label`).

Public API: :class:`Tree`, :class:`TreeEnsemble` (``predict``, ``predict_index``,
``scores``, ``leaf_indices``, ``label_from_leaves``, ``thresholds``),
:func:`effective_boundary`, :func:`label_from_scores`, :func:`sigmoid32`, :func:`softmax32`,
:func:`sigmoid64_label`, :func:`softmax64_label`. Fitted models are read into a
:class:`TreeEnsemble` by :func:`reliquant.trees.readers.extract_ensemble`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from reliquant.trees.tree_checks import check_ensemble_trees

__all__ = [
    "AGGREGATIONS",
    "LGBM_ZERO",
    "LINKS",
    "NEAR_TIE64",
    "RULES",
    "Tree",
    "TreeEnsemble",
    "effective_boundary",
    "label_from_scores",
    "sigmoid32",
    "sigmoid64_label",
    "softmax32",
    "softmax64_label",
    "stump_ensemble",
]

RULES = ("le32", "lt32", "le64", "le64z")
AGGREGATIONS = ("mean_proba", "margin", "margin64")
LINKS = ("argmax", "sigmoid32", "softmax32", "ge0", "sigmoid64", "softmax64")
LGBM_ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold: |x| <= it reads as 0
NEAR_TIE64 = 1e-8  # float64 margin gap beyond which sigmoid64 / softmax64 follow the margin


def sigmoid32(margin: np.ndarray) -> np.ndarray:
    """XGBoost's float32 sigmoid: ``1 / (expf(min(-x, 88.7)) + 1 + 1e-16)``, every step
    rounded to float32 (``common::Sigmoid``). ``XGBClassifier.predict`` says 1 iff it is
    ``> 0.5``, which needs ``margin`` above about 9e-8, not just above 0."""
    x = np.minimum(-np.asarray(margin, dtype=np.float32), np.float32(88.7))
    denom = (_expf(x) + np.float32(1.0)) + np.float32(1e-16)
    return np.float32(1.0) / denom


def _expf(x: np.ndarray) -> np.ndarray:
    """Correctly rounded float32 exp, as C's ``expf`` (numpy's float32 ``exp`` is not: it
    gives 0.99999994 for exp(-1e-7), where expf gives 0.9999999)."""
    return np.exp(np.asarray(x, dtype=np.float32).astype(np.float64)).astype(np.float32)


def softmax32(scores: np.ndarray) -> np.ndarray:
    """XGBoost's float32 softmax over axis 1 (``common::Softmax``): ``e_k = expf(s_k - max)``
    in float32, summed in float64 in class order, each divided by ``float32(sum)``."""
    s = np.asarray(scores, dtype=np.float32)
    e = _expf(s - s.max(axis=1, keepdims=True))
    wsum = np.zeros(s.shape[0], dtype=np.float64)
    for k in range(s.shape[1]):
        wsum += e[:, k].astype(np.float64)
    return e / wsum.astype(np.float32)[:, None]


def _exp(x: float) -> float:
    """C's ``exp`` (``math.exp``, which raises where C overflows to inf)."""
    return math.exp(x) if x < 709.0 else math.inf


def sigmoid64_label(margin: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """LightGBM binary: 1 iff ``p > 1 - p``, ``p = 1 / (1 + exp(-scale * margin))`` in float64.

    That is ``scale * margin`` above about 1.7e-16, not above 0; beyond ``NEAR_TIE64`` the sign
    decides, below it the library's arithmetic is replayed with C's ``exp``."""
    u = float(scale) * np.asarray(margin, dtype=np.float64)
    out = (u > 0).astype(np.int64)
    for i in np.nonzero(np.abs(u) < NEAR_TIE64)[0]:
        p = 1.0 / (1.0 + _exp(-float(u[i])))
        out[i] = int(p > 1.0 - p)
    return out


def softmax64_label(scores: np.ndarray) -> np.ndarray:
    """LightGBM multiclass: first argmax of ``Common::Softmax`` (``e_k = exp(s_k - max)``,
    summed in class order, each divided by the sum), replayed with C's ``exp`` for rows whose
    two top margins are within ``NEAR_TIE64`` (elsewhere the margin's argmax is the label)."""
    s = np.asarray(scores, dtype=np.float64)
    best = np.argmax(s, axis=1)
    rows = np.arange(s.shape[0])
    gap = s[rows, best][:, None] - s
    gap[rows, best] = np.inf
    for i in np.nonzero(gap.min(axis=1, initial=np.inf) < NEAR_TIE64)[0]:
        wmax = float(s[i].max())
        e = [_exp(float(v) - wmax) for v in s[i]]
        wsum = 0.0
        for v in e:
            wsum += v
        best[i] = int(np.argmax(np.array(e) / wsum))
    return best


def label_from_scores(scores: np.ndarray, link: str, scale: float = 1.0) -> np.ndarray:
    """Class index per row of ``scores`` under the model's ``link`` (module docstring);
    ``scale``: ``TreeEnsemble.link_scale`` (LightGBM's ``sigmoid``)."""
    if link == "ge0":
        return (scores[:, 1] >= 0).astype(np.int64)
    if link == "sigmoid64":
        return sigmoid64_label(scores[:, 1], scale)
    if link == "softmax64":
        return softmax64_label(scores)
    if link == "sigmoid32":
        return (sigmoid32(scores[:, 1]) > np.float32(0.5)).astype(np.int64)
    if link == "softmax32":
        return np.argmax(softmax32(scores), axis=1)
    if link == "argmax":
        return np.argmax(scores, axis=1)
    raise ValueError(f"link must be one of {LINKS}; got {link!r}")


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
    ``rule="le64"``: ``b = t``. ``rule="le64z"`` (LightGBM, ``z = 0`` for ``|x| <= Z``,
    ``Z = LGBM_ZERO``): ``b = t`` outside ``[-Z, Z)``, ``Z`` for ``0 <= t < Z`` (all of
    ``[-Z, Z]`` reads 0 <= t), and the float64 below ``-Z`` for ``-Z <= t < 0``.
    Exact for every finite float64 ``x`` (checked by brute force in the tests).
    """
    t = np.asarray(threshold, dtype=np.float64)
    if rule == "le64":
        return t.copy()
    if rule == "le64z":
        z = LGBM_ZERO
        inner = np.where(t >= 0, z, np.nextafter(-z, -np.inf))
        return np.where((t >= z) | (t < -z), t, inner)
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
    n_deleted: leaves no node points to that the library keeps (XGBoost's pruned nodes).
    A :class:`TreeEnsemble` checks the arrays (:mod:`reliquant.trees.tree_checks`) and keeps
    read-only copies (the index arrays as int32).
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    boundary: np.ndarray | None = None
    n_deleted: int = 0

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

    Attributes
    ----------
    trees : the trees in the library's order.
    n_features : input dimension.
    n_classes : number of classes (2 for a binary margin model).
    rule : ``"le32"``, ``"lt32"``, ``"le64"`` or ``"le64z"``, see module docstring.
    aggregation : ``"mean_proba"``, ``"margin"`` (float32) or ``"margin64"``.
    classes : the labels ``predict`` returns (``classes[argmax]``).
    tree_class : int[n_trees], the class a margin tree scores (all -1 for mean_proba).
    base_margin : float64[n_classes], starting scores of a margin model (zeros otherwise).
    source : a short description of the model it came from.
    link : how scores become a label, one of ``LINKS`` (module docstring).
    link_scale : the factor of the margin inside ``"sigmoid64"`` (LightGBM's ``sigmoid``).
    feature_names : the names of the features, in the model's order, when the model knows
        them (fitted on a DataFrame); ``None`` otherwise. :func:`reliquant.trees.robustness`
        matches named inputs (a pandas Series or DataFrame) to them by name.
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
    link: str = "argmax"
    link_scale: float = 1.0
    feature_names: tuple[str, ...] | None = None
    _leaf_values: np.ndarray = field(default=None, repr=False, compare=False)
    _thresholds: tuple = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}; got {self.rule!r}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}; got {self.aggregation!r}")
        if self.link not in LINKS:
            raise ValueError(f"link must be one of {LINKS}; got {self.link!r}")
        if self.feature_names is not None:
            names = tuple(str(n) for n in self.feature_names)
            if len(names) != self.n_features or len(set(names)) != len(names):
                raise ValueError(
                    f"feature_names must be {self.n_features} distinct names; got {list(names)}"
                )
            object.__setattr__(self, "feature_names", names)
        # a malformed tree (a cycle, a child out of range) never reaches a walk
        check_ensemble_trees(self.trees, self.n_features, self.n_classes, self.aggregation,
                             self.tree_class, where=f"malformed model ({self.source or 'trees'})")  # fmt: skip
        object.__setattr__(self, "trees", tuple(self._checked(t) for t in self.trees))
        # per-tree full score vectors (n_nodes, n_classes) in the aggregation's arithmetic
        vals = []
        for k, tree in enumerate(self.trees):
            if self.aggregation == "mean_proba":
                vals.append(np.asarray(tree.value, dtype=np.float64))
            else:
                dt = np.float32 if self.aggregation == "margin" else np.float64
                v = np.zeros((tree.n_nodes, self.n_classes), dtype=dt)
                v[:, int(self.tree_class[k])] = tree.value[:, 0].astype(dt)
                vals.append(v)
        object.__setattr__(self, "_leaf_values", tuple(vals))

    def _checked(self, tree: Tree) -> Tree:
        """Read-only copies of a checked tree's arrays, with its boundaries."""
        b = tree.boundary
        if b is None:
            b = np.full(tree.n_nodes, np.nan)
            inner = tree.left >= 0
            b[inner] = effective_boundary(tree.threshold[inner], self.rule)
        arrays = [np.array(a, dtype=d) for a, d in zip(
            (tree.feature, tree.threshold, tree.left, tree.right, tree.value, b),
            (np.int32, np.float64, np.int32, np.int32, np.float64, np.float64), strict=True)]  # fmt: skip
        for a in arrays:
            a.setflags(write=False)
        return Tree(*arrays, n_deleted=tree.n_deleted)

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
        if self.rule == "le64z":  # LightGBM reads |x| <= kZeroThreshold as 0
            X = np.where(np.abs(X) <= LGBM_ZERO, 0.0, X)
        X32 = X.astype(np.float32) if self.rule in ("le32", "lt32") else X
        if X.shape[0] == 1:  # one row: a scalar walk (no per-level array calls)
            from reliquant.trees.ensemble_views import leaf_indices_row  # it imports this module

            return leaf_indices_row(self, X32[0])[None, :]
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
                if self.rule != "lt32":  # le32 (x is float32), le64, le64z
                    go_left = x.astype(np.float64) <= tree.threshold[node]
                else:
                    go_left = x < tree.threshold[node].astype(np.float32)
                nxt = np.where(go_left, tree.left[node], tree.right[node])
                node = np.where(inner, nxt, node)
            out[:, k] = node
        return out

    def scores_from_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """Class scores ``(n, n_classes)`` from leaf ids, in the library's arithmetic (one
        gather where :func:`reliquant.trees.ensemble_views.gathered_scores` applies, the
        same numbers as the tree-by-tree sum)."""
        from reliquant.trees.ensemble_views import gathered_scores  # it imports this module

        leaves = np.asarray(leaves, dtype=np.int64)
        s = gathered_scores(self, leaves)
        if s is None:
            s = self._scores_tree_by_tree(leaves)
        if (
            self.aggregation != "mean_proba"
            and self.n_classes == 2
            and np.all(self.tree_class == 1)
        ):
            s[:, 0] = 0.0
        return s

    def _scores_tree_by_tree(self, leaves: np.ndarray) -> np.ndarray:
        """The scores of :meth:`scores_from_leaves` summed tree by tree, in tree order."""
        n = leaves.shape[0]
        if self.aggregation == "mean_proba":
            s = np.zeros((n, self.n_classes), dtype=np.float64)
            for k in range(self.n_trees):
                s += self._leaf_values[k][leaves[:, k]]
            if self.n_trees > 1:
                s /= self.n_trees
            return s
        dt = np.float32 if self.aggregation == "margin" else np.float64
        s = np.tile(self.base_margin.astype(dt), (n, 1))
        for k in range(self.n_trees):
            s[:, int(self.tree_class[k])] += self.trees[k].value[leaves[:, k], 0].astype(dt)
        return s

    def label_from_leaves(self, leaves: np.ndarray) -> np.ndarray:
        """Class index per row of leaf ids, decided as the library decides (:attr:`link`)."""
        return label_from_scores(self.scores_from_leaves(leaves), self.link, self.link_scale)

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
        Computed once per ensemble (read-only arrays; a fresh list each call).
        """
        if self._thresholds is None:
            feats = np.concatenate([t.feature[t.left >= 0] for t in self.trees] or [[]])
            bounds = np.concatenate([t.boundary[t.left >= 0] for t in self.trees] or [[]])
            order = np.lexsort((bounds, feats))
            feats, bounds = feats[order].astype(np.int64), bounds[order].astype(np.float64)
            starts = np.searchsorted(feats, np.arange(self.n_features + 1))
            per = []
            for f in range(self.n_features):
                u = np.unique(bounds[starts[f] : starts[f + 1]])
                u.setflags(write=False)
                per.append(u)
            object.__setattr__(self, "_thresholds", tuple(per))
        return list(self._thresholds)

    def n_grid_boxes(self) -> int:
        """Number of boxes of the full grid, eq. (3): prod_i (|tau_i| + 1)."""
        return math.prod(len(t) + 1 for t in self.thresholds())


def stump_ensemble(n_features: int = 1, boosted: bool = False) -> TreeEnsemble:
    """A two-class model of one stump (``x_0 <= 0`` -> class 0, else class 1) over
    ``n_features`` features: a forest averaging probabilities (``le32``, ``mean_proba``), or
    with ``boosted`` a boosted model's float32 margin for class 1 (``lt32``, ``margin``).
    The smallest model of each kind: the kernels compile on it once per machine
    (:func:`reliquant.trees.anytime.warm_up`, :mod:`reliquant.trees.kernel_cache`,
    :func:`reliquant.trees.grid_kernel.compile_kernels`)."""
    stump = Tree(np.array([0, -1, -1], dtype=np.int32), np.array([0.0, np.nan, np.nan]),
                 np.array([1, -1, -1], dtype=np.int32), np.array([2, -1, -1], dtype=np.int32),
                 np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]))  # fmt: skip
    if boosted:
        return TreeEnsemble((stump,), n_features, 2, "lt32", "margin", np.arange(2),
                            np.array([1]), np.zeros(2))  # fmt: skip
    return TreeEnsemble((stump,), n_features, 2, "le32", "mean_proba", np.arange(2),
                        np.array([-1]), np.zeros(2))  # fmt: skip
