"""Convert one verified tabular benchmark CSV to parquet (rule data_benchmark)."""

from reliquant.core.datasets import benchmark_schema, read_benchmark_csv, verified_files
from reliquant.core.io import write_frame
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "data")
raw = snakemake.params.raw
files = verified_files(snakemake.input.verified)
if raw not in files:
    raise ValueError(f"{snakemake.input.verified} lists no verified file {raw}")
frame = read_benchmark_csv(files[raw])
write_frame(frame, snakemake.output[0], benchmark_schema(frame.columns))
log.info(
    "%s: %d rows, %d features, %d classes",
    raw,
    len(frame),
    frame.shape[1] - 1,
    frame["class"].max() + 1,
)
