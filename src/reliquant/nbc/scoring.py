"""Robustness of a user's own Naive Bayes predictions: tables in, one row per prediction out.

A table's columns are encoded by :class:`reliquant.nbc.encoding.CategoryEncoder` (which
categories each column has, and what is refused: :mod:`reliquant.nbc.encoding`); a fitted
scikit-learn ``CategoricalNB`` is read by :mod:`reliquant.nbc.sklearn_models`.

:func:`robustness` scores a fitted model, ours (:class:`reliquant.nbc.NBCModel`) or
scikit-learn's ``CategoricalNB``, on a table: the prediction (eq. 2), eps_glob (Theorem 5.2,
eq. 13) and eps_loc (Theorem 6.1). :func:`fit_table` fits our eq. 18 NBC on a DataFrame with a
target column, alpha chosen by cross-validation (Section 6.1) unless given; an empty table, a
table with one class, or a float column is refused there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reliquant.core.seeding import block_rng
from reliquant.nbc.classifier import (
    NBCModel,
    check_data,
    cv_alpha,
    fit_nbc,
    log_factors,
    log_joint,
)
from reliquant.nbc.encoding import CategoryEncoder
from reliquant.nbc.robustness_metrics import eps_glob, eps_loc
from reliquant.nbc.sklearn_models import from_sklearn, sklearn_columns, unpipe
from reliquant.nbc.uncertainty import (
    bootstrap_conditionals,
    conditional,
    ensemble_uncertainty,
    u_entropy,
    u_max_prob,
)

__all__ = [
    "DEFAULT_ALPHAS",
    "UNCERTAINTY_COLUMNS",
    "CategoryEncoder",
    "FittedTable",
    "bootstrap_uncertainty",
    "fit_table",
    "from_sklearn",
    "robustness",
]

#: The alpha grid of :func:`fit_table` when none is given (the paper's Section 7.3 grid).
DEFAULT_ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: The columns ``robustness(..., bootstrap=M)`` adds: the uncertainty metrics of Section 4.
UNCERTAINTY_COLUMNS = ("u_m", "u_H", "u_a", "u_t", "u_e")


@dataclass(frozen=True)
class FittedTable:
    """An eq. 18 NBC fitted on a table: the model, the feature encoder, the class labels (code
    ``c`` is ``classes[c]``) and the cross-validated alpha. ``train_codes`` and
    ``train_labels`` keep the encoded training table (features (n, N), labels (n,)) for the
    bootstrap ensemble of ``robustness(..., bootstrap=M)``; ``target`` names the class column
    (a test table may hold it: :func:`robustness` ignores it)."""

    model: NBCModel
    encoder: CategoryEncoder
    classes: tuple[Any, ...]
    alpha: float
    train_codes: np.ndarray | None = field(default=None, repr=False, compare=False)
    train_labels: np.ndarray | None = field(default=None, repr=False, compare=False)
    target: Any = None


def fit_table(
    frame: pd.DataFrame,
    target: str,
    *,
    alpha: float | None = None,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    cv_folds: int = 5,
    seed: int | np.random.Generator = 0,
    categories: Mapping[Any, Sequence[Any]] | None = None,
) -> FittedTable:
    """Fit paper 000's NBC (eq. 18) on ``frame``; ``target`` names the class column.

    Parameters
    ----------
    frame : pandas DataFrame
        The training table: the ``target`` column and one column per feature.
    target : str
        The class column.
    alpha : float, optional
        The smoothing of eq. 18; without it, it is chosen from ``alphas`` by
        ``cv_folds``-fold cross-validation (Section 6.1) with folds drawn from ``seed``.
    alphas, cv_folds, seed
        The cross-validation grid, number of folds and seed.
    categories : mapping, optional
        ``{column: [category, ...]}``: the possible values of a column (feature or target),
        in the order that gives their codes. A declared value missing from training is
        scored with eq. 18's smoothing, ``alpha / (n(c) + alpha |F_i|)`` with ``|F_i|`` the
        number of declared categories; a pandas ``Categorical`` column declares its own
        ``categories``. Undeclared columns get the values seen in training.

    Raises
    ------
    ValueError
        An empty table, a target with fewer than two classes in training, a column of
        non-integer numbers that is not declared (bin it: ``pandas.cut`` / ``qcut``), a
        missing value, a training value outside its declared categories, fewer rows than
        ``cv_folds`` when alpha is cross-validated.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"fit_table takes a pandas DataFrame; got {type(frame).__name__}")
    if target not in frame.columns:
        raise ValueError(f"target column {target!r} is not in the table {list(frame.columns)}")
    if len(frame) == 0:
        raise ValueError(
            f"the training table is empty (0 rows, columns {list(frame.columns)}): nothing to fit"
        )
    declared = {} if categories is None else dict(categories)
    features = frame.drop(columns=[target])
    if features.shape[1] == 0:
        raise ValueError(f"the table has no feature column besides the target {target!r}")
    encoder = CategoryEncoder.fit(features, {c: v for c, v in declared.items() if c != target})
    labels = CategoryEncoder.fit(
        frame[[target]], {target: declared[target]} if target in declared else None
    )
    X, y = encoder.transform(features), labels.transform(frame[[target]])[:, 0]
    seen = np.unique(y)
    if seen.size < 2:
        raise ValueError(
            f"target column {target!r} holds one class only ({labels.categories[0][seen[0]]!r} "
            f"in all {len(y)} rows): a classifier needs at least two classes in training"
        )
    k = labels.n_values[0]
    if alpha is None:
        if len(y) < cv_folds:
            raise ValueError(
                f"{len(y)} training rows cannot be split into cv_folds={cv_folds} folds to "
                "choose alpha: pass fewer cv_folds or alpha=..."
            )
        alpha, _ = cv_alpha(X, y, k, encoder.n_values, alphas, cv_folds, seed)
    model = fit_nbc(X, y, k, encoder.n_values, alpha)
    return FittedTable(
        model=model,
        encoder=encoder,
        classes=labels.categories[0],
        alpha=float(alpha),
        train_codes=X,
        train_labels=y,
        target=target,
    )


