"""Rule nbc_paper: paper 000's claims decided from the per-cell AUC check."""

from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA
from reliquant.core.runlog import setup_logging
from reliquant.nbc.paper import paper_tables

log = setup_logging(snakemake.log[0], "nbc")
comparisons, claims, notes = paper_tables(
    read_frame(snakemake.input.claims), snakemake.params.paper
)
write_frame(comparisons, snakemake.output.comparison, COMPARISON_SCHEMA)
write_frame(claims, snakemake.output.claims, CLAIM_SCHEMA)
write_text(notes, snakemake.output.notes)
log.info("%d claims (%d hold)", len(claims), int(claims["holds"].sum()))
