"""Dynamic selection by robustness (RS-D, RS-I): cuts against a brute-force search over every
threshold, the reference code's positional rule where ratios have no ties, the selector on
fitted scikit-learn models, and its refusals."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reliquant.compare import (
    RobustnessSelector,
    protocol_log_ratio,
    rank_models,
    robustness_ratio,
    rs_d_cut,
    rs_i_cut,
)


# ------------------------------------------------------------------ brute force
def _thresholds(q: np.ndarray) -> list[float]:
    """Every threshold that splits the ratios differently: -inf and each distinct value."""
    return [-np.inf, *np.unique(q).tolist()]


def _accuracy(q, r1, r2, c) -> Fraction:
    """Exact (a rational), so that equal accuracies of two cuts compare equal."""
    return Fraction(int(np.where(q > c, r2, r1).sum()), q.size)


def brute_rs_d(q, r1, r2) -> float:
    """RS-D by trying every threshold in ascending order: cuts at the distinct ratios (never
    -inf: the smallest ratio stays with M1), first maximum, the largest ratio as +inf."""
    values = np.unique(q)
    best_c, best = None, Fraction(-1)
    for c in values:
        acc = _accuracy(q, r1, r2, c)
        if acc > best:
            best_c, best = c, acc
    return float("inf") if best_c == values[-1] else float(best_c)


def brute_rs_i(q, r1, r2) -> float:
    """RS-I by trying every threshold: the gain of M2 over M1 on the predictions above it."""
    best_c, best = None, Fraction(-2)
    for c in _thresholds(q):
        above = q > c
        if not above.any():
            continue
        gain = Fraction(int(r2[above].sum()) - int(r1[above].sum()), int(above.sum()))
        if gain > best:
            best_c, best = c, gain
    return float(best_c) if best > 0 else float("inf")


def reference_rs_d(q, r1, r2) -> float:
    """The reference code's positional RS-D on ratios without ties: rows sorted by q, M1 on
    positions 0..i and M2 after, the first i of most right predictions."""
    order = np.argsort(q)
    a, b = r1[order].astype(int), r2[order].astype(int)
    right = [a[: i + 1].sum() + b[i + 1 :].sum() for i in range(q.size)]
    i = int(np.argmax(right))
    cut = q[order][i]
    return float("inf") if cut == q.max() else float(cut)


cases = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 6), min_size=n, max_size=n),  # few values: many ties
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
    )
)


@settings(max_examples=150, deadline=None)
@given(cases)
def test_cuts_equal_a_brute_force_search_over_every_threshold(case):
    q, r1, r2 = (np.array(v) for v in case)
    q = q.astype(float) / 3.0
    assert rs_d_cut(q, r1, r2) == brute_rs_d(q, r1, r2)
    assert rs_i_cut(q, r1, r2) == brute_rs_i(q, r1, r2)


@settings(max_examples=100, deadline=None)
@given(cases)
def test_rs_d_never_worse_on_validation_than_m1_alone(case):
    q, r1, r2 = (np.array(v) for v in case)
    q = q.astype(float)
    assert _accuracy(q, r1, r2, rs_d_cut(q, r1, r2)) >= Fraction(int(r1.sum()), r1.size)


def test_rs_d_equals_the_reference_positional_rule_without_ties():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 60))
        q = rng.permutation(rng.exponential(size=n))
        r1, r2 = rng.random(n) < 0.7, rng.random(n) < 0.6
        assert rs_d_cut(q, r1, r2) == reference_rs_d(q, r1, r2)


def test_cuts_do_not_depend_on_the_row_order():
    rng = np.random.default_rng(5)
    q = rng.integers(0, 5, 80).astype(float)
    r1, r2 = rng.random(80) < 0.6, rng.random(80) < 0.6
    perm = rng.permutation(80)
    for cut in (rs_d_cut, rs_i_cut):
        assert cut(q, r1, r2) == cut(q[perm], r1[perm], r2[perm])


def test_rs_i_is_m1_everywhere_when_m2_never_gains():
    q = np.array([0.5, 1.0, 2.0])
    assert rs_i_cut(q, [True, True, True], [False, True, True]) == np.inf
    # M2 right where M1 is wrong, on the two most M2-robust predictions
    assert rs_i_cut(q, [True, False, False], [True, True, True]) == 0.5


# -------------------------------------------------------------- the ratio
def test_protocol_log_ratio_clamps_only_zero_second_probabilities():
    p = np.array([[0.9, 0.1, 0.0], [0.9995, 0.0005, 0.0], [1.0, 0.0, 0.0]])
    r = protocol_log_ratio(p)
    np.testing.assert_allclose(r, [np.log(9.0), np.log(0.9995 / 0.0005), -np.log(0.001)])


def test_robustness_ratio_conventions_and_refusals():
    q = robustness_ratio([2.0, 0.0, 0.0], [1.0, 3.0, 0.0])
    np.testing.assert_array_equal(q, [0.5, np.inf, 1.0])
    with pytest.raises(ValueError, match="s2 must be finite and >= 0.*row 1"):
        robustness_ratio([1.0, 1.0], [1.0, -0.5])


# -------------------------------------------------------- fitted models
@pytest.fixture(scope="module")
def fitted():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    X, y = make_classification(
        n_samples=900, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    models = [
        GaussianNB().fit(X[:300], y[:300]),
        LogisticRegression(max_iter=500).fit(X[:300], y[:300]),
        DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[:300], y[:300]),
    ]
    return models, (X[300:600], y[300:600]), (X[600:], y[600:])


@pytest.mark.parametrize("rule", ["RS-D", "RS-I"])
def test_selector_applies_its_cut_as_recomputed_by_hand(fitted, rule):
    models, (Xv, yv), (Xt, yt) = fitted
    sel = RobustnessSelector(models, rule=rule).fit(Xv, yv)
    acc = [np.mean(m.predict(Xv) == yv) for m in models]
    np.testing.assert_allclose(sel.validation_accuracies_, acc)
    order = np.argsort(-np.array(acc), kind="stable")
    assert (sel.first_, sel.second_) == (order[0], order[1])
    m1, m2 = models[sel.first_], models[sel.second_]

    # the ratio by hand: log p1 - log p2 of each model, a zero p2 replaced by 0.001
    def r(m, X):
        p = np.sort(m.predict_proba(X), axis=1)
        return np.log(p[:, -1]) - np.log(np.where(p[:, -2] > 0, p[:, -2], 0.001))

    qv = robustness_ratio(r(m1, Xv), r(m2, Xv))
    cut = (brute_rs_d if rule == "RS-D" else brute_rs_i)(
        qv, m1.predict(Xv) == yv, m2.predict(Xv) == yv
    )
    assert sel.cut_ == cut
    qt = robustness_ratio(r(m1, Xt), r(m2, Xt))
    expected = np.where(qt > cut, m2.predict(Xt), m1.predict(Xt))
    np.testing.assert_array_equal(sel.predict(Xt), expected)
    proba = sel.predict_proba(Xt)
    np.testing.assert_array_equal(proba[qt > cut], m2.predict_proba(Xt)[qt > cut])
    np.testing.assert_array_equal(proba[qt <= cut], m1.predict_proba(Xt)[qt <= cut])
    assert sel.score(Xt, yt) == pytest.approx(np.mean(expected == yt))
    if rule == "RS-D":
        assert sel.validation_accuracy_ >= max(acc)


def test_selector_takes_any_nonnegative_robustness(fitted):
    models, (Xv, yv), (Xt, _) = fitted
    margin = lambda p: np.sort(p, axis=1)[:, -1] - np.sort(p, axis=1)[:, -2]  # noqa: E731
    sel = RobustnessSelector(models, robustness=margin).fit(Xv, yv)
    m1, m2 = models[sel.first_], models[sel.second_]
    qt = robustness_ratio(margin(m1.predict_proba(Xt)), margin(m2.predict_proba(Xt)))
    np.testing.assert_array_equal(sel.use_second(Xt), qt > sel.cut_)


def test_selector_refusals(fitted):
    from sklearn.linear_model import LogisticRegression

    models, (Xv, yv), _ = fitted
    with pytest.raises(ValueError, match="at least two fitted models"):
        RobustnessSelector(models[:1]).fit(Xv, yv)
    two_class = LogisticRegression().fit(Xv[yv < 2], yv[yv < 2])
    with pytest.raises(ValueError, match=r"disagree on their classes.*\[0, 1, 2\].*\[0, 1\]"):
        RobustnessSelector([models[0], two_class]).fit(Xv, yv)
    with pytest.raises(ValueError, match="one class only"):
        RobustnessSelector(models).fit(Xv[yv == 1], yv[yv == 1])
    with pytest.raises(ValueError, match=r"y: row 0 holds 'one', which is none of the classes "
                       r"\[0, 1, 2\] \('one' is text, the classes are numbers\)"):  # fmt: skip
        RobustnessSelector(models).fit(Xv, np.where(yv == 1, "one", yv.astype(str)))
    with pytest.raises(ValueError, match=r"y: row 4 has no label"):
        RobustnessSelector(models).fit(Xv, np.where(np.arange(yv.size) == 4, np.nan, yv))
    with pytest.raises(ValueError, match="rule must be one of"):
        RobustnessSelector(models, rule="RS-X").fit(Xv, yv)
    with pytest.raises(TypeError, match=r"models\[1\].*not a fitted classifier"):
        RobustnessSelector([models[0], LogisticRegression()]).fit(Xv, yv)
    with pytest.raises(ValueError, match="robustness of models.*finite and >= 0"):
        RobustnessSelector(models, robustness=lambda p: -p.max(axis=1)).fit(Xv, yv)
    with pytest.raises(RuntimeError, match="not fitted"):
        RobustnessSelector(models).predict(Xv)


# ------------------------------------------- the authors' conventions (reference)
def authors_rs_i(q, r1, r2) -> float:
    """The reference code's RS-I (dynsel.acc_dyn_sel), loops over the sorted positions: the
    gain of M2 over M1 on positions i..n-1 over their count, the first largest, cut q_(i);
    +inf when no gain is positive. Ties in row order."""
    order = sorted(range(q.size), key=lambda j: (q[j], j))
    n = q.size
    gains = [Fraction(sum(int(r2[j]) - int(r1[j]) for j in order[i:]), n - i) for i in range(n)]
    if max(gains) <= 0:
        return float("inf")
    return float(q[order[gains.index(max(gains))]])


def authors_rs_d(q, r1, r2) -> float:
    """The reference code's RS-D with ties in row order (their M2_res shifted by one)."""
    order = sorted(range(q.size), key=lambda j: (q[j], j))
    a = [int(r1[j]) for j in order]
    b = [int(r2[j]) for j in order] + [0]
    right = [sum(a[: i + 1]) + sum(b[i + 1 :]) for i in range(q.size)]
    cut = float(q[order[right.index(max(right))]])
    return float("inf") if cut == q.max() else cut


