"""Rule compare_paper: the claim "robustness flags unreliable predictions better than
uncertainty under shift", judged per data set."""

from reliquant.compare.reproduction.paper import paper_tables
from reliquant.core.io import read_frame, write_frame, write_markdown, write_text
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA, claim_lines
from reliquant.core.runlog import setup_logging

log = setup_logging(snakemake.log[0], "compare")
out = snakemake.output
tables = paper_tables(
    read_frame(snakemake.input.contrast), snakemake.params.evaluation, snakemake.params.claim
)
write_frame(tables.comparison, out.comparison, COMPARISON_SCHEMA)
write_frame(tables.claims, out.claims, CLAIM_SCHEMA)
write_text(tables.notes, out.notes)
write_markdown(
    "# Robustness against uncertainty under shift\n\n"
    + "\n".join(claim_lines(tables.claims))
    + "\n",
    out.md,
    out.html,
)
log.info("%d claims (%d hold)", len(tables.claims), int(tables.claims["holds"].sum()))
