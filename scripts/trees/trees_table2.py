"""Rule trees_table2: Table 2 of paper 002 (Section 5.2): MNIST 5x5 random forest (5 trees of
depth 3), boxes and runtimes of all boxes, 99 % boxes, our exact engine and Monte Carlo."""

import pyarrow as pa

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import save_figure, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.core.seeding import block_int_seed
from reliquant.trees.data import mnist_features
from reliquant.trees.experiments import (
    accuracy,
    fit_random_forest,
    markdown_section,
    plot_runtimes,
    runtime_comparison,
)
from reliquant.trees.structure import extract_ensemble

log = setup_logging(snakemake.log[0], "trees")
exp, common = snakemake.params.exp, snakemake.params.common
seed = common["seed"]

train_images, train_labels = load_mnist_split(snakemake.input.train)
test_images, test_labels = load_mnist_split(snakemake.input.test)
x_tr = mnist_features(train_images, exp["size"], common["mnist_resize"])
x_te = mnist_features(test_images, exp["size"], common["mnist_resize"])
model = fit_random_forest(
    x_tr, train_labels, exp["n_estimators"], exp["max_depth"], block_int_seed(seed, "table2", "fit")
)
acc = accuracy(model, x_te, test_labels)
ensemble = extract_ensemble(model)
log.info("random forest: test accuracy %.4f, grid of %d boxes", acc, ensemble.n_grid_boxes())

n = exp["n_test"]
table, runtimes = runtime_comparison(
    ensemble,
    x_te[:n],
    exp["variance"],
    common["prune_level"],
    common["engine_tol"],
    exp["mc_draws"],
    seed,
    exp["max_grid_boxes"],
)
table.insert(1, "true_label", test_labels[:n].astype(int))
write_frame(
    table,
    snakemake.output.table,
    pa.schema(
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
        ]
    ),
)
# wall-clock seconds differ between runs: a text table, kept out of the parquet results
write_text(runtimes.to_csv(sep="\t", index=False, float_format="%.6g"), snakemake.output.runtimes)
shown = table[
    [
        "sample",
        "label",
        "boxes_label_all",
        "boxes_label_pruned",
        "engine_boxes",
        "robustness_exact",
        "mc_estimate",
    ]
].merge(runtimes, on="sample")
med = runtimes.median(numeric_only=True)
text = (
    f"Paper 002, Table 2: MNIST resized to {exp['size']}x{exp['size']} "
    f"({common['mnist_resize']}), random forest of {exp['n_estimators']} trees of depth "
    f"{exp['max_depth']} (test accuracy {acc:.4f}), first {n} test images, noise "
    f"N(mu, {exp['variance']:g} I). Boxes with the sample's label (all boxes, 99 % boxes; "
    f"the full grid has {ensemble.n_grid_boxes():,} boxes), boxes our engine bounded, and "
    f"seconds per method (Monte Carlo: {exp['mc_draws']:,} draws). Median seconds: all boxes "
    f"{med['all_boxes']:.3g}, 99 % boxes {med['pruned_boxes']:.3g}, engine "
    f"{med['engine']:.3g}, Monte Carlo {med['monte_carlo']:.3g}; Monte Carlo / engine = "
    f"{med['monte_carlo'] / med['engine']:.0f}x. Runtimes are this machine's and vary "
    "between runs (they live in table2_runtimes.tsv, not in table2.parquet)."
)
write_text(
    markdown_section("Table 2: runtimes (MNIST 5x5 random forest)", text, shown, ".4g"),
    snakemake.output.md,
)
save_figure(plot_runtimes(runtimes), snakemake.output.png)
