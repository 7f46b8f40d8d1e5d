"""A reader recomputes a published interval from the per-prediction table alone: plain
pandas to read the parquet file, their own AU-ARC, scipy's t quantile."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reliquant.compare.reproduction.evaluation import headline_table, split_auarc
from reliquant.compare.reproduction.tables import assign_parts, prediction_schema, score_columns
from reliquant.compare.reproduction.tabular import table_predictions
from reliquant.core.io import write_frame

EXP = dict(name="wine", test_fraction=0.5, n_bins=3, flip=0.4, alphas=[0.1, 1.0], cv_folds=3,
           n_bootstrap=2)  # fmt: skip
COMPARISONS = {"table_nbc": {"paper": ["eps_loc", "eps_glob"],
                             "uncertainty": ["max_probability", "margin", "negative_u_e"]}}  # fmt: skip


def _reader_auarc(score: np.ndarray, correct: np.ndarray) -> float:
    """Area under the accuracy-rejection curve written from its definition: keep the m most
    reliable predictions, m = 1..n, ties in random order (so a tied group contributes its
    share of correct predictions per kept member), mean of the accuracies."""
    groups = (pd.DataFrame({"s": score, "c": correct.astype(float)})
              .groupby("s", sort=True)["c"].agg(["size", "sum"]).iloc[::-1])  # fmt: skip
    total, kept, hits = 0.0, 0, 0.0
    for size, hit in groups.itertuples(index=False):
        for j in range(1, size + 1):
            total += (hits + j * hit / size) / (kept + j)
        kept, hits = kept + size, hits + hit
    return total / len(score)


def test_headline_interval_recomputed_from_the_parquet_file(tmp_path) -> None:
    frame = assign_parts(table_predictions(exp=EXP, seed=4, n_splits=5), validation_fraction=0.5,
                         seed=4)  # fmt: skip
    path = tmp_path / "table_nbc.parquet"
    write_frame(frame, path, prediction_schema(score_columns(frame)))
    head = headline_table([frame], split_auarc([frame]), COMPARISONS, confidence=0.95)
    published = head[head["condition"] == "shifted"].iloc[0]

    table = pd.read_parquet(path)  # a reader's own code from here on
    shifted = table[table["condition"] == "shifted"]
    val = shifted[shifted["part"] == "validation"]
    mean_val = {u: np.mean([_reader_auarc(g[u].to_numpy(), g["correct"].to_numpy())
                            for _, g in val.groupby("split")])
                for u in COMPARISONS["table_nbc"]["uncertainty"]}  # fmt: skip
    comparator = max(mean_val, key=mean_val.get)
    test = shifted[shifted["part"] == "test"]
    d = np.array([_reader_auarc(g["eps_loc"].to_numpy(), g["correct"].to_numpy())
                  - _reader_auarc(g[comparator].to_numpy(), g["correct"].to_numpy())
                  for _, g in test.groupby("split")])  # fmt: skip
    half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)

    assert published["comparator"] == comparator
    assert published["n_splits"] == d.size == 5
    assert published["diff_mean"] == pytest.approx(d.mean(), abs=1e-12)
    assert (published["ci_low"], published["ci_high"]) == pytest.approx(
        (d.mean() - half, d.mean() + half), abs=1e-12
    )