@settings(max_examples=150, deadline=None)
@given(cases)
def test_reference_cuts_equal_the_authors_positional_rule_with_ties(case):
    q, r1, r2 = (np.array(v) for v in case)
    q = q.astype(float) / 3.0
    assert rs_d_cut(q, r1, r2, convention="reference") == authors_rs_d(q, r1, r2)
    assert rs_i_cut(q, r1, r2, convention="reference") == authors_rs_i(q, r1, r2)


def test_the_two_conventions_differ_where_the_authors_index_by_position():
    # RS-I without ties: the authors score positions i.. but apply q > q_(i), one fewer
    q = np.array([1.0, 2.0, 3.0])
    a, b = np.array([1, 1, 0], bool), np.array([1, 0, 1], bool)
    assert rs_i_cut(q, a, b) == 2.0  # M2 on the one prediction it gains on
    assert rs_i_cut(q, a, b, convention="reference") == 3.0  # ... applied to none
    # RS-D with ties in q: the authors score a cut inside a group of equal ratios (M1 on the
    # first of the two at q = 1, M2 on the second: 1 right) but apply q > 1 (0 right)
    q = np.array([1.0, 1.0, 2.0])
    a, b = np.array([0, 0, 1], bool), np.array([0, 1, 0], bool)
    assert rs_d_cut(q, a, b) == float("inf")  # by value: M1 everywhere, 1 of 3 right
    assert rs_d_cut(q, a, b, convention="reference") == 1.0
    # ties of validation accuracy: first listed, or last listed as argsort()[::-1]
    acc = np.array([0.9, 0.8, 0.9])
    assert rank_models(acc).tolist() == [0, 2, 1]
    assert rank_models(acc, convention="reference").tolist() == acc.argsort()[::-1].tolist()
    assert rank_models(acc, convention="reference").tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="convention must be one of"):
        rs_d_cut(q, a, b, convention="authors")


