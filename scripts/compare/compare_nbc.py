"""Rule compare_nbc: the NBC paper's synthetic cells (the nbc topic's per-instance metrics)
as a per-prediction table."""

from reliquant.compare.reproduction.tables import assign_parts, prediction_schema, score_columns
from reliquant.compare.reproduction.tabular import nbc_cell_predictions
from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
exp = snakemake.params.exp
cells = {
    (int(c["n_train"]), float(c["gamma"])): read_frame(path)
    for c, path in zip(exp["cells"], snakemake.input, strict=True)
}
frame = nbc_cell_predictions(cells)
frame = assign_parts(
    frame, validation_fraction=snakemake.params.validation_fraction, seed=snakemake.params.seed
)
write_frame(frame, snakemake.output[0], prediction_schema(score_columns(frame)))
log.info(
    "accuracy per case: %s", frame.groupby("case", sort=False)["correct"].mean().round(4).to_dict()
)
