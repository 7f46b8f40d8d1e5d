"""The experiments of the tree-robustness papers (001/002, Section 5), one function each.

Each function takes a fitted model (read with :func:`reliquant.trees.structure.extract_ensemble`),
the test samples and the noise parameters, and returns tables as DataFrames. Columns are
deterministic for a fixed seed; wall-clock times go to separate ``*_runtimes`` tables so the
result tables are bit-identical between runs.

* :func:`box_comparison` - Table 1: all boxes vs 99 % boxes (Iris, decision tree).
* :func:`runtime_comparison` - Table 2: all boxes, 99 % boxes, exact engine, Monte Carlo.
* :func:`mc_comparison` - Table 3: exact vs Monte Carlo over a variance sweep.
* :func:`norta_robustness` - Figure 4 of 002 (Pima) and Figure 5 of 001 (Iris mixed noise).
* :func:`r2_score` - the coefficient of determination the papers report.

Model training helpers (:func:`fit_decision_tree`, :func:`fit_random_forest`,
:func:`fit_xgboost`, :func:`split_train_test`) take integer seeds from
:func:`reliquant.core.seeding.block_int_seed`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from reliquant.core.runlog import progress_enabled
from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.box_mass import IndependentNormal, NortaNoise
from reliquant.trees.boxes import grid_intervals, grid_robustness
from reliquant.trees.data import MarginalSpec, marginals_at
from reliquant.trees.monte_carlo import monte_carlo_robustness
from reliquant.trees.structure import TreeEnsemble

log = logging.getLogger(__name__)

MODEL_KINDS = ("decision_tree", "random_forest", "xgboost")


# --------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------
def split_train_test(
    x: np.ndarray, y: np.ndarray, test_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random train/test split (scikit-learn ``train_test_split``, unstratified, as the
    papers' "train/test split of 90/10"). The test set has ``ceil(test_fraction * n)`` rows:
    15 of 150 Iris samples, 73 of 724 Pima subjects."""
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}")
    x_tr, x_te, y_tr, y_te = train_test_split(
        np.asarray(x), np.asarray(y), test_size=test_fraction, random_state=seed % 2**32
    )
    return x_tr, x_te, y_tr, y_te


def fit_decision_tree(x: np.ndarray, y: np.ndarray, max_depth: int, seed: int):
    """scikit-learn ``DecisionTreeClassifier(max_depth)`` (Gini), seeded (tie-breaking of
    equally good splits)."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=max_depth, random_state=seed % 2**32).fit(x, y)


def fit_random_forest(
    x: np.ndarray, y: np.ndarray, n_estimators: int, max_depth: int, seed: int, n_jobs: int = 1
):
    """scikit-learn ``RandomForestClassifier(n_estimators, max_depth)`` with bootstrap
    (paper Section 3.1), seeded; otherwise library defaults."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        n_estimators=n_estimators, max_depth=max_depth, random_state=seed % 2**32, n_jobs=n_jobs
    ).fit(x, y)


def fit_xgboost(
    x: np.ndarray,
    y: np.ndarray,
    n_estimators: int,
    max_depth: int,
    seed: int,
    learning_rate: float | None = None,
    n_jobs: int = 1,
):
    """XGBoost ``XGBClassifier(n_estimators, max_depth)`` (boosting rounds; a K-class model
    has K trees per round), seeded; otherwise library defaults (``hist``, learning rate
    0.3). Labels must be 0..K-1."""
    from xgboost import XGBClassifier

    kwargs = {} if learning_rate is None else {"learning_rate": learning_rate}
    return XGBClassifier(
        n_estimators=n_estimators,
        max_depth=max_depth,
        random_state=seed % 2**31,
        n_jobs=n_jobs,
        **kwargs,
    ).fit(x, y)


