"""DESlib's dynamic-selection methods as the dynamic-selection protocol runs them
(:mod:`reliquant.compare.reproduction.selection_protocol`, step 5): MCB, KNORA-U, KNORA-E and
META-DES on a pool of fitted models, ``k`` chosen on the validation part; the shim that lets
DESlib 0.3.7 run with scikit-learn >= 1.6, the pool's frozen models and META-DES's
one-class-safe meta-classifier.

Public API: :data:`DESLIB_METHODS`, :func:`patch_deslib`, :class:`FrozenModel`,
:class:`OneClassSafeNB`, :func:`tune_deslib`.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.naive_bayes import MultinomialNB

__all__ = ["DESLIB_METHODS", "FrozenModel", "OneClassSafeNB", "patch_deslib", "tune_deslib"]

_log = logging.getLogger("reliquant.compare.reproduction.selection_protocol")

#: DESlib's dynamic-selection methods: name in our tables -> (module, class).
DESLIB_METHODS = {
    "MCB": ("deslib.dcs.mcb", "MCB"),
    "KNORA-U": ("deslib.des.knora_u", "KNORAU"),
    "KNORA-E": ("deslib.des.knora_e", "KNORAE"),
    "META-DES": ("deslib.des.meta_des", "METADES"),
}


# --------------------------------------------------------------------------- DESlib
def _deslib_validate_data(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``BaseEstimator._validate_data`` of scikit-learn < 1.6, as DESlib calls it:
    :func:`sklearn.utils.validation.validate_data` on the estimator (the same checks, and it
    sets ``n_features_in_``)."""
    from sklearn.utils.validation import validate_data

    return validate_data(self, *args, **kwargs)


def patch_deslib() -> bool:
    """Let DESlib 0.3.7's dynamic-selection methods run with scikit-learn >= 1.6.

    ``deslib.base.BaseDS.fit`` calls ``self._validate_data(X, y, ...)``, a private method
    scikit-learn 1.6 removed from ``BaseEstimator`` (``'MCB' object has no attribute
    '_validate_data'``); this sets ``BaseDS._validate_data`` to :func:`_deslib_validate_data`,
    which forwards to the public :func:`sklearn.utils.validation.validate_data`. Nothing else
    of DESlib changes. Called by :func:`tune_deslib` when it runs, never at import.
    Idempotent: returns True when it patched now, False when ``BaseDS`` already had the
    method (an earlier call, or a scikit-learn that still has it). DESlib's static
    ensembles (``deslib.static``: SingleBest, StaticSelection, StackedClassifier, Oracle)
    call the same method from another base class and stay broken; the protocol does not
    use them.
    """
    from deslib.base import BaseDS

    if hasattr(BaseDS, "_validate_data"):
        return False
    BaseDS._validate_data = _deslib_validate_data
    return True


def _deslib_class(method: str) -> type:
    if method not in DESLIB_METHODS:
        raise ValueError(
            f"unknown DESlib method {method!r}: expected one of {list(DESLIB_METHODS)}"
        )
    module, name = DESLIB_METHODS[method]
    return getattr(importlib.import_module(module), name)


def _array_key(x: np.ndarray) -> tuple:
    a = np.ascontiguousarray(x)
    return (a.shape, a.dtype.str, hashlib.blake2b(a.tobytes(), digest_size=16).digest())


class FrozenModel(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose ``predict`` / ``predict_proba`` are computed once per input
    array (keyed by its shape, dtype and a BLAKE2b digest of its bytes) and then served from
    memory: DESlib asks the pool for the same validation predictions at every ``k``. Results
    are the wrapped model's own; :meth:`fit` is refused (the pool is fitted once)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.classes_ = np.asarray(model.classes_)
        self._cache: dict[tuple, np.ndarray] = {}

    def __sklearn_is_fitted__(self) -> bool:
        return True

    def fit(self, X: Any, y: Any) -> FrozenModel:  # noqa: ARG002 (the estimator API)
        """Refused: the wrapped model is already fitted."""
        raise TypeError("FrozenModel wraps a fitted model; it cannot be refitted")

    def _cached(self, kind: str, X: Any) -> np.ndarray:
        key = (kind, *_array_key(np.asarray(X)))
        if key not in self._cache:
            self._cache[key] = np.asarray(getattr(self.model, kind)(X))
        return self._cache[key].copy()

    def predict(self, X: Any) -> np.ndarray:
        """The wrapped model's ``predict(X)``."""
        return self._cached("predict", X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """The wrapped model's ``predict_proba(X)``."""
        return self._cached("predict_proba", X)


class OneClassSafeNB(MultinomialNB):
    """META-DES's default meta-classifier (``MultinomialNB()``), but with two probability
    columns (not competent, competent) even when its meta-training set held one class.

    DESlib 0.3.7 reads the meta-classifier's ``predict_proba(...)[:, 1]`` as the competence;
    when the pool is right (or wrong) on every validation row, the meta-training labels are
    all ``True`` (all ``False``), ``MultinomialNB`` returns one column and META-DES fails with
    an ``IndexError`` on the first test row where the models disagree. Here the class it saw
    gets probability 1: every model competent (META-DES then combines them all) or none
    (DESlib then uses them all as well). With both classes seen it is ``MultinomialNB``."""

    def predict_proba(self, X: Any) -> np.ndarray:
        """``MultinomialNB.predict_proba``, widened to the columns ``[False, True]``."""
        proba = super().predict_proba(X)
        if proba.shape[1] == 2:
            return proba
        out = np.zeros((proba.shape[0], 2))
        out[:, int(bool(self.classes_[0]))] = 1.0
        return out


def tune_deslib(
    method: str,
    pool: Sequence[Any],
    x_val: np.ndarray,
    y_val: np.ndarray,
    *,
    k_range: Sequence[int],
    random_state: int,
) -> tuple[Any, int, float]:
    """DESlib's ``method`` on the fitted ``pool``, fitted on the validation part for each
    ``k`` in ``k_range[0]..k_range[1]`` and scored on it; returns the fitted method of the
    smallest ``k`` with the highest validation accuracy, that ``k`` and that accuracy
    (module docstring, step 5)."""
    patch_deslib()
    cls = _deslib_class(method)
    k_min, k_max = int(k_range[0]), int(k_range[1])
    if not 2 <= k_min <= k_max:
        raise ValueError(f"k_range must be [k_min, k_max] with 2 <= k_min <= k_max; got {k_range}")
    best: tuple[Any, int, float] | None = None
    for k in range(k_min, k_max + 1):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            extra = {"meta_classifier": OneClassSafeNB()} if method == "META-DES" else {}
            est = cls(list(pool), k=k, random_state=random_state, n_jobs=1, **extra)
            est.fit(x_val, y_val)
            accuracy = float(np.mean(est.predict(x_val) == y_val))
        for w in {str(w.message) for w in caught}:
            _log.debug("%s k=%d: %s", method, k, w)
        if best is None or accuracy > best[2]:
            best = (est, k, accuracy)
    assert best is not None
    return best
