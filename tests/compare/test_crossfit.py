"""One data set, one answer: which_score's verdict, numbers and plot do not depend on the order
of the rows or of the group labels' first appearance; the folds come from the rows' contents
(crossfit: group_labels, canonical_order, deal_folds)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from reliquant.compare import which_score  # noqa: E402
from reliquant.compare.crossfit import canonical_order, deal_folds, group_labels  # noqa: E402


def _data(seed: int = 0, n_groups: int = 6, n: int = 100):
    """The issue's reproducer: six groups of 100 predictions, scores of several families,
    one score rounded (ties), string labels whose sorted order is not their first order."""
    rng = np.random.default_rng(seed)
    size = n_groups * n
    groups = np.repeat([f"split-{k}" for k in (5, 1, 4, 0, 3, 2)][:n_groups], n)
    correct = rng.random(size) < 0.8
    scores = pd.DataFrame(
        {
            "mc_robustness": np.round(correct + rng.normal(0, 0.9, size), 1),
            "tree_robustness": correct + rng.normal(0, 1.0, size),
            "max_probability": correct + rng.normal(0, 0.95, size),
            "margin": correct + rng.normal(0, 1.05, size),
        }
    )
    return scores, correct, groups


def _shuffles(size: int):
    """Five orders of the rows: reversed, three random permutations, sorted by a score."""
    rng = np.random.default_rng(42)
    yield np.arange(size)[::-1]
    for _ in range(3):
        yield rng.permutation(size)
    yield None  # sorted by the margin (filled in by the test)


def _plotted(v) -> list[tuple[str, np.ndarray, np.ndarray]]:
    ax = v.plot(bands="all")
    lines = [(line.get_label(), line.get_xdata(), line.get_ydata()) for line in ax.get_lines()]
    bands = [c.get_paths()[0].vertices.copy() for c in ax.collections]
    plt.close("all")
    return lines, bands


@pytest.mark.parametrize("with_groups", [True, False])
def test_five_orders_of_the_same_rows_give_the_identical_answer(with_groups):
    """The issue's table: as built, reversed, shuffled (three ways) and sorted by a score:
    the same verdict, the same numbers bit for bit, the same plot; each row keeps its fold
    (the group labels appear first in another order every time)."""
    scores, correct, groups = _data()
    kwargs = {"n_boot": 200, "seed": 3}
    g = groups if with_groups else None
    ref = which_score(scores, correct, groups=g, **kwargs)
    ref_plot = _plotted(ref)
    firsts = set()
    for perm in _shuffles(len(correct)):
        if perm is None:
            perm = np.argsort(scores["margin"].to_numpy(), kind="stable")
        got = which_score(scores.iloc[perm].reset_index(drop=True), correct[perm],
                          groups=None if g is None else g[perm], **kwargs)  # fmt: skip
        if with_groups:
            firsts.add(tuple(pd.unique(groups[perm])))
        assert got.verdict == ref.verdict and got.recommendation == ref.recommendation
        assert (got.robustness, got.uncertainty) == (ref.robustness, ref.uncertainty)
        for field in ("diff", "ci_low", "ci_high", "p_value", "auarc_robustness",
                      "auarc_uncertainty", "dof", "n_units", "n_folds"):  # fmt: skip
            assert getattr(got, field) == getattr(ref, field), field
        pd.testing.assert_frame_equal(got.table, ref.table, check_exact=True)
        pd.testing.assert_frame_equal(got.curves, ref.curves, check_exact=True)
        pd.testing.assert_frame_equal(got.judged, ref.judged, check_exact=True)
        assert np.array_equal(got.fold, ref.fold[perm])  # no two rows alike: folds follow rows
        lines, bands = _plotted(got)
        for (la, xa, ya), (lb, xb, yb) in zip(lines, ref_plot[0], strict=True):
            assert la == lb and np.array_equal(xa, xb) and np.array_equal(ya, yb)
        assert all(np.array_equal(a, b) for a, b in zip(bands, ref_plot[1], strict=True))
    if with_groups:
        assert len(firsts) == 5  # five orders of first appearance of the labels


def test_the_old_answer_changed_with_the_order_and_this_one_does_not():
    """The issue's first table, as a regression check: reversed rows used to judge other
    groups (0, 2, 4 against 1, 3, 5); now every group is judged, by label."""
    scores, correct, groups = _data(n_groups=6)
    ref = which_score(scores, correct, groups=groups)
    rev = which_score(scores[::-1].reset_index(drop=True), correct[::-1], groups=groups[::-1])
    assert list(ref.judged["unit"]) == sorted(set(groups)) == list(rev.judged["unit"])
    assert ref.recommendation == rev.recommendation


def test_group_labels_are_numbered_by_value_not_by_first_appearance():
    codes, labels = group_labels(np.array(["b", "a", "c", "a", "b"]))
    assert list(labels) == ["a", "b", "c"] and list(codes) == [1, 0, 2, 0, 1]
    codes, labels = group_labels(np.array([10, 2, 33, 2], dtype=np.int64))
    assert list(labels) == [2, 10, 33] and list(codes) == [1, 0, 2, 0]
    mixed = np.array([3, "x", 1, "a"], dtype=object)  # not comparable: by type, then value
    codes, labels = group_labels(mixed)
    assert list(labels) == [1, 3, "a", "x"] and list(codes) == [1, 3, 0, 2]


def test_canonical_order_sorts_on_contents_and_folds_are_balanced():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 3, size=(2, 50)).astype(float)  # many ties: the later keys decide
    c = rng.random(50) < 0.5
    order = canonical_order(s, c)
    rows = np.column_stack([s[0], s[1], c])[order]
    assert [tuple(r) for r in rows] == sorted(tuple(r) for r in rows)
    perm = rng.permutation(50)
    again = np.column_stack([s[0], s[1], c])[perm][canonical_order(s[:, perm], c[perm])]
    assert np.array_equal(again, rows)  # the same sequence of rows from another order
    fold = deal_folds(50, 7, seed=1)
    assert sorted(np.bincount(fold)) == [7] * 6 + [8]
    assert not np.array_equal(fold, deal_folds(50, 7, seed=2))  # the seed draws the deal
    assert np.array_equal(deal_folds(6, 6, seed=9), np.arange(6))  # one per unit: no draw
