"""Per-sample robustness under NORTA noise (papers 001/002, §5): our exact engine or Monte
Carlo (Figure 5 of 001, :func:`norta_robustness`), and :func:`reliquant.trees.anytime.robustness`
in its deterministic mode (Figure 4 of 002, :func:`anytime_norta_robustness`;
:func:`anytime_norta_tables` the same for several models on one test set, sample by sample).
The Arrow schema of each table sits beside its function."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.anytime import CHUNK, robustness
from reliquant.trees.box_mass import NortaNoise
from reliquant.trees.kernel import shared_normal_scores
from reliquant.trees.monte_carlo import monte_carlo_robustness
from reliquant.trees.noise import Norta
from reliquant.trees.reproduction.data import MarginalSpec, marginals_at
from reliquant.trees.reproduction.sample_methods import certified_robustness, progress_over
from reliquant.trees.structure import TreeEnsemble

__all__ = [
    "ANYTIME_SCHEMA",
    "NORTA_METHODS",
    "anytime_norta_robustness",
    "anytime_norta_tables",
    "norta_robustness",
    "norta_schema",
]


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
    for j, mu in enumerate(progress_over(x_test, key)):
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
        for j, mu in enumerate(progress_over(x_test, key)):
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
