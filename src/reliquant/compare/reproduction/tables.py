"""The per-prediction table of the compare topic: one row per prediction, every score.

Each data set's table has the columns :data:`BASE_COLUMNS` (what was predicted, for which
case, and whether it was right) followed by one float64 column per score, named as in
:data:`SCORE_FAMILY`; every score is oriented so that **higher = more reliable**. A score that
is an uncertainty in its source (entropy, ``u_a``, ``u_t``, ``u_e``, the centroid distance)
is stored negated under a ``negative_`` name (or as ``centroid_proximity``); the NBC cells'
metrics are the nbc topic's values negated exactly (``negative_u_m``, ``negative_u_H``, ... in
bits), so every ranking and AU-ARC equals the nbc topic's bit for bit.

Replicates: ``split`` numbers the independent replicates of a data set (each its own
training set and fitted model, except where the data set's docs say otherwise) and ``part``
says whether a prediction belongs to its split's validation part (choices) or test part
(judgement), :func:`assign_parts`.

Families (:data:`SCORE_FAMILY`: the library's :data:`reliquant.compare.SCORE_FAMILY`,
re-exported here): *robustness* scores measure whether the prediction survives a perturbation (of the input: tree robustness and the black-box Monte Carlo; of the model:
``eps_glob``, ``eps_loc`` of paper 000), and the log-ratio of the two largest probabilities,
which Lassance & De Bock (arXiv 2603.23318) introduce as robustness quantification for any
discriminative classifier; *uncertainty* scores are read from the predicted distribution
(maximum probability, entropy, margin, distance to the class centroid, and the bootstrap
ensemble's ``u_a``, ``u_t``, ``u_e`` of paper 000).

A data set has *cases* (``case``: ``clean``, ``level 5``, ``N=25, gamma=0.4``...) and each
case a *condition*: ``clean`` (test data from the training distribution) or ``shifted``.

Public API: :data:`BASE_COLUMNS`, :data:`SCORE_FAMILY`, :data:`DATASET_TITLES`,
:data:`BENCHMARK_TITLES`, :func:`benchmark_dataset`, :data:`CONDITIONS`, :data:`PARTS`,
:data:`PAPER_SCORES`, :func:`score_columns`, :func:`prediction_schema`, :func:`prediction_frame`, :func:`assign_parts`, :func:`family_of`,
:data:`GRID_SEP`, :func:`grid_score`, :func:`split_grid_score`.

A perturbation-based score computed on a grid of noise scales has one column per scale,
``<score>@<scale>`` (:func:`grid_score`); the evaluation picks the scale on the validation
parts and uses that column as ``<score>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
from numpy.typing import ArrayLike

# the one mapping score -> family, shared with the library's which_score
from reliquant.compare.verdict import SCORE_FAMILY

__all__ = [
    "BASE_COLUMNS",
    "BENCHMARK_TITLES",
    "CONDITIONS",
    "DATASET_TITLES",
    "GRID_SEP",
    "PAPER_SCORES",
    "PARTS",
    "SCORE_FAMILY",
    "assign_parts",
    "benchmark_dataset",
    "family_of",
    "grid_score",
    "prediction_frame",
    "prediction_schema",
    "score_columns",
    "split_grid_score",
]

#: Leading columns of every per-prediction table, with their arrow types.
BASE_COLUMNS: dict[str, pa.DataType] = {
    "dataset": pa.string(),  # the data set (a key of DATASET_TITLES)
    "case": pa.string(),  # the case within the data set ("clean", "level 5", ...)
    "condition": pa.string(),  # "clean" or "shifted"
    "corruption": pa.string(),  # the MNIST corruption ("none" elsewhere)
    "split": pa.int32(),  # the replicate: its own training set / fitted model (and test rows)
    "part": pa.string(),  # "validation" (choices: comparator, hybrid) or "test" (judged)
    "item": pa.int64(),  # the test item (MNIST test index, table row, NBC test instance)
    "label": pa.int16(),  # the true class (column index of the model's classes)
    "prediction": pa.int16(),  # the predicted class (same coding)
    "correct": pa.bool_(),  # prediction == label
}

#: The two conditions, in report order.
CONDITIONS = ("clean", "shifted")

#: Separates a score from its noise scale in a grid column (:func:`grid_score`).
GRID_SEP = "@"

#: The two parts of every split's test predictions: choices are made on "validation" (the
#: comparator of a headline claim, the hybrid's fit), claims are judged on "test".
PARTS = ("validation", "test")

#: The papers' own robustness scores (paper 000: eps_glob, eps_loc; paper 002: tree
#: robustness; paper 004's black-box Monte Carlo robustness). The log-ratio of the two largest
#: probabilities is a robustness score of a later paper and a transform of the probabilities:
#: it gets its own rows, never stands in for these.
PAPER_SCORES = ("mc_robustness", "tree_robustness", "eps_glob", "eps_loc")

#: Data set key -> its title in tables and figures, in report order.
DATASET_TITLES: dict[str, str] = {
    "cnn_mnist": "MNIST, CNN (paper 004)",
    "rf_mnist": "MNIST, random forest",
    "xgb_mnist": "MNIST, XGBoost",
    "pima_xgb": "Pima, XGBoost",
    "nbc_synthetic": "Synthetic, NBC (paper 000)",
    "table_nbc": "scikit-learn table, NBC",
}

#: The tabular benchmark sets of ``data/raw/benchmarks`` (config ``data.benchmarks``) -> their
#: title; in the compare topic a set ``<name>`` is the data set ``bench_<name>``
#: (:func:`benchmark_dataset`), after the data sets above in report order.
BENCHMARK_TITLES: dict[str, str] = {
    "authent": "Banknote authentication",
    "diabetes": "Pima diabetes (768 rows)",
    "electricity": "Electricity (Elec2)",
    "gesture": "Gesture phases",
    "magic": "MAGIC gamma telescope",
    "robot": "Wall-following robot",
    "segment": "Image segmentation",
    "students": "Students' dropout",
    "texture": "Texture",
    "twonorm": "Twonorm",
    "vowel": "Vowel",
    "waveform_21": "Waveform (21 attributes)",
    "waveform_40": "Waveform (40 attributes)",
    "wdbc": "Breast cancer (WDBC)",
}


def benchmark_dataset(name: str) -> str:
    """The compare topic's data set key of benchmark set ``name``: ``"bench_<name>"`` (a
    ValueError names the known sets)."""
    if name not in BENCHMARK_TITLES:
        raise ValueError(
            f"unknown benchmark set {name!r}; known: {', '.join(BENCHMARK_TITLES)} "
            "(BENCHMARK_TITLES in reliquant.compare.reproduction.tables)"
        )
    return f"bench_{name}"


DATASET_TITLES.update(
    {benchmark_dataset(k): f"{v}, benchmark" for k, v in BENCHMARK_TITLES.items()}
)


def grid_score(score: str, scale: float) -> str:
    """The column of a perturbation-based score at one noise scale of its grid:
    ``"mc_robustness@0.1"`` (:func:`split_grid_score` reads it back)."""
    family_of(score)
    return f"{score}{GRID_SEP}{float(scale):g}"


def split_grid_score(name: str) -> tuple[str, float | None]:
    """``(score, scale)`` of a column name: ``("mc_robustness", 0.1)`` for
    ``"mc_robustness@0.1"``, ``(name, None)`` for a plain score."""
    base, sep, scale = name.partition(GRID_SEP)
    if not sep:
        return name, None
    try:
        return base, float(scale)
    except ValueError:
        raise KeyError(
            f"score column {name!r}: the noise scale after {GRID_SEP!r} is not a number"
        ) from None


def family_of(score: str) -> str:
    """The family of ``score`` ("robustness" or "uncertainty"), a grid column
    (:func:`grid_score`) that of its score; a KeyError names the known."""
    score = split_grid_score(score)[0]
    if score not in SCORE_FAMILY:
        raise KeyError(f"unknown score {score!r}; known: {', '.join(SCORE_FAMILY)}")
    return SCORE_FAMILY[score]


def score_columns(frame: pd.DataFrame) -> list[str]:
    """The score columns of a per-prediction table, in table order."""
    return [c for c in frame.columns if c not in BASE_COLUMNS]


def prediction_schema(scores: Sequence[str]) -> pa.Schema:
    """The explicit schema of a per-prediction table with these score columns: the
    :data:`BASE_COLUMNS` then one non-null float64 per score (each a key of
    :data:`SCORE_FAMILY`)."""
    for s in scores:
        family_of(s)
    return pa.schema(
        [pa.field(k, t, nullable=False) for k, t in BASE_COLUMNS.items()]
        + [pa.field(s, pa.float64(), nullable=False) for s in scores]
    )


def prediction_frame(
    *,
    dataset: str,
    case: str | ArrayLike,
    condition: str | ArrayLike,
    item: ArrayLike,
    label: ArrayLike,
    prediction: ArrayLike,
    scores: Mapping[str, ArrayLike],
    corruption: str | ArrayLike = "none",
    split: int | ArrayLike = 0,
) -> pd.DataFrame:
    """Rows of a per-prediction table, checked: equal lengths, finite scores, a known data
    set, conditions and score names. ``case``, ``condition``, ``corruption`` and ``split``: one
    value for every row, or one per row. ``part`` is left ``"test"`` (:func:`assign_parts`)."""
    if dataset not in DATASET_TITLES:
        raise ValueError(f"unknown data set {dataset!r}; known: {', '.join(DATASET_TITLES)}")
    lab = np.asarray(label).astype(np.int16)
    pred = np.asarray(prediction).astype(np.int16)
    n = lab.size

    def per_row(value: str | ArrayLike, name: str) -> np.ndarray:
        v = np.asarray(value, dtype=object)
        if v.ndim and v.shape != (n,):
            raise ValueError(f"{name} must be one value or one per row ({n}); got {v.shape}")
        return np.broadcast_to(v, (n,)).copy()

    cond = per_row(condition, "condition")
    bad = sorted(set(cond) - set(CONDITIONS))
    if bad:
        raise ValueError(f"condition must be one of {CONDITIONS}; got {bad}")
    out = {
        "dataset": np.full(n, dataset, dtype=object),
        "case": per_row(case, "case"),
        "condition": cond,
        "corruption": per_row(corruption, "corruption"),
        "split": np.broadcast_to(np.asarray(split, dtype=np.int32), (n,)).copy(),
        "part": np.full(n, "test", dtype=object),
        "item": np.asarray(item).astype(np.int64),
        "label": lab,
        "prediction": pred,
        "correct": lab == pred,
    }
    if out["item"].shape != (n,) or pred.shape != (n,):
        raise ValueError(f"item, label and prediction must have one value per row ({n})")
    for name, values in scores.items():
        family_of(name)
        v = np.asarray(values, dtype=np.float64)
        if v.shape != (n,):
            raise ValueError(f"score {name!r} has shape {v.shape}; expected ({n},)")
        if not np.isfinite(v).all():
            raise ValueError(f"score {name!r} has NaN or infinite values")
        out[name] = v
    return pd.DataFrame(out)


def assign_parts(frame: pd.DataFrame, *, validation_fraction: float, seed: int) -> pd.DataFrame:
    """``frame`` with its ``part`` column set: in every (split, case), ``round(f n)`` of its
    ``n`` rows, drawn with ``block_rng(seed, "part", dataset, split, case)``, are
    ``"validation"`` (``f = validation_fraction``), the rest ``"test"``."""
    from reliquant.core.seeding import block_rng

    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1); got {validation_fraction!r}")
    out = frame.copy()
    part = np.full(len(out), "test", dtype=object)
    for (dataset, split, case), idx in out.groupby(
        ["dataset", "split", "case"], sort=False
    ).indices.items():
        n_val = int(round(validation_fraction * idx.size))
        perm = block_rng(seed, "part", str(dataset), int(split), str(case)).permutation(idx.size)
        part[idx[perm[:n_val]]] = "validation"
    out["part"] = part
    return out
