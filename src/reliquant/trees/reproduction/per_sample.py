"""Per-sample robustness of the test points by several methods side by side (papers 001/002, §5).

Each function takes a :class:`reliquant.trees.structure.TreeEnsemble`, the test samples and the
noise parameters (keyword-only) and returns one row per sample: the papers' grid (eq. 4, all
boxes or the 99 % boxes), our exact engine (certified bounds) and Monte Carlo. Columns are
deterministic for a fixed seed; wall-clock seconds go to separate runtime frames. The Arrow
schema of each table a job writes unchanged sits beside its function.

The papers' Monte Carlo baseline (Tables 2 and 3: plain draws, ``R_hat = n_agree / n``) runs
on the compiled kernel (:func:`reliquant.trees.monte_carlo.compiled_monte_carlo`; its random
stream is seeded per sample and independent of the number of threads). Table 2 also times the
same number of draws with numpy sampling and the ensemble's ``predict``
(:func:`reliquant.trees.monte_carlo.monte_carlo_robustness`), for reference: the box grids
are compiled (:mod:`reliquant.trees.grid_kernel`), so the paper's grid / Monte Carlo runtime
ratio is compared with the compiled Monte Carlo.

* :func:`box_comparison` - Table 1: all boxes vs 99 % boxes.
* :func:`runtime_comparison` - Table 2: all boxes, 99 % boxes, exact engine, Monte Carlo.
* :func:`mc_comparison` - Table 3: exact vs Monte Carlo over a variance sweep.
* :func:`norta_robustness` - NORTA noise, engine or Monte Carlo (Figure 5 of 001).
* :func:`anytime_norta_robustness` - NORTA noise by :func:`reliquant.trees.anytime.robustness`
  in its deterministic mode (Figure 4 of 002); :func:`anytime_norta_tables` the same for
  several models on one test set (the Pima sensitivity cells), sample by sample.

The NORTA tables live in :mod:`reliquant.trees.reproduction.norta_samples`, what every table
shares (the grid's size, the engine held to its tol) in
:mod:`reliquant.trees.reproduction.sample_methods`; both are importable from here too.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.anytime import warm_up
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.boxes import grid_robustness
from reliquant.trees.monte_carlo import compiled_monte_carlo, monte_carlo_robustness
from reliquant.trees.reproduction.norta_samples import (
    ANYTIME_SCHEMA,
    NORTA_METHODS,
    anytime_norta_robustness,
    anytime_norta_tables,
    norta_robustness,
    norta_schema,
)
from reliquant.trees.reproduction.sample_methods import (
    certified_robustness,
    grid_size,
    progress_over,
)
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "ANYTIME_SCHEMA",
    "NORTA_METHODS",
    "RUNTIME_COLUMNS",
    "TABLE1_SCHEMA",
    "TABLE2_SCHEMA",
    "anytime_norta_robustness",
    "anytime_norta_tables",
    "box_comparison",
    "certified_robustness",
    "grid_size",
    "mc_comparison",
    "norta_robustness",
    "norta_schema",
    "runtime_comparison",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------
# Table 1: all boxes vs 99 % boxes
# --------------------------------------------------------------------------------------
TABLE1_SCHEMA = pa.schema(
    [
        ("sample", pa.int32()),
        ("label", pa.int32()),
        ("boxes_all", pa.int64()),
        ("boxes_label_all", pa.int64()),
        ("robustness_all", pa.float64()),
        ("boxes_pruned", pa.int64()),
        ("boxes_label_pruned", pa.int64()),
        ("robustness_pruned", pa.float64()),
        ("robustness_exact", pa.float64()),
        ("abs_diff", pa.float64()),
    ]
)


def box_comparison(
    ensemble: TreeEnsemble, *, x_test: np.ndarray, variance: float, level: float, tol: float
) -> pd.DataFrame:
    """Table 1 (Section 5.1): per test sample, robustness from all boxes and from the boxes
    meeting the bounding box of the ``level`` ellipsoid, under N(mu, variance I); plus the
    exact engine as an independent check. Boxes are counted as the paper does: boxes with
    mu's label (``boxes_label_*``), next to the number of boxes enumerated (``boxes_*``).
    Columns: :data:`TABLE1_SCHEMA`.
    """
    rows = []
    for j, mu in enumerate(progress_over(np.asarray(x_test, dtype=np.float64), "table1")):
        noise = IndependentNormal.from_variance(mu, variance)
        full = grid_robustness(ensemble, noise, mu, prune=None)
        pruned = grid_robustness(ensemble, noise, mu, prune=level)
        exact = certified_robustness(ensemble, noise, mu, tol=tol)
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
TABLE2_SCHEMA = pa.schema(
    [
        ("sample", pa.int32()),
        ("true_label", pa.int32()),
        ("grid_boxes", pa.int64()),
        ("boxes_label_all", pa.int64()),
        ("robustness_all", pa.float64()),
        ("label", pa.int32()),
        ("boxes_pruned", pa.int64()),
        ("boxes_label_pruned", pa.int64()),
        ("robustness_pruned", pa.float64()),
        ("engine_boxes", pa.int64()),
        ("engine_lower", pa.float64()),
        ("engine_upper", pa.float64()),
        ("robustness_exact", pa.float64()),
        ("mc_estimate", pa.float64()),
        ("mc_ci_low", pa.float64()),
        ("mc_ci_high", pa.float64()),
        ("mc_numpy_estimate", pa.float64()),
    ]
)
#: Columns of the runtime frame of :func:`runtime_comparison` (seconds per method):
#: ``monte_carlo`` the compiled kernel (the estimate in the table), ``monte_carlo_numpy`` the
#: same number of draws with numpy sampling and ``predict``.
RUNTIME_COLUMNS = (
    "sample",
    "all_boxes",
    "pruned_boxes",
    "engine",
    "monte_carlo",
    "monte_carlo_numpy",
)


def runtime_comparison(
    ensemble: TreeEnsemble,
    *,
    x_test: np.ndarray,
    y_test: np.ndarray,
    variance: float,
    level: float,
    tol: float,
    n_draws: int,
    seed: int,
    key: tuple[int | str, ...],
    max_grid_boxes: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (Section 5.2): per test sample (true label ``y_test``), the all-boxes grid and
    the 99 % grid (each skipped, NaN and label-box count -1, when it exceeds
    ``max_grid_boxes``), the exact engine (certified interval of width <= ``tol``) and Monte
    Carlo with ``n_draws`` plain draws, ``R_hat = n_agree / n_draws``, twice: on the compiled
    kernel (``mc_*``, seed ``block_int_seed(seed, *key, j)``, 95 % Clopper-Pearson interval)
    and with numpy sampling and ``predict`` (``mc_numpy_estimate``, stream
    ``block_rng(seed, *key, j)``), each timed. The kernel is compiled before anything is
    timed. Returns (results, columns :data:`TABLE2_SCHEMA`; runtimes in seconds, columns
    :data:`RUNTIME_COLUMNS`)."""
    rows, times = [], []
    warm_up(full=False)  # the kernels count_agree runs (what the timings call), not the tests'
    n_grid = ensemble.n_grid_boxes()
    for j, mu in enumerate(progress_over(np.asarray(x_test, dtype=np.float64), "table2")):
        noise = IndependentNormal.from_variance(mu, variance)
        row: dict = {"sample": j + 1, "true_label": int(y_test[j]), "grid_boxes": n_grid}
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
        exact = certified_robustness(ensemble, noise, mu, tol=tol)
        row.update(
            engine_boxes=exact.n_boxes,
            engine_lower=exact.lower,
            engine_upper=exact.upper,
            robustness_exact=exact.robustness,
        )
        t["engine"] = exact.seconds
        mc = compiled_monte_carlo(ensemble, noise, mu, n_draws, block_int_seed(seed, *key, j))
        row.update(mc_estimate=mc.estimate, mc_ci_low=mc.ci_low, mc_ci_high=mc.ci_high)
        t["monte_carlo"] = mc.seconds
        ref = monte_carlo_robustness(ensemble, noise, mu, n_draws, block_rng(seed, *key, j))
        row["mc_numpy_estimate"] = ref.estimate
        t["monte_carlo_numpy"] = ref.seconds
        rows.append(row)
        times.append(t)
    return pd.DataFrame(rows), pd.DataFrame(times, columns=list(RUNTIME_COLUMNS))


