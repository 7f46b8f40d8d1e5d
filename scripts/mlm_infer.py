"""Softmax of the CNN for one partition, read and scored chunk by chunk (rule mlm_infer)."""

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import torch
from tqdm.auto import tqdm

from reliquant.cnn import load_model
from reliquant.inference import predict_softmax, select_device
from reliquant.io import arrow_to_images, write_frame
from reliquant.mlm import SOFTMAX_SCHEMA, softmax_frame
from reliquant.runlog import progress_enabled, setup_logging

log = setup_logging(snakemake.log[0], "mlm")
cfg = snakemake.params.infer
limit = snakemake.params.n_images
torch.set_num_threads(snakemake.threads)
device = select_device(snakemake.params.device)
model = load_model(snakemake.input.model, device=device)

source = pq.ParquetFile(snakemake.input.images)
names = source.schema_arrow.names
# MNIST splits have `index`; perturbed partitions have `test_index`, `corruption`, `level`.
index_col = "test_index" if "test_index" in names else "index"
columns = [index_col, "label", "image"] + [c for c in ("corruption", "level") if c in names]
total = source.metadata.num_rows if limit is None else min(limit, source.metadata.num_rows)
log.info("scoring %d rows of %s on %s", total, snakemake.input.images, device)

frames, done = [], 0
with tqdm(total=total, unit="img", disable=not progress_enabled()) as bar:
    for batch in source.iter_batches(batch_size=cfg["chunk_rows"], columns=columns):
        if done >= total:
            break
        batch = batch.slice(0, total - done)
        images = arrow_to_images(batch.column("image"))
        probs = predict_softmax(
            model,
            images,
            batch_size=cfg["batch_size"],
            device=device,
            channels_last=cfg["channels_last"],
        )
        frames.append(
            softmax_frame(
                batch.column(index_col).to_numpy(),
                batch.column("label").to_numpy(),
                batch.column("corruption").to_numpy(zero_copy_only=False)
                if "corruption" in names
                else "none",
                batch.column("level").to_numpy() if "level" in names else 0,
                probs,
            )
        )
        done += len(images)
        bar.update(len(images))
frame = pd.concat(frames, ignore_index=True)
write_frame(frame, snakemake.output[0], SOFTMAX_SCHEMA)
acc = float(np.mean(frame["label"].to_numpy() == frame["prediction"].to_numpy()))
log.info("wrote %d rows; accuracy %.4f", len(frame), acc)
