"""Rule trees_pima: Figure 4 of paper 002 (Section 5.4): Pima, XGBoost, NORTA noise (normal /
exponential marginals scaled by a signal-to-noise ratio, Spearman correlations from the
training data), each subject by reliquant.trees.robustness in its deterministic mode. The
sensitivity table SNR reading x boosting rounds, and for the configured default cell the
robustness of every test subject (estimate, interval, certified bounds) and its histogram."""

import numba

from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.pima import PIMA_SENSITIVITY_SCHEMA, pima

start_job(snakemake.log[0], "trees")
# the compiled kernel's thread pool: the job's threads (results do not depend on it)
numba.set_num_threads(min(snakemake.threads, numba.config.NUMBA_NUM_THREADS))
result = pima(
    read_frame(snakemake.input.pima),
    exp=snakemake.params.exp,
    seed=snakemake.params.seed,
    paper=snakemake.params.paper,
)
write_frame(result.table, snakemake.output.table, result.schema)
write_frame(result.sensitivity, snakemake.output.sensitivity, PIMA_SENSITIVITY_SCHEMA)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.png)
save_figure(result.figure, snakemake.output.pdf)
