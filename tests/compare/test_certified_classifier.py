"""CertifiedSelectiveClassifier against a by-hand computation: the scores from the model's own
probabilities, the threshold from a transcription of SGR's Algorithm 1, the abstentions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from compare.test_certified_selection import sgr_paper
from reliquant.compare import CertifiedSelectiveClassifier, ThresholdCertificate


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.2, random_state=0)
    X_cal, X_te, y_cal, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0)
    forest = RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0).fit(X_tr, y_tr)
    return forest, X_tr, y_tr, X_cal, y_cal, X_te, y_te


def _sgr_on_distinct_values(score: np.ndarray, correct: np.ndarray, risk: float, delta: float):
    """SGR's search written out over the distinct values of a tied score (random forest
    probabilities tie): the bound from scipy's beta quantile. The last passing step, or None."""
    values = np.unique(score)
    k = max(1, int(np.ceil(np.log2(values.size))))
    z_min, z_max, best = 1, values.size, None
    for _ in range(k):
        z = (z_min + z_max + 1) // 2
        kept = score >= values[z - 1]
        m, e = int(kept.sum()), int((~correct[kept]).sum())
        b = 1.0 if e == m else float(stats.beta.ppf(1 - delta / k, e + 1, m - e))
        if b < risk:
            z_max, best = z, (values[z - 1], b)
        else:
            z_min = z
    return best


def test_predict_abstains_below_the_threshold_as_by_hand(digits):
    forest, _, _, X_cal, y_cal, X_te, _ = digits
    model = CertifiedSelectiveClassifier(forest, score="max_probability", risk=0.1, delta=0.1)
    model.fit(X_cal, y_cal)
    p_cal = forest.predict_proba(X_cal).max(axis=1)
    best = _sgr_on_distinct_values(p_cal, forest.predict(X_cal) == y_cal, 0.1, 0.1)
    assert best is not None and model.certified_ and model.score_ == "max_probability"
    assert (model.threshold_, model.certificate_.bound) == pytest.approx(best)
    assert model.coverage_ == pytest.approx((p_cal >= best[0]).mean())
    p_te = forest.predict_proba(X_te).max(axis=1)
    want = np.where(p_te >= best[0], forest.predict(X_te), -1)
    np.testing.assert_array_equal(model.predict(X_te), want)
    np.testing.assert_array_equal(model.accepts(X_te), p_te >= best[0])
    assert isinstance(model.certificate_, ThresholdCertificate)
    np.testing.assert_array_equal(model.classes_, forest.classes_)


def test_distinct_scores_match_the_papers_transcription():
    """A logistic regression's probabilities are distinct: the wrapper's threshold and bound
    are the last passing step of the transcription of Algorithm 1."""
    X, y = load_digits(return_X_y=True)
    X_tr, X_cal, y_tr, y_cal = train_test_split(X / 16, y, train_size=0.3, random_state=1)
    clf = LogisticRegression(max_iter=200, C=0.05).fit(X_tr, y_tr)
    p = clf.predict_proba(X_cal).max(axis=1)
    assert np.unique(p).size == p.size
    steps = sgr_paper(p.tolist(), (clf.predict(X_cal) == y_cal).tolist(), 0.05, 0.1)
    passed = [st for st in steps if st[1] < 0.05]
    model = CertifiedSelectiveClassifier(clf, risk=0.05, delta=0.1).fit(X_cal, y_cal)
    assert passed and model.threshold_ == passed[-1][0]
    assert model.certificate_.bound == pytest.approx(passed[-1][1])


def test_callable_score_equals_the_named_one(digits):
    forest, _, _, X_cal, y_cal, X_te, _ = digits

    def top(estimator, X):
        return estimator.predict_proba(X).max(axis=1)

    named = CertifiedSelectiveClassifier(forest, risk=0.1).fit(X_cal, y_cal)
    own = CertifiedSelectiveClassifier(forest, score=top, risk=0.1).fit(X_cal, y_cal)
    assert own.score_ == "top" and own.certificate_.threshold == named.certificate_.threshold
    np.testing.assert_array_equal(own.predict(X_te), named.predict(X_te))


