"""A new user's task: "which score should I trust for my own model?". Fit a scikit-learn
model on a bundled data set over several splits, score its test predictions with the
probability scores and a Monte Carlo robustness, ask ``which_score`` and read the answer;
then check the answer against the user's own brute force and a direct Monte Carlo loop."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats


def auarc_by_inclusion(score: np.ndarray, correct: np.ndarray) -> float:
    """AU-ARC by brute force over every rejection fraction, ties averaged: keeping the ``m``
    most reliable, a prediction with ``a`` scores above it and ``b`` equal to it (itself
    included) is kept with probability ``clip((m - a) / b, 0, 1)`` over all tie orders."""
    s, c = np.asarray(score, dtype=float), np.asarray(correct, dtype=float)
    above = (s[None, :] > s[:, None]).sum(axis=1)
    equal = (s[None, :] == s[:, None]).sum(axis=1)
    m = np.arange(1, s.size + 1)[:, None]
    kept = np.clip((m - above[None, :]) / equal[None, :], 0, 1)
    return float(np.mean(kept @ c / m[:, 0]))


def test_the_brute_force_averages_ties_as_an_enumeration_of_every_order_does():
    score = np.array([0.9, 0.5, 0.5, 0.5, 0.2, 0.2, 0.7])
    correct = np.array([1, 0, 1, 1, 0, 1, 0], dtype=bool)
    areas = []
    for order in itertools.permutations(range(score.size)):
        if np.all(np.diff(score[list(order)]) <= 0):  # an order the score allows
            kept = correct[list(order)]
            areas.append(np.mean([kept[:m].mean() for m in range(1, score.size + 1)]))
    assert len(areas) == 3 * 2 * 1 * 2  # 3! orders of the 0.5s, 2! of the 0.2s
    assert auarc_by_inclusion(score, correct) == pytest.approx(np.mean(areas), abs=1e-12)


def test_which_score_for_my_own_model():
    # ---- the user's code (15 lines) ----
    import pandas as pd
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from reliquant.compare import black_box_robustness, probability_scores, which_score

    X, y = load_breast_cancer(return_X_y=True)
    parts = []
    for split in range(6):  # six splits: six training sets, six fitted models
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=split)
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X_tr, y_tr)
        scores = probability_scores(model.predict_proba(X_te))
        noise = 0.5 * X_tr.var(axis=0)  # Gaussian input noise, per feature
        mc = black_box_robustness(model.predict, X_te, noise, n_draws=200, seed=split)
        scores["mc_robustness"] = mc.estimate
        parts.append(scores.assign(correct=scores.pop("prediction") == y_te, split=split))
    table = pd.concat(parts, ignore_index=True)
    answer = which_score(table.drop(columns=["correct", "split"]), table["correct"],
                         groups=table["split"])  # fmt: skip
    print(answer.recommendation)
    # ---- the user's checks ----
    # (1) the Monte Carlo robustness of the last model against a direct loop of 4000 draws
    rng = np.random.default_rng(123)
    est = mc.estimate
    for i in np.argsort(est)[:5]:  # the least robust test rows: estimates away from 0 and 1
        noisy = X_te[i] + np.sqrt(noise) * rng.standard_normal((4000, X.shape[1]))
        direct = np.mean(model.predict(noisy) == model.predict(X_te[i : i + 1])[0])
        se = np.sqrt(max(direct * (1 - direct), 0.01) * (1 / 200 + 1 / 4000))
        assert abs(est[i] - direct) <= 4 * se, (i, est[i], direct)
    assert est.min() < 0.9  # the noise reaches the decision boundary for some rows
    # (2) the verdict: each split judged by the picks made on the other five (leave one
    # split out), t-interval over all six splits, from AU-ARCs recomputed by brute force (ties
    # of the Monte Carlo score averaged)
    split = table["split"].to_numpy()
    per = {s: {g: auarc_by_inclusion(table.loc[split == g, s], table.loc[split == g, "correct"])
               for g in range(6)} for s in answer.table["score"]}  # fmt: skip
    # the log-ratio (a transform of the probabilities) is not the robustness side beside the
    # Monte Carlo robustness; the uncertainty side is the best probability score without g
    uq = ["max_probability", "negative_entropy", "margin"]
    d = []
    for g in range(6):
        rest = [h for h in range(6) if h != g]
        u = max(uq, key=lambda s: np.mean([per[s][h] for h in rest]))
        assert answer.judged.set_index("unit").loc[g, "uncertainty"] == u
        d.append(per["mc_robustness"][g] - per[u][g])
    d = np.array(d)
    lo, hi = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert answer.diff == pytest.approx(d.mean(), abs=1e-12)
    assert (answer.ci_low, answer.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    better = lo > 0 or hi < 0
    assert answer.verdict in (("robustness better", "uncertainty better") if better
                              else ("undecided", "identical ranking"))  # fmt: skip
    # (3) the sentence names the scores and the numbers the user just recomputed
    assert answer.robustness in answer.recommendation
    assert answer.uncertainty in answer.recommendation
    shown = f"{abs(d.mean()):.3f}"
    assert shown in answer.recommendation and "6 groups" in answer.recommendation
    assert "5 degrees of freedom" in answer.recommendation
