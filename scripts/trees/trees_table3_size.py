"""Rule trees_table3_size: Table 3 of paper 002 (Section 5.3) for one resized MNIST size:
the table's depths, exact robustness vs Monte Carlo over the variances."""

import numba

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_frame
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.experiments import table3_size

start_job(snakemake.log[0], "trees")
# the compiled kernel's thread pool: the job's threads (results do not depend on it)
numba.set_num_threads(min(snakemake.threads, numba.config.NUMBA_NUM_THREADS))
result = table3_size(
    size=int(snakemake.wildcards.trees_size),
    depths=snakemake.params.depths,
    train=load_mnist_split(snakemake.input.train),
    test=load_mnist_split(snakemake.input.test),
    exp=snakemake.params.exp,
    common=snakemake.params.common,
)
write_frame(result.table, snakemake.output[0], result.schema)
