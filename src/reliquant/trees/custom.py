"""A user's ``trees`` case (config ``custom:``): robustness of their model on their samples.

For each sample x (a row of the ``samples`` table, its feature columns ``columns``, else every
column), papers 001/002's probabilistic robustness (eq. 1)
``R(x) = P(f(x') = f(x))`` with ``x' ~ N(x, diag(variance))``, by
:func:`reliquant.trees.robustness_batch`: certified bounds ``lower <= R <= upper`` from the
exact engine, then sampling of the undecided part within ``time_budget`` seconds
(``ci_low .. ci_high`` at ``confidence``). With ``max_boxes`` and ``max_draws`` the result
depends on ``seed`` only (no time limit).

Feature order: a model that knows its feature names (fitted on a DataFrame: scikit-learn
``feature_names_in_``, XGBoost ``feature_names``, LightGBM ``feature_name()``) gets the
samples' columns **by name**, in whatever order the table holds them; a column the model
does not know, or a model feature the table lacks, is refused (both lists named), before
any job by :func:`check_model`. A model without names reads the feature columns by position
(they must then be in the model's order). A per-feature ``noise.variance`` list follows the
feature columns' order.

The figure shows, per sample, what carries information: the interval ``ci_low .. ci_high``
that holds R at ``confidence`` (a point for an exact sample) and the estimate; the certified
bounds ``[lower, upper]`` only where they are informative (narrower than ``[0, 1]``); the
histogram of the estimates beside it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.custom import CaseError, CaseResult, label_values
from reliquant.core.io import frame_to_markdown, table_file_columns
from reliquant.core.plotting import PALETTE, apply_style
from reliquant.trees.anytime import robustness_batch
from reliquant.trees.inputs import library_names
from reliquant.trees.noise import Gaussian
from reliquant.trees.readers import extract_ensemble, load_model
from reliquant.trees.structure import TreeEnsemble

__all__ = ["case_columns", "check_model", "check_models", "run_case"]

#: Rows of the per-sample table in the markdown summary.
SUMMARY_ROWS = 50


def case_columns(samples: pd.DataFrame, case: Mapping[str, Any]) -> list[str]:
    """The feature columns of a case: ``columns`` when given, else every column."""
    return list(case.get("columns") or samples.columns)


def check_model(case: Mapping[str, Any], root: str | os.PathLike = ".") -> list[str]:
    """Problems of the model file of one ``trees`` case that passed
    :func:`reliquant.core.custom.check_cases`, found by reading it (paths relative to
    ``root``): a file :func:`reliquant.trees.readers.model_files.load_model` refuses (not a model of
    its suffix's library, untrusted skops types), a model
    :func:`reliquant.trees.extract_ensemble` does not support, feature columns (``columns``,
    else every column of ``samples``) whose names differ from the model's feature names (a
    model that knows them: both lists named), or a feature count other than the model's.
    Each line names the case, the key and the path."""
    where = f"custom case {case['name']!r}"
    root = Path(root)
    try:
        model = load_model(root / case["model"])
    except Exception as err:  # refused or unreadable; the message names the path
        return [f"{where}, key 'model': {err}"]
    try:
        ens = extract_ensemble(model)
    except Exception as err:
        return [f"{where}, key 'model': {case['model']}: {err}"]
    given = case.get("columns")
    columns = list(given) if given else table_file_columns(root / case["samples"])
    problem = _name_problem(columns, ens)
    if problem:
        key, what = ("columns", "`columns`") if given else ("samples", case["samples"])
        return [f"{where}, key {key!r}: the feature columns of {what} {problem}"]
    if len(columns) != ens.n_features:
        key, what = ("columns", "`columns`") if given else ("samples", case["samples"])
        return [
            f"{where}, key {key!r}: {len(columns)} feature columns in {what} "
            f"{columns[:10]}{' ...' if len(columns) > 10 else ''} but the model "
            f"{case['model']} has {ens.n_features} features; set `columns` to the model's "
            "features in order"
        ]
    return []


def check_models(cases: Sequence[Mapping[str, Any]], root: str | os.PathLike = ".") -> None:
    """:func:`check_model` for every ``trees`` case of ``cases`` (checked ones); a
    :class:`reliquant.core.custom.CaseError` with one line per problem. The workflow calls it
    when it loads, so a bad model stops the run before any job."""
    problems = [
        line for case in cases if case["kind"] == "trees" for line in check_model(case, root)
    ]
    if problems:
        raise CaseError("invalid custom cases:\n  " + "\n  ".join(problems))


def _name_problem(columns: list[str], ens: TreeEnsemble) -> str:
    """What is wrong with the feature columns' names for a model that knows its feature
    names ("" when they match as a set, or when the model knows no names)."""
    if ens.feature_names is None:
        return ""
    columns = library_names([str(c) for c in columns], ens)  # LightGBM: spaces -> "_"
    known = set(ens.feature_names)
    missing = [n for n in ens.feature_names if n not in columns]
    extra = [str(c) for c in columns if c not in known]
    if not missing and not extra:
        return ""
    parts = ([f"lacks {missing}"] if missing else []) + (
        [f"has columns the model does not know {extra}"] if extra else []
    )
    return (
        f"{[str(c) for c in columns]} do not match the model's feature names "
        f"{list(ens.feature_names)}: {'; '.join(parts)} (features are matched by name; set "
        "`columns` to the model's feature names)"
    )


def _features(samples: pd.DataFrame, columns: list[str], name: str) -> pd.DataFrame:
    bad = [c for c in columns if not pd.api.types.is_numeric_dtype(samples[c])]
    if bad:
        raise ValueError(f"custom case {name!r}: samples columns {bad} are not numeric")
    X = samples[columns]
    finite = np.isfinite(X.to_numpy(dtype=np.float64))
    if not finite.all():
        row = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise ValueError(f"custom case {name!r}: samples row {row} has a missing or infinite value")
    return X


def run_case(model: Any, samples: pd.DataFrame, *, case: Mapping[str, Any]) -> CaseResult:
    """Robustness of every sample of one ``trees`` case (module docstring).

    ``model``: a fitted classifier :func:`reliquant.trees.extract_ensemble` reads (e.g. from
    :func:`reliquant.trees.readers.model_files.load_model`); ``case``: the case's config entry
    (``noise.variance``, ``time_budget``, optional ``columns``, ``seed`` (default 0),
    ``confidence`` (0.95), ``max_boxes`` with ``max_draws``). The feature columns are matched
    to a model's feature names by name when it knows them (module docstring). One row per
    sample: ``row`` (its position in ``samples``), ``label`` = f(x) and the fields of
    :class:`reliquant.trees.RobustnessResult`, ``overrun`` among them (why a sample took
    longer than its ``time_budget`` allows, ``""`` when it did not).
    """
    name = case["name"]
    columns = case_columns(samples, case)
    X = _features(samples, columns, name)
    ens = extract_ensemble(model)
    problem = _name_problem([str(c) for c in columns], ens)
    if problem:
        raise ValueError(f"custom case {name!r}: the feature columns {problem}")
    if len(columns) != ens.n_features:
        raise ValueError(
            f"custom case {name!r}: {len(columns)} feature columns {columns[:10]} but the model "
            f"has {ens.n_features} features; set `columns` to the model's features in order"
        )
    variance = case["noise"]["variance"]
    if isinstance(variance, list):  # one per feature column, in the order of `columns`
        values = np.asarray(variance, dtype=np.float64)
        named = ens.feature_names is not None and len(values) == len(columns)
        noise = Gaussian(pd.Series(values, index=[str(c) for c in columns]) if named else values)
    else:
        noise = Gaussian(float(variance))
    kwargs: dict[str, Any] = {
        "time_budget": float(case["time_budget"]),
        "confidence": float(case.get("confidence", 0.95)),
    }
    if "max_boxes" in case:
        kwargs.update(max_boxes=int(case["max_boxes"]), max_draws=int(case["max_draws"]))
    if ens.feature_names is None:  # read by position, whatever the columns are called
        X = X.to_numpy(dtype=np.float64)
    frame = robustness_batch(ens, X, noise, seed=int(case.get("seed", 0)), **kwargs)
    frame = frame.rename(columns={"sample": "row"})
    labels, label_type = label_values(frame["label"])
    frame["label"] = labels
    schema = pa.schema(
        [
            ("row", pa.int64()),
            ("label", label_type),
            ("lower", pa.float64()),
            ("upper", pa.float64()),
            ("estimate", pa.float64()),
            ("ci_low", pa.float64()),
            ("ci_high", pa.float64()),
            ("half_width", pa.float64()),
            ("confidence", pa.float64()),
            ("exact", pa.bool_()),
            ("n_draws", pa.int64()),
            ("stop", pa.string()),
            ("seconds", pa.float64()),
            ("certify_seconds", pa.float64()),
            ("n_boxes", pa.int64()),
            ("n_strata", pa.int64()),
            ("n_in_play", pa.int64()),
            ("n_live_trees", pa.int64()),
            ("status", pa.string()),
            ("overrun", pa.string()),
        ]
    )
    frame = frame[schema.names]
    return CaseResult(
        frame, schema, _markdown(frame, case, columns, ens.source), _figure(frame, case)
    )


def _figure(frame: pd.DataFrame, case: Mapping[str, Any]):
    """Left: per sample, the interval ``ci_low .. ci_high`` that holds R at ``confidence``
    (a point when exact) with the estimate (exact samples filled, sampled ones open), and the
    certified ``[lower, upper]`` as a light band only where it says more than ``[0, 1]``;
    right: the histogram of the estimates."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    apply_style()
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(8.0, 3.6), gridspec_kw={"width_ratios": [2, 1]}
    )
    x = frame["row"].to_numpy()
    r = frame["estimate"].to_numpy(np.float64)
    lo, hi = frame["lower"].to_numpy(np.float64), frame["upper"].to_numpy(np.float64)
    exact = frame["exact"].to_numpy(dtype=bool)
    informative = (lo > 0.0) | (hi < 1.0)
    if informative.any():
        left.vlines(x[informative], lo[informative], hi[informative], color="0.8", lw=5,
                    label="certified bounds")  # fmt: skip
    conf = frame["confidence"].iloc[0] if len(frame) else 0.95
    left.vlines(x, frame["ci_low"], frame["ci_high"], color="0.2", lw=1.2,
                label=f"{conf:.0%} interval")  # fmt: skip
    left.scatter(x[exact], r[exact], color=PALETTE[0], s=18, zorder=3, label="exact")
    left.scatter(
        x[~exact], r[~exact], facecolors="none", edgecolors=PALETTE[3], s=18, zorder=3,
        label="estimate (sampled)",
    )  # fmt: skip
    # every drawn mark inside the axes: estimates, intervals and the certified bounds shown
    shown = np.r_[r[np.isfinite(r)], frame["ci_low"].to_numpy(np.float64), lo[informative]]
    bottom = float(np.nanmin(shown)) if len(shown) else 0.0
    left.set_ylim(
        max(0.0, bottom - 0.05 * max(1.0 - bottom, 0.02)) - 0.01 * (bottom <= 0.0),
        1.0 + 0.02 * (1 - bottom) + 1e-3,
    )
    left.set_xlabel("sample (row of the samples table)")
    left.set_ylabel("robustness R(x)")
    left.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))  # labels never overlap
    right.hist(r[np.isfinite(r)], bins=np.linspace(0.0, 1.0, 21), color=PALETTE[0],
               edgecolor="white")  # fmt: skip
    right.set_xlabel("robustness R(x)")
    right.set_ylabel("samples")
    right.set_xticks([0.0, 0.5, 1.0])
    right.yaxis.set_major_locator(MaxNLocator(integer=True))
    # the legend below the panels, where it covers no point
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.subplots_adjust(bottom=0.27, wspace=0.35, top=0.85)
    fig.suptitle(f"{case['name']}: tree-ensemble robustness of {len(frame)} samples")
    return fig


