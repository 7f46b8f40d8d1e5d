"""A LightGBM model's text (``Booster.save_model``, ``model_to_string``) checked before
LightGBM parses or walks it.

LightGBM trusts its model text: a tree whose ``left_child`` points back to the root makes
``predict`` loop forever and ``dump_model`` recurse until the process crashes, a child out of
range reads memory that is not the tree's, an array of the wrong length or a ``tree_sizes``
entry that misses its tree stops the process from inside LightGBM's parser (``terminate
called``), which no ``try`` catches. :func:`check_model_text` reads the text as LightGBM
does and refuses, naming the tree and the node, anything that would not be one valid tree:

* ``tree_sizes`` (when present): each entry the byte length of its ``Tree=`` block;
* per tree: ``num_leaves`` and ``num_cat``, every array of the count LightGBM reads
  (``num_leaves - 1`` per split, ``num_leaves`` per leaf, ``num_cat + 1`` category
  boundaries, a linear tree's coefficients), numbers that parse;
* the structure, by :func:`reliquant.trees.tree_checks.check_trees`: a child ``c >= 0`` is
  split ``c`` (``< num_leaves - 1``), ``c < 0`` is leaf ``~c`` (``< num_leaves``); one tree
  rooted at split 0, every split and leaf reached once; split features in
  ``0 .. max_feature_idx``; finite thresholds and leaf values; a categorical split's
  threshold one of its ``num_cat`` category sets.

Public API: :func:`check_model_text`.
"""

from __future__ import annotations

import numpy as np

from reliquant.trees.structure import Tree
from reliquant.trees.tree_checks import MalformedTreeError, check_trees

__all__ = ["check_model_text"]

#: Per-split and per-leaf arrays of a tree block (LightGBM reads the ones present).
SPLIT_ARRAYS = ("split_feature", "threshold", "decision_type", "left_child", "right_child",
                "split_gain", "internal_value", "internal_weight", "internal_count")  # fmt: skip
LEAF_ARRAYS = ("leaf_value", "leaf_weight", "leaf_count")
#: The arrays LightGBM cannot do without.
REQUIRED = ("split_feature", "threshold", "decision_type", "left_child", "right_child")
_INTEGERS = ("split_feature", "decision_type", "left_child", "right_child", "internal_count",
             "leaf_count", "cat_boundaries", "cat_threshold", "num_features", "leaf_features")  # fmt: skip


def _key_values(lines: list[str]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in lines if "=" in line)


