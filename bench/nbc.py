"""Benchmark: vectorised eps_loc (Theorem 6.1) vs per-instance scalar bisection, and one cell.

Runs standalone (``python bench/nbc.py [--configfile OVERLAY ...] [--out results/bench/nbc.md]``,
settings from config.yaml merged with the overlays) or as the Snakemake rule ``bench_nbc``
(settings from the workflow's config). Both eps_loc implementations run side by side in one
process on the same NBC and the same test instances of the configured experiment; the ratio of
their best-of-k wall times is reported together with the largest difference between their
values (targets in ``nbc.bench``). The time of one (N_train, gamma) cell of the grid is
reported too.
"""

import argparse
import platform
from pathlib import Path

import numpy as np

from reliquant.core.benchmarks import best_time, headline_markdown
from reliquant.core.config import config_section
from reliquant.core.io import write_text
from reliquant.core.seeding import block_rng
from reliquant.nbc.classifier import cv_alpha, fit_nbc, log_factors
from reliquant.nbc.reproduction.distributions import make_distributions, mix, sample_joint
from reliquant.nbc.reproduction.experiment import run_cell
from reliquant.nbc.robustness_metrics import eps_loc, eps_loc_scalar

REPO = Path(__file__).resolve().parents[1]


def main(out_path: str | None, cfg: dict) -> str:
    """Run both benchmarks on the ``nbc`` config section ``cfg`` (knobs in ``cfg["bench"]``)."""
    design, fit, seed, bench = cfg["design"], cfg["fit"], cfg["seed"], cfg["bench"]
    d = make_distributions(design, seed)
    k, n_values = d["test"].shape[0], list(d["test"].shape[1:])
    rng = block_rng(seed, "bench")
    X_tr, y_tr = sample_joint(rng, mix(d["test"], d["shift"][0], bench["gamma"]), bench["n_train"])
    alpha, _ = cv_alpha(X_tr, y_tr, k, n_values, fit["alphas"], fit["cv_folds"], rng)
    model = fit_nbc(X_tr, y_tr, k, n_values, alpha)
    lf = log_factors(model, d["X_test"])  # (1000, K, N + 1), one row per test instance
    tol = fit["eps_loc_tol"]

    def scalar() -> np.ndarray:
        return np.array([eps_loc_scalar(row[:, 0], row[:, 1:], tol=tol) for row in lf])

    t_vec, v_vec = best_time(lambda: eps_loc(lf, tol=tol), bench["repeat_vectorised"])
    t_sca, v_sca = best_time(scalar, bench["repeat_scalar"])
    max_diff = float(np.max(np.abs(v_vec - v_sca)))
    ratio = t_sca / t_vec

    gamma = cfg["grid"]["gamma"][-1]
    n_train = cfg["grid"]["n_train"][0]
    t_cell, cell = best_time(lambda: run_cell(d, n_train, gamma, fit, seed), 1)
    n_sets = cell["train_set"].nunique()
    n_grid = len(cfg["grid"]["n_train"]) * len(cfg["grid"]["gamma"]) * n_sets
    speedup, max_allowed = bench["target_speedup"], bench["target_max_diff"]

    lines = [
        "# Benchmark: nbc (paper 000)",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}.",
        "Command: `python bench/nbc.py` (or `snakemake --cores 1 results/bench/nbc.md`).",
        "",
        f"## eps_loc on {lf.shape[0]} test instances (K = {k}, N = {lf.shape[2] - 1} features, "
        f"tol = {tol:g}; NBC fitted to {bench['n_train']} instances, gamma = {bench['gamma']:g})",
        "",
        "| implementation | best wall time (s) |",
        "|---|---|",
        f"| per-instance scalar bisection (`eps_loc_scalar`, best of {bench['repeat_scalar']}) "
        f"| {t_sca:.4f} |",
        f"| vectorised monotone Newton + certificate (`eps_loc`, best of "
        f"{bench['repeat_vectorised']}) | {t_vec:.6f} |",
        "",
        f"- speed ratio: **{ratio:.0f}x** (target >= {speedup:g}x) -> "
        f"{'met' if ratio >= speedup else 'NOT met'}",
        f"- largest |difference| of the values: {max_diff:.2e} (target <= {max_allowed:g}) -> "
        f"{'met' if max_diff <= max_allowed else 'NOT met'}",
        "",
        f"## One cell of the grid (N_train = {n_train}, gamma = {gamma:g})",
        "",
        f"{n_sets} training sets (CV over {len(fit['alphas'])} alphas, {fit['n_bootstrap']} bootstrap "
        f"fits, seven metrics on {len(d['y_test'])} test instances each): {t_cell:.2f} s, "
        f"i.e. {1000 * t_cell / n_sets:.1f} ms per training set; the {n_grid} training sets of the "
        f"configured grid need about {n_grid * t_cell / n_sets:.1f} s of compute.",
        "",
        headline_markdown(
            [
                (
                    f"NBC: vectorised eps_loc vs per-instance scalar bisection, "
                    f"{lf.shape[0]:,} instances",
                    f"{ratio:.0f}x faster, max difference {max_diff:.1e}",
                    f">= {speedup:g}x, {max_allowed:g}",
                ),
                (
                    f"NBC: the configured grid ({n_grid} training sets), from one timed cell",
                    f"{n_grid * t_cell / n_sets:.1f} s of compute",
                    "< 60 s",
                ),
            ]
        ),
    ]
    text = "\n".join(lines)
    if out_path:
        write_text(text, out_path)
    print(text)
    return text


if __name__ == "__main__":
    if "snakemake" in globals():
        from reliquant.core.runlog import start_job

        start_job(snakemake.log[0], "nbc")  # noqa: F821
        main(snakemake.output[0], snakemake.config["nbc"])  # noqa: F821
    else:
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--out", default=None, help="also write the markdown report here")
        parser.add_argument(
            "--configfile", nargs="*", default=[], help="overlays merged over config.yaml"
        )
        args = parser.parse_args()
        main(args.out, config_section("nbc", REPO / "config.yaml", args.configfile))
