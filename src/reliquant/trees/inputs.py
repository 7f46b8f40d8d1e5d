"""What a user passes to :func:`reliquant.trees.robustness`, matched to the model's features.

A model fitted on a pandas DataFrame knows its feature names (scikit-learn
``feature_names_in_``, XGBoost ``Booster.feature_names``, LightGBM ``feature_name()``; kept in
``TreeEnsemble.feature_names``). An input that has names (a pandas Series, or a DataFrame
with string column names) is then matched **by name**, in whatever order its columns come:
a missing or an unknown name is refused with both lists in the message, never read by
position. An input without names (a numpy array, a list) is read by position, as the model's
own ``predict`` does; so is a named input when the model knows no names.

The noise is matched like the input. A named noise is aligned to the model's features by
name: a per-feature variance as a pandas Series or a dict, a covariance as a DataFrame,
NORTA marginals as a dict (or Series) and the NORTA correlation as a DataFrame. A plain
(unnamed) vector or matrix is read in the model's feature order; when the input's columns
come in another order than the model's, a plain vector is ambiguous (the training order or
the input's?) and is refused with both orders and the fix in the message, unless the
reordering leaves it unchanged up to a relative :data:`EQUAL_RTOL` (equal variances, an
identity correlation: ``(0.1 * X.std()) ** 2`` of standardised data, whose columns' standard
deviations differ in their last bits, counts as equal).

LightGBM replaces spaces in feature names with ``_`` when it fits; names are matched as it
stores them (:func:`library_names`), as its own ``predict`` accepts the original columns.

Public API: :data:`EQUAL_RTOL`, :func:`feature_order`, :func:`match_features`,
:func:`noise_spec`, :func:`noise_in_model_order`, :func:`library_names`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Real

import numpy as np
import pandas as pd

from reliquant.trees.noise import Gaussian, Norta
from reliquant.trees.structure import TreeEnsemble

#: Relative tolerance under which a plain noise vector or matrix counts as unchanged by a
#: reordering of the features (equal up to rounding).
EQUAL_RTOL = 1e-9

__all__ = [
    "EQUAL_RTOL",
    "feature_order",
    "library_names",
    "match_features",
    "noise_in_model_order",
    "noise_spec",
]


def _names(labels) -> list[str] | None:
    """Column labels as names when every label is a string (a default integer index is no
    name: it is read by position)."""
    labels = list(labels)
    if labels and all(isinstance(c, str) for c in labels):
        return labels
    return None


def library_names(names: list[str], ens: TreeEnsemble) -> list[str]:
    """``names`` as the model's library stores them: LightGBM replaces every space in a
    feature name with ``_`` when it fits (``"blood pressure"`` -> ``"blood_pressure"``),
    and its ``predict`` accepts the original columns, so they are matched the same way;
    other libraries keep names as they are."""
    if ens.source.startswith("lightgbm"):
        return [n.replace(" ", "_") for n in names]
    return names


def feature_order(
    given: list[str], wanted: Sequence[str], what: str, *, noun: str = "features"
) -> np.ndarray:
    """Positions in ``given`` of the names ``wanted`` (``given`` reordered to the model's
    order); a ValueError naming ``what`` and both lists when a name is missing, unknown or
    repeated. ``noun``: what the message calls the names (``"features"``, ``"columns"``)."""
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
            f"{what} has the {noun} {given} but the model was fitted on {list(wanted)} "
            f"({'; '.join(problems)}); {noun} are matched by name, in any order: give "
            "them the model's names"
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
        names = library_names(names, ens)
        perm = feature_order(names, ens.feature_names, what)
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


def _fmt(names) -> str:
    """A list of names as it reads in a message (the first 12, then a count)."""
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:12])
    return f"[{shown}{f', ... ({len(names)} in all)' if len(names) > 12 else ''}]"


def _as_named(value, target, what: str):
    """A dict with string keys as a pandas Series (a ValueError when there is nothing to
    match its names to); other values as they come."""
    if not isinstance(value, Mapping):
        return value
    if not value or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{what} given as a dict needs the feature names (strings) as keys")
    if target is None:
        raise ValueError(
            f"{what} is given by name, but neither the model nor x has feature names to "
            "match it to: give it in the model's feature order"
        )
    return pd.Series(list(value.values()), index=list(value), dtype=object)


def _ambiguous(what: str, example: str, names, wanted) -> ValueError:
    """The refusal of a plain (unnamed) noise argument next to a reordered named input:
    both orders and the two fixes."""
    return ValueError(
        f"{what} is a plain array, but x's columns come in another order than the model's "
        f"features (x: {_fmt(names)}; model: {_fmt(wanted)}), so it is not clear which "
        f"feature each entry belongs to. Give it by name, e.g. {example} with the values in "
        f"the model's order (a dict by feature name works too), or pass x in the model's "
        f"order: x[{_fmt(wanted)}]"
    )


def _vector(v, target, what: str, rename=lambda n: n) -> np.ndarray | None:
    """A named 1-D noise argument (pandas Series with string labels) in the order
    ``target``; ``None`` when ``v`` has no names."""
    if isinstance(v, pd.Series) and _names(v.index) is not None:
        if target is None:
            return None  # nothing to match against: read by position
        return v.to_numpy()[feature_order(rename(list(v.index)), target, what)]
    return None


def _matrix(m, target, what: str, rename=lambda n: n) -> np.ndarray | None:
    """A named square noise argument (DataFrame with string row and column labels) in the
    order ``target``; ``None`` when ``m`` has no names."""
    if isinstance(m, pd.DataFrame) and _names(m.columns) is not None:
        if target is None:
            return None
        rows = feature_order(rename(list(m.index)), target, f"{what}'s rows")
        cols = feature_order(rename(list(m.columns)), target, f"{what}'s columns")
        return m.to_numpy(np.float64)[np.ix_(rows, cols)]
    return None


def _plain(arr: np.ndarray, perm, names, wanted, what: str, example: str) -> None:
    """Refuse a plain array of the model's size next to a reordered named input, unless the
    reordering leaves it unchanged (equal variances, an identity correlation)."""
    if perm is None:
        return
    d = len(perm)
    if arr.ndim == 1 and arr.shape[0] == d:
        same = np.allclose(arr[perm], arr, rtol=EQUAL_RTOL, atol=0.0)
    elif arr.ndim == 2 and arr.shape == (d, d):
        same = np.allclose(arr[np.ix_(perm, perm)], arr, rtol=EQUAL_RTOL, atol=0.0)
    else:
        return  # a scalar, or a size that binding refuses naming both sizes
    if not same:
        raise _ambiguous(what, example, names, wanted)


def _gaussian(noise: Gaussian, target, perm, names, wanted, rename) -> Gaussian:
    v = _as_named(noise.variance, target, "the noise variance")
    named = _vector(v, target, "the noise variance", rename)
    if named is None:
        named = _matrix(v, target, "the noise covariance", rename)
    if named is not None:
        return Gaussian(named.astype(np.float64), noise.abseps, noise.seed)
    arr = np.asarray(v.to_numpy() if isinstance(v, pd.Series | pd.DataFrame) else v, np.float64)
    if arr.ndim == 2:
        what = "the noise covariance (a matrix)"
        example = "Gaussian(pd.DataFrame(cov, index=model_features, columns=model_features))"
    else:
        what = "the noise variance (a vector)"
        example = "Gaussian(pd.Series(variances, index=model_features))"
    _plain(arr, perm, names, wanted, what, example)
    if arr is noise.variance:
        return noise
    return Gaussian(arr if arr.ndim else float(arr), noise.abseps, noise.seed)


def _norta(noise: Norta, target, perm, names, wanted, rename) -> Norta:
    marg = _as_named(noise.marginals, target, "the NORTA marginals")
    ordered = _vector(marg, target, "the NORTA marginals", rename)
    if ordered is None:
        ordered = list(marg)
        moved = perm is not None and len(ordered) == len(perm)
        if moved and any(ordered[i] is not ordered[j] for j, i in enumerate(perm)):
            raise _ambiguous(
                "the NORTA marginals (a list)", "Norta({name: marginal, ...}, correlation)",
                names, wanted,
            )  # fmt: skip
    corr = _matrix(noise.correlation, target, "the NORTA correlation", rename)
    if corr is None:
        corr = np.asarray(noise.correlation, dtype=np.float64)
        _plain(corr, perm, names, wanted, "the NORTA correlation (a matrix)",
               "Norta(marginals, pd.DataFrame(corr, index=model_features, "
               "columns=model_features))")  # fmt: skip
    return Norta(list(ordered), corr, noise.abseps, noise.seed)


def noise_in_model_order(noise, ens: TreeEnsemble, perm: np.ndarray | None, names):
    """The noise spec ``noise`` in the model's feature order (module docstring).

    Named parts are matched by name, to the model's feature names (else to the input's
    ``names``): a variance ``pandas.Series`` or dict, a covariance ``DataFrame``, NORTA
    marginals as a dict or Series, a NORTA correlation ``DataFrame``; a missing, unknown or
    repeated name is refused naming both lists. Plain parts (numpy arrays, lists) are in the
    model's order; when the input's columns were reordered by name (``perm`` from
    :func:`match_features`) a plain part is ambiguous and refused, showing both orders and
    the fix, unless the reordering leaves it unchanged. A bound noise model cannot be
    reordered: refused when ``perm`` is set."""
    target = ens.feature_names or (tuple(names) if names is not None else None)
    wanted = ens.feature_names

    def rename(labels: list[str]) -> list[str]:
        return library_names(labels, ens) if ens.feature_names is not None else labels

    if isinstance(noise, Gaussian):
        return _gaussian(noise, target, perm, names, wanted, rename)
    if isinstance(noise, Norta):
        return _norta(noise, target, perm, names, wanted, rename)
    if perm is not None:
        raise ValueError(
            "the input's columns come in another order than the model's features "
            f"(x: {_fmt(names)}; model: {_fmt(wanted)}), but the noise is a bound model of "
            "reliquant.trees.box_mass, which cannot be reordered: pass a Gaussian(...) or "
            f"Norta(...) spec, or x in the model's order: x[{_fmt(wanted)}]"
        )
    return noise