def _blocks(text: str) -> tuple[dict[str, str], list[tuple[int, int, list[str]]]]:
    """The header's keys and, per ``Tree=`` block, ``(byte offset, byte length, lines)``."""
    header: list[str] = []
    blocks: list[tuple[int, int, list[str]]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        size = len(line.encode())
        bare = line.rstrip("\r\n")
        if bare.startswith("Tree="):
            blocks.append((pos, 0, []))
        elif bare.startswith("end of trees"):
            break
        if blocks:
            start, length, body = blocks[-1]
            blocks[-1] = (start, length + size, [*body, bare])
        else:
            header.append(bare)
        pos += size
    return _key_values(header), blocks


def _array(tree: dict[str, str], key: str, count: int, where: str) -> np.ndarray:
    words = tree[key].split()
    if len(words) != count:
        raise MalformedTreeError(
            f"{where}: {key} holds {len(words)} values; LightGBM reads {count}"
        )
    try:
        if key in _INTEGERS:
            return np.array([int(w) for w in words], dtype=np.int64)
        return np.array([float(w) for w in words], dtype=np.float64)
    except ValueError:
        raise MalformedTreeError(f"{where}: {key} holds {tree[key][:60]!r}, not numbers") from None


def _count(tree: dict[str, str], key: str, where: str, low: int) -> int:
    try:
        value = int(tree[key])
    except (KeyError, ValueError):
        raise MalformedTreeError(f"{where}: {key} is {tree.get(key)!r}, not an integer") from None
    if value < low:
        raise MalformedTreeError(f"{where}: {key} is {value}; at least {low} expected")
    return value


def _tree(k: int, lines: list[str], where: str) -> tuple[Tree, int]:
    """One block's arrays checked and laid out as nodes ``0 .. I-1`` (splits) then
    ``I .. I+L-1`` (leaves); returns the tree and ``I``."""
    tree = _key_values(lines[1:])
    at = f"{where}tree {k}"
    leaves = _count(tree, "num_leaves", at, 1)
    num_cat = _count(tree, "num_cat", at, 0)
    splits = leaves - 1
    absent = [key for key in ("leaf_value", *(REQUIRED if splits else ())) if key not in tree]
    if absent:
        raise MalformedTreeError(f"{at}: lacks {absent}")
    arrays = {key: _array(tree, key, splits, at) for key in SPLIT_ARRAYS if splits and key in tree}
    arrays |= {key: _array(tree, key, leaves, at) for key in LEAF_ARRAYS if key in tree}
    if num_cat:
        bounds = _array(tree, "cat_boundaries", num_cat + 1, at)
        if bounds[0] != 0 or np.any(np.diff(bounds) < 0):
            raise MalformedTreeError(f"{at}: cat_boundaries {bounds.tolist()} do not rise from 0")
        _array(tree, "cat_threshold", int(bounds[-1]), at)
    if tree.get("is_linear", "0").strip() == "1":
        n_coef = _array(tree, "num_features", leaves, at)
        _array(tree, "leaf_const", leaves, at)
        for key in ("leaf_features", "leaf_coeff"):
            _array(tree, key, int(n_coef.sum()), at)
    if splits:
        categorical = (arrays["decision_type"] & 1).astype(bool)
        index = arrays["threshold"]
        bad = np.flatnonzero(categorical & ((index < 0) | (index >= num_cat) | (index % 1 != 0)))
        if bad.size:
            raise MalformedTreeError(
                f"{at}, split {bad[0]}: a categorical split whose threshold {index[bad[0]]} is "
                f"none of the tree's {num_cat} category sets"
            )
    n = splits + leaves

    def node(c: np.ndarray) -> np.ndarray:  # LightGBM's child -> our node; out of range -> n
        out = np.where(c >= 0, c, splits + ~c)
        return np.where((c >= splits) | (~c >= leaves), n, out)

    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.full(n, np.nan)
    value = np.zeros((n, 1))
    value[splits:, 0] = arrays["leaf_value"]
    if splits:
        for side, out in (("left_child", left), ("right_child", right)):
            c = arrays[side]
            wrong = np.flatnonzero(node(c) == n)
            if wrong.size:
                i = int(wrong[0])
                raise MalformedTreeError(
                    f"{at}, split {i}: its {side} is {c[i]}: neither a split 0 .. {splits - 1} "
                    f"nor a leaf -1 .. -{leaves} (~leaf)"
                )
            out[:splits] = node(c)
        feature[:splits] = arrays["split_feature"]
        threshold[:splits] = arrays["threshold"]
    return Tree(feature, threshold, left, right, value), splits


def check_model_text(text: str, where: str = "") -> None:
    """Refuse a LightGBM model text that LightGBM could not parse and walk safely (module
    docstring). ``where``: the start of every message (e.g. the file's path). Raises
    :class:`reliquant.trees.tree_checks.MalformedTreeError` naming the tree and the split or
    leaf (a ``ValueError`` for a text without a LightGBM header)."""
    prefix = f"{where}: " if where else ""
    header, blocks = _blocks(text)
    if "max_feature_idx" not in header:
        raise ValueError(f"{prefix}not a LightGBM model file (its header has no max_feature_idx)")
    n_features = _count(header, "max_feature_idx", f"{prefix}the header", 0) + 1
    if "tree_sizes" in header:
        sizes = header["tree_sizes"].split()
        have = [str(length) for _, length, _ in blocks]
        if sizes != have:
            raise MalformedTreeError(
                f"{prefix}tree_sizes {sizes[:10]} do not match the {len(blocks)} Tree= blocks "
                f"of the text (their byte lengths {have[:10]})"
            )
    trees, splits = [], []
    for k, (_, _, lines) in enumerate(blocks):
        tree, n_split = _tree(k, lines, prefix)
        trees.append(tree)
        splits.append(n_split)

    def name(k: int, i: int) -> str:
        return f"split {i}" if i < splits[k] else f"leaf {i - splits[k]}"

    check_trees(trees, n_features, where=where, node_name=name)
