"""The log-ratio follow-up's dynamic-selection protocol (Lassance & De Bock, arXiv 2603.23318;
code: rflassance/rob4discriminative, ``dynsel.py`` / ``functions_new.py``): per prediction,
the best or the second-best of three tuned models by robustness (RS-D, RS-I;
:class:`reliquant.compare.RobustnessSelector`), against the single best model and four
dynamic-selection methods of DESlib, on the benchmark tables, clean and with label noise.

Per data set ``(X, y)`` (classes coded ``0..K-1``), setting and split ``i``:

1. **Split** (:func:`selection_split`): the authors' two stratified calls,
   ``train_test_split(rows, train_size=t, random_state=i, stratify=y)`` and, on the rest,
   ``train_test_split(rest, train_size=v / (1 - t), random_state=i, stratify=y[rest])``
   with ``t = 0.7``, ``v = 0.15`` (config ``compare.selection.train_fraction`` and
   ``validation_fraction``): train / validation / test about 70 / 15 / 15 %.
2. **Label noise** (setting ``label_noise``; :func:`flip_labels`): the authors'
   ``introduce_label_noise(y_part, classes, 0.05, random_state=i)``, on the training part and
   then on the validation part, each call seeding numpy's legacy generator with the split
   index ``i``: ``m = int(f n)`` rows (``f = 0.05``, config ``label_noise``; ``n`` the part's
   size, in the order the split returned them) drawn by ``choice(n, m, replace=False)``, then
   for each drawn row in draw order a label drawn by ``choice`` among the sorted other
   classes of the whole table; the test labels are never touched.
3. **Models** (:func:`fit_protocol_model`): gradient boosting, random forest and XGBoost of
   the log-ratio protocol (:func:`reliquant.compare.reproduction.logratio_protocol.tune_model`:
   ``GridSearchCV(cv=5, scoring="neg_log_loss")`` over the config grids, refitted on the whole
   training part, the published ``random_state``). A grid of one point is fitted directly:
   GridSearchCV would refit that same estimator on the same data after its folds.
4. **Selection** on the validation part (its labels noisy in the ``label_noise`` setting):
   ``RobustnessSelector(models, rule="RS-D" | "RS-I", convention="reference").fit(X_val,
   y_val)``: the authors' ``dynsel.acc_dyn_sel`` index for index (``M1``, ``M2`` by
   validation accuracy, ties to the model listed last; the cut at a sorted position, RS-D's
   ``M2_res`` shifted by one and a cut at the largest ratio replaced by ``+inf``; RS-I scored
   from its position on and applied above its ratio; :mod:`reliquant.compare.selection`) on
   ``q = r(M2) / r(M1)`` of the log-ratio ``r`` (a zero second probability clamped to
   0.001); on the test part ``M2`` predicts where ``q > cut``. ``single_best`` is ``M1``.
5. **DESlib** (:func:`tune_deslib`): ``MCB``, ``KNORAU``, ``KNORAE`` and ``METADES`` with the
   three fitted models as the pool, fitted on the validation part (DSEL = the validation part
   with its labels); for each ``k`` in ``k_min..k_max`` (2..10) the method is fitted and
   scored on the validation part itself (resubstitution, as the authors' code); the smallest
   ``k`` of the highest validation accuracy is kept, and that fitted method predicts the test
   part. Every other argument is DESlib's default, but ``random_state`` (used by MCB's
   ``selection_method="diff"`` to break near-ties) is ``block_int_seed(seed, "deslib",
   dataset, setting, i, method) mod 2^32`` (numpy's legacy seeds are 32-bit) and the
   neighbour searches run on one thread, and META-DES's meta-classifier is
   :class:`OneClassSafeNB` (``MultinomialNB``, DESlib's default, that also answers when the
   pool was right on every validation row). DESlib 0.3.7 needs :func:`patch_deslib` with
   scikit-learn >= 1.6.

Metric: the test accuracy of every method (the three models, ``single_best``, ``RS-D``,
``RS-I``, ``MCB``, ``KNORA-U``, ``KNORA-E``, ``META-DES``). :func:`selection_summary`: per data
set, setting and method the mean and sd (``ddof = 1``) over splits, the paired difference to
``single_best`` with its 95 % t-interval, and the rank of the mean among the methods (1 =
best, ties averaged); :func:`mean_ranks`: the mean rank over data sets per setting.

Public API: :data:`SELECTION_SETTINGS`, :data:`BASE_MODELS`, :data:`DESLIB_METHODS`,
:data:`SELECTION_METHODS`, :data:`SELECTION_SCHEMA`, :data:`SUMMARY_SCHEMA`,
:data:`RANKS_SCHEMA`, :data:`TIMING_COLUMN`, :func:`patch_deslib`, :class:`FrozenModel`,
:class:`OneClassSafeNB`,
:func:`selection_split`, :func:`flip_count`, :func:`flip_labels`, :func:`fit_protocol_model`,
:func:`tune_deslib`, :func:`run_selection_split`, :func:`run_selection`,
:func:`selection_summary`, :func:`mean_ranks`, :func:`selection_markdown`,
:func:`selection_figure`, :func:`selection_report`, :class:`SelectionReport`,
:class:`SplitResult`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import ParameterGrid, train_test_split
from sklearn.naive_bayes import MultinomialNB

from reliquant.compare.reproduction.logratio_protocol import (
    PROTOCOL_MODELS,
    TIMING_COLUMN,
    protocol_estimator,
    tune_model,
)
from reliquant.compare.selection import RobustnessSelector
from reliquant.compare.verdict import paired_t
from reliquant.core.plotting import apply_style
from reliquant.core.seeding import block_int_seed

__all__ = [
    "BASE_MODELS",
    "DESLIB_METHODS",
    "RANKS_SCHEMA",
    "SELECTION_METHODS",
    "SELECTION_SCHEMA",
    "SELECTION_SETTINGS",
    "SUMMARY_SCHEMA",
    "TIMING_COLUMN",
    "FrozenModel",
    "OneClassSafeNB",
    "SelectionReport",
    "SplitResult",
    "fit_protocol_model",
    "flip_count",
    "flip_labels",
    "mean_ranks",
    "patch_deslib",
    "run_selection",
    "run_selection_split",
    "selection_figure",
    "selection_report",
    "selection_markdown",
    "selection_split",
    "selection_summary",
    "tune_deslib",
]

_log = logging.getLogger(__name__)

#: The two settings: clean labels, and 5 % of the training and validation labels moved.
SELECTION_SETTINGS = ("clean", "label_noise")
#: The three tuned models (the log-ratio protocol's, in its order).
BASE_MODELS = tuple(PROTOCOL_MODELS)
#: DESlib's dynamic-selection methods: name in our tables -> (module, class).
DESLIB_METHODS = {
    "MCB": ("deslib.dcs.mcb", "MCB"),
    "KNORA-U": ("deslib.des.knora_u", "KNORAU"),
    "KNORA-E": ("deslib.des.knora_e", "KNORAE"),
    "META-DES": ("deslib.des.meta_des", "METADES"),
}
#: Every method of the table, in table order.
SELECTION_METHODS = (*BASE_MODELS, "single_best", "RS-D", "RS-I", *DESLIB_METHODS)

#: One row per data set, setting, split and method: the test accuracy, the method's accuracy
#: on the validation part (the labels it was chosen on, noisy in ``label_noise``), the part
#: sizes and the labels moved; per method what it chose: ``first`` / ``second`` (``M1``,
#: ``M2``; ``single_best`` and RS-*), ``cut`` and ``second_share`` (the share of test
#: predictions given to ``M2``; RS-*), ``k`` (DESlib) and ``best_params`` (JSON; the models).
#: :func:`run_selection_split` adds :data:`TIMING_COLUMN` (seconds), which the workflow keeps
#: out of the parquet table so that two runs give the same table.
SELECTION_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("split", pa.int64(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("accuracy", pa.float64(), nullable=False),
        pa.field("validation_accuracy", pa.float64(), nullable=False),
        pa.field("n_train", pa.int64(), nullable=False),
        pa.field("n_validation", pa.int64(), nullable=False),
        pa.field("n_test", pa.int64(), nullable=False),
        pa.field("flipped_train", pa.int64(), nullable=False),
        pa.field("flipped_validation", pa.int64(), nullable=False),
        pa.field("first", pa.string(), nullable=True),
        pa.field("second", pa.string(), nullable=True),
        pa.field("cut", pa.float64(), nullable=True),
        pa.field("second_share", pa.float64(), nullable=True),
        pa.field("k", pa.int64(), nullable=True),
        pa.field("best_params", pa.string(), nullable=True),
    ]
)

#: Per data set, setting and method (:func:`selection_summary`).
SUMMARY_SCHEMA = pa.schema(
    [
        pa.field("dataset", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("n_splits", pa.int64(), nullable=False),
        pa.field("accuracy_mean", pa.float64(), nullable=False),
        pa.field("accuracy_sd", pa.float64(), nullable=False),
        pa.field("diff_mean", pa.float64(), nullable=False),
        pa.field("diff_low", pa.float64(), nullable=False),
        pa.field("diff_high", pa.float64(), nullable=False),
        pa.field("rank", pa.float64(), nullable=False),
    ]
)

#: Per setting and method (:func:`mean_ranks`).
RANKS_SCHEMA = pa.schema(
    [
        pa.field("setting", pa.string(), nullable=False),
        pa.field("method", pa.string(), nullable=False),
        pa.field("n_datasets", pa.int64(), nullable=False),
        pa.field("mean_rank", pa.float64(), nullable=False),
        pa.field("accuracy_mean", pa.float64(), nullable=False),
    ]
)


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


# ------------------------------------------------------------------- split, noise
def selection_split(
    y: np.ndarray, *, split: int, train_fraction: float, validation_fraction: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(train, validation, test)`` row indices of split ``split``: the authors' two stratified
    ``train_test_split`` calls (module docstring, step 1), on row indices (the same rows as on
    ``(X, y)``: the shuffle depends on the labels only)."""
    y = np.asarray(y)
    if not (0 < train_fraction < 1 and 0 < validation_fraction < 1 - train_fraction):
        raise ValueError(
            f"need 0 < train_fraction < 1 and 0 < validation_fraction < 1 - train_fraction; "
            f"got {train_fraction}, {validation_fraction}"
        )
    rows = np.arange(len(y))
    train, rest = train_test_split(rows, train_size=train_fraction, random_state=split, stratify=y)
    validation, test = train_test_split(
        rest,
        train_size=validation_fraction / (1 - train_fraction),
        random_state=split,
        stratify=y[rest],
    )
    return train, validation, test


