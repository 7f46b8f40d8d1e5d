"""What a user passes to :func:`reliquant.trees.robustness`, matched to the model's features.

A model fitted on a pandas DataFrame knows its feature names (scikit-learn
``feature_names_in_``, XGBoost ``Booster.feature_names``, LightGBM ``feature_name()``; kept in
``TreeEnsemble.feature_names``). An input that has names (a pandas Series, or a DataFrame
with string column names) is then matched **by name**, in whatever order its columns come:
a missing or an unknown name is refused with both lists in the message, never read by
position. An input without names (a numpy array, a list) is read by position, as the model's
own ``predict`` does; so is a named input when the model knows no names.

The noise is described in the input's order: when the input's columns come in another
order than the model's, a per-feature variance vector, a covariance matrix, or NORTA
marginals and correlation are permuted with them. A variance given as a pandas Series (or a
covariance as a DataFrame) with feature names is matched by name.

Public API: :func:`match_features`, :func:`noise_spec`, :func:`noise_in_model_order`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd

from reliquant.trees.noise import Gaussian, Norta
from reliquant.trees.structure import TreeEnsemble

__all__ = ["match_features", "noise_in_model_order", "noise_spec"]


def _names(labels) -> list[str] | None:
    """Column labels as names when every label is a string (a default integer index is no
    name: it is read by position)."""
    labels = list(labels)
    if labels and all(isinstance(c, str) for c in labels):
        return labels
    return None


def _order(given: list[str], wanted: tuple[str, ...], what: str) -> np.ndarray:
    """Positions in ``given`` of the names ``wanted``; a ValueError with both lists when a
    name is missing, unknown or repeated."""
    dup = sorted({n for n in given if given.count(n) > 1})
    missing = [n for n in wanted if n not in given]
    extra = [n for n in given if n not in wanted]
    if dup or missing or extra:
        problems = []
        if missing:
            problems.append(f"missing {missing}")
        if extra:
            problems.append(f"not features of the model {extra}")
        if dup:
            problems.append(f"repeated {dup}")
        raise ValueError(
            f"{what} has the features {given} but the model was fitted on {list(wanted)} "
            f"({'; '.join(problems)}); features are matched by name"
        )
    return np.array([given.index(n) for n in wanted], dtype=np.int64)


def match_features(
    X, ens: TreeEnsemble, *, one: bool, what: str = "x"
) -> tuple[np.ndarray, np.ndarray | None, list[str] | None]:
    """``(values, perm, names)``: the input as float64 in the model's feature order.

    ``X``: a numpy array or list (read by position), a pandas Series (one sample, its index
    the names) or a DataFrame (its columns the names; with ``one=True`` it must have one
    row). ``one=True`` returns a 1-D sample, else a 2-D batch. ``perm``: the input columns
    taken, in the model's order, when they were reordered by name (``None`` when the input
    is read as it comes); ``names``: the input's names (``None`` without names). Missing,
    unknown or repeated names are a ValueError naming both lists (module docstring).
    """
    names = None
    if isinstance(X, pd.Series):
        if not one:
            X = X.to_frame().T
        else:
            names = _names(X.index)
            X = X.to_numpy()
    if isinstance(X, pd.DataFrame):
        names = _names(X.columns)
        if one:
            if len(X) != 1:
                raise ValueError(
                    f"{what} must be one sample; got a DataFrame of {len(X)} rows (use "
                    "robustness_batch for several samples)"
                )
            X = X.iloc[0]
        bad = [c for c in (X.index if one else X.columns) if not _is_numeric(X, c, one)]
        if bad:
            raise ValueError(f"{what}: the columns {bad} are not numeric")
        X = X.to_numpy(dtype=np.float64)
    values = np.asarray(X, dtype=np.float64)
    if one and values.ndim != 1:
        raise ValueError(f"{what} must be one sample (a 1-D array); got shape {values.shape}")
    if not one:
        values = np.atleast_2d(values)
        if values.ndim != 2:
            raise ValueError(f"{what} must be a 2-D array of samples; got shape {values.shape}")
    perm = None
    if names is not None and ens.feature_names is not None:
        perm = _order(names, ens.feature_names, what)
        values = values[perm] if one else values[:, perm]
        if np.array_equal(perm, np.arange(len(perm))):
            perm = None
    return values, perm, names


def _is_numeric(X, c, one: bool) -> bool:
    if one:
        return isinstance(X[c], Real | np.number) and not isinstance(X[c], bool | np.bool_)
    return pd.api.types.is_numeric_dtype(X[c]) and not pd.api.types.is_bool_dtype(X[c])


def noise_spec(noise):
    """``noise`` as a noise specification: a bare number ``v`` (not a bool) is
    ``Gaussian(v)``, isotropic normal noise of variance ``v``; a
    :class:`~reliquant.trees.noise.Gaussian`, :class:`~reliquant.trees.noise.Norta` or a
    bound model of :mod:`reliquant.trees.box_mass` is returned as it is; anything else is a
    ValueError that says what to pass."""
    if isinstance(noise, Real | np.number) and not isinstance(noise, bool | np.bool_):
        return Gaussian(float(noise))
    if hasattr(noise, "bind") or hasattr(noise, "box_mass_with_error"):
        return noise
    raise ValueError(
        f"noise must be Gaussian(variance) or Norta(marginals, correlation) (a bare number v "
        f"means Gaussian(v)); got {type(noise).__name__}: pass Gaussian(...) or Norta(...)"
    )


def noise_in_model_order(noise, ens: TreeEnsemble, perm: np.ndarray | None, names):
    """The noise spec ``noise`` (described in the input's column order) in the model's
    feature order: permuted by ``perm`` (:func:`match_features`), and a variance Series /
    covariance DataFrame with names matched by name (to the model's names, else to the
    input's ``names``). A bound noise model cannot be permuted: refused when ``perm`` is
    set."""
    if isinstance(noise, Gaussian):
        v = noise.variance
        target = ens.feature_names or (tuple(names) if names is not None else None)
        if isinstance(v, pd.Series) and _names(v.index) is not None and target is not None:
            order = _order(list(v.index), target, "the noise variance")
            return Gaussian(v.to_numpy(np.float64)[order], noise.abseps, noise.seed)
        if isinstance(v, pd.DataFrame) and _names(v.columns) is not None and target is not None:
            rows = _order(list(v.index), target, "the noise covariance's rows")
            cols = _order(list(v.columns), target, "the noise covariance's columns")
            cov = v.to_numpy(np.float64)[np.ix_(rows, cols)]
            return Gaussian(cov, noise.abseps, noise.seed)
        if isinstance(v, pd.Series | pd.DataFrame):
            v = v.to_numpy(np.float64)
        if perm is None:
            return Gaussian(v, noise.abseps, noise.seed) if v is not noise.variance else noise
        arr = np.asarray(v, dtype=np.float64)
        if arr.ndim == 1 and arr.shape[0] == len(perm):
            arr = arr[perm]
        elif arr.ndim == 2 and arr.shape == (len(perm), len(perm)):
            arr = arr[np.ix_(perm, perm)]
        return Gaussian(arr if arr.ndim else float(arr), noise.abseps, noise.seed)
    if isinstance(noise, Norta):
        if perm is None:
            return noise
        corr = np.asarray(noise.correlation, dtype=np.float64)
        if len(noise.marginals) != len(perm) or corr.shape != (len(perm), len(perm)):
            return noise  # the sizes are refused, naming them, when it is bound
        return Norta(
            [noise.marginals[i] for i in perm], corr[np.ix_(perm, perm)], noise.abseps, noise.seed
        )
    if perm is not None:
        raise ValueError(
            "the input's columns come in another order than the model's features, but the "
            "noise is a bound model of reliquant.trees.box_mass, which cannot be reordered: "
            "pass a Gaussian(...) or Norta(...) spec, or the input in the model's order"
        )
    return noise
