"""The experiments of Section 5 of papers 001/002, one function per workflow job.

Each function takes the job's data and its config section (keyword-only), fits the model of
the section's ``model:`` key (:func:`reliquant.trees.reproduction.models.fit_model`), runs a per-sample
computation of :mod:`reliquant.trees.reproduction.per_sample` and returns an :class:`ExperimentResult`:
the table with its Arrow schema, a markdown section and the figure. The scripts only read the
inputs, call one of these and write what it returns.

* :func:`table1` - Table 1 of 002: Iris decision tree, all boxes vs 99 % boxes.
* :func:`table2` - Table 2 of 002: MNIST 5x5 random forest, four methods and their runtimes.
* :func:`table3_size` - Table 3 of 002 for one MNIST size: exact vs Monte Carlo per depth.
* :func:`table3` - Table 3 of 002: agreement per (size, depth, variance) over every size.
* :func:`iris_mixed` - Figure 5 of 001: Iris XGBoost under mixed NORTA noise.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.datasets import IRIS_FEATURES
from reliquant.core.io import frame_to_markdown
from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.monte_carlo import kernel_threads
from reliquant.trees.readers import extract_ensemble
from reliquant.trees.reproduction.agreement import TABLE3_SCHEMA, mc_agreement, r2_score
from reliquant.trees.reproduction.data import (
    MarginalSpec,
    iris_noise,
    mnist_features,
)
from reliquant.trees.reproduction.figures import (
    plot_box_comparison,
    plot_mc_comparison,
    plot_per_sample,
    plot_runtimes,
)
from reliquant.trees.reproduction.models import (
    FittedSplit,
    accuracy,
    describe_model,
    fit_model,
    fit_split,
)
from reliquant.trees.reproduction.per_sample import (
    TABLE1_SCHEMA,
    TABLE2_SCHEMA,
    box_comparison,
    mc_comparison,
    norta_robustness,
    norta_schema,
    runtime_comparison,
)

__all__ = [
    "ExperimentResult",
    "MnistSplit",
    "TABLE3_SIZE_SCHEMA",
    "iris_mixed",
    "iris_split",
    "markdown_section",
    "norta_table",
    "table1",
    "table2",
    "table3",
    "table3_size",
]

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)

#: MNIST images and labels of one split, as :func:`reliquant.core.datasets.load_mnist_split`.
MnistSplit = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class ExperimentResult:
    """What one experiment job writes: its table with the Arrow schema to write it with, a
    markdown section and a figure (both optional), and (Table 2) the wall-clock runtimes as
    tab-separated text, kept out of the parquet table because they differ between runs."""

    table: pd.DataFrame
    schema: pa.Schema
    markdown: str = ""
    figure: Figure | None = None
    runtimes_tsv: str = ""


def markdown_section(title: str, text: str, frame: pd.DataFrame, floatfmt: str = ".6g") -> str:
    """A markdown document: heading, a paragraph, a table."""
    return f"# {title}\n\n{text}\n\n" + frame_to_markdown(frame, floatfmt=floatfmt)


def iris_split(iris: pd.DataFrame, *, exp: Mapping[str, Any], seed: int, block: str) -> FittedSplit:
    """The Iris table's four features and ``target``, split and fitted as ``trees.<block>``
    configures (``model``, ``test_fraction``)."""
    x, y = iris[list(IRIS_FEATURES)].to_numpy(float), iris["target"].to_numpy()
    return fit_split(
        x,
        y,
        model=exp["model"],
        test_fraction=exp["test_fraction"],
        seed=seed,
        block=block,
        key=f"trees.{block}.model",
    )


# --------------------------------------------------------------------------------------
# Tables 1-3 of 002: independent normal noise
# --------------------------------------------------------------------------------------
def table1(
    iris: pd.DataFrame, *, exp: Mapping[str, Any], common: Mapping[str, Any]
) -> ExperimentResult:
    """Table 1 (Section 5.1): the ``trees.table1`` model on Iris, robustness of its test
    samples under N(mu, variance I) from all boxes vs the 99 % boxes, and R^2 between them."""
    fit = iris_split(iris, exp=exp, seed=common["seed"], block="table1")
    log.info("%s, test accuracy %.3f", describe_model(exp["model"]), fit.accuracy)
    table = box_comparison(
        fit.ensemble,
        x_test=fit.x_test,
        variance=exp["variance"],
        level=common["prune_level"],
        tol=common["engine_tol"],
    )
    r2 = r2_score(table["robustness_all"], table["robustness_pruned"])
    log.info("R^2(all, 99 %% boxes) = %.8f, max |diff| = %.3g", r2, table["abs_diff"].max())
    text = (
        f"Paper 002, Table 1: Iris, {describe_model(exp['model'])}, "
        f"{len(fit.x_test)} test samples, noise N(mu, {exp['variance']:g} I). `boxes_*`: boxes "
        "of the grid enumerated (all, or meeting the bounding box of the "
        f"{common['prune_level']:.0%} ellipsoid); `boxes_label_*`: those with the sample's "
        "label (the paper's count). `robustness_exact`: our engine. "
        f"R^2(all, pruned) = {r2:.8f}; test accuracy {fit.accuracy:.3f}."
    )
    md = markdown_section("Table 1: all boxes vs 99 % boxes (Iris)", text, table)
    return ExperimentResult(table, TABLE1_SCHEMA, md, plot_box_comparison(table))


def table2(
    *, train: MnistSplit, test: MnistSplit, exp: Mapping[str, Any], common: Mapping[str, Any]
) -> ExperimentResult:
    """Table 2 (Section 5.2): the ``trees.table2`` model on MNIST resized to ``size``, for
    the first ``n_test`` test images: all boxes, 99 % boxes, our engine and Monte Carlo
    (compiled kernel, and numpy + predict for reference), with seconds
    per method (:func:`reliquant.trees.reproduction.per_sample.runtime_comparison`)."""
    seed, resize = common["seed"], common["mnist_resize"]
    x_tr = mnist_features(train[0], exp["size"], resize)
    x_te = mnist_features(test[0], exp["size"], resize)
    model = fit_model(
        exp["model"],
        x_tr,
        train[1],
        seed=block_int_seed(seed, "table2", "fit"),
        key="trees.table2.model",
    )
    acc = accuracy(model, x_te, test[1])
    ensemble = extract_ensemble(model)
    log.info(
        "%s: test accuracy %.4f, grid of %d boxes",
        exp["model"]["kind"],
        acc,
        ensemble.n_grid_boxes(),
    )
    n = exp["n_test"]
    table, runtimes = runtime_comparison(
        ensemble,
        x_test=x_te[:n],
        y_test=test[1][:n],
        variance=exp["variance"],
        level=common["prune_level"],
        tol=common["engine_tol"],
        n_draws=exp["mc_draws"],
        seed=seed,
        key=("table2",),
        max_grid_boxes=exp["max_grid_boxes"],
    )
    shown_columns = ["sample", "label", "boxes_label_all", "boxes_label_pruned", "engine_boxes"]
    shown = table[[*shown_columns, "robustness_exact", "mc_estimate"]].merge(runtimes, on="sample")
    med = runtimes.median(numeric_only=True)
    text = (
        f"Paper 002, Table 2: MNIST resized to {exp['size']}x{exp['size']} ({resize}), "
        f"{describe_model(exp['model'])} (test accuracy {acc:.4f}), first {n} test images, "
        f"noise N(mu, {exp['variance']:g} I). Boxes with the sample's label (all boxes, 99 % "
        f"boxes; the full grid has {ensemble.n_grid_boxes():,} boxes), boxes our engine "
        f"bounded, and seconds per method. Monte Carlo: {exp['mc_draws']:,} plain draws, "
        "estimate = share of draws with the sample's label, timed twice: `monte_carlo` on "
        f"the compiled kernel ({kernel_threads()} numba thread(s); its estimate is "
        "`mc_estimate`), `monte_carlo_numpy` with numpy sampling and the ensemble's predict "
        "(for reference; the grids and `monte_carlo` are compiled; estimate `mc_numpy_estimate` in "
        f"table2.parquet). Median seconds: all boxes {med['all_boxes']:.3g}, 99 % boxes "
        f"{med['pruned_boxes']:.3g}, engine {med['engine']:.3g}, Monte Carlo compiled "
        f"{med['monte_carlo']:.3g}, Monte Carlo numpy + predict "
        f"{med['monte_carlo_numpy']:.3g}; Monte Carlo / engine = "
        f"{med['monte_carlo'] / med['engine']:.3g}x (compiled), "
        f"{med['monte_carlo_numpy'] / med['engine']:.3g}x (numpy + predict). Runtimes are "
        "this machine's and vary between runs (they live in table2_runtimes.tsv, not in "
        "table2.parquet)."
    )
    return ExperimentResult(
        table,
        TABLE2_SCHEMA,
        markdown_section("Table 2: runtimes (MNIST 5x5 random forest)", text, shown, ".4g"),
        plot_runtimes(runtimes),
        runtimes.to_csv(sep="\t", index=False, float_format="%.6g"),
    )


TABLE3_SIZE_SCHEMA = pa.schema(
    [
        ("size", pa.int32()),
        ("depth", pa.int32()),
        ("variance", pa.float64()),
        ("sample", pa.int32()),
        ("robustness_exact", pa.float64()),
        ("engine_lower", pa.float64()),
        ("engine_upper", pa.float64()),
        ("boxes_pruned", pa.int64()),
        ("robustness_pruned", pa.float64()),
        ("mc_estimate", pa.float64()),
        ("mc_ci_low", pa.float64()),
        ("mc_ci_high", pa.float64()),
        ("accuracy", pa.float64()),
    ]
)


def table3_size(
    *,
    size: int,
    depths: Sequence[int],
    train: MnistSplit,
    test: MnistSplit,
    exp: Mapping[str, Any],
    common: Mapping[str, Any],
) -> ExperimentResult:
    """Table 3 (Section 5.3) for MNIST resized to ``size``: per depth, the ``trees.table3``
    model with that ``max_depth`` (seed ``block_int_seed(seed, "table3", size, depth)``),
    exact robustness vs Monte Carlo (``mc_draws`` plain draws on the compiled kernel,
    :func:`reliquant.trees.reproduction.per_sample.mc_comparison`) over the variances for the first
    ``n_test`` test images; ``accuracy`` on the whole test set. Table only (columns :data:`TABLE3_SIZE_SCHEMA`)."""
    seed, resize = common["seed"], common["mnist_resize"]
    x_tr = mnist_features(train[0], size, resize)
    x_te = mnist_features(test[0][: exp["n_test"]], size, resize)
    all_test = mnist_features(test[0], size, resize)
    frames = []
    for depth in depths:
        model = fit_model(
            {**exp["model"], "max_depth": depth},
            x_tr,
            train[1],
            seed=block_int_seed(seed, "table3", size, depth),
            key="trees.table3.model",
        )
        acc = accuracy(model, all_test, test[1])
        ensemble = extract_ensemble(model)
        log.info(
            "size %d depth %d: test accuracy %.4f, grid %d boxes",
            size,
            depth,
            acc,
            ensemble.n_grid_boxes(),
        )
        frame = mc_comparison(
            ensemble,
            x_test=x_te,
            variances=exp["variances"],
            level=common["prune_level"],
            tol=common["engine_tol"],
            n_draws=exp["mc_draws"],
            seed=seed,
            key=("table3", size, depth),
            max_grid_boxes=exp["max_grid_boxes"],
        )
        frame.insert(0, "depth", depth)
        frame.insert(0, "size", size)
        frame["accuracy"] = acc
        frames.append(frame)
    return ExperimentResult(pd.concat(frames, ignore_index=True), TABLE3_SIZE_SCHEMA)


def table3(per_size: Sequence[pd.DataFrame]) -> ExperimentResult:
    """Table 3 (Section 5.3) over every size: :func:`reliquant.trees.reproduction.agreement.mc_agreement`
    of the per-sample rows of :func:`table3_size`, with the exact-vs-Monte-Carlo scatter."""
    per_sample = pd.concat(per_size, ignore_index=True)
    table = mc_agreement(per_sample)
    log.info("Table 3:\n%s", table.to_string())
    text = (
        "Paper 002, Table 3: decision trees on resized MNIST, first test images, noise "
        "N(mu, v I). Monte Carlo: the configured number of plain draws per sample on the "
        "compiled kernel (estimate = share of draws with the sample's label, as the paper's). "
        "`r2`: R^2 of the Monte Carlo estimate against the exact robustness (our "
        "engine, certified to the configured tolerance); `r2_grid_mc`: against the paper's "
        "99 % grid where that grid was small enough to enumerate (`n_grid` samples; the full "
        "grid is infeasible for the larger sizes and variances, so the engine is the "
        "reference); `frac_in_ci`: share of samples whose exact value lies in the Monte Carlo "
        "95 % Clopper-Pearson interval. R^2 is NaN when every exact value of a group is "
        "identical (e.g. all 1) while the estimates are not."
    )
    md = markdown_section("Table 3: exact vs Monte Carlo (MNIST decision trees)", text, table)
    return ExperimentResult(table, TABLE3_SCHEMA, md, plot_mc_comparison(per_sample))


# --------------------------------------------------------------------------------------
# Figure 4 of 002 and Figure 5 of 001: NORTA noise
# --------------------------------------------------------------------------------------
def norta_table(
    fit: FittedSplit,
    *,
    specs: Sequence[MarginalSpec],
    corr: np.ndarray,
    exp: Mapping[str, Any],
    seed: int,
    key: str,
) -> tuple[pd.DataFrame, pa.Schema]:
    """:func:`reliquant.trees.reproduction.per_sample.norta_robustness` of the test samples of ``fit``, as
    a NORTA config section sets it (``method``, ``engine_tol``, ``mc_draws``, ``abseps``),
    QMC masses seeded from ``(seed, key, "qmc")``; with the table's Arrow schema."""
    table = norta_robustness(
        fit.ensemble,
        x_test=fit.x_test,
        y_test=fit.y_test,
        specs=specs,
        corr=corr,
        tol=exp["engine_tol"],
        seed=seed,
        key=key,
        n_draws=exp["mc_draws"],
        abseps=exp["abseps"],
        mass_seed=block_int_seed(seed, key, "qmc") % 2**32,
        method=exp["method"],
    )
    return table, norta_schema(exp["method"] == "engine" and exp["mc_draws"] > 0)