def flip_count(n: int, fraction: float) -> int:
    """Labels moved in a part of ``n`` rows: ``int(fraction * n)`` (the authors' count,
    rounded down)."""
    return int(fraction * n)


def flip_labels(
    y: np.ndarray, n_classes: int, *, fraction: float, random_state: int
) -> tuple[np.ndarray, np.ndarray]:
    """A copy of ``y`` (codes ``0..n_classes-1``) with labels moved as the authors'
    ``introduce_label_noise(y, classes, fraction, random_state)`` moves them (module docstring,
    step 2): numpy's legacy generator seeded with ``random_state``, :func:`flip_count` rows by
    ``choice(n, m, replace=False)``, then per drawn row, in draw order, ``choice`` among the
    other classes in ascending order. Returns it and the moved rows (sorted)."""
    y = np.asarray(y)
    if n_classes < 2 or y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"labels must be codes 0..{n_classes - 1} of at least two classes")
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be in [0, 1]; got {fraction}")
    rs = np.random.RandomState(int(random_state))
    rows = rs.choice(y.size, flip_count(y.size, fraction), replace=False)
    classes = np.arange(n_classes)
    noisy = y.copy()
    for row in rows:  # one draw per row, in the authors' order
        noisy[row] = rs.choice(classes[classes != y[row]])
    return noisy, np.sort(rows)


