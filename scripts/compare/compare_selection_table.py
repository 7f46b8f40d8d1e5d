"""Rule compare_selection_table: every split's rows of the dynamic-selection protocol in one
table, the summary per data set, setting and method, the mean ranks, the figure, the markdown
and the generated block of docs/compare.md."""

import pandas as pd

from reliquant.compare.reproduction.selection_protocol import (
    RANKS_SCHEMA,
    SELECTION_SCHEMA,
    SUMMARY_SCHEMA,
    TIMING_COLUMN,
    selection_report,
)
from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown, write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
rows = pd.concat([read_frame(path) for path in snakemake.input.tables], ignore_index=True)
seconds = sum(
    float(pd.read_csv(path, sep="\t")[TIMING_COLUMN].sum()) for path in snakemake.input.runtimes
)
report = selection_report(
    rows, runtime_s=seconds, n_jobs=snakemake.config["compare"]["speed"]["protocol_threads"]
)
out = snakemake.output
write_frame(rows, out.splits, SELECTION_SCHEMA)
write_frame(report.summary, out.summary, SUMMARY_SCHEMA)
write_frame(report.ranks, out.ranks, RANKS_SCHEMA)
write_markdown(report.markdown, out.md, out.html, title="Dynamic selection by robustness")
write_text(report.markdown, out.block)
save_figure(report.figure, out.figure)
log.info(
    "%d rows from %d split tables, %.0f s of protocol",
    len(rows),
    len(snakemake.input.tables),
    seconds,
)
