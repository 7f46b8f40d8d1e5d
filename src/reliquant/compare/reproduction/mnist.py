"""MNIST in the compare topic: the subsample, the CNN's scores and the tree models' scores.

**Subsample** (:func:`mnist_sample`). The clean case holds ``n_clean`` test images drawn
(without replacement, ``block_rng(seed, "mnist_clean")``) from the clean Perturbed MNIST
partition; each shifted case ``level L`` holds, for every corruption, the same
``n_per_corruption`` test images (``block_rng(seed, "mnist_shifted")``) corrupted at level
``L`` (the pmnist partitions). So a level's case has ``n_per_corruption x corruptions``
predictions and every corruption weighs the same in it.

**CNN** (:func:`cnn_predictions`): the softmax of paper 004's CNN for those images is read
from the mlm topic's softmax partitions (not recomputed); probability scores
(:func:`reliquant.compare.probability_scores`, centroids from the correct training
predictions, :func:`reliquant.compare.fit_centroids`) and the black-box Monte Carlo
robustness (:func:`reliquant.compare.black_box_robustness`, :func:`mc_grid`): ``n_draws``
copies ``x + e``, ``e ~ N(0, v I)`` on the [0, 1] pixel scale, not clipped (the same noise as
the tree models'), each classified by the CNN (:func:`cnn_predict`); the score is the share
that keeps the stored prediction; one column per variance ``v`` of the grid
``compare.mnist.variances`` (the evaluation picks ``v`` on the validation parts).

**Tree models** (:func:`fit_mnist_model`, :func:`tree_mnist_predictions`): a random forest
or an XGBoost classifier fitted here on ``n_train`` training images (784 pixels in [0, 1]),
scored on the same subsample: probability scores (centroids from the model's training
predictions) and the Monte Carlo robustness under the same noise, through the model's
``predict_proba`` (the exact engine of :mod:`reliquant.trees` costs about 0.5 s per image at
784 pixels, beyond this topic's budget; it serves Pima, see :mod:`.tabular`).

Both also get the failure-detection comparators
(:mod:`reliquant.compare.reproduction.comparators`): the CNN ``doctor_alpha``, its logit
scores and the feature-space scores on its penultimate features (:func:`cnn_representations`,
fitted on the ``n_train`` training images of the tree models' split 0,
:func:`mnist_train_rows`), the tree models ``doctor_alpha``, XGBoost's logit scores and the
feature-space scores on the pixels.

**Splits** (:func:`sample_splits`). The subsample's test images are dealt into ``n_splits``
disjoint groups (an image and all its corrupted versions in one group, clean and corrupted
images dealt separately), so splits share no test image. A tree model's split ``s`` is a
model fitted on its own ``n_train`` training images (``block_rng(seed, "mnist_train", s)``,
its own ``random_state``) and scored on group ``s``: training set and test images both vary.
The CNN is one model (retraining it per split costs a CPU minute or more each): its splits
are the groups alone, so its intervals carry the variation over test images only.

Public API: :data:`SAMPLE_SCHEMA`, :data:`TREE_MODELS`, :func:`mnist_sample`, :func:`sample_splits`,
:func:`sample_table`, :func:`sample_arrays`, :func:`softmax_for_sample`, :func:`mc_grid`,
:func:`cnn_predict`, :func:`mnist_train_rows`, :func:`cnn_representations`,
:func:`cnn_predictions`, :func:`fit_mnist_model`, :func:`tree_mnist_predictions`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.compare import black_box_robustness, fit_centroids, probability_scores
from reliquant.compare.reproduction.cnn_features import (
    CnnRepresentations,
    check_logits,
    cnn_outputs,
)
from reliquant.compare.reproduction.comparators import comparator_columns
from reliquant.compare.reproduction.tables import grid_score, prediction_frame
from reliquant.core.io import (
    arrow_to_images,
    image_type,
    images_to_arrow,
    open_parquet,
    read_table,
)
from reliquant.core.seeding import block_int_seed, block_rng

__all__ = [
    "SAMPLE_SCHEMA",
    "TREE_MODELS",
    "cnn_predict",
    "cnn_predictions",
    "cnn_representations",
    "fit_mnist_model",
    "mc_grid",
    "mnist_sample",
    "mnist_train_rows",
    "sample_splits",
    "sample_arrays",
    "sample_table",
    "softmax_for_sample",
    "tree_mnist_predictions",
]

#: The subsample: one row per (case, corruption, image).
SAMPLE_SCHEMA = pa.schema(
    [
        pa.field("case", pa.string(), nullable=False),
        pa.field("corruption", pa.string(), nullable=False),
        pa.field("level", pa.uint8(), nullable=False),
        pa.field("test_index", pa.int32(), nullable=False),
        pa.field("label", pa.uint8(), nullable=False),
        pa.field("image", image_type(), nullable=False),
    ]
)
#: Tree model kinds fitted on MNIST -> data set key of their table.
TREE_MODELS = {"random_forest": "rf_mnist", "xgboost": "xgb_mnist"}
_META = ["case", "corruption", "level", "test_index", "label"]


def _level_case(level: int) -> str:
    return "clean" if level == 0 else f"level {level}"


def _draw(available: np.ndarray, n: int, rng: np.random.Generator, key: str) -> np.ndarray:
    if n > available.size:
        raise ValueError(
            f"compare.mnist.{key} = {n} exceeds the {available.size} test images of the "
            "Perturbed MNIST partitions (pmnist.images_per_class)"
        )
    return np.sort(rng.choice(available, size=n, replace=False))


def _read_rows(path: str | os.PathLike, levels: set[int], index: np.ndarray) -> pd.DataFrame:
    """The rows of a partition with a level in ``levels`` and a test index in ``index``
    (the whole file is streamed, so that its content digest is verified)."""
    wanted = list(levels)
    parts = []
    columns = ["test_index", "label", "corruption", "level", "image"]
    for batch in open_parquet(path).iter_batches(batch_size=20000, columns=columns):
        keep = np.isin(batch.column("level").to_numpy(), wanted) & np.isin(
            batch.column("test_index").to_numpy(), index
        )
        if not keep.any():
            continue
        tab = pa.Table.from_batches([batch]).filter(pa.array(keep))
        images = arrow_to_images(tab.column("image"))
        frame = tab.drop(["image"]).to_pandas()
        frame["image"] = list(images.reshape(len(frame), -1))
        parts.append(frame)
    if not parts:
        raise ValueError(f"{path} holds no row at levels {sorted(levels)}")
    return pd.concat(parts, ignore_index=True)


def mnist_sample(
    clean_path: str | os.PathLike,
    partitions: Mapping[str, str | os.PathLike],
    *,
    levels: Sequence[int],
    n_clean: int,
    n_per_corruption: int,
    seed: int,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The subsample (module docstring): ``(meta, images)`` with ``meta`` columns ``case,
    corruption, level, test_index, label`` (clean rows: corruption ``"clean"``, level 0) and
    ``images`` uint8 ``(n, 28, 28)``. ``partitions``: corruption -> its pmnist partition."""
    clean_index = read_table(clean_path, columns=["test_index"]).column("test_index").to_numpy()
    available = np.unique(clean_index)
    pick_clean = _draw(available, n_clean, block_rng(seed, "mnist_clean"), "n_clean")
    pick_shift = _draw(
        available, n_per_corruption, block_rng(seed, "mnist_shifted"), "n_per_corruption"
    )
    frames = [_read_rows(clean_path, {0}, pick_clean)]
    for name in partitions:
        frames.append(_read_rows(partitions[name], set(levels), pick_shift))
    rows = pd.concat(frames, ignore_index=True)
    rows["level"] = rows["level"].astype(np.uint8)
    rows = rows.sort_values(["level", "corruption", "test_index"], kind="stable")
    rows = rows.reset_index(drop=True)
    expected = n_clean + n_per_corruption * len(partitions) * len(levels)
    if len(rows) != expected:
        raise ValueError(f"the subsample has {len(rows)} rows, expected {expected}")
    rows["case"] = [_level_case(int(v)) for v in rows["level"]]
    images = np.stack(rows.pop("image").to_list()).reshape(-1, 28, 28).astype(np.uint8)
    return rows[_META], images