# ------------------------------------------------------------------------- models
def fit_protocol_model(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    *,
    settings: Mapping[str, Any],
    cv_folds: int,
    n_jobs: int = 1,
) -> tuple[ClassifierMixin, dict]:
    """The model tuned as in the log-ratio protocol (:func:`reliquant.compare.reproduction.
    logratio_protocol.tune_model`), or, for a grid of one point, that estimator fitted on the
    training part directly (what GridSearchCV's refit would give); returns it and its
    parameters."""
    grid = ParameterGrid({k: list(v) for k, v in settings["grid"].items()})
    if len(grid) > 1:
        return tune_model(
            model, x_train, y_train, settings=settings, cv_folds=cv_folds, n_jobs=n_jobs
        )
    params = dict(grid[0])
    est = protocol_estimator(model, random_state=int(settings["random_state"]))
    return est.set_params(**params).fit(x_train, y_train), params


# ---------------------------------------------------------------------- one split
@dataclass
class SplitResult:
    """What :func:`run_selection_split` computed: ``rows`` (columns of
    :data:`SELECTION_SCHEMA` and :data:`TIMING_COLUMN`), the fitted models by name, the split's
    rows and the labels the models and methods were fitted on (noisy in ``label_noise``)."""

    rows: pd.DataFrame
    models: dict[str, ClassifierMixin]
    train: np.ndarray
    validation: np.ndarray
    test: np.ndarray
    y_train: np.ndarray
    y_validation: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)


