"""Calibrated schedule: per-level severities giving a linear accuracy decline (rule pmnist_calibrate).

The library's calibration takes any classifier's ``predict(images_uint8) -> labels``; this
script wires in the MLM CNN.
"""

import torch
import yaml

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_text
from reliquant.core.runlog import start_job
from reliquant.mlm.cnn import load_model
from reliquant.mlm.inference import predict_softmax
from reliquant.pmnist.reproduction import partitions as P
from reliquant.pmnist.reproduction.calibration import calibrate

log = start_job(snakemake.log[0], "pmnist")
params = snakemake.params
# speed only (predictions do not depend on it), so read from the config, not a rerun trigger
batch_size = snakemake.config["pmnist"]["calibration"]["batch_size"]
torch.set_num_threads(snakemake.threads)
model = load_model(snakemake.input.model, device="cpu")


def predict(images_uint8):
    return predict_softmax(model, images_uint8, batch_size=batch_size).argmax(axis=1)


images, labels = load_mnist_split(snakemake.input.test)
idx = P.select_subset(labels, params.images_per_class)
log.info("calibrating on %d test images, floor %.4f", idx.size, params.floor)
schedule = calibrate(
    predict,
    images[idx],
    labels[idx],
    idx,
    seed=params.seed,
    floor=params.floor,
    corruptions=params.corruptions,
    tol=params.tol,
    max_iter=params.max_iter,
)
schedule = {"preset": "calibrated", "n_images": int(idx.size), **schedule}
header = (
    "# Calibrated Perturbed MNIST schedule (reliquant.pmnist.reproduction.calibration): per-level severities so that\n"
    "# the CNN's accuracy falls linearly from the clean accuracy (level 1) to `floor` (level 10).\n"
)
write_text(header + yaml.safe_dump(schedule, sort_keys=False, width=100), snakemake.output[0])
