"""Rule mlm_paper: paper 004's accuracies and Table 1 beside ours, and its claims."""

from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.paper import (
    CLAIM_SCHEMA,
    COMPARISON_SCHEMA,
    claim_frame,
    comparison_frame,
    notes_markdown,
)
from reliquant.core.runlog import setup_logging
from reliquant.mlm.paper import mlm_claims, mlm_comparisons

log = setup_logging(snakemake.log[0], "mlm")
inp = snakemake.input
centroids = read_frame(inp.centroids)
paper_moved = centroids.loc[centroids["paper_distance"] > 1e-8, "class"].astype(int).tolist()
comparisons = comparison_frame(mlm_comparisons(read_frame(inp.comparison), centroids))
claims = claim_frame(mlm_claims(read_frame(inp.accuracy), centroids, paper_moved))
write_frame(comparisons, snakemake.output.comparison, COMPARISON_SCHEMA)
write_frame(claims, snakemake.output.claims, CLAIM_SCHEMA)
write_text(notes_markdown({}), snakemake.output.notes)
log.info(
    "%d comparisons, %d claims (%d hold)", len(comparisons), len(claims), int(claims["holds"].sum())
)