def _check_data(x: Any, y: Any, dataset: str) -> tuple[np.ndarray, np.ndarray, int]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"{dataset}: X must be (n, d) and y (n,); got {x.shape}, {y.shape}")
    if not np.issubdtype(y.dtype, np.integer) or y.min() != 0:
        raise ValueError(f"{dataset}: the class must be integer codes 0..K-1; got {y.dtype}")
    n_classes = int(y.max()) + 1
    if np.unique(y).size != n_classes:
        raise ValueError(f"{dataset}: the class codes are not consecutive 0..{n_classes - 1}")
    return x, y, n_classes


def run_selection_split(
    x: np.ndarray,
    y: np.ndarray,
    *,
    dataset: str,
    setting: str,
    split: int,
    selection: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]],
    cv_folds: int,
    n_jobs: int = 1,
) -> SplitResult:
    """The protocol (module docstring) on one data set, setting and split. ``selection``: the
    keys ``train_fraction``, ``validation_fraction``, ``label_noise``, ``k_range`` and
    ``seed`` of config ``compare.selection``; ``models``: ``{name: {random_state, grid}}``
    for each of :data:`BASE_MODELS` (config ``compare.logratio_protocol.models``);
    ``n_jobs``: parallel grid-search fits (speed only)."""
    if setting not in SELECTION_SETTINGS:
        raise ValueError(f"unknown setting {setting!r}: expected one of {SELECTION_SETTINGS}")
    if list(models) != list(BASE_MODELS):
        raise ValueError(f"models must be {list(BASE_MODELS)} in that order; got {list(models)}")
    x, y, n_classes = _check_data(x, y, dataset)
    seed = int(selection["seed"])
    train, val, test = selection_split(
        y,
        split=split,
        train_fraction=float(selection["train_fraction"]),
        validation_fraction=float(selection["validation_fraction"]),
    )
    y_train, y_val, y_test = y[train], y[val], y[test]
    flipped = {"train": 0, "validation": 0}
    if setting == "label_noise":
        fraction = float(selection["label_noise"])
        # the authors' seed for both parts: the split index
        y_train, rows_t = flip_labels(y_train, n_classes, fraction=fraction, random_state=split)
        y_val, rows_v = flip_labels(y_val, n_classes, fraction=fraction, random_state=split)
        flipped = {"train": len(rows_t), "validation": len(rows_v)}
    x_val, x_test = x[val], x[test]
    base = {
        "dataset": dataset,
        "setting": setting,
        "split": int(split),
        "n_train": len(train),
        "n_validation": len(val),
        "n_test": len(test),
        "flipped_train": flipped["train"],
        "flipped_validation": flipped["validation"],
    }
    empty = {"first": None, "second": None, "cut": None, "second_share": None, "k": None,
             "best_params": None}  # fmt: skip
    rows = []

    def add(method: str, pred: np.ndarray, val_acc: float, seconds: float, **what: Any) -> None:
        accuracy = float(np.mean(np.asarray(pred) == y_test))
        rows.append({**base, "method": method, "accuracy": accuracy,
                     "validation_accuracy": float(val_acc), **empty, **what,
                     TIMING_COLUMN: seconds})  # fmt: skip

    fitted, frozen = {}, {}
    for name in BASE_MODELS:
        start = time.perf_counter()
        fitted[name], params = fit_protocol_model(
            name, x[train], y_train, settings=models[name], cv_folds=cv_folds, n_jobs=n_jobs
        )
        frozen[name] = FrozenModel(fitted[name])
        val_acc = float(np.mean(frozen[name].predict(x_val) == y_val))
        add(name, frozen[name].predict(x_test), val_acc, time.perf_counter() - start,
            best_params=json.dumps(params, sort_keys=True))  # fmt: skip
    pool = [frozen[name] for name in BASE_MODELS]

    start = time.perf_counter()
    selectors = {
        rule: RobustnessSelector(pool, rule=rule, convention="reference").fit(x_val, y_val)
        for rule in ("RS-D", "RS-I")
    }
    seconds = time.perf_counter() - start  # counted on the single_best row
    sel = selectors["RS-D"]
    add("single_best", pool[sel.first_].predict(x_test), sel.validation_accuracies_[sel.first_],
        seconds, first=BASE_MODELS[sel.first_])  # fmt: skip
    for rule, sel in selectors.items():
        add(rule, sel.predict(x_test), sel.validation_accuracy_, 0.0,
            first=BASE_MODELS[sel.first_], second=BASE_MODELS[sel.second_], cut=float(sel.cut_),
            second_share=float(np.mean(sel.use_second(x_test))))  # fmt: skip

    for method in DESLIB_METHODS:
        start = time.perf_counter()
        est, k, val_acc = tune_deslib(
            method,
            pool,
            x_val,
            y_val,
            k_range=selection["k_range"],
            random_state=block_int_seed(seed, "deslib", dataset, setting, split, method) % 2**32,
        )
        add(method, est.predict(x_test), val_acc, time.perf_counter() - start, k=k)
    frame = pd.DataFrame(rows, columns=[*SELECTION_SCHEMA.names, TIMING_COLUMN])
    return SplitResult(frame, fitted, train, val, test, y_train, y_val, {"selectors": selectors})


