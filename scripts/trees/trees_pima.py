"""Rule trees_pima: Figure 4 of paper 002 (Section 5.4): Pima, XGBoost of depth 3, NORTA
noise (normal / exponential marginals scaled by a signal-to-noise ratio, Spearman
correlations from the training data); robustness of every test subject."""

from reliquant.core.io import read_frame, save_figure, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.core.seeding import block_int_seed
from reliquant.trees.data import (
    PIMA_FEATURES,
    PIMA_TARGET,
    filter_pima,
    pima_marginals,
    spearman_matrix,
)
from reliquant.trees.experiments import (
    accuracy,
    fit_xgboost,
    markdown_section,
    norta_experiment,
    plot_histogram,
    robustness_summary,
    split_train_test,
)
from reliquant.trees.norta import spearman_to_normal_corr
from reliquant.trees.structure import extract_ensemble

log = setup_logging(snakemake.log[0], "trees")
exp, seed = snakemake.params.exp, snakemake.params.seed

pima = filter_pima(read_frame(snakemake.input.pima))
x, y = pima[list(PIMA_FEATURES)].to_numpy(float), pima[PIMA_TARGET].to_numpy()
x_tr, x_te, y_tr, y_te = split_train_test(
    x, y, exp["test_fraction"], block_int_seed(seed, "pima", "split")
)
model = fit_xgboost(
    x_tr, y_tr, exp["n_estimators"], exp["max_depth"], block_int_seed(seed, "pima", "fit")
)
acc = accuracy(model, x_te, y_te)
ensemble = extract_ensemble(model)
log.info(
    "XGBoost depth %d x %d rounds: test accuracy %.4f", exp["max_depth"], exp["n_estimators"], acc
)

families = [exp["families"][f] for f in PIMA_FEATURES]
specs = pima_marginals(x_tr, families, exp["snr"], exp["snr_kind"], exp["centred"])
corr = spearman_to_normal_corr(spearman_matrix(x_tr))
for f, s in zip(PIMA_FEATURES, specs, strict=True):
    log.info("noise %-25s %-11s scale %.4g", f, s.family, s.scale)

table, schema = norta_experiment(ensemble, x_te, y_te, specs, corr, exp, seed, "pima")
write_frame(table, snakemake.output.table, schema)
s = robustness_summary(table["robustness"], exp["threshold"])
text = (
    f"Paper 002, Figure 4: Pima ({len(pima)} subjects, {len(x_te)} test), XGBoost depth "
    f"{exp['max_depth']} with {exp['n_estimators']} rounds, test accuracy {acc:.4f}. Noise: "
    + ", ".join(
        f"{f} {sp.family} (scale {sp.scale:.3g})"
        for f, sp in zip(PIMA_FEATURES, specs, strict=True)
    )
    + f"; scales = training std / sqrt({exp['snr']:g}) (snr_kind={exp['snr_kind']}); normal "
    "correlation 2 sin(pi rho / 6) from the training set's Spearman rho. Method: "
    + (
        f"Monte Carlo with {exp['mc_draws']:,} NORTA draws per subject (lower/upper: 95 % "
        "Clopper-Pearson interval). "
        if exp["method"] == "monte_carlo"
        else f"exact engine (gap {exp['engine_tol']:g}, QMC abseps {exp['abseps']:g}). "
    )
    + "Robustness from "
    f"{s['min']:.4f} to {s['max']:.4f}; {s['n_above']} of {s['n']} above {exp['threshold']:g}."
)
write_text(
    markdown_section("Figure 4 (002): Pima robustness under NORTA noise", text, table),
    snakemake.output.md,
)
fig = plot_histogram(
    table["robustness"], exp["threshold"], f"Pima XGBoost ({len(x_te)} test subjects)"
)
save_figure(fig, snakemake.output.png)
save_figure(fig, snakemake.output.pdf)
