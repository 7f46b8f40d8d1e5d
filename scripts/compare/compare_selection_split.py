"""Rule compare_selection_split: the dynamic-selection protocol on one benchmark table, setting
and split (one row per method), and each row's seconds in a TSV of timings beside it."""

from reliquant.compare.reproduction.selection_protocol import (
    SELECTION_SCHEMA,
    TIMING_COLUMN,
    run_selection_split,
)
from reliquant.core.datasets import BENCHMARK_CLASS
from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
data = read_frame(snakemake.input[0])
wc = snakemake.wildcards
result = run_selection_split(
    data.drop(columns=BENCHMARK_CLASS).to_numpy(),
    data[BENCHMARK_CLASS].to_numpy(),
    dataset=wc.sel_dataset,
    setting=wc.sel_setting,
    split=int(wc.sel_split),
    selection=snakemake.params.selection,
    models=snakemake.params.models,
    cv_folds=snakemake.params.cv_folds,
    n_jobs=snakemake.threads,
)
rows = result.rows
write_frame(rows.drop(columns=TIMING_COLUMN), snakemake.output.table, SELECTION_SCHEMA)
write_text(
    rows[["dataset", "setting", "split", "method", TIMING_COLUMN]].to_csv(sep="\t", index=False),
    snakemake.output.runtimes,
)
log.info(
    "%s %s split %s: %.1f s with %d parallel fits; test accuracy %s",
    wc.sel_dataset,
    wc.sel_setting,
    wc.sel_split,
    rows[TIMING_COLUMN].sum(),
    snakemake.threads,
    dict(zip(rows["method"], rows["accuracy"].round(4), strict=True)),
)
