"""Softmax of the CNN for one partition, read and scored chunk by chunk (rule mlm_infer)."""

from reliquant.mlm.determinism import pin_cpu_kernels

# before anything imports torch: the same CPU kernels on every x86-64 machine (docs/mlm.md)
pin_cpu_kernels()

import torch  # noqa: E402
from tqdm.auto import tqdm  # noqa: E402

from reliquant.core.io import open_parquet, write_table  # noqa: E402
from reliquant.core.runlog import progress_enabled, start_job  # noqa: E402
from reliquant.mlm.cnn import load_model  # noqa: E402
from reliquant.mlm.inference import score_image_table, select_device  # noqa: E402
from reliquant.mlm.softmax import SOFTMAX_SCHEMA  # noqa: E402

log = start_job(snakemake.log[0], "mlm")
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
    table = score_image_table(
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
write_table(table, snakemake.output[0], SOFTMAX_SCHEMA)
right = table.column("label").to_numpy() == table.column("prediction").to_numpy()
acc = float(right.mean()) if len(right) else float("nan")
log.info("wrote %d rows; accuracy %.4f", table.num_rows, acc)