def iris_mixed(iris: pd.DataFrame, *, exp: Mapping[str, Any], seed: int) -> ExperimentResult:
    """Figure 5 of 001 (Section 5.4): the ``trees.iris_mixed`` model on Iris, mixed NORTA
    noise of :func:`reliquant.trees.reproduction.data.iris_noise` (correlations drawn from
    ``block_rng(seed, "iris_mixed", "corr")``); robustness per test sample with its bounds."""
    fit = iris_split(iris, exp=exp, seed=seed, block="iris_mixed")
    log.info("%d trees, test accuracy %.4f", fit.ensemble.n_trees, fit.accuracy)
    specs, corr = iris_noise(
        marginals=exp["marginals"],
        centred=exp["centred"],
        corr_low=exp["corr_low"],
        corr_high=exp["corr_high"],
        rng=block_rng(seed, "iris_mixed", "corr"),
    )
    log.info("normal correlation:\n%s", corr)
    table, schema = norta_table(fit, specs=specs, corr=corr, exp=exp, seed=seed, key="iris_mixed")
    n_one = int((table["lower"] >= 1.0 - exp["engine_tol"]).sum())
    marginals = ", ".join(
        f"{f} {s.family} (scale {s.scale:g}" + (f", shape {s.shape:g})" if s.shape else ")")
        for f, s in zip(IRIS_FEATURES, specs, strict=True)
    )
    off_diagonal = ", ".join(f"{v:.3f}" for v in corr[np.triu_indices(len(IRIS_FEATURES), 1)])
    text = (
        f"Paper 001, Figure 5: Iris, {describe_model(exp['model'])} ({fit.ensemble.n_trees} "
        f"trees), test accuracy {fit.accuracy:.4f}, {len(fit.x_test)} test samples. Noise "
        f"marginals: {marginals}; normal correlations off the diagonal: {off_diagonal}. "
        f"{n_one} samples have robustness 1 (up to the engine's tolerance)."
    )
    md = markdown_section("Figure 5 (001): Iris robustness under mixed noise", text, table)
    title = f"Iris XGBoost, mixed noise ({len(fit.x_test)} test samples)"
    return ExperimentResult(table, schema, md, plot_per_sample(table, title))
