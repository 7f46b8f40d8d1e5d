"""Rule compare_resolution: the CNN's Monte Carlo robustness on the compare subsample at each
number of draws of compare.resolution, tie shares and AU-ARC against the fixed comparator (a
table, the docs block and a figure)."""

from reliquant.mlm import pin_cpu_kernels

# before anything imports torch: the same CPU kernels on every x86-64 machine (docs/mlm.md)
pin_cpu_kernels()

import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from reliquant.compare.reproduction.mnist import (  # noqa: E402
    cnn_predict,
    cnn_predictions,
    sample_arrays,
    softmax_for_sample,
)
from reliquant.compare.reproduction.resolution import (  # noqa: E402
    RESOLUTION_SCHEMA,
    plot_resolution,
    resolution_markdown,
    resolution_table,
)
from reliquant.core.io import (  # noqa: E402
    read_frame,
    read_table,
    save_figure,
    write_frame,
    write_text,
)
from reliquant.core.runlog import start_job  # noqa: E402
from reliquant.mlm import load_model  # noqa: E402
from reliquant.mlm.inference import select_device  # noqa: E402

log = start_job(snakemake.log[0], "compare")
inp, p, out = snakemake.input, snakemake.params, snakemake.output
torch.set_num_threads(snakemake.threads)
meta, images = sample_arrays(read_table(inp.sample))
names = [path.rsplit("/", 1)[-1].removesuffix(".parquet") for path in inp.softmax]
softmax = softmax_for_sample(
    meta, {n: read_frame(f) for n, f in zip(names, inp.softmax, strict=True)}
)
train = read_frame(inp.train)
device = select_device(p.device)
predict = cnn_predict(load_model(inp.model, device=device), device=device)
start = time.perf_counter()
frames = {}
for n_draws in p.resolution["n_draws"]:
    frames[n_draws] = cnn_predictions(
        meta,
        images,
        softmax,
        train[[f"p{c}" for c in range(10)]].to_numpy(),
        train["label"].to_numpy(dtype=np.int64),
        predict,
        exp={"variances": p.resolution["variances"], "n_draws": n_draws},
        seed=p.seed,
        batch_rows=snakemake.config["compare"]["speed"]["batch_rows"],
        n_splits=p.n_splits,
    )
    log.info("%d draws per prediction: scored %d predictions", n_draws, len(frames[n_draws]))
table = resolution_table(frames, comparator=p.resolution["comparator"])
write_frame(table, out.table, RESOLUTION_SCHEMA)
write_text(resolution_markdown(table, seconds=time.perf_counter() - start), out.block)
save_figure(plot_resolution(table), out.figure)
