"""Rule compare_paper: the claim "robustness flags unreliable predictions better than
uncertainty under shift", judged per data set."""

from reliquant.compare.reproduction.paper import paper_tables
from reliquant.core.io import (
    frame_to_markdown,
    read_frame,
    write_frame,
    write_markdown,
    write_text,
)
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
out = snakemake.output
tables = paper_tables(read_frame(snakemake.input.headline), snakemake.params.evaluation)
write_frame(tables.comparison, out.comparison, COMPARISON_SCHEMA)
write_frame(tables.claims, out.claims, CLAIM_SCHEMA)
write_text(tables.notes, out.notes)
verdicts = tables.claims.assign(
    holds=tables.claims["holds"].map({True: "holds", False: "does not hold"})
)[["claim", "holds", "evidence", "rule"]]
write_markdown(
    "# Robustness against uncertainty under shift\n\n" + frame_to_markdown(verdicts),
    out.md,
    out.html,
)
log.info("%d claims (%d hold)", len(tables.claims), int(tables.claims["holds"].sum()))
