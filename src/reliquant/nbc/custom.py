"""A user's ``nbc`` case (config ``custom:``): robustness of a Naive Bayes fitted on their table.

Paper 000's NBC (eq. 18 smoothing) is fitted on the ``train`` table with :func:`fit_table`
(``alpha`` given, or chosen from ``alphas`` by ``cv_folds``-fold cross-validation with folds
from ``seed``, Section 6.1); every row of ``test`` gets its prediction (eq. 2), eps_glob
(Theorem 5.2, eq. 13) and eps_loc (Theorem 6.1) by :func:`robustness`. When ``test`` holds
the target column too, each row also says whether the prediction is right.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.custom import CaseResult, label_values
from reliquant.core.io import frame_to_markdown
from reliquant.nbc.scoring import DEFAULT_ALPHAS, fit_table, robustness

__all__ = ["run_case"]

#: Least robust rows (smallest eps_loc) listed in the markdown summary.
LEAST_ROBUST_ROWS = 10


def run_case(train: pd.DataFrame, test: pd.DataFrame, *, case: Mapping[str, Any]) -> CaseResult:
    """Fit on ``train`` and score ``test`` for one ``nbc`` case (module docstring).

    ``case``: the case's config entry (``target``; optional ``alpha``, ``alphas`` (default
    the paper's grid), ``cv_folds`` (5), ``seed`` (0)). One row per test row: ``row`` (its
    position in ``test``), ``prediction``, ``eps_glob``, ``eps_loc`` and, when ``test`` has
    the target column, ``truth`` and ``correct``.
    """
    target = case["target"]
    fitted = fit_table(
        train,
        target,
        alpha=case.get("alpha"),
        alphas=tuple(case.get("alphas", DEFAULT_ALPHAS)),
        cv_folds=int(case.get("cv_folds", 5)),
        seed=int(case.get("seed", 0)),
    )
    try:
        scored = robustness(fitted, test[list(fitted.encoder.columns)])
    except ValueError as err:
        raise ValueError(f"custom case {case['name']!r}, test table {case['test']}: {err}") from err
    labelled = target in test.columns
    predictions, label_type = label_values(
        list(scored["prediction"]) + (list(test[target]) if labelled else [])
    )
    table = pd.DataFrame(
        {
            "row": np.arange(len(test), dtype=np.int64),
            "prediction": predictions[: len(test)],
            "eps_glob": scored["eps_glob"].to_numpy(np.float64),
            "eps_loc": scored["eps_loc"].to_numpy(np.float64),
        }
    )
    fields = [
        ("row", pa.int64()),
        ("prediction", label_type),
        ("eps_glob", pa.float64()),
        ("eps_loc", pa.float64()),
    ]
    if labelled:
        table["truth"] = predictions[len(test) :]
        table["correct"] = table["truth"] == table["prediction"]
        fields += [("truth", label_type), ("correct", pa.bool_())]
    return CaseResult(table, pa.schema(fields), _markdown(table, case, fitted, len(train)))


def _markdown(table: pd.DataFrame, case: Mapping[str, Any], fitted, n_train: int) -> str:
    how = (
        "given"
        if case.get("alpha") is not None
        else f"chosen by {case.get('cv_folds', 5)}-fold cross-validation"
    )
    text = (
        f"Naive Bayes (paper 000, eq. 18) fitted on `{case['train']}` ({n_train} rows, "
        f"features {list(fitted.encoder.columns)}, classes {list(fitted.classes)}), alpha = "
        f"{fitted.alpha:g} ({how}); {len(table)} rows of `{case['test']}` scored. eps_glob "
        "(eq. 13) and eps_loc (Theorem 6.1): how far the model's probabilities may move before "
        "a prediction changes; larger is more robust."
    )
    if "correct" in table:
        text += f" Accuracy {table['correct'].mean():.4f}."
    quantiles = [0.0, 0.25, 0.5, 0.75, 1.0]
    summary = pd.DataFrame(
        {
            "quantile": quantiles,
            "eps_glob": table["eps_glob"].quantile(quantiles).to_numpy(),
            "eps_loc": table["eps_loc"].quantile(quantiles).to_numpy(),
        }
    )
    least = table.sort_values(["eps_loc", "row"]).head(LEAST_ROBUST_ROWS)
    return (
        f"# Your case {case['name']}: Naive Bayes robustness\n\n{text}\n\n"
        + frame_to_markdown(summary, floatfmt=".6g")
        + f"\nThe {len(least)} least robust rows (smallest eps_loc):\n\n"
        + frame_to_markdown(least, floatfmt=".6g")
    )
