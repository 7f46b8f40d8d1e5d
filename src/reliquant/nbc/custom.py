"""A user's ``nbc`` case (config ``custom:``): robustness of a Naive Bayes fitted on their table.

Paper 000's NBC (eq. 18 smoothing) is fitted on the ``train`` table with :func:`fit_table`
(``alpha`` given, or chosen from ``alphas`` by ``cv_folds``-fold cross-validation with folds
from ``seed``, Section 6.1); every row of ``test`` gets its prediction (eq. 2), eps_glob
(Theorem 5.2, eq. 13) and eps_loc (Theorem 6.1) by :func:`robustness`. When ``test`` holds
the target column too, each row also says whether the prediction is right: its labels are
matched to the training classes by value (:func:`reliquant.core.labels.match_labels`: ``1``,
``1.0`` and ``"1"`` are one class, as a CSV file with an empty cell reads its integers as
floats), and a missing label, or one that is none of the classes, is refused naming its row
(``truth`` is written in the classes' spelling). With
``bootstrap: M``, every row also gets the uncertainty metrics u_m, u_H (eqs. 3-4) and u_a,
u_t, u_e (eqs. 5-7) of M bootstrap NBCs (Section 7.3), drawn from ``seed``. With
``categories: {column: [value, ...]}``, a column's possible values are declared (as
:func:`fit_table`'s ``categories=``): a test value declared but absent from training is scored
with eq. 18's smoothing instead of refused.
The test table's feature columns are matched to the training ones by name (a missing one is
refused, naming it; its other columns are left out); a train column of non-integer numbers is
refused at fit (bin it first), as are an empty train table and one with a single class.
The figure shows the distribution of eps_glob and eps_loc over the test rows (split by
correctness when the truth is known).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.custom import CaseResult, label_values
from reliquant.core.io import frame_to_markdown
from reliquant.core.labels import match_labels
from reliquant.core.plotting import PALETTE, apply_style
from reliquant.nbc.scoring import DEFAULT_ALPHAS, UNCERTAINTY_COLUMNS, fit_table, robustness

__all__ = ["run_case"]

#: Least robust rows (smallest eps_loc) listed in the markdown summary.
LEAST_ROBUST_ROWS = 10


def run_case(train: pd.DataFrame, test: pd.DataFrame, *, case: Mapping[str, Any]) -> CaseResult:
    """Fit on ``train`` and score ``test`` for one ``nbc`` case (module docstring).

    ``case``: the case's config entry (``target``; optional ``alpha``, ``alphas`` (default
    the paper's grid), ``cv_folds`` (5), ``seed`` (0), ``bootstrap``, ``categories``). One
    row per test row: ``row`` (its position in ``test``), ``prediction``, ``eps_glob``,
    ``eps_loc``, with ``bootstrap`` the columns u_m .. u_e, and, when ``test`` has the target
    column, ``truth`` and ``correct``.
    """
    target = case["target"]
    seed = int(case.get("seed", 0))
    try:
        fitted = fit_table(
            train,
            target,
            alpha=case.get("alpha"),
            alphas=tuple(case.get("alphas", DEFAULT_ALPHAS)),
            cv_folds=int(case.get("cv_folds", 5)),
            seed=seed,
            categories=case.get("categories"),
        )
    except (TypeError, ValueError) as err:
        key = " (key 'categories')" if "categor" in str(err) and "categories" in case else ""
        raise ValueError(
            f"custom case {case['name']!r}, train table {case['train']}{key}: {err}"
        ) from err
    bootstrap = case.get("bootstrap")
    features = set(fitted.encoder.columns)
    try:
        # the training features, matched by name (a missing one is refused, naming it); the
        # test table's other columns (its target, row ids) are not features and are left out
        scored = robustness(
            fitted,
            test[[c for c in test.columns if c in features]],
            bootstrap=None if bootstrap is None else int(bootstrap),
            seed=seed,
        )
    except ValueError as err:
        raise ValueError(f"custom case {case['name']!r}, test table {case['test']}: {err}") from err
    labelled = target in test.columns
    classes = list(fitted.classes)
    predicted = match_labels(scored["prediction"], classes, what="predictions")
    truth = _truth_codes(test[target], classes, case) if labelled else predicted[:0]
    # both columns in the classes' spelling: equal labels are equal values
    predictions, label_type = label_values([classes[i] for i in np.r_[predicted, truth]])
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
    if bootstrap is not None:
        for name in UNCERTAINTY_COLUMNS:
            table[name] = scored[name].to_numpy(np.float64)
            fields.append((name, pa.float64()))
    if labelled:
        table["truth"] = predictions[len(test) :]
        table["correct"] = truth == predicted
        fields += [("truth", label_type), ("correct", pa.bool_())]
    return CaseResult(
        table, pa.schema(fields), _markdown(table, case, fitted, len(train)), _figure(table, case)
    )


def _truth_codes(labels: pd.Series, classes: list[Any], case: Mapping[str, Any]) -> np.ndarray:
    """The test table's target column as indices of the training classes, matched by value
    (:func:`reliquant.core.labels.match_labels`: a CSV's ``1.0`` is the class ``1``); a
    missing label, or one that is none of the classes, refused naming the table, the column
    and the row."""
    where = f"custom case {case['name']!r}, test table {case['test']}, column {case['target']!r}"
    try:
        return match_labels(labels, classes, what=where)
    except ValueError as err:
        hint = (
            ""
            if "has no label" in str(err)
            else "; a class that training lacks can be declared with `categories: "
            f"{{{case['target']}: [...]}}`"
        )
        raise ValueError(f"{err}{hint}") from err


def _figure(table: pd.DataFrame, case: Mapping[str, Any]):
    """Histograms of eps_glob and eps_loc over the test rows; correct and wrong predictions
    stacked in two colours when the test table has the target."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    apply_style()
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.6), sharey=True)
    for ax, name, label in zip(
        axes,
        ("eps_glob", "eps_loc"),
        (r"$\varepsilon_{glob}$ (eq. 13)", r"$\varepsilon_{loc}$ (Thm 6.1)"),
        strict=True,
    ):
        values = table[name].to_numpy(np.float64)
        top = max(float(values.max()) if len(values) else 0.0, 1e-12)
        bins = np.linspace(0.0, top * 1.0001, 21)
        if "correct" in table:
            ok = table["correct"].to_numpy(dtype=bool)
            ax.hist(
                [values[ok], values[~ok]],
                bins=bins,
                stacked=True,
                color=[PALETTE[0], PALETTE[3]],
                label=[f"correct ({int(ok.sum())})", f"wrong ({int((~ok).sum())})"],
            )
        else:
            ax.hist(values, bins=bins, color=PALETTE[0])
        ax.set_xlabel(label)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # tick labels never overlap
    axes[0].set_ylabel("test rows")
    axes[0].yaxis.set_major_locator(MaxNLocator(integer=True))
    if "correct" in table:  # one legend, below the panels, where it covers no bar
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
        fig.subplots_adjust(bottom=0.3, top=0.85)
    fig.suptitle(f"{case['name']}: Naive Bayes robustness of {len(table)} test rows")
    return fig


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
    if case.get("categories"):
        text += (
            f" Declared categories (counted by eq. 18's smoothing, seen in training or not) "
            f"for the columns {list(case['categories'])}."
        )
    if "correct" in table:
        text += f" Accuracy {table['correct'].mean():.4f}."
    metrics = ["eps_glob", "eps_loc"]
    if "u_m" in table:
        metrics += list(UNCERTAINTY_COLUMNS)
        text += (
            f" Uncertainty (eqs. 3-7, bits): u_m and u_H of the model, u_a, u_t and u_e of "
            f"{case['bootstrap']} bootstrap models."
        )
    quantiles = [0.0, 0.25, 0.5, 0.75, 1.0]
    summary = pd.DataFrame(
        {"quantile": quantiles, **{m: table[m].quantile(quantiles).to_numpy() for m in metrics}}
    )
    least = table.sort_values(["eps_loc", "row"]).head(LEAST_ROBUST_ROWS)
    return (
        f"# Your case {case['name']}: Naive Bayes robustness\n\n{text}\n\n"
        + frame_to_markdown(summary, floatfmt=".6g")
        + f"\nThe {len(least)} least robust rows (smallest eps_loc):\n\n"
        + frame_to_markdown(least, floatfmt=".6g")
    )