def _refuse_infinite(X: pd.DataFrame) -> None:
    """Refuse a table of integer codes holding inf, naming its column and row label (an array
    is checked by :func:`reliquant.nbc.classifier.check_data`, by position)."""
    for col in X.columns:
        if pd.api.types.is_float_dtype(X[col]):
            bad = np.flatnonzero(np.isinf(X[col].to_numpy()))
            if bad.size:
                row = X.index[bad[0]]
                row = row.item() if isinstance(row, np.generic) else row
                raise ValueError(
                    f"column {col!r} holds {float(X[col].iloc[bad[0]])!r} at row {row!r}: "
                    "the features must be finite integer codes"
                )


def bootstrap_uncertainty(
    model: NBCModel,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X: np.ndarray,
    *,
    n_bootstrap: int,
    seed: int | np.random.Generator = 0,
    progress: bool | None = None,
) -> dict[str, np.ndarray]:
    """The five uncertainty metrics of paper 000, Section 4, for every row of the codes ``X``.

    * ``u_m = 1 - max_c p(c | f)`` (eq. 3) and ``u_H = -sum_c p(c | f) log2 p(c | f)``
      (eq. 4), from ``model`` itself;
    * ``u_a = (1/M) sum_i H(p_i(. | f))`` (eq. 5), ``u_t = H((1/M) sum_i p_i(. | f))``
      (eq. 6) and ``u_e = u_t - u_a`` (eq. 7, sign corrected: :mod:`reliquant.nbc.uncertainty`)
      from ``M = n_bootstrap`` NBCs, the i-th fitted by eq. 18 with ``model.alpha`` on a
      resample of the training data (``X_train`` (n, N) codes, ``y_train`` (n,) classes) of
      size n drawn with replacement (Section 7.3).

    Resample i takes the i-th ``rng.integers(0, n, size=n)`` of ``seed``'s generator: an
    int seed is ``block_rng(seed, "bootstrap")``; a ``numpy.random.Generator`` is used as it
    is (the experiment passes the one that drew its CV folds). Entropies are in bits.
    ``progress``: a bar over the M models (:func:`reliquant.core.progress.show_progress`:
    by default on in a terminal only).
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int | np.integer):
        raise TypeError(f"bootstrap must be an integer number of models; got {n_bootstrap!r}")
    if n_bootstrap < 1:
        raise ValueError(f"bootstrap must be >= 1 models; got {n_bootstrap}")
    k, n_values = model.n_classes, model.n_values
    X_train, y_train = check_data(X_train, y_train, k, n_values)
    n = len(y_train)
    if n == 0:
        raise ValueError("the bootstrap needs the training data; got 0 training rows")
    rng = seed if isinstance(seed, np.random.Generator) else block_rng(int(seed), "bootstrap")
    cond = conditional(log_joint(model, X))
    members = bootstrap_conditionals(
        X_train, y_train, k, n_values, model.alpha, X, n_bootstrap, rng, progress=progress
    )
    return {
        "u_m": u_max_prob(cond),
        "u_H": u_entropy(cond),
        **ensemble_uncertainty(members),
    }


def robustness(
    model: NBCModel | FittedTable | Any,
    X: pd.DataFrame | np.ndarray,
    *,
    tol: float = 1e-12,
    bootstrap: int | None = None,
    seed: int | np.random.Generator = 0,
    train: tuple[np.ndarray, np.ndarray] | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per instance of ``X``: ``prediction`` (eq. 2, ties to the lowest class),
    ``eps_glob`` (eq. 13) and ``eps_loc`` (Theorem 6.1).

    ``model``: a :class:`FittedTable` (``X`` a DataFrame, or a Series for one row, with the
    training columns matched by name in any order, the target column allowed and ignored,
    any other missing or extra column refused; values encoded with the training or declared
    categories; predictions are class labels), our :class:`NBCModel` (``X`` integer codes by
    position; predictions are class indices) or a fitted scikit-learn ``CategoricalNB``
    (``X`` integer codes; a DataFrame is matched by name to the model's
    ``feature_names_in_`` when it was fitted on one; predictions are its labels
    ``classes_``, as its ``predict`` returns them), or a fitted scikit-learn ``Pipeline``
    whose last step is a ``CategoricalNB`` (``X`` as the pipeline takes it: transformed by
    ``pipeline[:-1]``, as its ``predict`` does, then scored by that last step).

    ``bootstrap=M`` adds the columns u_m, u_H, u_a, u_t, u_e (eqs. 3-7, in bits) of
    :func:`bootstrap_uncertainty`: an ensemble of M eq. 18 NBCs on resamples of the training
    data drawn from ``seed``. A :class:`FittedTable` carries its training table; an
    :class:`NBCModel` needs ``train=(X_train, y_train)`` (integer codes). A scikit-learn
    ``CategoricalNB`` is refused (its prior is not smoothed as eq. 18: refitting it as ours
    would give another model). ``progress``: a bar over the bootstrap models
    (:func:`reliquant.core.progress.show_progress`: by default on in a terminal only).
    """
    classes = None
    index = X.index if isinstance(X, pd.DataFrame) else None
    if isinstance(model, FittedTable):
        if isinstance(X, pd.Series):
            X = X.to_frame().T  # one row, its labels the column names
        if not isinstance(X, pd.DataFrame):
            raise TypeError(
                "a model fitted on a table scores a DataFrame (or a Series, one row) with "
                f"the training columns {list(model.encoder.columns)}; got {type(X).__name__}"
            )
        ignore = () if model.target is None else (model.target,)
        codes, classes, nbc = model.encoder.transform(X, ignore=ignore), model.classes, model.model
        if train is None and model.train_codes is not None:
            train = (model.train_codes, model.train_labels)
    else:
        model, X = unpipe(model, X)  # a Pipeline ending in CategoricalNB: X transformed
        if bootstrap is not None and not isinstance(model, NBCModel):
            raise TypeError(
                "bootstrap uncertainty needs our eq. 18 NBC (fit_table, or an NBCModel with "
                f"train=(X_train, y_train)); got {type(model).__name__}"
            )
        nbc = model if isinstance(model, NBCModel) else from_sklearn(model)
        if not isinstance(model, NBCModel):
            classes = np.asarray(model.classes_)  # predict's labels, as predict returns them
            X = sklearn_columns(model, X)
        if isinstance(X, pd.DataFrame):
            _refuse_infinite(X)
        codes = X.to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)
    if bootstrap is not None and train is None:
        raise ValueError(
            "bootstrap uncertainty needs the training data: pass train=(X_train, y_train) "
            "(integer codes) or a model from fit_table"
        )
    lj = log_joint(nbc, codes)
    pred = np.argmax(lj, axis=1)
    out = pd.DataFrame(
        {
            "prediction": (
                pred
                if classes is None
                else classes[pred]
                if isinstance(classes, np.ndarray)
                else [classes[c] for c in pred]
            ),
            "eps_glob": eps_glob(lj, pred),
            "eps_loc": eps_loc(log_factors(nbc, codes), pred, tol=tol),
        }
    )
    if bootstrap is not None:
        metrics = bootstrap_uncertainty(
            nbc, train[0], train[1], codes, n_bootstrap=bootstrap, seed=seed, progress=progress
        )
        for name in UNCERTAINTY_COLUMNS:
            out[name] = metrics[name]
    if index is None and isinstance(X, pd.DataFrame):
        index = X.index
    if index is not None:
        out.index = index
    return out