# --------------------------------------------------------------------------------------
# Table 3: exact vs Monte Carlo
# --------------------------------------------------------------------------------------
def mc_comparison(
    ensemble: TreeEnsemble,
    *,
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
    ``boxes_pruned`` is that grid's size either way) and the Monte Carlo estimate with
    ``n_draws`` plain draws on the compiled kernel (seed
    ``block_int_seed(seed, *key, variance index, sample)``; 95 % Clopper-Pearson interval)."""
    rows = []
    x_test = np.asarray(x_test, dtype=np.float64)
    for v_idx, variance in enumerate(variances):
        for j, mu in enumerate(progress_over(x_test, f"table3 var={variance}")):
            noise = IndependentNormal.from_variance(mu, variance)
            exact = certified_robustness(ensemble, noise, mu, tol=tol)
            b_pruned = grid_size(ensemble, noise, mu, level)
            r_pruned = np.nan
            if b_pruned <= max_grid_boxes:
                pruned = grid_robustness(ensemble, noise, mu, prune=level, max_boxes=max_grid_boxes)
                r_pruned = pruned.robustness
            mc = compiled_monte_carlo(
                ensemble, noise, mu, n_draws, block_int_seed(seed, *key, v_idx, j)
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


# --------------------------------------------------------------------------------------
# NORTA noise: Figure 5 (001) by engine or Monte Carlo, Figure 4 (002) by the anytime method
# --------------------------------------------------------------------------------------
