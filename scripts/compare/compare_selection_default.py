"""Rule compare_selection_default: the dynamic-selection protocol's small case of the default
run (every data set, setting and split of compare.selection.default in one job): the per-split
rows, their timings beside them, the summary, mean ranks, markdown and figure."""

from reliquant.compare.reproduction.selection_protocol import (
    RANKS_SCHEMA,
    SELECTION_SCHEMA,
    SUMMARY_SCHEMA,
    TIMING_COLUMN,
    run_selection,
    selection_report,
)
from reliquant.core.datasets import BENCHMARK_CLASS
from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown, write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
params = snakemake.params
tables = {}
for name, path in zip(params.datasets, snakemake.input, strict=True):
    data = read_frame(path)
    tables[name] = (data.drop(columns=BENCHMARK_CLASS).to_numpy(), data[BENCHMARK_CLASS].to_numpy())
rows = run_selection(
    tables,
    settings=params.settings,
    n_splits=params.n_splits,
    selection=params.selection,
    models=params.models,
    cv_folds=params.cv_folds,
    n_jobs=snakemake.threads,
)
report = selection_report(rows.drop(columns=TIMING_COLUMN))
out = snakemake.output
write_frame(rows.drop(columns=TIMING_COLUMN), out.splits, SELECTION_SCHEMA)
write_text(
    rows[["dataset", "setting", "split", "method", TIMING_COLUMN]].to_csv(sep="\t", index=False),
    out.runtimes,
)
write_frame(report.summary, out.summary, SUMMARY_SCHEMA)
write_frame(report.ranks, out.ranks, RANKS_SCHEMA)
write_markdown(
    report.markdown, out.md, out.html, title="Dynamic selection by robustness (small case)"
)
save_figure(report.figure, out.figure)
log.info("%d rows in %.1f s of protocol", len(rows), rows[TIMING_COLUMN].sum())