def _markdown(frame: pd.DataFrame, case: Mapping[str, Any], columns: list[str], source: str) -> str:
    stops = ", ".join(f"{k} {v}" for k, v in frame["stop"].value_counts().sort_index().items())
    mode = (
        f"reproducible mode (max_boxes {case['max_boxes']}, max_draws {case['max_draws']})"
        if "max_boxes" in case
        else f"time budget {case['time_budget']} s per sample"
    )
    text = (
        f"Model `{case['model']}` ({source}, {len(columns)} features), samples "
        f"`{case['samples']}` ({len(frame)} rows). Probabilistic robustness R(x) = "
        f"P(f(x') = f(x)), x' ~ N(x, diag(variance)), variance {case['noise']['variance']} "
        f"(papers 001/002, eq. 1); {mode}. Certified bounds lower..upper; ci_low..ci_high "
        f"holds R with probability {frame['confidence'].iloc[0] if len(frame) else ''}. "
        f"Exact: {int(frame['exact'].sum())} of {len(frame)}; stops: {stops}."
    )
    over = frame.loc[frame["overrun"] != "", ["row", "overrun"]]
    if len(over):
        first = over.iloc[0]
        text += (
            f" Over their time budget: {len(over)} of {len(frame)} samples (column `overrun` "
            f"says why; row {first['row']}: {first['overrun']})."
        )
    shown = frame[["row", "label", "estimate", "ci_low", "ci_high", "lower", "upper", "exact"]]
    more = (
        f"\n\nFirst {SUMMARY_ROWS} of {len(frame)} samples (all of them: "
        f"results/custom/{case['name']}.parquet)."
        if len(frame) > SUMMARY_ROWS
        else ""
    )
    return (
        f"# Your case {case['name']}: tree-ensemble robustness\n\n{text}{more}\n\n"
        + frame_to_markdown(shown.head(SUMMARY_ROWS), floatfmt=".6g")
    )
