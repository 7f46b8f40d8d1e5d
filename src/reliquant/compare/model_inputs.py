"""The inputs of :func:`reliquant.compare.score_predictions` matched to the model: the rows to
score in the model's feature order, and the noise as the robustness functions take it.

* :class:`ModelRows`: ``X`` as the model's ``predict`` takes it; a DataFrame matched to the
  model's feature names (``feature_names_in_``; LightGBM's names with spaces as ``_``) by
  name, in any order; a missing, unknown or repeated name is refused naming both lists.
* :func:`tree_noise` / :func:`check_noise`: a noise spec for the certified tree robustness,
  refused naming the argument when it is of no known kind.
* :func:`mc_variance`: the noise as :func:`reliquant.compare.black_box_robustness` takes it
  (per-feature variances in the model's order). A named noise (a Series or dict by feature)
  is matched by name; a plain vector is in the model's feature order and refused next to an
  ``X`` whose columns come in another order, unless the reordering leaves it unchanged up to
  a relative :data:`EQUAL_RTOL` (equal variances: ``(0.1 * X.std()) ** 2`` of standardised
  data, whose columns' standard deviations differ in the last bits).

Public API: :data:`NOISE_HELP`, :data:`EQUAL_RTOL`, :func:`is_pipeline`,
:func:`feature_names`, :func:`library_name`, :class:`ModelRows`, :func:`tree_noise`,
:func:`check_noise`, :func:`mc_variance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "EQUAL_RTOL",
    "NOISE_HELP",
    "ModelRows",
    "check_noise",
    "feature_names",
    "is_pipeline",
    "library_name",
    "mc_variance",
    "tree_noise",
]

#: How to pass a noise, for the messages that need one.
NOISE_HELP = (
    "pass noise= (a variance, per-feature variances as a pandas Series by feature name, or "
    "reliquant.trees.Gaussian(...))"
)
#: Relative tolerance under which a plain noise vector counts as unchanged by a reordering
#: of the features (equal variances up to rounding).
EQUAL_RTOL = 1e-9


def is_pipeline(model: Any) -> bool:
    """Whether ``model`` is a scikit-learn ``Pipeline``."""
    return type(model).__name__ == "Pipeline" and hasattr(model, "steps")


def feature_names(model: Any) -> list[str] | None:
    """The model's feature names as it matches them (``feature_names_in_``; LightGBM stores
    spaces as ``_``), or ``None`` when it was fitted without names (LightGBM's defaults
    ``Column_0, Column_1, ...`` are no names, as for the trees readers)."""
    from reliquant.trees.readers.checks import known_feature_names

    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return None
    known = known_feature_names(names, len(names))
    return list(known) if known else None


def library_name(name: str, model: Any) -> str:
    """``name`` as the model's library stores it (LightGBM: spaces -> ``_``)."""
    last = model.steps[-1][1] if is_pipeline(model) else model
    if type(last).__module__.startswith("lightgbm"):
        return name.replace(" ", "_")
    return name


class ModelRows:
    """Rows to score, in the model's feature order.

    ``data``: what the model's ``predict`` / ``predict_proba`` gets (a DataFrame in the
    model's order when the model has feature names, else a numpy array by position);
    ``columns``: the column labels of ``data`` (``None`` for an array); ``perm``: the input
    columns in the model's order when they were reordered by name, else ``None``;
    ``names``: the input's column names (``None`` without names); ``index``: the input's row
    labels."""

    def __init__(self, model: Any, X: Any, what: str) -> None:
        from reliquant.trees.inputs import feature_order

        if isinstance(X, pd.Series):
            raise ValueError(f"{what} must be a DataFrame or a 2-D array of rows; got a Series "
                             f"(one row: pass {what}.to_frame().T)")  # fmt: skip
        wanted = feature_names(model)
        self.perm = self.names = None
        if isinstance(X, pd.DataFrame):
            if X.shape[0] == 0 or X.shape[1] == 0:
                raise ValueError(f"{what} must have at least one row and one column; got {X.shape}")
            self.index = X.index
            given = [str(c) for c in X.columns]
            named = all(isinstance(c, str) for c in X.columns)
            if wanted is not None and named:
                self.names = given
                lib = [library_name(c, model) for c in given]
                self.perm = feature_order(lib, wanted, what, noun="columns")
                self.data = X.iloc[:, self.perm]
                if np.array_equal(self.perm, np.arange(len(self.perm))):
                    self.perm = None
            elif wanted is not None:
                self.data = pd.DataFrame(X.to_numpy(), columns=wanted, index=X.index)
            else:
                self.data = X.to_numpy()
        else:
            arr = np.asarray(X)
            if arr.ndim != 2 or arr.shape[0] == 0:
                raise ValueError(
                    f"{what} must be a DataFrame or a 2-D array (n_samples, n_features) with "
                    f"n >= 1; got shape {arr.shape}"
                )
            self.index = pd.RangeIndex(arr.shape[0])
            self.data = pd.DataFrame(arr, columns=wanted) if wanted is not None else arr
        self.columns = list(self.data.columns) if isinstance(self.data, pd.DataFrame) else None

    def values(self) -> np.ndarray | None:
        """The rows as float64 in the model's order, or ``None`` when a column is not numeric."""
        if isinstance(self.data, pd.DataFrame):
            numeric = all(
                pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
                for t in self.data.dtypes
            )
            return self.data.to_numpy(dtype=np.float64) if numeric else None
        if self.data.dtype.kind not in "iuf":
            return None
        return self.data.astype(np.float64)

    def as_model_input(self, batch: np.ndarray) -> Any:
        """A batch of rows (model order) as ``predict`` takes it."""
        return batch if self.columns is None else pd.DataFrame(batch, columns=self.columns)


