"""Rule compare_cnn: the CNN's per-prediction table (softmax partitions + Monte Carlo
robustness of the trained CNN, its logit and penultimate-feature comparators, and the deep
ensemble's scores when compare.mnist.ensemble_members > 0)."""

from reliquant.mlm import pin_cpu_kernels

# before anything imports torch: the same CPU kernels on every x86-64 machine (docs/mlm.md)
pin_cpu_kernels()

import numpy as np  # noqa: E402
import torch  # noqa: E402

from reliquant.compare.reproduction.cnn_ensemble import (  # noqa: E402
    ensemble_columns,
    member_softmax,
)
from reliquant.compare.reproduction.mnist import (  # noqa: E402
    cnn_predict,
    cnn_predictions,
    cnn_representations,
    sample_arrays,
    softmax_for_sample,
)
from reliquant.compare.reproduction.tables import (  # noqa: E402
    assign_parts,
    prediction_schema,
    score_columns,
)
from reliquant.core.io import arrow_to_images, read_frame, read_table, write_frame  # noqa: E402
from reliquant.core.runlog import start_job  # noqa: E402
from reliquant.mlm import load_model  # noqa: E402
from reliquant.mlm.inference import select_device  # noqa: E402

log = start_job(snakemake.log[0], "compare")
inp, p = snakemake.input, snakemake.params
torch.set_num_threads(snakemake.threads)
meta, images = sample_arrays(read_table(inp.sample))
names = [path.rsplit("/", 1)[-1].removesuffix(".parquet") for path in inp.softmax]
softmax = softmax_for_sample(
    meta, {n: read_frame(f) for n, f in zip(names, inp.softmax, strict=True)}
)
train = read_frame(inp.train)
device = select_device(p.device)
model = load_model(inp.model, device=device)
train_images = read_table(inp.train_images, columns=["label", "image"])
representations = cnn_representations(
    model,
    images,
    arrow_to_images(train_images.column("image")),
    train_images.column("label").to_numpy().astype(np.int64),
    n_train=p.exp["n_train"],
    seed=p.seed,
    device=device,
)
ensemble = None
if inp.members:  # compare.mnist.ensemble_members > 0 (the compare_full preset)
    members = [load_model(path, device=device) for path in inp.members]
    ensemble = ensemble_columns(
        member_softmax(
            members,
            images,
            batch_size=snakemake.config["mlm"]["infer"]["batch_size"],
            device=device,
        )
    )
    log.info("deep ensemble of %d members", len(members))
frame = cnn_predictions(
    meta,
    images,
    softmax,
    train[[f"p{c}" for c in range(10)]].to_numpy(),
    train["label"].to_numpy(dtype=np.int64),
    cnn_predict(model, device=device),
    exp=p.exp,
    seed=p.seed,
    batch_rows=snakemake.config["compare"]["speed"]["batch_rows"],
    n_splits=p.n_splits,
    representations=representations,
    ensemble=ensemble,
)
frame = assign_parts(
    frame, validation_fraction=snakemake.params.validation_fraction, seed=snakemake.params.seed
)
write_frame(frame, snakemake.output[0], prediction_schema(score_columns(frame)))
log.info(
    "accuracy per case: %s", frame.groupby("case", sort=False)["correct"].mean().round(4).to_dict()
)
