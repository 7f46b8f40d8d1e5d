"""Rule trees_table3_size: Table 3 of paper 002 (Section 5.3) for one resized MNIST size:
decision trees of the table's depths, exact robustness vs Monte Carlo over the variances."""

import pandas as pd
import pyarrow as pa

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_frame
from reliquant.core.runlog import setup_logging
from reliquant.core.seeding import block_int_seed
from reliquant.trees.data import mnist_features
from reliquant.trees.experiments import accuracy, fit_decision_tree, mc_comparison
from reliquant.trees.structure import extract_ensemble

log = setup_logging(snakemake.log[0], "trees")
exp, common = snakemake.params.exp, snakemake.params.common
seed = common["seed"]
size = int(snakemake.wildcards.trees_size)

train_images, train_labels = load_mnist_split(snakemake.input.train)
test_images, test_labels = load_mnist_split(snakemake.input.test)
x_tr = mnist_features(train_images, size, common["mnist_resize"])
x_te = mnist_features(test_images[: exp["n_test"]], size, common["mnist_resize"])
all_test = mnist_features(test_images, size, common["mnist_resize"])

frames = []
for depth in snakemake.params.depths:
    model = fit_decision_tree(
        x_tr, train_labels, depth, block_int_seed(seed, "table3", size, depth)
    )
    acc = accuracy(model, all_test, test_labels)
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
        x_te,
        exp["variances"],
        common["prune_level"],
        common["engine_tol"],
        exp["mc_draws"],
        seed,
        ("table3", size, depth),
        exp["max_grid_boxes"],
    )
    frame.insert(0, "depth", depth)
    frame.insert(0, "size", size)
    frame["accuracy"] = acc
    frames.append(frame)

write_frame(
    pd.concat(frames, ignore_index=True),
    snakemake.output[0],
    pa.schema(
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
    ),
)
