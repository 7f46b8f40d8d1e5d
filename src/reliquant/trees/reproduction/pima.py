"""Figure 4 of paper 002 (Section 5.4): Pima, XGBoost, NORTA noise, and the noise-reading
sensitivity table.

Each subject's robustness comes from :func:`reliquant.trees.anytime.robustness` with
``Norta(marginals, correlation)`` in its deterministic mode (a box budget for the
certification, then plain NORTA draws on the compiled kernel until a target half-width or a
draw budget; :func:`reliquant.trees.reproduction.per_sample.anytime_norta_robustness`): a point estimate
with an anytime-valid confidence interval and certified bounds, identical between runs.

The paper's text reads its signal-to-noise factor of 10 as a variance factor, its Figure 4
caption as an amplitude ratio (10/1). :func:`pima` computes the per-subject robustness of
every (reading, boosting rounds) cell of the ``trees.pima`` config, returns the default cell's
table and histogram, and the sensitivity table (:data:`PIMA_SENSITIVITY_SCHEMA`);
:func:`reliquant.trees.reproduction.paper.pima_best_match` says which cell the paper's numbers
match best (nearest count above the threshold, then min robustness, then accuracy), computed
from the run.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown
from reliquant.core.paper import paper_number
from reliquant.trees.reproduction.agreement import robustness_summary
from reliquant.trees.reproduction.data import (
    PIMA_FEATURES,
    PIMA_TARGET,
    MarginalSpec,
    filter_pima,
    pima_noise,
    snr_noise_std,
)
from reliquant.trees.reproduction.experiments import ExperimentResult
from reliquant.trees.reproduction.figures import plot_histogram
from reliquant.trees.reproduction.models import FittedSplit, describe_model, fit_split
from reliquant.trees.reproduction.paper import pima_best_match, pima_match_sentence
from reliquant.trees.reproduction.per_sample import (
    ANYTIME_SCHEMA,
    anytime_norta_robustness,
    anytime_norta_tables,
)

__all__ = [
    "PIMA_SENSITIVITY_SCHEMA",
    "PimaCell",
    "PimaResult",
    "decided",
    "pima",
    "pima_cell",
    "pima_default",
    "pima_fit",
    "pima_sensitivity",
    "pima_sensitivity_markdown",
]

log = logging.getLogger(__name__)


#: Arrow schema of the Pima sensitivity table (:func:`pima`, ``pima_sensitivity.parquet``):
#: one row per (reading, rounds) cell, in config order. ``n_above`` counts point estimates
#: above the threshold; ``n_ci_above`` / ``n_ci_below`` the subjects whose confidence
#: interval lies entirely above it / at or below it (decided at the configured confidence).
PIMA_SENSITIVITY_SCHEMA = pa.schema(
    [
        ("reading", pa.string()),
        ("rounds", pa.int32()),
        ("noise_std_factor", pa.float64()),
        ("n_test", pa.int32()),
        ("accuracy", pa.float64()),
        ("n_above", pa.int32()),
        ("n_ci_above", pa.int32()),
        ("n_ci_below", pa.int32()),
        ("min_robustness", pa.float64()),
        ("median_robustness", pa.float64()),
        ("max_robustness", pa.float64()),
        ("default", pa.bool_()),
    ]
)


@dataclass(frozen=True)
class PimaCell:
    """One cell of the Pima sensitivity table: the model fitted with ``rounds`` boosting rounds,
    the NORTA noise of one SNR ``reading`` (``specs``, ``corr``) and the per-subject table."""

    reading: str
    rounds: int
    fit: FittedSplit
    specs: list[MarginalSpec]
    corr: np.ndarray
    table: pd.DataFrame
    schema: pa.Schema


@dataclass(frozen=True)
class PimaResult(ExperimentResult):
    """:func:`pima`'s outputs: the default cell as an :class:`ExperimentResult` (per-subject
    table, markdown with the sensitivity section, histogram) plus the sensitivity table
    (columns :data:`PIMA_SENSITIVITY_SCHEMA`) and the default cell itself."""

    sensitivity: pd.DataFrame = field(default_factory=pd.DataFrame)
    default: PimaCell | None = None


def pima_default(exp: Mapping[str, Any]) -> tuple[str, int]:
    """The ``(reading, rounds)`` of ``trees.pima.default``, checked to be a cell of
    ``readings`` x ``rounds``; the ``model`` must leave ``n_estimators`` to ``rounds``."""
    if "n_estimators" in exp["model"]:
        raise ValueError(
            "config key trees.pima.model must not set n_estimators: the boosting rounds come "
            f"from trees.pima.rounds {list(exp['rounds'])}"
        )
    reading, rounds = exp["default"]["reading"], int(exp["default"]["rounds"])
    if reading not in exp["readings"] or rounds not in [int(r) for r in exp["rounds"]]:
        raise ValueError(
            f"config key trees.pima.default ({reading}, {rounds} rounds) is not a cell of "
            f"trees.pima.readings {list(exp['readings'])} x trees.pima.rounds "
            f"{list(exp['rounds'])}"
        )
    return reading, rounds


def pima_cell(
    frame: pd.DataFrame,
    *,
    exp: Mapping[str, Any],
    seed: int,
    reading: str,
    rounds: int,
    fit: FittedSplit | None = None,
) -> PimaCell:
    """One sensitivity cell on the filtered Pima ``frame``: the ``trees.pima`` model with
    ``n_estimators = rounds`` (split and fit seeds of :func:`fit_split` with block ``pima``,
    so every cell has the same test subjects), the NORTA noise of
    :func:`reliquant.trees.reproduction.data.pima_noise` with ``snr_kind = reading``, and
    :func:`reliquant.trees.reproduction.per_sample.anytime_norta_robustness` with the ``trees.pima``
    settings (``confidence``, ``half_width``, ``max_draws``, ``max_boxes``, ``engine_tol``,
    ``abseps``) and key ``pima`` (the same random streams in every cell). ``fit``: that
    fitted split when the caller already has it (:func:`pima_fit`; the readings of one
    ``rounds`` share it), else it is fitted here."""
    if fit is None:
        fit = pima_fit(frame, exp=exp, seed=seed, rounds=rounds)
    specs, corr = _cell_noise(fit, exp, reading)
    table = anytime_norta_robustness(
        fit.ensemble, x_test=fit.x_test, y_test=fit.y_test, specs=specs, corr=corr,
        **_anytime_settings(exp, seed),
    )  # fmt: skip
    return _cell(reading, rounds, fit, specs, corr, table)


def _cell_noise(fit: FittedSplit, exp: Mapping[str, Any], reading: str):
    """The NORTA noise (specs, correlation) of a cell of ``reading`` on ``fit``'s split."""
    return pima_noise(
        fit.x_train,
        families=exp["families"],
        snr=exp["snr"],
        snr_kind=reading,
        centred=exp["centred"],
    )


