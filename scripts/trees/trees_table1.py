"""Rule trees_table1: Table 1 of paper 002 (Section 5.1): Iris decision tree, robustness from
all boxes vs the 99 % boxes, R^2 between them."""

import pyarrow as pa

from reliquant.core.io import read_frame, save_figure, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.core.seeding import block_int_seed
from reliquant.trees.data import IRIS_FEATURES
from reliquant.trees.experiments import (
    box_comparison,
    fit_decision_tree,
    markdown_section,
    plot_box_comparison,
    r2_score,
    split_train_test,
)
from reliquant.trees.structure import extract_ensemble

log = setup_logging(snakemake.log[0], "trees")
exp, common = snakemake.params.exp, snakemake.params.common
seed = common["seed"]

iris = read_frame(snakemake.input.iris)
x, y = iris[list(IRIS_FEATURES)].to_numpy(float), iris["target"].to_numpy()
x_tr, x_te, y_tr, y_te = split_train_test(
    x, y, exp["test_fraction"], block_int_seed(seed, "table1", "split")
)
model = fit_decision_tree(x_tr, y_tr, exp["max_depth"], block_int_seed(seed, "table1", "fit"))
log.info("decision tree depth %d, test accuracy %.3f", exp["max_depth"], model.score(x_te, y_te))
ensemble = extract_ensemble(model)

table = box_comparison(ensemble, x_te, exp["variance"], common["prune_level"], common["engine_tol"])
r2 = r2_score(table["robustness_all"], table["robustness_pruned"])
log.info("R^2(all, 99 %% boxes) = %.8f, max |diff| = %.3g", r2, table["abs_diff"].max())

write_frame(
    table,
    snakemake.output.table,
    pa.schema(
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
    ),
)
text = (
    f"Paper 002, Table 1: Iris, decision tree of depth {exp['max_depth']}, "
    f"{len(x_te)} test samples, noise N(mu, {exp['variance']:g} I). `boxes_*`: boxes of the "
    "grid enumerated (all, or meeting the bounding box of the "
    f"{common['prune_level']:.0%} ellipsoid); `boxes_label_*`: those with the sample's label "
    "(the paper's count). `robustness_exact`: our engine. "
    f"R^2(all, pruned) = {r2:.8f}; test accuracy {model.score(x_te, y_te):.3f}."
)
write_text(
    markdown_section("Table 1: all boxes vs 99 % boxes (Iris)", text, table), snakemake.output.md
)
fig = plot_box_comparison(table)
save_figure(fig, snakemake.output.png)
save_figure(fig, snakemake.output.pdf)
