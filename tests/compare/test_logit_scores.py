"""Maximum logit, energy and DOCTOR against explicit loops, the models whose logits they read
(scikit-learn, XGBoost), and DOCTOR's ranking against the Gini impurity's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import rankdata
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from reliquant.compare import accuracy_rejection_curve, aurc, max_probability
from reliquant.compare.logit_scores import (
    check_logits,
    decision_logits,
    doctor_alpha,
    doctor_beta,
    energy_score,
    max_logit,
)


@pytest.fixture
def logits() -> np.ndarray:
    rng = np.random.default_rng(1)
    f = rng.normal(0.0, 3.0, size=(150, 5))
    f[0] = [2.0, 2.0, -1.0, 0.0, 0.5]  # a tie for the top
    f[1] = f[2]  # duplicate rows tie
    return f


def test_max_logit_and_energy_equal_loops(logits) -> None:
    for t in (1.0, 0.5, 4.0):
        expected = [t * math.log(sum(math.exp(v / t) for v in row)) for row in logits]
        np.testing.assert_allclose(energy_score(logits, temperature=t), expected, rtol=1e-12)
    np.testing.assert_array_equal(max_logit(logits), [max(row) for row in logits])


def test_energy_is_stable_and_tends_to_max_logit(logits) -> None:
    big = logits * 300.0  # exp would overflow
    shifted = energy_score(big + 1000.0)
    assert np.isfinite(shifted).all()
    np.testing.assert_allclose(shifted, energy_score(big) + 1000.0, rtol=1e-12)
    np.testing.assert_allclose(energy_score(logits, temperature=1e-3), max_logit(logits), atol=0.01)
    assert (energy_score(logits) >= max_logit(logits)).all()  # ln sum exp >= max


def test_logistic_regression_logits_are_its_probabilities_logits() -> None:
    x, y = load_iris(return_X_y=True)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(x, y)
    f = decision_logits(model.decision_function(x))
    assert f.shape == (150, 3)
    np.testing.assert_allclose(softmax(f, axis=1), model.predict_proba(x), atol=1e-12)
    xb, yb = load_breast_cancer(return_X_y=True)
    binary = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(xb, yb)
    margin = binary.decision_function(xb)
    fb = decision_logits(margin)
    np.testing.assert_array_equal(fb[:, 0], 0.0)
    np.testing.assert_allclose(softmax(fb, axis=1), binary.predict_proba(xb), atol=1e-12)
    # the binary caveat: max logit ties every first-class prediction at 0, energy rises with f
    np.testing.assert_array_equal(max_logit(fb), np.maximum(margin, 0.0))
    assert (max_logit(fb)[margin < 0] == 0.0).sum() == (margin < 0).sum() > 100
    np.testing.assert_allclose(energy_score(fb), np.logaddexp(0.0, margin), rtol=1e-12)


def test_xgboost_margins_are_logits() -> None:
    xgb = pytest.importorskip("xgboost")
    x, y = load_iris(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=20, max_depth=2, random_state=0, n_jobs=1).fit(x, y)
    f = decision_logits(model.predict(x, output_margin=True))
    np.testing.assert_allclose(softmax(f, axis=1), model.predict_proba(x), atol=1e-6)
    binary = xgb.XGBClassifier(n_estimators=20, max_depth=2, random_state=0, n_jobs=1).fit(
        x, y == 2
    )
    fb = decision_logits(binary.predict(x, output_margin=True))
    np.testing.assert_allclose(softmax(fb, axis=1), binary.predict_proba(x), atol=1e-6)


def probabilities_with_ties() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.full(4, 0.4), size=300)
    p[:40] = p[40:80]  # repeated rows: tied scores
    p[80] = [1.0, 0.0, 0.0, 0.0]
    p[81] = [0.25, 0.25, 0.25, 0.25]
    correct = rng.random(300) < p.max(axis=1)
    return p, correct


def test_doctor_alpha_equals_its_formula_and_ranks_as_the_gini_impurity() -> None:
    p, correct = probabilities_with_ties()
    expected = [-(1 - sum(v * v for v in row)) / sum(v * v for v in row) for row in p]
    np.testing.assert_allclose(doctor_alpha(p), expected, rtol=1e-12)
    assert doctor_alpha(p)[80] == 0.0 and doctor_alpha(p)[81] == pytest.approx(-3.0)
    minus_gini = -(1.0 - (p**2).sum(axis=1))
    np.testing.assert_array_equal(rankdata(doctor_alpha(p)), rankdata(minus_gini))
    for a, b in zip(
        accuracy_rejection_curve(doctor_alpha(p), correct),
        accuracy_rejection_curve(minus_gini, correct),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)
    assert aurc(doctor_alpha(p), correct) == aurc(minus_gini, correct)
    # ... and not as the maximum probability (a different score on K > 2 classes)
    assert not np.array_equal(rankdata(doctor_alpha(p)), rankdata(max_probability(p)))


def test_doctor_beta_ranks_as_the_maximum_probability() -> None:
    p, correct = probabilities_with_ties()
    np.testing.assert_allclose(doctor_beta(p), [-(1 - max(r)) / max(r) for r in p], rtol=1e-12)
    np.testing.assert_array_equal(rankdata(doctor_beta(p)), rankdata(max_probability(p)))
    np.testing.assert_array_equal(
        accuracy_rejection_curve(doctor_beta(p), correct)[1],
        accuracy_rejection_curve(max_probability(p), correct)[1],
    )


def test_bad_input_names_the_argument(logits) -> None:
    with pytest.raises(ValueError, match="logits must be 2-D.*decision_logits"):
        max_logit(logits[:, 0])
    with pytest.raises(ValueError, match="at least two classes"):
        energy_score(logits[:, :1])
    bad = logits.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="logits has NaN or inf in 1 row.*first row 3"):
        max_logit(bad)
    with pytest.raises(ValueError, match="logits is empty"):
        check_logits(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="decision has NaN"):
        decision_logits([0.5, np.inf])
    with pytest.raises(ValueError, match="decision must be real-valued"):
        decision_logits(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="temperature must be a finite number > 0"):
        energy_score(logits, temperature=0.0)
    with pytest.raises(TypeError, match="temperature"):
        energy_score(logits, temperature="1")
    with pytest.raises(ValueError, match="proba rows must sum to 1"):
        doctor_alpha(np.abs(logits))
    with pytest.raises(ValueError, match="at least two classes"):
        doctor_beta(np.ones((3, 1)))