def tree_noise(noise: Any) -> Any:
    """``noise`` as a spec :func:`tree_robustness` takes: a Gaussian / Norta as it is, a
    number as itself (``Gaussian(v)`` there), variances (array, Series, dict, covariance
    DataFrame) wrapped in ``Gaussian``."""
    from reliquant.trees import Gaussian, Norta

    if isinstance(noise, Gaussian | Norta) or hasattr(noise, "box_mass_with_error"):
        return noise
    if isinstance(noise, Real | np.number) and not isinstance(noise, bool | np.bool_):
        return float(noise)
    return Gaussian(noise)


def check_noise(noise: Any) -> None:
    """Refuse a noise of no known kind, naming the argument."""
    from reliquant.trees import Gaussian, Norta

    ok = (
        isinstance(noise, Gaussian | Norta | Mapping | pd.Series | pd.DataFrame | np.ndarray | list)
        or (isinstance(noise, Real | np.number) and not isinstance(noise, bool | np.bool_))
        or hasattr(noise, "box_mass_with_error")
    )
    if not ok:
        raise ValueError(
            f"noise must be a variance (a number), per-feature variances (a pandas Series or "
            f"dict by feature name, or an array in the model's feature order), a covariance, or "
            f"reliquant.trees.Gaussian(...) / Norta(...); got {type(noise).__name__}"
        )


def mc_variance(noise: Any, rows: ModelRows, model: Any, d: int) -> tuple[Any, str]:
    """``(variance, "")``: the noise as :func:`black_box_robustness` takes it (a scalar or
    per-feature variances in the model's order), or ``(None, why not)``. A plain vector
    next to a reordered ``X`` is refused (module docstring)."""
    from reliquant.trees import Gaussian, Norta
    from reliquant.trees.inputs import feature_order

    if isinstance(noise, Norta) or hasattr(noise, "box_mass_with_error"):
        return None, (
            f"black_box_robustness draws independent Gaussian noise; got {type(noise).__name__}"
        )
    v = noise.variance if isinstance(noise, Gaussian) else noise
    if isinstance(v, Real | np.number) and not isinstance(v, bool | np.bool_):
        return float(v), ""
    target = feature_names(model) or rows.names
    if isinstance(v, Mapping):
        if not v or not all(isinstance(k, str) for k in v):
            raise ValueError("noise given as a dict needs the feature names (strings) as keys")
        v = pd.Series(list(v.values()), index=list(v))
    if isinstance(v, pd.Series | pd.DataFrame) and all(isinstance(c, str) for c in v.index):
        if target is None:
            raise ValueError(
                "noise is given by feature name, but neither the model nor X has feature "
                "names to match it to: give it in the model's feature order"
            )
        pos = feature_order([library_name(str(c), model) for c in v.index], target, "noise",
                            noun="columns")  # fmt: skip
        arr = v.to_numpy(np.float64)[pos]
        if isinstance(v, pd.DataFrame):
            cols = feature_order([library_name(str(c), model) for c in v.columns], target,
                                 "noise", noun="columns")  # fmt: skip
            arr = arr[:, cols]
    else:
        arr = np.asarray(v.to_numpy() if isinstance(v, pd.Series | pd.DataFrame) else v,
                         dtype=np.float64)  # fmt: skip
        moved = rows.perm
        if moved is not None and arr.shape in ((d,), (d, d)):
            same = arr[moved] if arr.ndim == 1 else arr[np.ix_(moved, moved)]
            if not np.allclose(same, arr, rtol=EQUAL_RTOL, atol=0.0):
                raise ValueError(
                    f"noise is a plain array, but X's columns come in another order than the "
                    f"model's features (X: {rows.names}; model: {feature_names(model)}), so it "
                    "is not clear which feature each entry belongs to: give it by name, e.g. "
                    "pd.Series(variances, index=model_features), or pass X in the model's order"
                )
    if arr.ndim == 2:
        if arr.shape != (d, d):
            raise ValueError(f"noise covariance has shape {arr.shape}; the model has {d} features")
        if np.any(arr - np.diag(np.diag(arr))):
            return None, (
                "black_box_robustness draws independent noise: a covariance with "
                "off-diagonal entries is not supported"
            )
        arr = np.diag(arr).copy()
    if arr.ndim == 1 and arr.shape[0] != d:
        raise ValueError(f"noise has {arr.shape[0]} variances but the model has {d} features")
    return arr, ""
