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

DESlib's side lives in :mod:`~reliquant.compare.reproduction.deslib_pool`, the summary over
splits, its markdown and figure in :mod:`~reliquant.compare.reproduction.selection_summary`;
their public names are importable from here too.

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

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from sklearn.base import ClassifierMixin
from sklearn.model_selection import ParameterGrid, train_test_split

from reliquant.compare.reproduction.deslib_pool import (
    DESLIB_METHODS,
    FrozenModel,
    OneClassSafeNB,
    patch_deslib,
    tune_deslib,
)
from reliquant.compare.reproduction.logratio_protocol import (
    PROTOCOL_MODELS,
    TIMING_COLUMN,
    protocol_estimator,
    tune_model,
)
from reliquant.compare.reproduction.selection_summary import (
    RANKS_SCHEMA,
    SUMMARY_SCHEMA,
    SelectionReport,
    mean_ranks,
    selection_figure,
    selection_markdown,
    selection_report,
    selection_summary,
)
from reliquant.compare.selection import RobustnessSelector
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