def test_several_scores_split_delta(digits):
    forest, X_tr, y_tr, X_cal, y_cal, X_te, _ = digits
    names = ["max_probability", "margin", "negative_entropy", "centroid_proximity"]
    opts = {"X_train": X_tr, "y_train": y_tr}
    model = CertifiedSelectiveClassifier(forest, score=names, risk=0.1, delta=0.1,
                                         score_options=opts).fit(X_cal, y_cal)  # fmt: skip
    each = {n: CertifiedSelectiveClassifier(forest, score=n, risk=0.1, delta=0.1 / 4,
                                            score_options=opts).fit(X_cal, y_cal)
            for n in names}  # fmt: skip
    best = max(names, key=lambda n: (each[n].coverage_, -each[n].certificate_.bound))
    assert model.score_ == best and model.certificate_ == each[best].certificate_
    np.testing.assert_array_equal(model.predict(X_te), each[best].predict(X_te))
    assert set(model.selection_.certificates) == set(names)
    every = CertifiedSelectiveClassifier(forest, score="all", score_options=opts).fit(X_cal, y_cal)
    comparators = {"doctor_alpha", "doctor_beta", "trust_score", "negative_mahalanobis",
                   "negative_knn_distance"}  # a forest with training data: no logits  # fmt: skip
    assert set(every.selection_.certificates) == {*names, "log_ratio", *comparators}


def test_string_classes_and_abstain_value(digits):
    forest, X_tr, y_tr, X_cal, y_cal, X_te, _ = digits
    named = RandomForestClassifier(n_estimators=30, max_depth=6, random_state=0)
    named.fit(X_tr, np.array([f"d{v}" for v in y_tr]))
    model = CertifiedSelectiveClassifier(named, risk=0.1, abstain="?")
    model.fit(X_cal, np.array([f"d{v}" for v in y_cal]))
    out = model.predict(X_te)
    assert out.dtype == object and set(out) <= {*named.classes_, "?"} and "?" in set(out)
    with pytest.raises(ValueError, match="abstain"):
        CertifiedSelectiveClassifier(forest, abstain=3).fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="not one of the estimator's classes"):
        model.fit(X_cal, y_cal)  # integer labels for a model of string classes


def test_refusals_and_clone(digits):
    forest, _, _, X_cal, y_cal, X_te, _ = digits
    with pytest.raises(ValueError, match="tree_robustness.*noise"):
        CertifiedSelectiveClassifier(forest, score="tree_robustness").fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="not a score"):
        CertifiedSelectiveClassifier(forest, score="accuracy").fit(X_cal, y_cal)
    with pytest.raises(ValueError, match="one label per row"):
        CertifiedSelectiveClassifier(forest).fit(X_cal, y_cal[:-1])
    with pytest.raises(ValueError, match="risk"):
        CertifiedSelectiveClassifier(forest, risk=0).fit(X_cal, y_cal)
    with pytest.raises(RuntimeError, match="not fitted"):
        CertifiedSelectiveClassifier(forest).predict(X_te)
    with pytest.raises(TypeError, match="predict"):
        CertifiedSelectiveClassifier(object()).fit(X_cal, y_cal)
    copy = clone(CertifiedSelectiveClassifier(forest, risk=0.02, method="ltt"))
    assert copy.get_params()["risk"] == 0.02 and copy.get_params()["method"] == "ltt"


def test_nothing_certifies_abstains_everywhere(digits):
    forest, _, _, X_cal, y_cal, X_te, _ = digits
    model = CertifiedSelectiveClassifier(forest, risk=0.001).fit(X_cal[:50], y_cal[:50])
    assert not model.certified_ and model.score_ is None and model.coverage_ == 0
    assert (model.predict(X_te) == -1).all()
