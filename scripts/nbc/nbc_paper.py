"""Rule nbc_paper: paper 000's claims decided from the per-cell AUC check."""

from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA
from reliquant.core.runlog import start_job
from reliquant.nbc.reproduction.paper import paper_tables

log = start_job(snakemake.log[0], "nbc")
tables = paper_tables(read_frame(snakemake.input.claims), snakemake.params.paper)
write_frame(tables.comparison, snakemake.output.comparison, COMPARISON_SCHEMA)
write_frame(tables.claims, snakemake.output.claims, CLAIM_SCHEMA)
write_text(tables.notes, snakemake.output.notes)
log.info("%d claims (%d hold)", len(tables.claims), int(tables.claims["holds"].sum()))