def fit_model(kind: str, x: np.ndarray, y: np.ndarray, params: dict, seed: int):
    """Dispatch on ``kind`` (decision_tree / random_forest / xgboost) with config params
    ``max_depth`` and (forests, boosting) ``n_estimators``."""
    if kind == "decision_tree":
        return fit_decision_tree(x, y, int(params["max_depth"]), seed)
    if kind == "random_forest":
        return fit_random_forest(x, y, int(params["n_estimators"]), int(params["max_depth"]), seed)
    if kind == "xgboost":
        return fit_xgboost(
            x,
            y,
            int(params["n_estimators"]),
            int(params["max_depth"]),
            seed,
            params.get("learning_rate"),
        )
    raise ValueError(f"model kind must be one of {MODEL_KINDS}; got {kind!r}")


def accuracy(model, x: np.ndarray, y: np.ndarray) -> float:
    """Fraction of correct predictions of ``model.predict``."""
    return float(np.mean(np.asarray(model.predict(x)) == np.asarray(y)))


# --------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------
def r2_score(reference: np.ndarray, estimate: np.ndarray) -> float:
    """Coefficient of determination of ``estimate`` against ``reference`` (papers 001/002,
    Section 5.1: "equivalent to the interpretation of the R^2-score in a linear regression"):

        R^2 = 1 - sum_j (r_j - e_j)^2 / sum_j (r_j - mean(r))^2

    (scikit-learn's ``r2_score(reference, estimate)``). Returns 1.0 when the estimate equals a
    constant reference exactly and NaN when the reference is constant but the estimate is not.
    """
    r = np.asarray(reference, dtype=np.float64).reshape(-1)
    e = np.asarray(estimate, dtype=np.float64).reshape(-1)
    if r.shape != e.shape or r.size == 0:
        raise ValueError(f"need two equal-length non-empty vectors; got {r.shape}, {e.shape}")
    ss_res = float(np.sum((r - e) ** 2))
    ss_tot = float(np.sum((r - r.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else float("nan")
    return 1.0 - ss_res / ss_tot


def grid_size(ensemble: TreeEnsemble, noise, mu: np.ndarray, prune: float | None) -> int:
    """Number of boxes the paper's grid enumerates (eq. 3), all or meeting the ``prune``
    bounding box, without enumerating them."""
    return math.prod(len(lo) for lo, _, _ in grid_intervals(ensemble, noise, mu, prune))


def _engine():
    """The exact engine (imported lazily: it lives in its own module), checked: a table
    never holds the midpoint of bounds wider than the configured ``tol``."""
    from reliquant.trees.engine import exact_robustness

    def certified(ensemble: TreeEnsemble, noise, mu: np.ndarray, tol: float):
        r = exact_robustness(ensemble, noise, mu, tol=tol)
        if not r.converged:
            raise RuntimeError(
                f"exact engine did not reach tol={tol:g} (bounds [{r.lower:.6g}, "
                f"{r.upper:.6g}] after {r.n_boxes:,} boxes, {r.n_active_features} active "
                "features); raise tol or use Monte Carlo for this model"
            )
        return r

    return certified


def _progress(items: Sequence, desc: str):
    return tqdm(items, desc=desc, disable=not progress_enabled(), leave=False)


# --------------------------------------------------------------------------------------
# Table 1: all boxes vs 99 % boxes
# --------------------------------------------------------------------------------------
def box_comparison(
    ensemble: TreeEnsemble, x_test: np.ndarray, variance: float, level: float, tol: float
) -> pd.DataFrame:
    """Table 1 (Section 5.1): per test sample, robustness from all boxes and from the boxes
    meeting the bounding box of the ``level`` ellipsoid, under N(mu, variance I); plus the
    exact engine as an independent check. Boxes are counted as the paper does: boxes with
    mu's label (``boxes_label_*``), next to the number of boxes enumerated (``boxes_*``).
    """
    rows = []
    engine = _engine()
    for j, mu in enumerate(_progress(np.asarray(x_test, dtype=np.float64), "table1")):
        noise = IndependentNormal.from_variance(mu, variance)
        full = grid_robustness(ensemble, noise, mu, prune=None)
        pruned = grid_robustness(ensemble, noise, mu, prune=level)
        exact = engine(ensemble, noise, mu, tol=tol)
        rows.append(
            {
                "sample": j + 1,
                "label": int(full.label),
                "boxes_all": full.n_boxes,
                "boxes_label_all": full.n_boxes_label,
                "robustness_all": full.robustness,
                "boxes_pruned": pruned.n_boxes,
                "boxes_label_pruned": pruned.n_boxes_label,
                "robustness_pruned": pruned.robustness,
                "robustness_exact": exact.robustness,
                "abs_diff": abs(full.robustness - pruned.robustness),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Table 2: runtimes
# --------------------------------------------------------------------------------------
def runtime_comparison(
    ensemble: TreeEnsemble,
    x_test: np.ndarray,
    variance: float,
    level: float,
    tol: float,
    n_draws: int,
    seed: int,
    max_grid_boxes: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (Section 5.2): per test sample, the all-boxes grid and the 99 % grid (each
    skipped, NaN and label-box count -1, when it exceeds ``max_grid_boxes``), the exact engine (certified interval of width
    <= ``tol``) and Monte Carlo with ``n_draws`` draws (stream ``block_rng(seed, "table2",
    j)``). Returns (results, runtimes in seconds per method)."""
    engine = _engine()
    rows, times = [], []
    n_grid = ensemble.n_grid_boxes()
    for j, mu in enumerate(_progress(np.asarray(x_test, dtype=np.float64), "table2")):
        noise = IndependentNormal.from_variance(mu, variance)
        row: dict = {"sample": j + 1, "grid_boxes": n_grid}
        t: dict = {"sample": j + 1}
        if n_grid <= max_grid_boxes:
            full = grid_robustness(ensemble, noise, mu, prune=None, max_boxes=max_grid_boxes)
            row.update(boxes_label_all=full.n_boxes_label, robustness_all=full.robustness)
            t["all_boxes"] = full.seconds
        else:
            row.update(boxes_label_all=-1, robustness_all=np.nan)
            t["all_boxes"] = np.nan
        row["label"] = int(ensemble.predict(mu[None, :])[0])
        n_pruned = grid_size(ensemble, noise, mu, level)
        if n_pruned <= max_grid_boxes:
            pruned = grid_robustness(ensemble, noise, mu, prune=level, max_boxes=max_grid_boxes)
            row.update(
                boxes_pruned=pruned.n_boxes,
                boxes_label_pruned=pruned.n_boxes_label,
                robustness_pruned=pruned.robustness,
            )
            t["pruned_boxes"] = pruned.seconds
        else:
            log.info("sample %d: 99 %% grid of %d boxes skipped", j + 1, n_pruned)
            row.update(boxes_pruned=n_pruned, boxes_label_pruned=-1, robustness_pruned=np.nan)
            t["pruned_boxes"] = np.nan
        exact = engine(ensemble, noise, mu, tol=tol)
        row.update(
            engine_boxes=exact.n_boxes,
            engine_lower=exact.lower,
            engine_upper=exact.upper,
            robustness_exact=exact.robustness,
        )
        t["engine"] = exact.seconds
        mc = monte_carlo_robustness(ensemble, noise, mu, n_draws, block_rng(seed, "table2", j))
        row.update(mc_estimate=mc.estimate, mc_ci_low=mc.ci_low, mc_ci_high=mc.ci_high)
        t["monte_carlo"] = mc.seconds
        rows.append(row)
        times.append(t)
    return pd.DataFrame(rows), pd.DataFrame(times)


# --------------------------------------------------------------------------------------
# Table 3: exact vs Monte Carlo
# --------------------------------------------------------------------------------------
def mc_comparison(
    ensemble: TreeEnsemble,
    x_test: np.ndarray,
    variances: Sequence[float],
    level: float,
    tol: float,
    n_draws: int,
    seed: int,
    key: tuple[int | str, ...],
    max_grid_boxes: int,
) -> pd.DataFrame:
    """Table 3 (Section 5.3): per variance and test sample, the exact robustness (our engine;
    the paper's 99 % grid alongside where it has at most ``max_grid_boxes`` boxes, else NaN;
    ``boxes_pruned`` is that grid's size either way)
    and the Monte Carlo estimate with ``n_draws`` draws (stream ``block_rng(seed, *key,
    variance index, sample)``)."""
    engine = _engine()
    rows = []
    x_test = np.asarray(x_test, dtype=np.float64)
    for v_idx, variance in enumerate(variances):
        for j, mu in enumerate(_progress(x_test, f"table3 var={variance}")):
            noise = IndependentNormal.from_variance(mu, variance)
            exact = engine(ensemble, noise, mu, tol=tol)
            b_pruned = grid_size(ensemble, noise, mu, level)
            r_pruned = np.nan
            if b_pruned <= max_grid_boxes:
                pruned = grid_robustness(ensemble, noise, mu, prune=level, max_boxes=max_grid_boxes)
                r_pruned = pruned.robustness
            mc = monte_carlo_robustness(
                ensemble, noise, mu, n_draws, block_rng(seed, *key, v_idx, j)
            )
            rows.append(
                {
                    "variance": float(variance),
                    "sample": j + 1,
                    "robustness_exact": exact.robustness,
                    "engine_lower": exact.lower,
                    "engine_upper": exact.upper,
                    "boxes_pruned": b_pruned,
                    "robustness_pruned": r_pruned,
                    "mc_estimate": mc.estimate,
                    "mc_ci_low": mc.ci_low,
                    "mc_ci_high": mc.ci_high,
                }
            )
    return pd.DataFrame(rows)


def r2_by_group(frame: pd.DataFrame, by: list[str], reference: str, estimate: str) -> pd.DataFrame:
    """R^2 of ``estimate`` against ``reference`` within each group of ``by`` (Table 3), with
    the largest absolute difference and the number of samples."""
    out = []
    for key, g in frame.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        ok = g[[reference, estimate]].notna().all(axis=1)
        gg = g[ok]
        out.append(
            {
                **dict(zip(by, key, strict=True)),
                "n": int(len(gg)),
                "r2": r2_score(gg[reference], gg[estimate]) if len(gg) else np.nan,
                "max_abs_diff": float(np.max(np.abs(gg[reference] - gg[estimate])))
                if len(gg)
                else np.nan,
            }
        )
    return pd.DataFrame(out)


# --------------------------------------------------------------------------------------
# Figures 4 (002) and 5 (001): NORTA noise
# --------------------------------------------------------------------------------------
NORTA_METHODS = ("engine", "monte_carlo")


def norta_robustness(
    ensemble: TreeEnsemble,
    x_test: np.ndarray,
    y_test: np.ndarray,
    specs: Sequence[MarginalSpec],
    corr: np.ndarray,
    tol: float,
    seed: int,
    key: str,
    n_draws: int,
    abseps: float = 1e-7,
    mass_seed: int = 0,
    method: str = "engine",
) -> pd.DataFrame:
    """Robustness of each test sample under NORTA noise (paper 002 §3.2, §5.4): marginals
    ``specs`` located at the sample, normal correlation ``corr``.

    ``method="engine"``: our exact engine (box masses by Genz/QMC with absolute error target
    ``abseps`` per box, seeded by ``mass_seed``); ``lower``/``upper`` its certified bounds,
    ``boxes`` the boxes it bounded; with ``n_draws > 0`` a Monte Carlo check of the NORTA
    sampler is added (``mc_*`` columns, stream ``block_rng(seed, key, j)``).
    ``method="monte_carlo"``: ``n_draws`` draws only; ``robustness`` is the estimate,
    ``lower``/``upper`` its 95 % Clopper-Pearson interval, ``boxes`` = -1. (The engine needs
    one QMC integral per box under correlated noise, which is too slow for a 100-tree model.)
    """
    if method not in NORTA_METHODS:
        raise ValueError(f"method must be one of {NORTA_METHODS}; got {method!r}")
    if method == "monte_carlo" and n_draws < 1:
        raise ValueError(f"method monte_carlo needs n_draws >= 1; got {n_draws}")
    rows = []
    x_test = np.asarray(x_test, dtype=np.float64)
    for j, mu in enumerate(_progress(x_test, key)):
        noise = NortaNoise(mu, marginals_at(specs, mu), corr, seed=mass_seed, abseps=abseps)
        label = ensemble.predict(mu[None, :])[0]
        row = {
            "sample": j + 1,
            "true_label": int(y_test[j]),
            "label": int(label),
            "correct": bool(int(label) == int(y_test[j])),
        }
        mc = None
        if n_draws > 0:
            mc = monte_carlo_robustness(ensemble, noise, mu, n_draws, block_rng(seed, key, j))
        if method == "engine":
            exact = _engine()(ensemble, noise, mu, tol=tol)
            row.update(
                robustness=exact.robustness,
                lower=exact.lower,
                upper=exact.upper,
                boxes=exact.n_boxes,
            )
            if mc is not None:
                row.update(mc_estimate=mc.estimate, mc_ci_low=mc.ci_low, mc_ci_high=mc.ci_high)
        else:
            row.update(robustness=mc.estimate, lower=mc.ci_low, upper=mc.ci_high, boxes=-1)
        rows.append(row)
    return pd.DataFrame(rows)


def norta_experiment(
    ensemble: TreeEnsemble,
    x_test: np.ndarray,
    y_test: np.ndarray,
    specs: Sequence[MarginalSpec],
    corr: np.ndarray,
    params: Mapping,
    seed: int,
    key: str,
):
    """:func:`norta_robustness` run from an experiment's config section (``engine_tol``,
    ``mc_draws``, ``abseps``, ``method``; Pima and Iris-mixed), with the QMC stream seeded from
    ``(seed, key, "qmc")``. Returns the table and its Arrow schema (:func:`norta_schema`)."""
    table = norta_robustness(
        ensemble,
        x_test,
        y_test,
        specs,
        corr,
        params["engine_tol"],
        seed,
        key,
        params["mc_draws"],
        abseps=params["abseps"],
        mass_seed=block_int_seed(seed, key, "qmc") % 2**32,
        method=params["method"],
    )
    return table, norta_schema(params["method"] == "engine" and params["mc_draws"] > 0)


def norta_schema(with_mc: bool):
    """Arrow schema of a :func:`norta_robustness` table (Monte Carlo columns optional)."""
    import pyarrow as pa

    fields = [
        ("sample", pa.int32()),
        ("true_label", pa.int32()),
        ("label", pa.int32()),
        ("correct", pa.bool_()),
        ("robustness", pa.float64()),
        ("lower", pa.float64()),
        ("upper", pa.float64()),
        ("boxes", pa.int64()),
    ]
    if with_mc:
        fields += [
            ("mc_estimate", pa.float64()),
            ("mc_ci_low", pa.float64()),
            ("mc_ci_high", pa.float64()),
        ]
    return pa.schema(fields)


def robustness_summary(robustness: np.ndarray, threshold: float) -> dict:
    """Figure 4 numbers: min, max and how many robustness values exceed ``threshold``."""
    r = np.asarray(robustness, dtype=np.float64)
    return {
        "n": int(r.size),
        "min": float(r.min()),
        "max": float(r.max()),
        "n_above": int(np.count_nonzero(r > threshold)),
    }


# --------------------------------------------------------------------------------------
# figures (matplotlib Figures; saved by the scripts through reliquant.core.io.save_figure)
# --------------------------------------------------------------------------------------
def _axes(width: float = 4.2, height: float = 3.4):
    import matplotlib.pyplot as plt

    from reliquant.core.plotting import apply_style

    apply_style()
    return plt.subplots(figsize=(width, height))


def plot_box_comparison(table: pd.DataFrame):
    """Robustness from all boxes against the 99 % boxes per test sample, with the identity
    line (the figure paper 001 shows next to Table 1, its Figure 4)."""
    from reliquant.core.plotting import PALETTE

    fig, ax = _axes()
    ax.plot([0, 1], [0, 1], ls="--", color=PALETTE[3], lw=1, label="identity")
    ax.scatter(
        table["robustness_all"],
        table["robustness_pruned"],
        s=18,
        color=PALETTE[0],
        label="test samples",
        zorder=3,
    )
    ax.set_xlabel("robustness, all boxes")
    ax.set_ylabel("robustness, 99 % boxes")
    r2 = r2_score(table["robustness_all"], table["robustness_pruned"])
    ax.set_title(f"Iris decision tree: R$^2$ = {r2:.6f}")
    ax.legend(loc="upper left")
    return fig


def plot_runtimes(runtimes: pd.DataFrame):
    """Seconds per test sample of each method (log scale), Table 2."""
    from reliquant.core.plotting import PALETTE

    fig, ax = _axes(5.0, 3.4)
    methods = [c for c in ("all_boxes", "pruned_boxes", "engine", "monte_carlo") if c in runtimes]
    names = {
        "all_boxes": "all boxes",
        "pruned_boxes": "99 % boxes",
        "engine": "exact engine",
        "monte_carlo": "Monte Carlo",
    }
    width = 0.8 / len(methods)
    x = np.arange(len(runtimes))
    for k, m in enumerate(methods):
        ax.bar(
            x + (k - (len(methods) - 1) / 2) * width,
            runtimes[m],
            width,
            color=PALETTE[k],
            label=names[m],
        )
    ax.set_yscale("log")
    ax.set_xticks(x, runtimes["sample"].astype(int).astype(str))
    ax.set_xlabel("test sample")
    ax.set_ylabel("seconds")
    ax.set_title("MNIST 5x5 random forest: runtime per sample", pad=22)
    ax.legend(ncol=len(methods), fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return fig


def plot_mc_comparison(table: pd.DataFrame):
    """Exact robustness against the Monte Carlo estimate, one colour per variance (Table 3)."""
    from reliquant.core.plotting import PALETTE

    fig, ax = _axes()
    ax.plot([0, 1], [0, 1], ls="--", color="0.5", lw=1)
    for k, (v, g) in enumerate(table.groupby("variance", sort=True)):
        ax.scatter(
            g["robustness_exact"],
            g["mc_estimate"],
            s=10,
            alpha=0.8,
            color=PALETTE[k % len(PALETTE)],
            label=f"variance {v:g}",
        )
    ax.set_xlabel("exact robustness (engine)")
    ax.set_ylabel("Monte Carlo estimate")
    ax.set_title("MNIST decision trees: exact vs Monte Carlo")
    ax.legend(fontsize=7)
    return fig


def plot_histogram(robustness: np.ndarray, threshold: float, title: str):
    """Histogram of the test samples' robustness (paper 002, Figure 4)."""
    from reliquant.core.plotting import PALETTE

    fig, ax = _axes()
    r = np.asarray(robustness, dtype=np.float64)
    ax.hist(r, bins=np.linspace(0.0, 1.0, 21), color=PALETTE[0], edgecolor="white")
    ax.axvline(
        threshold,
        ls="--",
        color=PALETTE[3],
        lw=1,
        label=f"{int(np.count_nonzero(r > threshold))} of {r.size} above {threshold:g}",
    )
    ax.set_xlabel("probabilistic robustness")
    ax.set_ylabel("test samples")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return fig


def plot_per_sample(table: pd.DataFrame, title: str):
    """Robustness per test sample with its certified interval; misclassified samples
    marked (paper 001, Figure 5)."""
    from reliquant.core.plotting import PALETTE

    fig, ax = _axes(5.0, 3.2)
    x = table["sample"].to_numpy()
    r = table["robustness"].to_numpy()
    ok = table["correct"].to_numpy(dtype=bool)
    ax.scatter(x[ok], r[ok], color=PALETTE[0], s=22, label="correct prediction", zorder=3)
    ax.scatter(
        x[~ok], r[~ok], color=PALETTE[3], marker="x", s=30, label="wrong prediction", zorder=3
    )
    ax.vlines(x, table["lower"], table["upper"], color="0.3", lw=1)
    ax.set_ylim(min(0.0, float(r.min()) - 0.05), 1.05)
    ax.set_xticks(x)
    ax.set_xlabel("test sample")
    ax.set_ylabel("probabilistic robustness")
    ax.set_title(title)
    ax.legend(loc="lower left")
    return fig


# --------------------------------------------------------------------------------------
# markdown
# --------------------------------------------------------------------------------------
def markdown_section(title: str, text: str, frame: pd.DataFrame, floatfmt: str = ".6g") -> str:
    """A markdown document: heading, a paragraph, a table."""
    from reliquant.core.io import frame_to_markdown

    return f"# {title}\n\n{text}\n\n" + frame_to_markdown(frame, floatfmt=floatfmt)


# --------------------------------------------------------------------------------------
# the papers' numbers beside ours
# --------------------------------------------------------------------------------------
PAPERS = {
    "002": "Tree robustness, revised version (paper 002): Tables 1-3, Figure 4",
    "001": "Tree robustness, first version (paper 001): Figure 5",
}


def paper_comparison(
    table1: pd.DataFrame,
    table2: pd.DataFrame,
    runtimes: pd.DataFrame,
    table3: pd.DataFrame,
    pima: pd.DataFrame,
    iris_mixed: pd.DataFrame,
    paper: dict,
    pima_threshold: float,
    iris_tol: float,
) -> tuple[list, list, list, list]:
    """Comparisons (paper value vs ours) and claims for the cross-paper summary
    (:mod:`reliquant.core.paper`). ``paper``: the ``trees.paper`` config section; a Figure 5
    sample counts as robustness 1 when its certified lower bound is >= ``1 - iris_tol``.

    Returns ``(comparisons, timing_comparisons, claims, timing_claims)``: the timing lists
    hold everything computed from wall-clock runtimes (they differ between runs, so they stay
    out of the bit-reproducible parquet tables).
    """
    from reliquant.core.paper import Claim, Comparison

    comps, timing, claims, timing_claims = [], [], [], []
    r2_1 = r2_score(table1["robustness_all"], table1["robustness_pruned"])
    d1 = float(table1["abs_diff"].max())
    comps += [
        Comparison(
            "002",
            "Table 1: R^2 all vs 99 % boxes",
            paper["table1_r2"],
            r2_1,
            "",
            "paper: 'exceeding 0.9999'",
        ),
        Comparison(
            "002",
            "Table 1: max |all - 99 %|",
            paper["table1_max_abs_diff"],
            d1,
            "",
            "paper: differences from the fifth decimal",
        ),
    ]
    med = runtimes.median(numeric_only=True)
    all_ok = table2["robustness_all"].notna()
    d2 = (
        float(
            (table2.loc[all_ok, "robustness_all"] - table2.loc[all_ok, "robustness_pruned"])
            .abs()
            .max()
        )
        if all_ok.any()
        else float("nan")
    )
    timing += [
        Comparison(
            "002",
            "Table 2: median s/sample, all boxes",
            paper["table2_all_boxes_median_s"],
            float(med["all_boxes"]),
            "s",
            "machine-dependent",
        ),
        Comparison(
            "002",
            "Table 2: median s/sample, 99 % boxes",
            paper["table2_pruned_median_s"],
            float(med["pruned_boxes"]),
            "s",
            "machine-dependent",
        ),
        Comparison(
            "002",
            "Table 2: Monte Carlo s/sample (10^6 draws)",
            paper["table2_mc_s"],
            float(med["monte_carlo"]),
            "s",
            "machine-dependent",
        ),
        Comparison(
            "002",
            "Table 2: median s/sample, exact engine",
            float("nan"),
            float(med["engine"]),
            "s",
            "not in the paper",
        ),
        Comparison(
            "002",
            "Table 2: all boxes / 99 % boxes (median ratio)",
            paper["table2_all_boxes_median_s"] / paper["table2_pruned_median_s"],
            float(med["all_boxes"] / med["pruned_boxes"]),
            "x",
            "",
        ),
        Comparison(
            "002",
            "Table 2: Monte Carlo / exact engine (median ratio)",
            float("nan"),
            float(med["monte_carlo"] / med["engine"]),
            "x",
            "issue target >= 20",
        ),
    ]
    base = table3[table3["variance"] == table3["variance"].min()]
    r2_min = float(base["r2"].min())
    r2_sweep = float(table3["r2"].min())
    comps += [
        Comparison(
            "002",
            f"Table 3: min R^2 exact vs MC (variance {base['variance'].min():g})",
            paper["table3_r2_min"],
            r2_min,
            "",
            f"{len(base)} trees",
        ),
        Comparison(
            "002",
            "Table 3: min R^2 over the variance sweep",
            float("nan"),
            r2_sweep,
            "",
            "paper: 'only observed minor differences'",
        ),
    ]
    ps = robustness_summary(pima["robustness"], pima_threshold)
    comps += [
        Comparison(
            "002",
            "Figure 4: Pima test accuracy",
            paper["pima_accuracy"],
            float(pima["correct"].mean()),
            "",
            "",
        ),
        Comparison("002", "Figure 4: Pima test subjects", paper["pima_n_test"], ps["n"], "", ""),
        Comparison("002", "Figure 4: min robustness", paper["pima_min"], ps["min"], "", ""),
        Comparison("002", "Figure 4: max robustness", paper["pima_max"], ps["max"], "", ""),
        Comparison(
            "002",
            f"Figure 4: subjects above {pima_threshold:g}",
            paper["pima_n_above"],
            ps["n_above"],
            "",
            "",
        ),
    ]
    n_one = int((iris_mixed["lower"] >= 1.0 - iris_tol).sum())
    comps.append(
        Comparison(
            "001",
            "Figure 5: samples with robustness 1",
            float("nan"),
            n_one,
            "",
            "paper: 'several'",
        )
    )
    claims += [
        Claim(
            "002",
            "the 99 % boxes change robustness by at most 1 percentage point",
            bool(max(d1, d2 if np.isfinite(d2) else 0.0) <= 0.01),
            f"max |diff| Table 1 {d1:.2g}"
            + (f", Table 2 {d2:.2g}" if np.isfinite(d2) else ", Table 2 grid skipped"),
        ),
        Claim(
            "002",
            "R^2 between exact and Monte Carlo exceeds 0.9999 in every Table 3 setting",
            bool(r2_min > 0.9999),
            f"min R^2 {r2_min:.6f}",
        ),
        Claim(
            "001",
            "bounded noise gives several test samples a robustness of exactly 1",
            bool(n_one >= 2),
            f"{n_one} of {len(iris_mixed)}",
        ),
    ]
    if np.isfinite(med["all_boxes"]) and np.isfinite(med["pruned_boxes"]):
        timing_claims.append(
            Claim(
                "002",
                "the 99 % boxes are much faster than all boxes (Table 2)",
                bool(med["pruned_boxes"] < med["all_boxes"]),
                f"median {med['all_boxes']:.3g} s vs {med['pruned_boxes']:.3g} s",
            )
        )
    return comps, timing, claims, timing_claims


def summary_markdown(comparison: pd.DataFrame, claims: pd.DataFrame) -> str:
    """``results/trees/summary.md``: :func:`reliquant.core.paper.render_summary` for the two tree
    papers under this topic's own heading."""
    from reliquant.core.paper import render_summary

    body = render_summary(comparison, claims, PAPERS).split("\n## ", 1)[1]
    head = (
        "# Tree robustness: the papers' numbers beside ours\n\n"
        "Generated by `rule trees_summary` from this run's results (papers 001/002). "
        "`difference` is ours minus the paper's; runtimes are machine-dependent (the paper "
        "used one core of a Xeon 6248), so compare them as ratios.\n\n## "
    )
    return head + body
