"""Rule trees_iris_mixed: Figure 5 of paper 001 (Section 5.4): Iris, XGBoost of depth 4 with
6 rounds, mixed NORTA noise (normal, exponential, chi-square, lognormal) with normal
correlations drawn between 0.1 and 0.3."""

import numpy as np

from reliquant.core.io import read_frame, save_figure, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.core.seeding import block_int_seed, block_rng
from reliquant.trees.data import IRIS_FEATURES, iris_marginals, random_correlation
from reliquant.trees.experiments import (
    accuracy,
    fit_xgboost,
    markdown_section,
    norta_experiment,
    plot_per_sample,
    split_train_test,
)
from reliquant.trees.structure import extract_ensemble

log = setup_logging(snakemake.log[0], "trees")
exp, seed = snakemake.params.exp, snakemake.params.seed

iris = read_frame(snakemake.input.iris)
x, y = iris[list(IRIS_FEATURES)].to_numpy(float), iris["target"].to_numpy()
x_tr, x_te, y_tr, y_te = split_train_test(
    x, y, exp["test_fraction"], block_int_seed(seed, "iris_mixed", "split")
)
model = fit_xgboost(
    x_tr, y_tr, exp["n_estimators"], exp["max_depth"], block_int_seed(seed, "iris_mixed", "fit")
)
acc = accuracy(model, x_te, y_te)
ensemble = extract_ensemble(model)
log.info("XGBoost: %d trees, test accuracy %.4f", ensemble.n_trees, acc)

specs = iris_marginals([{**m, "centred": exp["centred"]} for m in exp["marginals"]])
corr = random_correlation(
    len(IRIS_FEATURES), exp["corr_low"], exp["corr_high"], block_rng(seed, "iris_mixed", "corr")
)
log.info("normal correlation:\n%s", corr)
table, schema = norta_experiment(ensemble, x_te, y_te, specs, corr, exp, seed, "iris_mixed")
write_frame(table, snakemake.output.table, schema)
n_one = int((table["lower"] >= 1.0 - exp["engine_tol"]).sum())
text = (
    f"Paper 001, Figure 5: Iris, XGBoost depth {exp['max_depth']} with {exp['n_estimators']} "
    f"rounds ({ensemble.n_trees} trees), test accuracy {acc:.4f}, {len(x_te)} test samples. "
    "Noise marginals: "
    + ", ".join(
        f"{f} {s.family} (scale {s.scale:g}" + (f", shape {s.shape:g})" if s.shape else ")")
        for f, s in zip(IRIS_FEATURES, specs, strict=True)
    )
    + "; normal correlations off the diagonal: "
    + ", ".join(f"{v:.3f}" for v in corr[np.triu_indices(len(IRIS_FEATURES), 1)])
    + f". {n_one} samples have robustness 1 (up to the engine's tolerance)."
)
write_text(
    markdown_section("Figure 5 (001): Iris robustness under mixed noise", text, table),
    snakemake.output.md,
)
fig = plot_per_sample(table, f"Iris XGBoost, mixed noise ({len(x_te)} test samples)")
save_figure(fig, snakemake.output.png)
save_figure(fig, snakemake.output.pdf)
