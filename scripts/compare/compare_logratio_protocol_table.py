"""Rule compare_logratio_protocol_table: every data set's protocol rows in one table, the
per-model summary as markdown and as the generated block of docs/compare.md."""

import pandas as pd

from reliquant.compare.reproduction.logratio_protocol import (
    PROTOCOL_SCHEMA,
    TIMING_COLUMN,
    protocol_markdown,
    protocol_summary,
)
from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
table = pd.concat([read_frame(path) for path in snakemake.input.tables], ignore_index=True)
seconds = sum(
    float(pd.read_csv(path, sep="\t")[TIMING_COLUMN].sum()) for path in snakemake.input.runtimes
)
protocol = snakemake.params.protocol
text = protocol_markdown(
    protocol_summary(table),
    protocol=protocol,
    runtime_s=seconds,
    n_jobs=snakemake.config["compare"]["speed"]["protocol_threads"],
)
write_frame(table, snakemake.output.table, PROTOCOL_SCHEMA)
write_text(text, snakemake.output.md)
write_text(text, snakemake.output.block)
log.info("%d rows from %s", len(table), ", ".join(snakemake.input.tables))