def test_selector_reference_convention_gives_ties_to_the_model_listed_last(fitted):
    models, (xv, yv), _ = fitted
    tied = [models[0], models[1], models[0]]  # the same model listed twice: equal accuracies
    acc = np.array([np.mean(m.predict(xv) == yv) for m in tied])
    sel = RobustnessSelector(tied, convention="reference").fit(xv, yv)
    assert (sel.first_, sel.second_) == tuple(acc.argsort()[::-1][:2].tolist())
    default = RobustnessSelector(tied).fit(xv, yv)
    assert (default.first_, default.second_) == tuple(np.argsort(-acc, kind="stable")[:2])
    best = 0 if acc[0] >= acc[1] else 1
    assert default.first_ == best
    assert sel.first_ == (2 if best == 0 else 1)


def test_labels_read_as_floats_or_text_are_the_models_classes(fitted):
    """A validation or test set whose labels read as floats (1.0) or text ("1") fits the same
    selector and scores the same accuracy as its integer labels (compared as they came,
    ``score`` said 0.0 for text labels)."""
    models, (Xv, yv), (Xt, yt) = fitted
    ref = RobustnessSelector(models).fit(Xv, yv)
    accuracy = float(np.mean(ref.predict(Xt) == yt))
    assert accuracy > 0.5
    for spell in (lambda y: y.astype(np.float64), lambda y: y.astype(str), list):
        sel = RobustnessSelector(models).fit(Xv, spell(yv))
        assert (sel.first_, sel.second_, sel.cut_) == (ref.first_, ref.second_, ref.cut_)
        np.testing.assert_array_equal(sel.validation_accuracies_, ref.validation_accuracies_)
        assert ref.score(Xt, spell(yt)) == accuracy
