"""Rule trees_table2: Table 2 of paper 002 (Section 5.2): MNIST 5x5 random forest, boxes and
runtimes of all boxes, 99 % boxes, our exact engine and Monte Carlo (compiled kernel, and
numpy + predict for reference)."""

import numba

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import save_figure, write_frame, write_markdown, write_text
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.experiments import table2

start_job(snakemake.log[0], "trees")
# the compiled kernel's thread pool: the job's threads (results do not depend on it)
numba.set_num_threads(min(snakemake.threads, numba.config.NUMBA_NUM_THREADS))
result = table2(
    train=load_mnist_split(snakemake.input.train),
    test=load_mnist_split(snakemake.input.test),
    exp=snakemake.params.exp,
    common=snakemake.params.common,
)
write_frame(result.table, snakemake.output.table, result.schema)
# wall-clock seconds differ between runs: a text table, kept out of the parquet results
write_text(result.runtimes_tsv, snakemake.output.runtimes)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.png)
