"""Tabular data sets of the compare topic: Pima, the NBC paper's synthetic cells, and a
scikit-learn table discretised for a Naive Bayes.

**Pima** (:func:`pima_predictions`). The trees topic's Pima table, filtered as paper 002
Section 5.4 does (724 subjects, 7 features; :func:`reliquant.trees.reproduction.data.filter_pima`),
split at random (``test_fraction`` held out), an XGBoost classifier fitted here; each of
``n_splits`` splits draws its own split, model, noise and robustness draws. Cases:
``clean`` (the held-out subjects) and ``noise`` (the same subjects with measurement noise
``N(0, (shift_scale s_i)^2)`` added to feature ``i``, ``s_i`` its training standard
deviation: a covariate shift). Scores: probability scores and the tree robustness
(:func:`reliquant.compare.tree_robustness`, deterministic mode: ``max_boxes`` certified boxes
then at most ``max_draws`` draws, so the table depends on the seed only) under Gaussian noise
of standard deviation ``s_i / snr`` (paper 002's "signal-to-noise ratio of 10/1", read as a
ratio of amplitudes as the trees topic does by default).

**NBC synthetic cells** (:func:`nbc_cell_predictions`). The nbc topic's per-instance metrics
of the configured (N_train, gamma) cells, **every** training set of each (a split each, the
same sets as the nbc topic's claims check): the test instances from P_test, the NBC trained
on N_train instances from ``(1 - gamma) P_test + gamma P_shift`` (a training-data shift;
gamma = 0 is the clean condition). Every training set of a cell shares the cell's test set,
so the variation over splits is that of the training sets. The metrics are stored oriented
higher = more reliable by exact negation: ``negative_u_m = -u_m``, ``negative_u_H = -u_H``,
``negative_u_a/t/e = -u_a/t/e`` (bits, as the nbc topic), ``eps_glob``, ``eps_loc``.

**scikit-learn table** (:func:`table_predictions`). ``load_breast_cancer`` (569 tumours, 30
features, 2 classes) or ``load_wine`` (178 wines, 13 features, 3 classes), bundled with
scikit-learn. Split at random (each of ``n_splits`` splits its own); every feature discretised into ``n_bins`` bins at the
training set's quantiles (codes 0..n_bins-1, all declared to the NBC); paper 000's NBC
(:func:`reliquant.nbc.fit_table`, alpha by cross-validation). Cases: ``clean`` and
``value noise``: the held-out rows with each feature value replaced, with probability
``flip``, by a bin drawn uniformly (the shift paper 000 builds its test distribution with,
``(1 - beta) P_fix + beta P_rand``, applied per value). Scores: probability scores,
``eps_glob``, ``eps_loc`` and the bootstrap ensemble's ``u_a``, ``u_t``, ``u_e``
(:func:`reliquant.nbc.robustness` with ``bootstrap``).

**Benchmark sets** (:func:`benchmark_predictions`). A tabular benchmark set of
``data/raw/benchmarks`` (rule ``data_benchmark``: features float64 in CSV order, ``class``
codes ``0..K-1``), data set ``bench_<name>``, configured in ``compare.benchmarks.<name>``.
Each of ``n_splits`` splits first draws ``max_rows`` rows without replacement (all rows when
``max_rows`` is null or at least the table's), then builds its clean and shifted predictions
by the set's ``shift``:

* ``quantile``: the covariate shift of :func:`reliquant.compare.reproduction.shift.quantile_shift_split`:
  within each class, the rows below the class's ``quantile`` of feature ``f`` are the source
  (training, and ``test_fraction`` of each class as the clean test), the rows above it the
  shifted test (case ``covariate shift``). ``f`` is the configured ``feature`` (a column
  name) or, when null, the feature most correlated with the first principal component of the
  **whole** table (:func:`reliquant.compare.reproduction.shift.principal_feature`, labels
  unused), so every split shifts along the same feature.
* ``noise``: a random split (``test_fraction`` held out); the held-out rows clean and with
  additive noise ``N(0, (scale s_j)^2)`` on feature ``j``, ``s_j`` its training standard
  deviation (:func:`reliquant.compare.reproduction.shift.gaussian_noise_shift`; case
  ``noise``, the same rows as the clean case).

The model (``model``: ``{kind: random_forest | xgboost, ...}``,
:func:`reliquant.trees.reproduction.models.fit_model`, one thread) is fitted per split with
``block_int_seed(seed, "bench_model", name, split)``; every class must be in its training
rows. Scores: the probability scores of ``predict_proba`` (centroids from the correct
training predictions), the prediction its argmax, and the black-box Monte Carlo robustness
(:func:`reliquant.compare.reproduction.mnist.mc_grid`) of that argmax under
``N(0, v s_j^2)`` per feature, one column ``mc_robustness@<v>`` per ``v`` of
``robustness.variances`` (in units of each feature's training variance; the evaluation
picks ``v`` on the validation parts), ``robustness.n_draws`` draws per prediction.

Every table but the NBC cells' also gets the failure-detection comparators
(:mod:`reliquant.compare.reproduction.comparators`) after these scores.

Public API: :data:`TABLES`, :func:`pima_predictions`, :func:`nbc_cell_predictions`,
:func:`nbc_case`, :func:`discretise`, :func:`table_predictions`,
:func:`benchmark_predictions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from reliquant.compare import fit_centroids, probability_scores, tree_robustness
from reliquant.compare.reproduction.comparators import comparator_columns
from reliquant.compare.reproduction.mnist import mc_grid
from reliquant.compare.reproduction.settings import TABLE_ROWS, split_sizes
from reliquant.compare.reproduction.shift import (
    gaussian_noise_shift,
    principal_feature,
    quantile_shift_split,
)
from reliquant.compare.reproduction.tables import benchmark_dataset, prediction_frame
from reliquant.core.seeding import block_int_seed, block_rng

__all__ = [
    "TABLES",
    "benchmark_predictions",
    "discretise",
    "nbc_case",
    "nbc_cell_predictions",
    "pima_predictions",
    "table_predictions",
]

#: Tables bundled with scikit-learn that :func:`table_predictions` reads.
TABLES = tuple(TABLE_ROWS)
_LN2 = float(np.log(2.0))


def _split(n: int, test_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction!r}")
    perm = rng.permutation(n)
    _, n_test = split_sizes(n, test_fraction)
    if not 0 < n_test < n:
        raise ValueError(f"test_fraction {test_fraction} leaves no training or test row of {n}")
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def pima_predictions(
    frame: pd.DataFrame, *, exp: Mapping[str, Any], seed: int, n_splits: int = 1
) -> pd.DataFrame:
    """Pima's per-prediction table (module docstring), ``n_splits`` independent splits, each
    its own random split (``block_rng(seed, "pima_split", s)``), XGBoost fit, noise and
    robustness draws; ``exp``: the ``compare.pima`` section (``model``, ``test_fraction``,
    ``shift_scale``, ``snr``, ``max_boxes``, ``max_draws``, ``half_width``)."""
    from reliquant.trees.reproduction.data import PIMA_FEATURES, PIMA_TARGET, filter_pima

    data = filter_pima(frame, expected_rows=None)
    X = data[list(PIMA_FEATURES)].to_numpy(dtype=np.float64)
    y = data[PIMA_TARGET].to_numpy(dtype=np.int64)
    _check_splits(n_splits)
    return pd.concat(
        [_pima_split(X, y, exp=exp, seed=seed, split=s) for s in range(n_splits)],
        ignore_index=True,
    )


def _check_splits(n_splits: int) -> None:
    if isinstance(n_splits, bool) or not isinstance(n_splits, int | np.integer) or n_splits < 1:
        raise ValueError(f"n_splits must be an integer >= 1; got {n_splits!r}")


def _pima_split(
    X: np.ndarray, y: np.ndarray, *, exp: Mapping[str, Any], seed: int, split: int
) -> pd.DataFrame:
    from xgboost import XGBClassifier

    from reliquant.trees import Gaussian

    train, test = _split(len(y), exp["test_fraction"], block_rng(seed, "pima_split", split))
    model = XGBClassifier(
        **exp["model"], random_state=block_int_seed(seed, "pima_model", split) % 2**31, n_jobs=1
    )
    sd = X[train].std(axis=0, ddof=1)
    noise = Gaussian(_noise_variance(sd, exp["snr"]))
    model.fit(X[train], y[train])
    shifted = X[test] + block_rng(seed, "pima_shift", split).normal(
        0.0, exp["shift_scale"] * sd, size=X[test].shape
    )
    centroids = fit_centroids(model.predict_proba(X[train]), y[train], seed=seed)
    parts = []
    for case, x in (("clean", X[test]), ("noise", shifted)):
        proba = model.predict_proba(x)
        scores = probability_scores(proba, centroids=centroids)
        pred = scores.pop("prediction").to_numpy()
        extra = comparator_columns(
            proba, pred, model=model, x=x, x_train=X[train], y_train=y[train]
        )
        rob = tree_robustness(
            model, x, noise, seed=block_int_seed(seed, "pima_robustness", case, split),
            max_boxes=int(exp["max_boxes"]), max_draws=int(exp["max_draws"]),
            half_width=float(exp["half_width"]), return_frame=True,
        )  # fmt: skip
        if not np.array_equal(rob["label"].to_numpy(dtype=np.int64), pred):
            raise ValueError("the robustness engine's labels differ from predict_proba's argmax")
        parts.append(
            prediction_frame(
                dataset="pima_xgb",
                case=case,
                condition="clean" if case == "clean" else "shifted",
                item=test,
                label=y[test],
                prediction=pred,
                scores={"tree_robustness": rob["estimate"].to_numpy(), **scores, **extra},
                split=split,
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)


def _noise_variance(sd: np.ndarray, snr: float) -> np.ndarray:
    """The robustness noise variance ``(sd / snr)^2`` per feature; a ValueError naming
    ``compare.pima.snr`` when it leaves floating point (infinite, or 0 for a feature that
    varies)."""
    with np.errstate(over="ignore", under="ignore"):
        variance = (sd / snr) ** 2
    if not np.all(np.isfinite(variance)) or np.any((variance == 0) & (sd > 0)):
        raise ValueError(
            f"compare.pima.snr = {snr!r} gives noise variances (sd / snr)^2 = {variance.tolist()} "
            f"for feature sds {sd.tolist()}: each must be finite and above 0"
        )
    return variance


def nbc_case(n_train: int, gamma: float) -> str:
    """The case name of an NBC cell: ``"N=25, gamma=0.4"``."""
    return f"N={int(n_train)}, gamma={float(gamma):g}"


def nbc_cell_predictions(cells: Mapping[tuple[int, float], pd.DataFrame]) -> pd.DataFrame:
    """The NBC cells' per-prediction table (module docstring): ``cells`` maps (N_train,
    gamma) to the nbc topic's cell table (``reliquant.nbc.reproduction.experiment.CELL_SCHEMA``).
    Every training set of every cell is a split (``split = train_set``): the same sets, and so
    the same AU-ARCs, as the nbc topic's claims check. The metrics are negated exactly (no
    rescaling), so every ranking is the nbc topic's."""
    parts = []
    for (n_train, gamma), frame in cells.items():
        if frame.empty:
            raise ValueError(f"the nbc cell {nbc_case(n_train, gamma)} has no rows")
        rows = frame.sort_values(["train_set", "test_index"], kind="stable")
        scores = {
            "eps_glob": rows["eps_glob"].to_numpy(),
            "eps_loc": rows["eps_loc"].to_numpy(),
            **{f"negative_{u}": -rows[u].to_numpy() for u in ("u_m", "u_H", "u_a", "u_t", "u_e")},
        }
        parts.append(
            prediction_frame(
                dataset="nbc_synthetic",
                case=nbc_case(n_train, gamma),
                condition="shifted" if gamma > 0 else "clean",
                item=rows["test_index"],
                label=rows["y_true"],
                prediction=rows["y_pred"],
                scores=scores,
                split=rows["train_set"].to_numpy(),
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)


def discretise(train: np.ndarray, X: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin codes ``0..n_bins-1`` of every column of ``X`` at the quantiles ``k / n_bins``
    (``k = 1..n_bins-1``) of the same column of ``train`` (right-closed: a value equal to an
    edge goes to the upper bin; equal edges leave a bin empty)."""
    if n_bins < 2:
        raise ValueError(f"n_bins must be >= 2; got {n_bins}")
    q = np.arange(1, n_bins) / n_bins
    edges = np.quantile(np.asarray(train, dtype=np.float64), q, axis=0)  # (n_bins - 1, d)
    X = np.asarray(X, dtype=np.float64)
    return np.stack(
        [np.searchsorted(edges[:, j], X[:, j], side="right") for j in range(X.shape[1])], axis=1
    ).astype(np.int64)


def _load_table(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    from sklearn import datasets

    if name not in TABLES:
        raise ValueError(f"compare.table.name must be one of {TABLES}; got {name!r}")
    bunch = getattr(datasets, f"load_{name}")()
    if bunch.data.shape[0] != TABLE_ROWS[name]:  # the configuration was checked against it
        raise ValueError(
            f"scikit-learn's {name} table has {bunch.data.shape[0]} rows; TABLE_ROWS says "
            f"{TABLE_ROWS[name]}"
        )
    return bunch.data, bunch.target.astype(np.int64), [f"f{j}" for j in range(bunch.data.shape[1])]


def table_predictions(*, exp: Mapping[str, Any], seed: int, n_splits: int = 1) -> pd.DataFrame:
    """The scikit-learn table's per-prediction table (module docstring), ``n_splits``
    independent splits, each its own random split, binning, NBC fit (alpha by CV), value
    noise and bootstrap ensemble; ``exp``: the ``compare.table`` section (``name``,
    ``test_fraction``, ``n_bins``, ``flip``, ``alphas``, ``cv_folds``, ``n_bootstrap``)."""
    raw, y, names = _load_table(exp["name"])
    _check_splits(n_splits)
    return pd.concat(
        [_table_split(raw, y, names, exp=exp, seed=seed, split=s) for s in range(n_splits)],
        ignore_index=True,
    )


def _table_split(
    raw: np.ndarray,
    y: np.ndarray,
    names: list[str],
    *,
    exp: Mapping[str, Any],
    seed: int,
    split: int,
) -> pd.DataFrame:
    from reliquant.nbc import fit_table, log_joint, robustness

    train, test = _split(len(y), exp["test_fraction"], block_rng(seed, "table_split", split))
    n_bins = int(exp["n_bins"])
    codes = discretise(raw[train], raw, n_bins)
    flip = block_rng(seed, "table_shift", split).random(codes[test].shape) < exp["flip"]
    noisy = np.where(
        flip, block_rng(seed, "table_shift_values", split).integers(0, n_bins, codes[test].shape),
        codes[test],
    )  # fmt: skip
    frame = pd.DataFrame(codes[train], columns=names).assign(target=y[train])
    fitted = fit_table(
        frame, "target", alphas=exp["alphas"], cv_folds=int(exp["cv_folds"]),
        seed=block_int_seed(seed, "table_cv", split),
        categories={**{c: list(range(n_bins)) for c in names}, "target": sorted(set(y))},
    )  # fmt: skip
    classes = np.asarray(fitted.classes)

    def proba_of(c: np.ndarray) -> np.ndarray:
        lj = log_joint(fitted.model, fitted.encoder.transform(pd.DataFrame(c, columns=names)))
        p = np.exp(lj - lj.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    label_idx = np.searchsorted(classes, y)
    centroids = fit_centroids(proba_of(codes[train]), label_idx[train], seed=seed)
    parts = []
    for case, c in (("clean", codes[test]), ("value noise", noisy)):
        proba = proba_of(c)
        scores = probability_scores(proba, centroids=centroids)
        pred = scores.pop("prediction").to_numpy()
        comparators = comparator_columns(
            proba, pred, x=c, x_train=codes[train], y_train=label_idx[train]
        )
        rob = robustness(
            fitted, pd.DataFrame(c, columns=names), bootstrap=int(exp["n_bootstrap"]),
            seed=block_int_seed(seed, "table_bootstrap", case, split),
        )  # fmt: skip
        if not np.array_equal(np.searchsorted(classes, rob["prediction"].to_numpy()), pred):
            raise ValueError("the NBC's robustness predictions differ from its probabilities'")
        extra = {
            "eps_glob": rob["eps_glob"].to_numpy(),
            "eps_loc": rob["eps_loc"].to_numpy(),
            **{f"negative_{u}": -_LN2 * rob[u].to_numpy() for u in ("u_a", "u_t", "u_e")},
        }
        parts.append(
            prediction_frame(
                dataset="table_nbc",
                case=case,
                condition="clean" if case == "clean" else "shifted",
                item=test,
                label=label_idx[test],
                prediction=pred,
                scores={**extra, **scores, **comparators},
                split=split,
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)


#: Case name of the shifted predictions of each benchmark shift kind.
_BENCH_CASES = {"quantile": "covariate shift", "noise": "noise"}


def benchmark_predictions(
    frame: pd.DataFrame, *, name: str, exp: Mapping[str, Any], seed: int
) -> pd.DataFrame:
    """The per-prediction table of benchmark set ``name`` (module docstring), data set
    ``bench_<name>``: ``exp["n_splits"]`` splits, each its own rows, split, model, shift and
    Monte Carlo draws; ``frame``: the set's table (features, then ``class`` codes 0..K-1);
    ``exp``: its ``compare.benchmarks.<name>`` section (``model``, ``test_fraction``,
    ``max_rows``, ``shift``, ``robustness``, ``n_splits``). Errors name the config key."""
    key = f"compare.benchmarks.{name}"
    dataset = benchmark_dataset(name)
    if list(frame.columns[-1:]) != ["class"] or frame.shape[1] < 2:
        raise ValueError(
            f"{key}: the table must end with its 'class' column; got {list(frame.columns)}"
        )
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    y = frame["class"].to_numpy(dtype=np.int64)
    shift = exp["shift"]
    if shift["kind"] not in _BENCH_CASES:
        raise ValueError(
            f"{key}.shift.kind must be one of {list(_BENCH_CASES)}; got {shift['kind']!r}"
        )
    feature = None
    if shift["kind"] == "quantile":
        columns = [str(c) for c in frame.columns[:-1]]
        if shift.get("feature") is None:
            feature = principal_feature(X)
        elif shift["feature"] in columns:
            feature = columns.index(shift["feature"])
        else:
            raise ValueError(
                f"{key}.shift.feature = {shift['feature']!r} is not a feature of {name} "
                f"({', '.join(columns)})"
            )
    _check_splits(exp["n_splits"])
    return pd.concat(
        [
            _benchmark_split(
                X, y, name=name, dataset=dataset, exp=exp, seed=seed, split=s, feature=feature
            )  # fmt: skip
            for s in range(exp["n_splits"])
        ],
        ignore_index=True,
    )


def _benchmark_rows(n: int, max_rows: int | None, rng: np.random.Generator) -> np.ndarray:
    """``max_rows`` of ``n`` row indices drawn without replacement (sorted); all when
    ``max_rows`` is None or at least ``n``."""
    if max_rows is None or max_rows >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=int(max_rows), replace=False))


def _benchmark_split(
    X: np.ndarray,
    y: np.ndarray,
    *,
    name: str,
    dataset: str,
    exp: Mapping[str, Any],
    seed: int,
    split: int,
    feature: int | None,
) -> pd.DataFrame:
    from reliquant.trees.reproduction.models import fit_model

    key = f"compare.benchmarks.{name}"
    rows = _benchmark_rows(len(y), exp["max_rows"], block_rng(seed, "bench_rows", name, split))
    x, labels = X[rows], y[rows]
    shift = exp["shift"]
    if shift["kind"] == "quantile":
        parts = quantile_shift_split(
            x, labels, quantile=float(shift["quantile"]), validation_fraction=0.0,
            test_fraction=float(exp["test_fraction"]), seed=seed, key=("bench", name, split),
            feature=feature,
        )  # fmt: skip
        train, test, shifted = parts.train, parts.clean_test, parts.shifted_test
    else:
        train, test = _split(
            len(labels), exp["test_fraction"], block_rng(seed, "bench_split", name, split)
        )
        shifted = test
    missing = sorted(set(range(int(y.max()) + 1)) - set(labels[train].tolist()))
    if missing:
        raise ValueError(
            f"{key}: split {split}'s {train.size} training rows hold no row of class(es) "
            f"{missing}; raise {key}.max_rows or lower {key}.test_fraction"
        )
    if shift["kind"] == "quantile":
        x_shifted = x[shifted]
    else:
        x_shifted = gaussian_noise_shift(
            x[test], x[train], scale=float(shift["scale"]), seed=seed, key=("bench", name, split)
        )
    cases = [("clean", test, x[test]), (_BENCH_CASES[shift["kind"]], shifted, x_shifted)]
    model = fit_model(
        exp["model"], x[train], labels[train],
        seed=block_int_seed(seed, "bench_model", name, split), key=f"{key}.model",
    )  # fmt: skip

    def predict(batch: np.ndarray) -> np.ndarray:
        return model.predict_proba(batch).argmax(axis=1)

    centroids = fit_centroids(model.predict_proba(x[train]), labels[train], seed=seed)
    variance = x[train].var(axis=0, ddof=1)
    out = []
    for case, idx, values in cases:
        proba = model.predict_proba(values)
        scores = probability_scores(proba, centroids=centroids)
        pred = scores.pop("prediction").to_numpy()
        extra = comparator_columns(
            proba, pred, model=model, x=values, x_train=x[train], y_train=labels[train]
        )
        mc = mc_grid(
            predict, values, pred, exp=exp["robustness"], unit=variance,
            seed=block_int_seed(seed, "bench_robustness", name, case, split),
        )  # fmt: skip
        out.append(
            prediction_frame(
                dataset=dataset,
                case=case,
                condition="clean" if case == "clean" else "shifted",
                item=rows[idx],
                label=labels[idx],
                prediction=pred,
                scores={**mc, **scores, **extra},
                split=split,
            )
        )
    return pd.concat(out, ignore_index=True)
