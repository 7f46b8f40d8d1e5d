"""Calibrated schedule: per-level severities giving a linear accuracy decline (rule pmnist_calibrate)."""

import torch
import yaml

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_text
from reliquant.core.runlog import setup_logging
from reliquant.mlm.cnn import load_model
from reliquant.mlm.inference import predict_softmax
from reliquant.pmnist import partitions as P
from reliquant.pmnist.calibration import calibrate

log = setup_logging(snakemake.log[0], "pmnist")
cfg = snakemake.params.calibration
torch.set_num_threads(snakemake.threads)
model = load_model(snakemake.input.model, device="cpu")


def predict(images_uint8):
    return predict_softmax(model, images_uint8, batch_size=cfg["batch_size"]).argmax(axis=1)


images, labels = load_mnist_split(snakemake.input.test)
idx = P.select_subset(labels, cfg["images_per_class"])
log.info("calibrating on %d test images, floor %.4f", idx.size, cfg["floor"])
schedule = calibrate(
    predict,
    images[idx],
    labels[idx],
    idx,
    seed=snakemake.params.seed,
    floor=cfg["floor"],
    corruptions=snakemake.params.corruptions,
    tol=cfg["tol"],
    max_iter=cfg["max_iter"],
)
schedule = {"preset": "calibrated", "n_images": int(idx.size), **schedule}
header = (
    "# Calibrated Perturbed MNIST schedule (reliquant.pmnist.calibration): per-level severities so that\n"
    "# the CNN's accuracy falls linearly from the clean accuracy (level 1) to `floor` (level 10).\n"
)
write_text(header + yaml.safe_dump(schedule, sort_keys=False, width=100), snakemake.output[0])