def sample_table(meta: pd.DataFrame, images: np.ndarray) -> pa.Table:
    """The subsample as an arrow table of :data:`SAMPLE_SCHEMA`."""
    cols = {c: pa.array(meta[c].to_numpy(), type=SAMPLE_SCHEMA.field(c).type) for c in _META}
    cols["image"] = images_to_arrow(np.asarray(images, dtype=np.uint8))
    return pa.table(cols, schema=SAMPLE_SCHEMA)


def sample_arrays(table: pa.Table) -> tuple[pd.DataFrame, np.ndarray]:
    """``(meta, images)`` back from a :data:`SAMPLE_SCHEMA` table."""
    images = arrow_to_images(table.column("image"))
    return table.drop(["image"]).to_pandas()[_META], images


def softmax_for_sample(meta: pd.DataFrame, softmax: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The softmax rows (``p0..p9``, ``prediction``) of the subsample, in its order, from the
    mlm topic's softmax partitions (``softmax``: partition name -> table; the clean rows come
    from partition ``"clean"``). A missing row raises, naming it."""
    parts = []
    for name, frame in softmax.items():
        parts.append(frame.assign(corruption=name))
    table = pd.concat(parts, ignore_index=True)
    table = table.rename(columns={"index": "test_index"})
    keys = ["corruption", "level", "test_index"]
    left = meta[keys].astype({"level": np.int64, "test_index": np.int64})
    right = table.astype({"level": np.int64, "test_index": np.int64})
    out = left.merge(right, on=keys, how="left", validate="one_to_one")
    if out["prediction"].isna().any():
        first = out[out["prediction"].isna()].iloc[0]
        raise ValueError(
            f"no softmax row for {first['corruption']} level {first['level']} test image "
            f"{first['test_index']}: are the softmax partitions of the same pmnist run?"
        )
    labels = meta["label"].to_numpy(dtype=np.int64)
    if not np.array_equal(out["label"].to_numpy(dtype=np.int64), labels):
        raise ValueError("softmax labels differ from the subsample's labels")
    return out


def cnn_predict(
    model: Any, *, batch_size: int = 512, device: Any = None
) -> Callable[[np.ndarray], np.ndarray]:
    """``predict(images) -> labels`` of paper 004's CNN for float images ``(n, 28, 28)`` on the
    [0, 1] scale (normalised as in training, ``2 x - 1``), through
    :func:`reliquant.mlm.predict_softmax` (argmax of the softmax)."""
    import torch

    from reliquant.mlm import predict_softmax

    def preprocess(batch: np.ndarray) -> torch.Tensor:
        x = torch.from_numpy(np.ascontiguousarray(batch, dtype=np.float32))
        return x.mul(2.0).sub(1.0).unsqueeze(1)

    def predict(images: np.ndarray) -> np.ndarray:
        proba = predict_softmax(
            model, images, batch_size=batch_size, device=device, preprocess=preprocess,
            outputs="log_softmax",
        )  # fmt: skip
        return proba.argmax(axis=1)

    return predict


def mc_grid(
    predict: Callable[[np.ndarray], np.ndarray],
    X: np.ndarray,
    labels: np.ndarray,
    *,
    exp: Mapping[str, Any],
    seed: int,
    batch_rows: int = 65536,
    unit: np.ndarray | float = 1.0,
) -> dict[str, np.ndarray]:
    """The Monte Carlo robustness at every variance of ``exp["variances"]`` (the noise grid):
    ``{"mc_robustness@<v>": estimate}`` (:func:`reliquant.compare.reproduction.tables.grid_score`),
    each with ``exp["n_draws"]`` draws and its own seed ``block_int_seed(seed, k)`` (``k`` the
    grid index). The noise is ``N(0, v unit)`` per feature: ``unit`` 1 for pixels, a table's
    training variances ``s_j^2`` for features in their own units (``v`` then in units of
    each feature's variance)."""
    out = {}
    for k, v in enumerate(exp["variances"]):
        res = black_box_robustness(
            predict, X, float(v) * np.asarray(unit, dtype=np.float64), n_draws=int(exp["n_draws"]),
            seed=block_int_seed(seed, k), labels=labels, batch_rows=batch_rows,
        )  # fmt: skip
        out[grid_score("mc_robustness", v)] = res.estimate
    return out


def sample_splits(meta: pd.DataFrame, n_splits: int, seed: int) -> np.ndarray:
    """The split (0..n_splits-1) of every row of the subsample (module docstring): per
    condition, its distinct test images permuted with ``block_rng(seed, "mnist_splits",
    condition)`` and dealt in turn, each row following its image."""
    if isinstance(n_splits, bool) or not isinstance(n_splits, int | np.integer) or n_splits < 1:
        raise ValueError(f"n_splits must be an integer >= 1; got {n_splits!r}")
    cond = _condition(meta["case"])
    index = meta["test_index"].to_numpy(dtype=np.int64)
    out = np.empty(len(meta), dtype=np.int32)
    for c in ("clean", "shifted"):
        rows = np.flatnonzero(cond == c)
        if rows.size == 0:
            continue
        images = np.unique(index[rows])
        if images.size < n_splits:
            raise ValueError(
                f"{images.size} {c} test images cannot be dealt into {n_splits} splits: "
                "raise the subsample or lower n_splits"
            )
        perm = block_rng(seed, "mnist_splits", c).permutation(images.size)
        group = np.empty(images.size, dtype=np.int32)
        group[perm] = np.arange(images.size) % n_splits
        out[rows] = group[np.searchsorted(images, index[rows])]
    return out


def _condition(case: pd.Series) -> np.ndarray:
    return np.where(case.to_numpy() == "clean", "clean", "shifted")


def cnn_predictions(
    meta: pd.DataFrame,
    images: np.ndarray,
    softmax: pd.DataFrame,
    train_softmax: np.ndarray,
    train_labels: np.ndarray,
    predict: Callable[[np.ndarray], np.ndarray],
    *,
    exp: Mapping[str, Any],
    seed: int,
    batch_rows: int = 65536,
    n_splits: int = 1,
    representations: CnnRepresentations | None = None,
    ensemble: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """The CNN's per-prediction table (module docstring; ``split`` from :func:`sample_splits`,
    one model): ``softmax`` the subsample's rows
    (:func:`softmax_for_sample`), ``train_softmax`` / ``train_labels`` the training split's
    softmax and labels (centroids), ``predict`` the CNN (:func:`cnn_predict`); ``exp`` the
    ``compare.mnist`` section (``variances``, ``n_draws``). With ``representations``
    (:func:`cnn_representations`; its logits checked against ``softmax``,
    :func:`~reliquant.compare.reproduction.cnn_features.check_logits`) the table also holds
    the logit and feature-space comparators; without, ``doctor_alpha`` alone. ``ensemble``:
    the deep ensemble's columns in the subsample's order
    (:func:`~reliquant.compare.reproduction.cnn_ensemble.ensemble_columns`), appended last;
    ``None`` (no members) adds none."""
    proba = softmax[[f"p{c}" for c in range(10)]].to_numpy(dtype=np.float64)
    pred = softmax["prediction"].to_numpy(dtype=np.int64)
    centroids = fit_centroids(train_softmax, np.asarray(train_labels, dtype=np.int64), seed=seed)
    scores = probability_scores(proba, centroids=centroids)
    if not np.array_equal(scores.pop("prediction").to_numpy(), pred):
        raise ValueError("the stored predictions are not the argmax of the stored softmax")
    extra = {}
    if representations is not None:
        check_logits(representations.logits, proba)
        extra = dict(logits=representations.logits, x=representations.features,
                     x_train=representations.train_features,
                     y_train=representations.train_labels, standardise=False)  # fmt: skip
    mc = mc_grid(
        predict, np.asarray(images, dtype=np.float32) / np.float32(255.0), pred, exp=exp,
        seed=block_int_seed(seed, "cnn_mc"), batch_rows=batch_rows,
    )  # fmt: skip
    return prediction_frame(
        dataset="cnn_mnist", case=meta["case"], condition=_condition(meta["case"]),
        corruption=meta["corruption"], item=meta["test_index"], label=meta["label"],
        prediction=pred, split=sample_splits(meta, n_splits, seed),
        scores={**mc, **scores, **comparator_columns(proba, pred, **extra), **(ensemble or {})},
    )  # fmt: skip


def mnist_train_rows(n_images: int, n_train: int, *, seed: int, split: int = 0) -> np.ndarray:
    """The sorted indices of the ``n_train`` training images of split ``split``, drawn without
    replacement from ``n_images`` with ``block_rng(seed, "mnist_train", split)`` (the rows a
    tree model of that split is fitted on, :func:`fit_mnist_model`)."""
    n = int(n_train)
    if n > n_images:
        raise ValueError(f"compare.mnist.n_train = {n} exceeds the {n_images} images")
    return np.sort(block_rng(seed, "mnist_train", split).choice(n_images, n, replace=False))


def cnn_representations(
    model: Any,
    images: np.ndarray,
    train_images: np.ndarray,
    train_labels: np.ndarray,
    *,
    n_train: int,
    seed: int,
    device: Any = None,
) -> CnnRepresentations:
    """The CNN's logits and penultimate features of the subsample's uint8 ``images`` and the
    penultimate features of the ``n_train`` training images of split 0
    (:func:`mnist_train_rows`) with their labels (what the CNN was trained on)
    (:func:`reliquant.compare.reproduction.cnn_features.cnn_outputs`)."""
    rows = mnist_train_rows(len(train_images), n_train, seed=seed)
    logits, features = cnn_outputs(model, images, device=device)
    _, train_features = cnn_outputs(model, np.asarray(train_images)[rows], device=device)
    labels = np.asarray(train_labels, dtype=np.int64)[rows]
    return CnnRepresentations(logits, features, train_features, labels)


def fit_mnist_model(
    kind: str,
    train_images: np.ndarray,
    train_labels: np.ndarray,
    *,
    exp: Mapping[str, Any],
    seed: int,
    n_jobs: int = 1,
    split: int = 0,
) -> tuple[Any, np.ndarray, np.ndarray]:
    """Fit ``kind`` (a key of :data:`TREE_MODELS`) on ``exp["n_train"]`` training images
    drawn without replacement (``block_rng(seed, "mnist_train", split)``), pixels ``u / 255``,
    with the hyper-parameters ``exp[kind]`` and ``random_state = block_int_seed(seed, kind,
    split)``.
    Returns ``(model, X_train, y_train)`` (the rows it was fitted on)."""
    if kind not in TREE_MODELS:
        raise ValueError(f"model kind must be one of {list(TREE_MODELS)}; got {kind!r}")
    n = int(exp["n_train"])
    rows = mnist_train_rows(len(train_images), n, seed=seed, split=split)
    X = np.asarray(train_images[rows], dtype=np.float32).reshape(n, -1) / np.float32(255.0)
    y = np.asarray(train_labels[rows], dtype=np.int64)
    params = dict(exp[kind])
    state = block_int_seed(seed, kind, split) % 2**31
    if kind == "random_forest":
        from sklearn.ensemble import RandomForestClassifier

        model = RandomForestClassifier(**params, random_state=state, n_jobs=n_jobs)
    else:
        from xgboost import XGBClassifier

        model = XGBClassifier(**params, random_state=state, n_jobs=n_jobs, tree_method="hist")
    model.fit(X, y)
    if kind == "random_forest":
        # A forest's predict_proba sums its trees in whatever order the threads finish: with
        # one thread the probabilities (and so every score) are identical on every run.
        model.set_params(n_jobs=1)
    if not np.array_equal(np.asarray(model.classes_), np.arange(10)):
        raise ValueError(f"the training subsample lacks a digit: classes {model.classes_}")
    return model, X, y


def tree_mnist_predictions(
    kind: str,
    train_images: np.ndarray,
    train_labels: np.ndarray,
    meta: pd.DataFrame,
    images: np.ndarray,
    *,
    exp: Mapping[str, Any],
    seed: int,
    n_splits: int = 1,
    n_jobs: int = 1,
    batch_rows: int = 65536,
) -> pd.DataFrame:
    """A tree model's per-prediction table on the subsample (module docstring): per split
    (:func:`sample_splits`) a model fitted on its own training images
    (:func:`fit_mnist_model`), scored on that split's test images."""
    split_of = sample_splits(meta, n_splits, seed)
    parts = []
    for s in range(n_splits):
        rows = np.flatnonzero(split_of == s)
        model, X_train, y_train = fit_mnist_model(
            kind, train_images, train_labels, exp=exp, seed=seed, n_jobs=n_jobs, split=s
        )
        X = np.asarray(images[rows], dtype=np.float32).reshape(rows.size, -1) / np.float32(255.0)
        proba = model.predict_proba(X)
        centroids = fit_centroids(model.predict_proba(X_train), y_train, seed=seed)
        scores = probability_scores(proba, centroids=centroids)
        pred = scores.pop("prediction").to_numpy()
        extra = comparator_columns(proba, pred, model=model, x=X, x_train=X_train,
                                   y_train=y_train, standardise=False)  # fmt: skip
        mc = mc_grid(
            lambda b, m=model: m.predict_proba(b).argmax(axis=1), X, pred, exp=exp,
            seed=block_int_seed(seed, kind, "mc", s), batch_rows=batch_rows,
        )  # fmt: skip
        m = meta.iloc[rows]
        parts.append(
            prediction_frame(
                dataset=TREE_MODELS[kind],
                case=m["case"],
                condition=_condition(m["case"]),
                corruption=m["corruption"],
                item=m["test_index"],
                label=m["label"],
                prediction=pred,
                scores={**mc, **scores, **extra},
                split=s,
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)
