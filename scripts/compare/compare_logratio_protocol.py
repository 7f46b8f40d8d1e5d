"""Rule compare_logratio_protocol: the log-ratio follow-up's protocol on one benchmark table
(one row per model and split), and each row's seconds in a TSV of timings beside it."""

from reliquant.compare.reproduction.logratio_protocol import (
    PROTOCOL_SCHEMA,
    TIMING_COLUMN,
    run_protocol,
)
from reliquant.core.datasets import BENCHMARK_CLASS
from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
data = read_frame(snakemake.input[0])
dataset = snakemake.wildcards.protocol_dataset
table = run_protocol(
    data.drop(columns=BENCHMARK_CLASS).to_numpy(),
    data[BENCHMARK_CLASS].to_numpy(),
    dataset=dataset,
    protocol=snakemake.params.protocol,
    n_jobs=snakemake.threads,
)
write_frame(table.drop(columns=TIMING_COLUMN), snakemake.output.table, PROTOCOL_SCHEMA)
write_text(
    table[["dataset", "model", "split", TIMING_COLUMN]].to_csv(sep="\t", index=False),
    snakemake.output.runtimes,
)
log.info(
    "%s: %d fits of %d parallel jobs in %.0f s; mean AU-ARC per model %s",
    dataset,
    len(table),
    snakemake.threads,
    table[TIMING_COLUMN].sum(),
    table.groupby("model", sort=False)["auarc"].mean().round(4).to_dict(),
)
