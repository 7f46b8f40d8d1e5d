"""The tree models of the experiments, fitted from a config ``model:`` key (papers 001/002, §5).

Every experiment names its model in ``config.yaml`` as

    model: {kind: decision_tree | random_forest | xgboost, <hyperparameters>}

:func:`fit_model` looks the kind up in :data:`MODEL_KINDS` and calls that kind's fitting
function with the hyperparameters (``max_depth``, ``n_estimators``, ``learning_rate``) and an
integer seed from :func:`reliquant.core.seeding.block_int_seed`. A new model type is one more
fitting function in :data:`MODEL_KINDS` (and its kind in the schema's ``$defs/model``).
:func:`fit_split` is the papers' recipe of Section 5: a seeded 90/10 split, then the model.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from reliquant.core.seeding import block_int_seed
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "FittedSplit",
    "MODEL_KINDS",
    "accuracy",
    "describe_model",
    "fit_decision_tree",
    "fit_model",
    "fit_random_forest",
    "fit_split",
    "fit_xgboost",
    "model_hyperparameters",
    "split_train_test",
]


def fit_decision_tree(x: np.ndarray, y: np.ndarray, *, max_depth: int, seed: int):
    """scikit-learn ``DecisionTreeClassifier(max_depth)`` (Gini), seeded (tie-breaking of
    equally good splits)."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=max_depth, random_state=seed % 2**32).fit(x, y)


def fit_random_forest(
    x: np.ndarray, y: np.ndarray, *, n_estimators: int, max_depth: int, seed: int
):
    """scikit-learn ``RandomForestClassifier(n_estimators, max_depth)`` with bootstrap
    (paper Section 3.1), seeded, one thread; otherwise library defaults."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        n_estimators=n_estimators, max_depth=max_depth, random_state=seed % 2**32, n_jobs=1
    ).fit(x, y)


def fit_xgboost(
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_estimators: int,
    max_depth: int,
    seed: int,
    learning_rate: float | None = None,
):
    """XGBoost ``XGBClassifier(n_estimators, max_depth)`` (boosting rounds; a K-class model
    has K trees per round), seeded, one thread; otherwise library defaults (``hist``, learning
    rate 0.3 unless ``learning_rate`` is given). Labels must be 0..K-1."""
    from xgboost import XGBClassifier

    kwargs = {} if learning_rate is None else {"learning_rate": learning_rate}
    return XGBClassifier(
        n_estimators=n_estimators,
        max_depth=max_depth,
        random_state=seed % 2**31,
        n_jobs=1,
        **kwargs,
    ).fit(x, y)


#: ``model.kind`` of the config -> its fitting function (hyperparameters keyword-only).
MODEL_KINDS: dict[str, Callable[..., Any]] = {
    "decision_tree": fit_decision_tree,
    "random_forest": fit_random_forest,
    "xgboost": fit_xgboost,
}


def model_hyperparameters(kind: str) -> dict[str, bool]:
    """Hyperparameter name -> whether it is required, for one model kind: the keyword-only
    parameters of its fitting function other than ``seed``."""
    params = inspect.signature(MODEL_KINDS[kind]).parameters.values()
    return {
        p.name: p.default is inspect.Parameter.empty
        for p in params
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "seed"
    }


def fit_model(spec: Mapping[str, Any], x: np.ndarray, y: np.ndarray, *, seed: int, key: str):
    """The model of a config ``model:`` mapping ``spec`` (``kind`` plus hyperparameters),
    fitted to ``(x, y)`` with integer ``seed``. ``key`` is the config path of ``spec``
    (e.g. ``trees.table1.model``); every error names it."""
    kind = spec.get("kind")
    if kind not in MODEL_KINDS:
        raise ValueError(
            f"config key {key}.kind must be one of {', '.join(MODEL_KINDS)}; got {kind!r}"
        )
    accepted = model_hyperparameters(kind)
    given = {name: value for name, value in spec.items() if name != "kind"}
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise ValueError(
            f"config key {key}: model kind {kind} takes no {', '.join(unknown)} "
            f"(hyperparameters: {', '.join(accepted)})"
        )
    missing = [name for name, required in accepted.items() if required and name not in given]
    if missing:
        raise ValueError(f"config key {key}: model kind {kind} needs {', '.join(missing)}")
    return MODEL_KINDS[kind](x, y, seed=seed, **given)


def describe_model(spec: Mapping[str, Any]) -> str:
    """A phrase for the markdown, e.g. "random forest of 5 trees of depth 3"."""
    kind = spec["kind"]
    if kind == "decision_tree":
        return f"decision tree of depth {spec['max_depth']}"
    if kind == "random_forest":
        return f"random forest of {spec['n_estimators']} trees of depth {spec['max_depth']}"
    if kind == "xgboost":
        return f"XGBoost of depth {spec['max_depth']} with {spec['n_estimators']} rounds"
    return kind + " (" + ", ".join(f"{k} {v}" for k, v in spec.items() if k != "kind") + ")"


def split_train_test(
    x: np.ndarray, y: np.ndarray, *, test_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random train/test split (scikit-learn ``train_test_split``, unstratified, as the
    papers' "train/test split of 90/10"). The test set has ``ceil(test_fraction * n)`` rows:
    15 of 150 Iris samples, 73 of 724 Pima subjects."""
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    x_tr, x_te, y_tr, y_te = train_test_split(
        np.asarray(x), np.asarray(y), test_size=test_fraction, random_state=seed % 2**32
    )
    return x_tr, x_te, y_tr, y_te


def accuracy(model, x: np.ndarray, y: np.ndarray) -> float:
    """Fraction of correct predictions of ``model.predict``."""
    return float(np.mean(np.asarray(model.predict(x)) == np.asarray(y)))


@dataclass(frozen=True)
class FittedSplit:
    """A model fitted on the training part of a split, read as a :class:`TreeEnsemble`."""

    model: Any
    ensemble: TreeEnsemble
    x_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    accuracy: float


def fit_split(
    x: np.ndarray,
    y: np.ndarray,
    *,
    model: Mapping[str, Any],
    test_fraction: float,
    seed: int,
    block: str,
    key: str,
) -> FittedSplit:
    """Section 5's recipe for Iris and Pima: split with seed ``block_int_seed(seed, block,
    "split")``, fit ``model`` (config key ``key``) with ``block_int_seed(seed, block, "fit")``,
    test accuracy on the held-out part."""
    section = key.rsplit(".", 1)[0]
    try:
        x_tr, x_te, y_tr, y_te = split_train_test(
            x, y, test_fraction=test_fraction, seed=block_int_seed(seed, block, "split")
        )
    except ValueError as err:
        raise ValueError(f"config key {section}.test_fraction = {test_fraction}: {err}") from err
    missing = sorted(set(np.asarray(y).tolist()) - set(np.asarray(y_tr).tolist()))
    if missing:
        raise ValueError(
            f"config key {section}.test_fraction = {test_fraction}: the training part "
            f"({len(y_tr)} rows) has no sample of class(es) {missing}; lower test_fraction"
        )
    fitted = fit_model(model, x_tr, y_tr, seed=block_int_seed(seed, block, "fit"), key=key)
    return FittedSplit(
        fitted, extract_ensemble(fitted), x_tr, x_te, y_te, accuracy(fitted, x_te, y_te)
    )
