"""Model fitting from a config ``model:`` key: every kind equals the library model built here
directly, errors name the config key, splits have the papers' sizes."""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.trees.reproduction.models import (
    MODEL_KINDS,
    describe_model,
    fit_model,
    fit_split,
    model_hyperparameters,
    split_train_test,
)


def _data(n: int = 300, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, d))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.8).astype(int) + (x[:, -1] > 0.7).astype(int)
    return x, y


def _direct(kind: str, x: np.ndarray, y: np.ndarray, seed: int):
    """The model each kind should give, built from the libraries without reliquant."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier
    from xgboost import XGBClassifier

    if kind == "decision_tree":
        return DecisionTreeClassifier(max_depth=3, random_state=seed % 2**32).fit(x, y)
    if kind == "random_forest":
        return RandomForestClassifier(
            n_estimators=4, max_depth=3, random_state=seed % 2**32, n_jobs=1
        ).fit(x, y)
    return XGBClassifier(
        n_estimators=3, max_depth=2, learning_rate=0.5, random_state=seed % 2**31, n_jobs=1
    ).fit(x, y)


SPECS = {
    "decision_tree": {"kind": "decision_tree", "max_depth": 3},
    "random_forest": {"kind": "random_forest", "n_estimators": 4, "max_depth": 3},
    "xgboost": {"kind": "xgboost", "n_estimators": 3, "max_depth": 2, "learning_rate": 0.5},
}


@pytest.mark.parametrize("kind", sorted(MODEL_KINDS))
def test_fit_model_equals_the_library_model_of_each_kind(kind):
    x, y = _data()
    seed = 2**40 + 11  # larger than 2^32: the seed is reduced as each library needs
    ours = fit_model(SPECS[kind], x, y, seed=seed, key="trees.t.model")
    theirs = _direct(kind, x, y, seed)
    assert type(ours) is type(theirs)
    probe = np.random.default_rng(1).uniform(size=(500, 3))
    np.testing.assert_array_equal(ours.predict_proba(probe), theirs.predict_proba(probe))
    if kind == "random_forest":  # the bootstrap draws follow the seed
        other = fit_model(SPECS[kind], x, y, seed=seed + 1, key="trees.t.model")
        assert not np.array_equal(other.predict_proba(probe), ours.predict_proba(probe))


def test_every_kind_is_in_the_spec_table_and_the_schema():
    from pathlib import Path

    import yaml

    schema = yaml.safe_load(
        (Path(__file__).parents[2] / "workflow/schemas/trees.schema.yaml").read_text()
    )
    model = schema["$defs"]["model"]
    assert set(model["properties"]["kind"]["enum"]) == set(MODEL_KINDS) == set(SPECS)
    for kind in MODEL_KINDS:
        assert set(model_hyperparameters(kind)) <= set(model["properties"]) - {"kind"}


def test_unknown_kind_names_the_config_key():
    x, y = _data()
    with pytest.raises(ValueError, match=r"config key trees\.pima\.model\.kind .*'svm'"):
        fit_model({"kind": "svm", "max_depth": 3}, x, y, seed=0, key="trees.pima.model")
    with pytest.raises(ValueError, match=r"trees\.pima\.model\.kind .*None"):
        fit_model({"max_depth": 3}, x, y, seed=0, key="trees.pima.model")


def test_wrong_hyperparameters_name_the_config_key():
    x, y = _data()
    with pytest.raises(
        ValueError, match=r"trees\.table1\.model: .*decision_tree takes no n_estimators"
    ):
        fit_model(
            {"kind": "decision_tree", "max_depth": 3, "n_estimators": 5},
            x,
            y,
            seed=0,
            key="trees.table1.model",
        )
    with pytest.raises(
        ValueError, match=r"trees\.table2\.model: .*random_forest needs n_estimators"
    ):
        fit_model({"kind": "random_forest", "max_depth": 3}, x, y, seed=0, key="trees.table2.model")


def test_describe_model():
    assert describe_model(SPECS["random_forest"]) == "random forest of 4 trees of depth 3"
    assert describe_model(SPECS["xgboost"]) == "XGBoost of depth 2 with 3 rounds"
    assert describe_model(SPECS["decision_tree"]) == "decision tree of depth 3"


def test_split_sizes_match_the_papers():
    x150 = np.zeros((150, 4))
    x724 = np.zeros((724, 7))
    assert len(split_train_test(x150, np.zeros(150), test_fraction=0.1, seed=3)[1]) == 15
    assert len(split_train_test(x724, np.zeros(724), test_fraction=0.1, seed=3)[1]) == 73
    with pytest.raises(ValueError, match="test_fraction"):
        split_train_test(x150, np.zeros(150), test_fraction=1.0, seed=3)


def test_fit_split_holds_out_the_test_rows_and_reports_their_accuracy():
    x, y = _data(n=200)
    fit = fit_split(
        x, y, model=SPECS["decision_tree"], test_fraction=0.1, seed=5, block="b", key="k"
    )
    assert len(fit.x_test) == 20 and len(fit.x_train) == 180
    # every row lands in exactly one part
    rows = {tuple(r) for r in x}
    assert {tuple(r) for r in fit.x_train} | {tuple(r) for r in fit.x_test} == rows
    assert fit.accuracy == pytest.approx(np.mean(fit.model.predict(fit.x_test) == fit.y_test))
    np.testing.assert_array_equal(fit.ensemble.predict(fit.x_test), fit.model.predict(fit.x_test))
    again = fit_split(
        x, y, model=SPECS["decision_tree"], test_fraction=0.1, seed=5, block="b", key="k"
    )
    np.testing.assert_array_equal(again.x_test, fit.x_test)
