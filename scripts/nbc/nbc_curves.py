"""Rule nbc_curves: accuracy-acceptance curves of one cell (paper 000, Section 7.4)."""

from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import start_job
from reliquant.nbc.reproduction.curves import CURVES_SCHEMA, cell_curves

log = start_job(snakemake.log[0], "nbc")
curves = cell_curves(read_frame(snakemake.input[0]))
write_frame(curves, snakemake.output[0], CURVES_SCHEMA)
log.info("%d curve points per metric", len(curves))