def run_selection(
    tables: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    settings: Sequence[str],
    n_splits: int,
    selection: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]],
    cv_folds: int,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """:func:`run_selection_split` for every data set of ``tables`` (name -> ``(X, y)``),
    setting and split ``0..n_splits-1``, rows concatenated in that order."""
    frames = []
    for dataset, (x, y) in tables.items():
        for setting in settings:
            for split in range(n_splits):
                result = run_selection_split(
                    x, y, dataset=dataset, setting=setting, split=split, selection=selection,
                    models=models, cv_folds=cv_folds, n_jobs=n_jobs,
                )  # fmt: skip
                frames.append(result.rows)
                _log.info(
                    "%s %s split %d: %.1f s", dataset, setting, split,
                    result.rows[TIMING_COLUMN].sum(),
                )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------- summaries
def _check_rows(rows: pd.DataFrame) -> None:
    missing = [c for c in ("dataset", "setting", "split", "method", "accuracy") if c not in rows]
    if missing:
        raise ValueError(f"the per-split table lacks the columns {missing}")
    if rows.duplicated(["dataset", "setting", "split", "method"]).any():
        raise ValueError("the per-split table holds a (dataset, setting, split, method) twice")
    counts = rows.groupby(["dataset", "setting", "split"])["method"].nunique()
    if (counts != len(set(rows["method"]))).any():
        raise ValueError("every split must hold the same methods")


