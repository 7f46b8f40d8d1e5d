"""Rule compare_pima: XGBoost on Pima, clean and with measurement noise: per-prediction
table (probability scores, tree robustness)."""

from reliquant.compare.reproduction.tables import assign_parts, prediction_schema, score_columns
from reliquant.compare.reproduction.tabular import pima_predictions
from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
frame = pima_predictions(
    read_frame(snakemake.input.pima),
    exp=snakemake.params.exp,
    seed=snakemake.params.seed,
    n_splits=snakemake.params.exp["n_splits"],
)
frame = assign_parts(
    frame, validation_fraction=snakemake.params.validation_fraction, seed=snakemake.params.seed
)
write_frame(frame, snakemake.output[0], prediction_schema(score_columns(frame)))
log.info(
    "accuracy per case: %s", frame.groupby("case", sort=False)["correct"].mean().round(4).to_dict()
)
