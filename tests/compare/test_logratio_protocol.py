"""The log-ratio follow-up's protocol: its splits are sklearn's, one split's AU-ARC recomputed
by brute force, the summary over splits."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, train_test_split

from reliquant.compare.reproduction.logratio_protocol import (
    PROTOCOL_MODELS,
    PROTOCOL_SCHEMA,
    TIMING_COLUMN,
    protocol_estimator,
    protocol_markdown,
    protocol_splits,
    protocol_summary,
    run_protocol,
)

TINY = {
    "n_splits": 3,
    "test_size": 0.7,
    "cv_folds": 3,
    "floor": 0.001,
    "models": {
        "gradient_boosting": {
            "random_state": 8,
            "grid": {"learning_rate": [0.1, 0.2], "n_estimators": [5, 10]},
        },
        "random_forest": {
            "random_state": 7,
            "grid": {
                "n_estimators": [5],
                "max_features": ["sqrt", "log2"],
                "max_depth": [3, None],
                "min_samples_split": [2],
            },
        },
        "xgboost": {
            "random_state": 6,
            "grid": {"max_depth": [2], "learning_rate": [0.3], "subsample": [0.5, 1.0]},
        },
    },
}


def _data(n: int = 150, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, 4)) + 1.2 * y[:, None] * np.array([1.0, -0.5, 0.0, 0.3])
    return x, y


def test_splits_are_sklearns_train_test_split_with_the_published_random_state():
    x, y = _data(97)
    x = np.column_stack([np.arange(len(y)), x])  # row ids travel with the rows
    splits = protocol_splits(len(y), test_size=0.7, n_splits=15)
    assert len(splits) == 15
    for i, (train, test) in enumerate(splits):
        x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.7, random_state=i)
        np.testing.assert_array_equal(train, x_train[:, 0].astype(int))
        np.testing.assert_array_equal(test, x_test[:, 0].astype(int))
        np.testing.assert_array_equal(y[test], y_test)
        assert len(test) == int(np.ceil(0.7 * len(y)))
    assert not np.array_equal(splits[0][1], splits[1][1])


def _brute_force_auarc(score: np.ndarray, correct: np.ndarray) -> float:
    """Mean over m = n..1 kept predictions of the expected accuracy of the m highest scores,
    every order of tied scores equally likely: prediction i is kept with probability 1 above
    the m-th highest score, (m - #above) / #tied at it, 0 below."""
    n = len(score)
    ordered = sorted(score, reverse=True)
    total = 0.0
    for m in range(1, n + 1):
        v = ordered[m - 1]
        above = sum(1 for s in score if s > v)
        tied = sum(1 for s in score if s == v)
        kept_correct = 0.0
        for s, c in zip(score, correct, strict=True):
            p = 1.0 if s > v else ((m - above) / tied if s == v else 0.0)
            kept_correct += p * c
        total += kept_correct / m
    return total / n


def test_one_splits_auarc_equals_a_brute_force_recomputation():
    x, y = _data()
    table = run_protocol(x, y, dataset="tiny", protocol=TINY, n_jobs=1)
    assert len(table) == 3 * len(PROTOCOL_MODELS)
    assert list(table.columns) == [*PROTOCOL_SCHEMA.names, TIMING_COLUMN]
    assert list(table["model"].unique()) == list(PROTOCOL_MODELS)
    for model in ("random_forest", "xgboost"):
        row = table[(table["model"] == model) & (table["split"] == 1)].iloc[0]
        # independently: sklearn's split and grid search, the log-ratio by hand
        x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.7, random_state=1)
        settings = TINY["models"][model]
        search = GridSearchCV(
            protocol_estimator(model, random_state=settings["random_state"]),
            settings["grid"],
            cv=3,
            scoring="neg_log_loss",
        ).fit(x_train, y_train)
        proba = search.predict_proba(x_test)
        top = np.sort(proba, axis=1)
        # the authors' rule: only a second probability of exactly 0 becomes 0.001
        score = np.log(top[:, -1]) - np.log(np.where(top[:, -2] > 0, top[:, -2], 0.001))
        correct = search.classes_[proba.argmax(axis=1)] == y_test
        assert json.loads(row["best_params"]) == search.best_params_
        assert row["accuracy"] == pytest.approx(correct.mean(), abs=1e-12)
        assert row["auarc"] == pytest.approx(_brute_force_auarc(score, correct), abs=1e-12)
        assert len(row["curve"]) == len(y_test)
        if model == "random_forest":  # 5 trees: many tied scores, so the tie rule matters
            assert len(np.unique(score)) < 0.75 * len(score)


def test_summary_averages_the_curves_and_states_the_spread():
    x, y = _data()
    table = run_protocol(x, y, dataset="tiny", protocol=TINY)
    summary = protocol_summary(table)
    assert list(summary["model"]) == list(PROTOCOL_MODELS)
    for row in summary.itertuples(index=False):
        part = table[table["model"] == row.model]
        mean_curve = np.mean(np.stack(part["curve"].to_list()), axis=0)
        assert row.auarc_curve == pytest.approx(mean_curve.mean(), abs=1e-12)
        assert row.auarc_mean == pytest.approx(row.auarc_curve, abs=1e-12)
        assert row.auarc_sd == pytest.approx(np.std(part["auarc"], ddof=1), abs=1e-12)
        assert row.n_splits == 3
    text = protocol_markdown(summary, protocol=TINY, runtime_s=90.0, n_jobs=2)
    assert (
        "1.5 minutes with 2 parallel fits" in text
        and "0.5 minutes a split of every data set" in text
    )
    assert "Only 3 of the published 15 splits: at that rate all 15 take about 8 minutes" in text
    assert text.count("| tiny |") == 3


def test_unknown_model_is_refused_before_any_fit():
    x, y = _data()
    with pytest.raises(ValueError, match="unknown protocol model 'svm'"):
        run_protocol(x, y, dataset="tiny", protocol={**TINY, "models": {"svm": {}}})