def _anytime_settings(exp: Mapping[str, Any], seed: int) -> dict:
    """The ``trees.pima`` settings of :func:`anytime_norta_robustness` (key ``pima``)."""
    return {
        "confidence": exp["confidence"],
        "half_width": exp["half_width"],
        "max_draws": exp["max_draws"],
        "max_boxes": exp["max_boxes"],
        "tol": exp["engine_tol"],
        "abseps": exp["abseps"],
        "seed": seed,
        "key": "pima",
    }


def _cell(reading: str, rounds: int, fit: FittedSplit, specs, corr, table) -> PimaCell:
    """The :class:`PimaCell` of a computed table (its summary logged)."""
    log.info(
        "%s reading, %d rounds: test accuracy %.4f, median robustness %.4f, %d draws",
        reading,
        rounds,
        fit.accuracy,
        float(table["robustness"].median()),
        int(table["n_draws"].sum()),
    )
    return PimaCell(reading, int(rounds), fit, specs, corr, table, ANYTIME_SCHEMA)


def pima_fit(frame: pd.DataFrame, *, exp: Mapping[str, Any], seed: int, rounds: int) -> FittedSplit:
    """The filtered Pima ``frame`` split and the ``trees.pima`` model fitted with
    ``n_estimators = rounds`` (seeds of :func:`fit_split` with block ``pima``: every cell
    has the same test subjects, and the cells of one ``rounds`` the same model)."""
    x, y = frame[list(PIMA_FEATURES)].to_numpy(float), frame[PIMA_TARGET].to_numpy()
    return fit_split(
        x,
        y,
        model={**exp["model"], "n_estimators": int(rounds)},
        test_fraction=exp["test_fraction"],
        seed=seed,
        block="pima",
        key="trees.pima.model",
    )


