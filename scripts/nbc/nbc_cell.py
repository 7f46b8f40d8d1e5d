"""Rule nbc_cell: one (N_train, gamma) cell of paper 000, Section 7.5 -> metrics per instance,
and the cell's accuracy-acceptance curves (Section 7.4) from the table as written."""

from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import progress_enabled, start_job
from reliquant.nbc.reproduction.curves import CURVES_SCHEMA, cell_curves
from reliquant.nbc.reproduction.distributions import distributions_from_tables
from reliquant.nbc.reproduction.experiment import CELL_SCHEMA, gamma_key, parse_gamma, run_cell

log = start_job(snakemake.log[0], "nbc")
n_train = int(snakemake.wildcards.nbc_n)
gamma = parse_gamma(snakemake.wildcards.nbc_g)
dists = distributions_from_tables(
    read_frame(snakemake.input.dists), read_frame(snakemake.input.test)
)
out = run_cell(
    dists, n_train, gamma, snakemake.params.fit, snakemake.params.seed, progress=progress_enabled()
)
write_frame(out, snakemake.output.cell, CELL_SCHEMA)
acc = out.groupby("train_set")["correct"].mean()
log.info(
    "n_train=%d gamma=%s: %d training sets, accuracy mean %.4f (std %.4f), alphas %s",
    n_train,
    gamma_key(gamma),
    acc.size,
    acc.mean(),
    acc.std(),
    out.groupby("train_set")["alpha"].first().value_counts().sort_index().to_dict(),
)
# the curves of the table as it reads back (the schema's types), as a job of their own read it
curves = cell_curves(read_frame(snakemake.output.cell))
write_frame(curves, snakemake.output.curves, CURVES_SCHEMA)
log.info("%d curve points per metric", len(curves))
