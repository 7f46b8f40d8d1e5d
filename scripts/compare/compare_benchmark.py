"""Rule compare_benchmark: one tabular benchmark set, a model fitted per split, clean and
shifted: per-prediction table (probability scores, Monte Carlo robustness)."""

from reliquant.compare.reproduction.tables import assign_parts, prediction_schema, score_columns
from reliquant.compare.reproduction.tabular import benchmark_predictions
from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
frame = benchmark_predictions(
    read_frame(snakemake.input[0]),
    name=snakemake.wildcards.compare_benchmark,
    exp=snakemake.params.exp,
    seed=snakemake.params.seed,
)
frame = assign_parts(
    frame, validation_fraction=snakemake.params.validation_fraction, seed=snakemake.params.seed
)
write_frame(frame, snakemake.output[0], prediction_schema(score_columns(frame)))
log.info(
    "accuracy per case: %s", frame.groupby("case", sort=False)["correct"].mean().round(4).to_dict()
)
