"""Rule compare_trees_mnist: a random forest or XGBoost fitted on MNIST pixels, its
per-prediction table on the subsample (probability scores, Monte Carlo robustness)."""

import numpy as np

from reliquant.compare.reproduction.mnist import sample_arrays, tree_mnist_predictions
from reliquant.compare.reproduction.tables import assign_parts, prediction_schema, score_columns
from reliquant.core.io import arrow_to_images, read_table, write_frame
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
inp, p = snakemake.input, snakemake.params
train = read_table(inp.train, columns=["label", "image"])
meta, images = sample_arrays(read_table(inp.sample))
frame = tree_mnist_predictions(
    p.kind,
    arrow_to_images(train.column("image")),
    train.column("label").to_numpy().astype(np.int64),
    meta,
    images,
    exp=p.exp,
    seed=p.seed,
    n_splits=p.n_splits,
    n_jobs=snakemake.threads,
    batch_rows=snakemake.config["compare"]["speed"]["batch_rows"],
)
frame = assign_parts(
    frame, validation_fraction=snakemake.params.validation_fraction, seed=snakemake.params.seed
)
write_frame(frame, snakemake.output[0], prediction_schema(score_columns(frame)))
log.info(
    "%s: accuracy per case %s",
    p.kind,
    frame.groupby("case", sort=False)["correct"].mean().round(4).to_dict(),
)