def decided(table: pd.DataFrame, threshold: float) -> tuple[int, int]:
    """Subjects whose confidence interval lies entirely above ``threshold``
    (``ci_low > threshold``) and entirely at or below it (``ci_high <= threshold``)."""
    return (
        int((table["ci_low"] > threshold).sum()),
        int((table["ci_high"] <= threshold).sum()),
    )


def pima_sensitivity(
    cells: Sequence[PimaCell], *, snr: float, threshold: float, default: tuple[str, int]
) -> pd.DataFrame:
    """The sensitivity table (:data:`PIMA_SENSITIVITY_SCHEMA`), one row per cell:
    ``noise_std_factor`` = noise sigma / training std of every feature (1/sqrt(snr) for the
    variance reading, 1/snr for the amplitude reading), test accuracy, how many test subjects
    have robustness (the point estimate) above ``threshold`` and how many are decided either
    way by their confidence interval (:func:`decided`), min/median/max robustness;
    ``default`` marks the cell of ``default``."""
    rows = []
    for c in cells:
        s = robustness_summary(c.table["robustness"], threshold)
        ci_above, ci_below = decided(c.table, threshold)
        rows.append(
            {
                "reading": c.reading,
                "rounds": c.rounds,
                "noise_std_factor": float(snr_noise_std(np.ones(1), snr, c.reading)[0]),
                "n_test": s["n"],
                "accuracy": c.fit.accuracy,
                "n_above": s["n_above"],
                "n_ci_above": ci_above,
                "n_ci_below": ci_below,
                "min_robustness": s["min"],
                "median_robustness": float(np.median(c.table["robustness"])),
                "max_robustness": s["max"],
                "default": (c.reading, c.rounds) == default,
            }
        )
    return pd.DataFrame(rows, columns=PIMA_SENSITIVITY_SCHEMA.names)


def pima_sensitivity_markdown(
    sensitivity: pd.DataFrame, paper: Mapping[str, Any], snr: float, threshold: float
) -> str:
    """The sensitivity section of ``pima.md``: the table and the cell that matches the
    paper's numbers best (:func:`reliquant.trees.reproduction.paper.pima_best_match`)."""
    best = pima_best_match(sensitivity, paper)
    text = (
        'Paper 002 gives its signal-to-noise ratio twice: §5.4 "a signal-noise ratio factor '
        'of 10 to downscale the variance" (`variance` reading: noise variance = s^2 / '
        f'{snr:g}, sigma = s / sqrt({snr:g})) and the caption of Figure 4 "signal-to-noise '
        f"ratio of 10/1\" (`amplitude` reading: sigma = s / {snr:g}), with s the feature's "
        "training-set standard deviation; the number of boosting rounds is not given. Every "
        "cell has the same split, test subjects and random streams. "
        f"`noise_std_factor` = sigma / s; `n_above`: test subjects whose robustness estimate "
        f"is above {threshold:g}; `n_ci_above` / `n_ci_below`: those whose confidence "
        f"interval lies entirely above {threshold:g} / at or below it; `default`: the cell of "
        "the per-subject table and the histogram. " + pima_match_sentence(best, paper)
    )
    return f"## Sensitivity: SNR reading x boosting rounds\n\n{text}\n\n" + frame_to_markdown(
        sensitivity, floatfmt=".4g"
    )