def selection_summary(rows: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    """Per data set, setting and method (table order): ``n_splits``, ``accuracy_mean`` and
    ``accuracy_sd`` (``ddof = 1``; NaN for one split), ``diff_mean`` = mean over splits of
    ``acc(method) - acc(single_best)`` with the ``level`` t-interval
    ``diff_mean -+ t_{level, S-1} sd(diff) / sqrt(S)`` (``diff_low``, ``diff_high``;
    :func:`reliquant.compare.paired_t`), and
    ``rank``: the rank of ``accuracy_mean`` among the methods of the data set and setting
    (1 = most accurate, ties share the mean of their ranks)."""
    _check_rows(rows)
    base = rows[rows["method"] == "single_best"].set_index(["dataset", "setting", "split"])
    if base.empty:
        raise ValueError("the per-split table has no single_best rows to compare against")
    out = []
    for (dataset, setting, method), group in rows.groupby(
        ["dataset", "setting", "method"], sort=False
    ):
        acc = group["accuracy"].to_numpy(dtype=np.float64)
        ref = base.loc[[(dataset, setting, s) for s in group["split"]], "accuracy"].to_numpy()
        t = paired_t(acc - ref, level)  # NaN interval for one split
        n = len(acc)
        out.append(
            {
                "dataset": dataset,
                "setting": setting,
                "method": method,
                "n_splits": n,
                "accuracy_mean": float(acc.mean()),
                "accuracy_sd": float(acc.std(ddof=1)) if n > 1 else math.nan,
                "diff_mean": t["diff_mean"],
                "diff_low": t["ci_low"],
                "diff_high": t["ci_high"],
            }
        )
    summary = pd.DataFrame(out)
    summary["rank"] = summary.groupby(["dataset", "setting"])["accuracy_mean"].rank(
        ascending=False, method="average"
    )
    return summary[SUMMARY_SCHEMA.names]


def mean_ranks(summary: pd.DataFrame) -> pd.DataFrame:
    """Per setting and method (table order): the mean over data sets of the method's rank
    (:func:`selection_summary`) and of its mean accuracy; every data set must hold every
    method."""
    per = summary.groupby(["setting", "method"], sort=False)
    for setting, part in summary.groupby("setting"):
        counts = part.groupby("method")["dataset"].nunique()
        if (counts != part["dataset"].nunique()).any():
            raise ValueError(f"setting {setting}: every data set must hold every method")
    out = per.agg(
        n_datasets=("dataset", "nunique"),
        mean_rank=("rank", "mean"),
        accuracy_mean=("accuracy_mean", "mean"),
    ).reset_index()
    return out[RANKS_SCHEMA.names]


# ---------------------------------------------------------------------- reporting
_METHOD_TITLES = {
    "gradient_boosting": "GB",
    "random_forest": "RF",
    "xgboost": "XGB",
    "single_best": "single best",
}


def selection_markdown(
    summary: pd.DataFrame,
    ranks: pd.DataFrame,
    *,
    n_splits: int,
    runtime_s: float | None = None,
    n_jobs: int | None = None,
) -> str:
    """Per setting, a markdown table: a row per data set, a column per method with the mean
    test accuracy over splits (sd in brackets), then the mean rank over data sets; and a
    sentence on the run (its runtime, when given, is the jobs' summed seconds)."""
    methods = list(dict.fromkeys(summary["method"]))
    names = [_METHOD_TITLES.get(m, m) for m in methods]
    datasets = list(dict.fromkeys(summary["dataset"]))
    text = [
        f"Test accuracy, mean over {n_splits} stratified 70/15/15 splits (sd over splits, "
        f"ddof = 1) on {len(datasets)} data set(s); rank 1 = most accurate, ties averaged."
    ]
    if runtime_s is not None:
        text[0] += f" Run time {runtime_s / 60:.1f} minutes" + (
            f" ({n_jobs} parallel fits per job; the jobs' seconds summed)." if n_jobs else "."
        )
    for setting in dict.fromkeys(summary["setting"]):
        part = summary[summary["setting"] == setting].set_index(["dataset", "method"])
        text += ["", f"**{setting.replace('_', ' ')}**", "",
                 "| data set | " + " | ".join(names) + " |",
                 "|---|" + "---:|" * len(names)]  # fmt: skip
        for d in datasets:
            cells = []
            for m in methods:
                r = part.loc[(d, m)]
                sd = "" if math.isnan(r["accuracy_sd"]) else f" ({r['accuracy_sd']:.4f})"
                cells.append(f"{r['accuracy_mean']:.4f}{sd}")
            text.append(f"| {d} | " + " | ".join(cells) + " |")
        rk = ranks[ranks["setting"] == setting].set_index("method")["mean_rank"]
        text.append("| **mean rank** | " + " | ".join(f"{rk[m]:.2f}" for m in methods) + " |")
    return "\n".join(text) + "\n"


#: The methods the figure compares with the single best model.
_FIGURE_METHODS = ("RS-D", "RS-I", *DESLIB_METHODS)


def selection_figure(summary: pd.DataFrame) -> Figure:
    """Paired differences to the single best model: a panel per setting, a row per data set,
    per method of RS-D, RS-I and DESlib's four the mean over splits of
    ``acc(method) - acc(single_best)`` with its 95 % t-interval (:func:`selection_summary`)."""
    apply_style()
    settings = list(dict.fromkeys(summary["setting"]))
    datasets = list(dict.fromkeys(summary["dataset"]))
    methods = [m for m in _FIGURE_METHODS if m in set(summary["method"])]
    if not settings or not methods:
        raise ValueError("the summary holds no method to compare with single_best")
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings) + 1.2,
                             1.2 + 0.42 * len(datasets) * (1 + len(methods) / 8)),
                             sharey=True, squeeze=False)  # fmt: skip
    offsets = np.linspace(-0.3, 0.3, len(methods))
    for ax, setting in zip(axes[0], settings, strict=True):
        part = summary[summary["setting"] == setting].set_index(["dataset", "method"])
        for j, m in enumerate(methods):
            for i, d in enumerate(datasets):
                r = part.loc[(d, m)]
                yv = len(datasets) - 1 - i - offsets[j]  # the first method on top
                if np.isfinite(r["diff_low"]):
                    ax.plot(
                        [r["diff_low"], r["diff_high"]], [yv, yv], "-", color=colours(j), lw=1.2
                    )
                ax.plot([r["diff_mean"]], [yv], "o", color=colours(j), ms=3.5,
                        label=m if i == 0 else None)  # fmt: skip
        ax.axvline(0.0, color="grey", lw=0.8)
        ax.set_title(setting.replace("_", " "), fontsize=9)
        ax.set_xlabel("accuracy - single best's (mean, 95 % t-interval)", fontsize=8)
    axes[0][0].set_yticks(range(len(datasets))[::-1], datasets, fontsize=8)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.suptitle("Dynamic selection against the single best model (right: better)", fontsize=9)
    fig.tight_layout()
    return fig


@dataclass
class SelectionReport:
    """What the workflow writes from the per-split rows: the :func:`selection_summary`, the
    :func:`mean_ranks`, their markdown (:func:`selection_markdown`) and the figure
    (:func:`selection_figure`)."""

    summary: pd.DataFrame
    ranks: pd.DataFrame
    markdown: str
    figure: Figure


def selection_report(
    rows: pd.DataFrame, *, runtime_s: float | None = None, n_jobs: int | None = None
) -> SelectionReport:
    """The summary, mean ranks, markdown and figure of the per-split ``rows`` (columns of
    :data:`SELECTION_SCHEMA`); every data set and setting must hold the same splits."""
    splits = rows.groupby(["dataset", "setting"])["split"].nunique()
    if splits.nunique() != 1:
        raise ValueError(
            f"the data sets and settings hold different numbers of splits: {splits.to_dict()}"
        )
    summary = selection_summary(rows)
    ranks = mean_ranks(summary)
    text = selection_markdown(
        summary, ranks, n_splits=int(splits.iloc[0]), runtime_s=runtime_s, n_jobs=n_jobs
    )
    return SelectionReport(summary, ranks, text, selection_figure(summary))
