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
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
from tqdm import tqdm

from reliquant.core.runlog import progress_enabled
from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.anytime import CHUNK, robustness, warm_up
from reliquant.trees.box_mass import IndependentNormal, NortaNoise
from reliquant.trees.boxes import grid_counts, grid_robustness
from reliquant.trees.engine import EngineResult, exact_robustness
from reliquant.trees.kernel import shared_normal_scores
from reliquant.trees.monte_carlo import compiled_monte_carlo, monte_carlo_robustness
from reliquant.trees.noise import Norta
from reliquant.trees.reproduction.data import MarginalSpec, marginals_at
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


def grid_size(ensemble: TreeEnsemble, noise, mu: np.ndarray, prune: float | None) -> int:
    """Number of boxes the paper's grid enumerates (eq. 3), all or meeting the ``prune``
    bounding box, without enumerating them (:func:`reliquant.trees.boxes.grid_counts`)."""
    return math.prod(grid_counts(ensemble, noise, mu, prune))


def certified_robustness(
    ensemble: TreeEnsemble, noise, mu: np.ndarray, *, tol: float
) -> EngineResult:
    """The exact engine, checked: a table never holds the midpoint of bounds wider than the
    configured ``tol`` (raises instead)."""
    r = exact_robustness(ensemble, noise, mu, tol=tol)
    if not r.converged:
        raise RuntimeError(
            f"exact engine did not reach tol={tol:g} (bounds [{r.lower:.6g}, "
            f"{r.upper:.6g}] after {r.n_boxes:,} boxes, {r.n_active_features} active "
            "features); raise tol or use Monte Carlo for this model"
        )
    return r


def _progress(items: Sequence, desc: str):
    return tqdm(items, desc=desc, disable=not progress_enabled(), leave=False)


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
    for j, mu in enumerate(_progress(np.asarray(x_test, dtype=np.float64), "table1")):
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
    for j, mu in enumerate(_progress(np.asarray(x_test, dtype=np.float64), "table2")):
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
        for j, mu in enumerate(_progress(x_test, f"table3 var={variance}")):
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
NORTA_METHODS = ("engine", "monte_carlo")


def norta_schema(with_mc: bool) -> pa.Schema:
    """Arrow schema of a :func:`norta_robustness` table (Monte Carlo columns optional)."""
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


def norta_robustness(
    ensemble: TreeEnsemble,
    *,
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
    Columns: :func:`norta_schema`.
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
            exact = certified_robustness(ensemble, noise, mu, tol=tol)
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


#: Arrow schema of an :func:`anytime_norta_robustness` table (``pima.parquet``).
ANYTIME_SCHEMA = pa.schema(
    [
        ("sample", pa.int32()),
        ("true_label", pa.int32()),
        ("label", pa.int32()),
        ("correct", pa.bool_()),
        ("robustness", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("lower", pa.float64()),
        ("upper", pa.float64()),
        ("exact", pa.bool_()),
        ("n_draws", pa.int64()),
        ("boxes", pa.int64()),
        ("stop", pa.string()),
    ]
)


def anytime_norta_robustness(
    ensemble: TreeEnsemble,
    *,
    x_test: np.ndarray,
    y_test: np.ndarray,
    specs: Sequence[MarginalSpec],
    corr: np.ndarray,
    confidence: float,
    half_width: float,
    max_draws: int,
    max_boxes: int,
    tol: float,
    abseps: float,
    seed: int,
    key: str,
) -> pd.DataFrame:
    """Robustness of each test sample under NORTA noise (paper 002 §3.2, §5.4: marginals
    ``specs`` located at the sample, normal correlation ``corr``) by
    :func:`reliquant.trees.anytime.robustness` with
    ``Norta(specs, corr)`` in its deterministic mode: the branch and bound certifies at most
    ``max_boxes`` boxes (QMC masses with error target ``abseps``, seeded
    ``block_int_seed(seed, key, "qmc")``), then the compiled kernel draws plain NORTA samples
    in fixed rounds until the ``confidence`` interval's half-width is at most ``half_width``
    or ``max_draws`` draws are spent (sample ``j`` seeded ``block_int_seed(seed, key, j)``).
    No wall-clock limit enters, so the table depends on the seeds only.

    Columns (:data:`ANYTIME_SCHEMA`): ``robustness`` the point estimate; ``ci_low``/``ci_high``
    the anytime-valid interval that holds R with probability >= ``confidence`` (per sample);
    ``lower``/``upper`` the certified bounds; ``exact``: ``upper - lower <= tol``;
    ``n_draws`` kernel draws, ``boxes`` boxes certified, ``stop`` why sampling stopped.
    """
    return anytime_norta_tables(
        [(ensemble, specs, corr)],
        x_test=x_test,
        y_test=y_test,
        confidence=confidence,
        half_width=half_width,
        max_draws=max_draws,
        max_boxes=max_boxes,
        tol=tol,
        abseps=abseps,
        seed=seed,
        key=key,
    )[0]


def anytime_norta_tables(
    models: Sequence[tuple[TreeEnsemble, Sequence[MarginalSpec], np.ndarray]],
    *,
    x_test: np.ndarray,
    y_test: np.ndarray,
    confidence: float,
    half_width: float,
    max_draws: int,
    max_boxes: int,
    tol: float,
    abseps: float,
    seed: int,
    key: str,
) -> list[pd.DataFrame]:
    """:func:`anytime_norta_robustness` of each ``(ensemble, specs, corr)`` of ``models`` on
    the same test samples and settings: the same tables, one per model, computed sample by
    sample (every model in turn on sample ``j``, whose draws are seeded alike in every
    model) inside :func:`reliquant.trees.kernel.shared_normal_scores`, so that the normal
    scores of sample ``j``'s NORTA draws are made once for all models that share their
    in-play features and correlation (the cells of the Pima sensitivity table)."""
    noises = [
        Norta(list(specs), corr, abseps=abseps, seed=block_int_seed(seed, key, "qmc") % 2**32)
        for _, specs, corr in models
    ]
    rows: list[list[dict]] = [[] for _ in models]
    x_test = np.asarray(x_test, dtype=np.float64)
    # the store holds one sample's chunks: every model draws its scores from the same stream
    store = 8 * x_test.shape[1] * CHUNK * -(-int(max_draws) // CHUNK)
    shared = shared_normal_scores(store) if len(models) > 1 else contextlib.nullcontext()
    with shared:
        for j, mu in enumerate(_progress(x_test, key)):
            for (ensemble, _, _), noise, table in zip(models, noises, rows, strict=True):
                r = robustness(
                    ensemble,
                    mu,
                    noise,
                    confidence=confidence,
                    tol=tol,
                    seed=block_int_seed(seed, key, j),
                    half_width=half_width,
                    max_draws=max_draws,
                    max_boxes=max_boxes,
                )
                table.append(_anytime_row(r, j, y_test[j]))
    return [pd.DataFrame(t, columns=ANYTIME_SCHEMA.names) for t in rows]


def _anytime_row(r, j: int, true_label) -> dict:
    """One row of :data:`ANYTIME_SCHEMA` from the result ``r`` for sample ``j``."""
    return {
        "sample": j + 1,
        "true_label": int(true_label),
        "label": int(r.label),
        "correct": bool(int(r.label) == int(true_label)),
        "robustness": r.estimate,
        "ci_low": r.ci_low,
        "ci_high": r.ci_high,
        "lower": r.lower,
        "upper": r.upper,
        "exact": bool(r.exact),
        "n_draws": int(r.n_draws),
        "boxes": int(r.n_boxes),
        "stop": r.stop,
    }