def pima(
    raw: pd.DataFrame, *, exp: Mapping[str, Any], seed: int, paper: Mapping[str, Any]
) -> PimaResult:
    """Figure 4 of 002 (Section 5.4): the Pima table filtered (724 subjects), the table of
    :func:`pima_cell` for every ``trees.pima`` reading x rounds (the sensitivity table of
    :func:`pima_sensitivity`), and for the ``trees.pima.default`` cell the robustness of every
    test subject and its histogram. The cells are computed together, subject by subject
    (:func:`reliquant.trees.reproduction.per_sample.anytime_norta_tables`: the same tables,
    each subject's normal scores drawn once for all cells). ``paper``: the ``trees.paper``
    numbers (``pima_*``; the threshold and the paper's values the best-matching cell is
    measured against)."""
    default = pima_default(exp)
    threshold = float(paper_number(paper, "pima_threshold", "trees"))
    frame = filter_pima(raw)
    # one fit per rounds, shared by its readings (the fit does not depend on the reading)
    fits = {int(r): pima_fit(frame, exp=exp, seed=seed, rounds=int(r)) for r in exp["rounds"]}
    # every cell at once, subject by subject (anytime_norta_tables): the tables of pima_cell,
    # with each subject's normal scores drawn once for all cells
    keys = [(reading, int(r)) for reading in exp["readings"] for r in exp["rounds"]]
    noises = [_cell_noise(fits[r], exp, reading) for reading, r in keys]
    first = fits[keys[0][1]]
    if any(
        not (np.array_equal(f.x_test, first.x_test) and np.array_equal(f.y_test, first.y_test))
        for f in fits.values()
    ):
        raise RuntimeError("the Pima cells do not share their test subjects")
    tables = anytime_norta_tables(
        [(fits[r].ensemble, specs, corr) for (_, r), (specs, corr) in zip(keys, noises, strict=True)],
        x_test=first.x_test, y_test=first.y_test, **_anytime_settings(exp, seed),
    )  # fmt: skip
    cells = [
        _cell(reading, r, fits[r], specs, corr, table)
        for (reading, r), (specs, corr), table in zip(keys, noises, tables, strict=True)
    ]
    sensitivity = pima_sensitivity(cells, snr=exp["snr"], threshold=threshold, default=default)
    log.info("Pima sensitivity:\n%s", sensitivity.to_string())
    cell = next(c for c in cells if (c.reading, c.rounds) == default)
    table, fit, specs = cell.table, cell.fit, cell.specs
    model = {**exp["model"], "n_estimators": cell.rounds}
    s = robustness_summary(table["robustness"], threshold)
    noise = ", ".join(
        f"{f} {sp.family} (scale {sp.scale:.3g})"
        for f, sp in zip(PIMA_FEATURES, specs, strict=True)
    )
    scale = (
        f"training std / sqrt({exp['snr']:g})"
        if cell.reading == "variance"
        else f"training std / {exp['snr']:g}"
    )
    ci_above, ci_below = decided(table, threshold)
    draws = table["n_draws"]
    method = (
        "`reliquant.trees.robustness` with `Norta(marginals, correlation)`, deterministic mode: "
        f"the branch and bound certifies at most {exp['max_boxes']:,} boxes (QMC abseps "
        f"{exp['abseps']:g}), then plain NORTA draws on the compiled kernel in fixed rounds "
        f"until the {exp['confidence']:.0%} anytime-valid interval has half-width <= "
        f"{exp['half_width']:g} or {exp['max_draws']:,} draws are spent ({int(draws.min()):,} "
        f"to {int(draws.max()):,} draws per subject, median {int(draws.median()):,}). "
        "`robustness` is the estimate, `ci_low`/`ci_high` its interval, `lower`/`upper` the "
        "certified bounds. "
    )
    text = (
        f"Paper 002, Figure 4: Pima ({len(frame)} subjects, {len(fit.x_test)} test), "
        f"{describe_model(model)}, test accuracy {fit.accuracy:.4f}. Default cell: "
        f"`{cell.reading}` reading, {cell.rounds} boosting rounds. Noise: {noise}; scales = "
        f"{scale}; normal correlation 2 sin(pi rho / 6) from the training set's Spearman rho. "
        f"Method: {method}Robustness from {s['min']:.4f} to {s['max']:.4f}; {s['n_above']} "
        f"of {s['n']} above {threshold:g} (estimate); decided at {exp['confidence']:.0%} "
        f"(per subject): {ci_above} with the interval above {threshold:g}, {ci_below} at or "
        f"below, {s['n'] - ci_above - ci_below} undecided."
    )
    md = (
        f"# Figure 4 (002): Pima robustness under NORTA noise\n\n{text}\n\n"
        + pima_sensitivity_markdown(sensitivity, paper, exp["snr"], threshold)
        + "\n## Per-subject robustness (default cell)\n\n"
        + frame_to_markdown(table, floatfmt=".6g")
    )
    title = f"Pima XGBoost, {cell.reading} SNR, {cell.rounds} rounds ({len(fit.x_test)} test)"
    return PimaResult(
        table,
        cell.schema,
        md,
        plot_histogram(table["robustness"], threshold, title),
        sensitivity=sensitivity,
        default=cell,
    )
