"""Rule mlm_paper: paper 004's accuracies and Table 1 beside ours, and its claims."""

from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA
from reliquant.core.runlog import start_job
from reliquant.mlm.reproduction.paper import paper_tables

log = start_job(snakemake.log[0], "mlm")
inp = snakemake.input
tables = paper_tables(
    read_frame(inp.accuracy),
    read_frame(inp.training_log),
    read_frame(inp.table1),
    snakemake.params.paper,
    snakemake.params.clean_partition,
)
write_frame(tables.comparison, snakemake.output.comparison, COMPARISON_SCHEMA)
write_frame(tables.claims, snakemake.output.claims, CLAIM_SCHEMA)
write_text(tables.notes, snakemake.output.notes)
log.info(
    "%d comparisons, %d claims (%d hold)",
    len(tables.comparison),
    len(tables.claims),
    int(tables.claims["holds"].sum()),
)
