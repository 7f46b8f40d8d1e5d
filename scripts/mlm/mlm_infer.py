"""Softmax of the CNN for one partition, read and scored chunk by chunk (rule mlm_infer)."""

import numpy as np
import torch
from tqdm.auto import tqdm

from reliquant.core.io import open_parquet, write_frame
from reliquant.core.runlog import progress_enabled, setup_logging
from reliquant.mlm.cnn import load_model
from reliquant.mlm.inference import score_image_file, select_device
from reliquant.mlm.softmax import SOFTMAX_SCHEMA

log = setup_logging(snakemake.log[0], "mlm")
# speed-only settings (batch size, chunking) are read from the config, not passed as params,
# so changing them reruns nothing: the scores do not depend on them (tests/test_inference.py).
# The memory layout changes the float rounding of the convolutions: it is a param.
cfg = snakemake.config["mlm"]["infer"]
limit = snakemake.params.n_images
torch.set_num_threads(snakemake.threads)
device = select_device(snakemake.params.device)
model = load_model(snakemake.input.model, device=device)

rows = open_parquet(snakemake.input.images).metadata.num_rows
total = rows if limit is None else min(limit, rows)
log.info("scoring %d rows of %s on %s", total, snakemake.input.images, device)
with tqdm(total=total, unit="img", disable=not progress_enabled()) as bar:
    frame = score_image_file(
        model,
        snakemake.input.images,
        chunk_rows=cfg["chunk_rows"],
        batch_size=cfg["batch_size"],
        device=device,
        channels_last=snakemake.params.channels_last,
        limit=limit,
        on_chunk=bar.update,
        corruption=snakemake.params.corruption,
    )
write_frame(frame, snakemake.output[0], SOFTMAX_SCHEMA)
acc = float(np.mean(frame["label"].to_numpy() == frame["prediction"].to_numpy()))
log.info("wrote %d rows; accuracy %.4f", len(frame), acc)
