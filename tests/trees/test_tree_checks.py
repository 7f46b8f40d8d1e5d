"""reliquant.trees.tree_checks: node arrays that are not one binary tree refused, naming the
tree and the node, before any walk; the verdict against a brute-force walk of the nodes."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from reliquant.trees import robustness
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.structure import Tree, TreeEnsemble
from reliquant.trees.tree_checks import MalformedTreeError, check_trees


def _random_tree(rng: np.random.Generator, n_splits: int, d: int) -> Tree:
    """A valid random tree of ``n_splits`` splits, its non-root nodes numbered at random."""
    left, right = [-1], [-1]
    for _ in range(n_splits):
        leaves = [i for i in range(len(left)) if left[i] == -1]
        u = leaves[rng.integers(len(leaves))]
        left[u], right[u] = len(left), len(left) + 1
        left += [-1, -1]
        right += [-1, -1]
    n = len(left)
    perm = np.r_[0, 1 + rng.permutation(n - 1)]  # old id -> new id; the root stays 0
    new_left, new_right = np.full(n, -1), np.full(n, -1)
    for old in range(n):
        if left[old] >= 0:
            new_left[perm[old]], new_right[perm[old]] = perm[left[old]], perm[right[old]]
    feature = np.where(new_left >= 0, rng.integers(0, d, n), -1)
    threshold = np.where(new_left >= 0, rng.normal(size=n), np.nan)
    return Tree(feature, threshold, new_left, new_right, rng.random((n, 2)))


def _brute_valid(tree: Tree, d: int, n_deleted: int = 0) -> bool:
    """The rules of the module docstring, node by node: a walk from the root with a visited
    set (a node met twice is a cycle or a shared child)."""
    left, right, n = list(tree.left), list(tree.right), len(tree.left)
    for i in range(n):
        if any(not (c == -1 or 0 <= c < n) for c in (left[i], right[i])):
            return False
        if (left[i] == -1) != (right[i] == -1):
            return False
        if left[i] >= 0 and not (0 <= tree.feature[i] < d and np.isfinite(tree.threshold[i])):
            return False
        if left[i] == -1 and (tree.feature[i] != -1 or not np.isfinite(tree.value[i]).all()):
            return False
    seen, stack = set(), [0]
    while stack:
        u = stack.pop()
        if u in seen:
            return False
        seen.add(u)
        if left[u] >= 0:
            stack += [left[u], right[u]]
    children = {c for i in range(n) if left[i] >= 0 for c in (left[i], right[i])}
    lost = [i for i in range(n) if i not in seen]
    return all(left[i] == -1 and i not in children for i in lost) and len(lost) <= n_deleted


def _mutate(rng: np.random.Generator, tree: Tree, d: int) -> Tree:
    arrays = {k: np.array(getattr(tree, k)) for k in ("feature", "threshold", "left", "right")}
    value = np.array(tree.value)
    n = arrays["left"].size
    i = int(rng.integers(n))
    kind = int(rng.integers(6))
    if kind < 3:  # a child anywhere in -3 .. n+1
        arrays["left" if kind < 2 else "right"][i] = rng.integers(-3, n + 2)
    elif kind == 3:
        arrays["feature"][i] = rng.integers(-2, d + 2)
    elif kind == 4:
        arrays["threshold"][i] = rng.choice([np.nan, np.inf, 0.5])
    else:
        value[i, 0] = rng.choice([np.nan, -np.inf, 0.25])
    return Tree(arrays["feature"], arrays["threshold"], arrays["left"], arrays["right"], value)


def _verdict(trees, d: int, **kwargs) -> bool:
    try:
        check_trees(trees, d, **kwargs)
    except MalformedTreeError:
        return False
    return True


def test_random_trees_and_mutations_agree_with_a_brute_force_walk():
    """Random trees pass; random single edits (children, features, thresholds, values) are
    refused exactly when the brute-force walk says the tree is not one binary tree; several
    trees at once are refused when one of them is."""
    rng = np.random.default_rng(0)
    d = 3
    verdicts = []
    for _ in range(400):
        trees = [_random_tree(rng, int(rng.integers(0, 9)), d) for _ in range(3)]
        assert _verdict(trees, d)
        k = int(rng.integers(3))
        trees[k] = _mutate(rng, trees[k], d)
        want = _brute_valid(trees[k], d)
        assert _verdict(trees, d) == want, (trees[k], want)
        verdicts.append(want)
    assert 50 < sum(verdicts) < 350  # both kinds of cases were drawn


def test_deleted_leaves_are_allowed_only_as_many_and_only_as_parentless_leaves():
    rng = np.random.default_rng(1)
    tree = _random_tree(rng, 4, 2)
    n = tree.n_nodes
    grown = Tree(np.r_[tree.feature, -1, -1], np.r_[tree.threshold, np.nan, np.nan],
                 np.r_[tree.left, -1, -1], np.r_[tree.right, -1, -1],
                 np.vstack([tree.value, np.zeros((2, 2))]))  # fmt: skip
    for allowed in (0, 1, 2, 3):
        assert _verdict([grown], 2, n_deleted=[allowed]) == (allowed >= 2)
        assert _verdict([grown], 2, n_deleted=[allowed]) == _brute_valid(grown, 2, allowed)
    with pytest.raises(MalformedTreeError, match=rf"tree 0, node {n}: it cannot be reached from "
                       r"the root \(no node points to it\); 2 of the tree's"):  # fmt: skip
        check_trees([grown], 2)


def _fitted(n_features: int = 3) -> DecisionTreeClassifier:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, n_features))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)


@pytest.mark.parametrize(
    ("node", "field", "value", "message"),
    [
        (0, "children_left", 0, r"tree 0, node 0: its left child is itself: a cycle"),
        (0, "children_left", -5, r"tree 0, node 0: its left child is -5, which is neither -1 "
                                 r"\(no child\) nor a node of the tree \(0 .. 14\)"),
        (0, "children_left", 10**6, r"tree 0, node 0: its left child is 1000000"),
        (2, "children_right", 1, r"tree 0, node 1: it is the child of two nodes \(node 0 and node 2\)"),
        (0, "feature", 7, r"tree 0, node 0: it splits on feature 7, but the model has 3 features"),
        (0, "threshold", np.nan, r"tree 0, node 0: its threshold is nan, not a finite number"),
    ],
)  # fmt: skip
def test_an_edited_scikit_learn_tree_is_refused_before_any_walk(node, field, value, message):
    """The issue's cases in memory: extract_ensemble and robustness refuse the model (before:
    an endless loop, robustness 1 "exact", an IndexError); scikit-learn's own predict is
    never called on it."""
    model = _fitted()
    getattr(model.tree_, field)[node] = value
    with pytest.raises(MalformedTreeError, match="malformed model \\(DecisionTreeClassifier\\): "
                       + message):  # fmt: skip
        extract_ensemble(model)
    with pytest.raises(MalformedTreeError, match=message):
        robustness(model, np.zeros(3), 0.1, time_budget=0.5)


def test_a_built_ensemble_is_read_only_and_its_checks_cover_tree_class():
    """The checked arrays cannot be edited afterwards (a walk never meets an unchecked
    tree), and a margin tree scoring a class the model lacks is refused."""
    ens = extract_ensemble(_fitted())
    with pytest.raises(ValueError, match="read-only"):
        ens.trees[0].left[0] = 0
    stump = ens.trees[0]
    margin = Tree(stump.feature, stump.threshold, stump.left, stump.right, stump.value[:, :1])
    with pytest.raises(MalformedTreeError, match=r"tree 0 scores class 2, but the model has 2"):
        TreeEnsemble((margin,), 3, 2, "le64", "margin64", np.arange(2), np.array([2]),
                     np.zeros(2))  # fmt: skip
