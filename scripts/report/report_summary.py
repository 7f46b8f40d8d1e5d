"""The cross-paper summary: every number the papers state beside ours (rule report_summary)."""

import pandas as pd

from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.paper import (
    CLAIM_SCHEMA,
    COMPARISON_SCHEMA,
    claim_frame,
    comparison_frame,
    mlm_claims,
    mlm_comparisons,
    nbc_claims,
    render_summary,
    runtime_ratio_lines,
)
from reliquant.core.runlog import setup_logging

log = setup_logging(snakemake.log[0], "report")
inp = snakemake.input
centroids = read_frame(inp.mlm_centroids)
paper_moved = centroids.loc[centroids["paper_distance"] > 1e-8, "class"].astype(int).tolist()

comparisons = pd.concat(
    [
        read_frame(inp.trees_comparison),
        comparison_frame(mlm_comparisons(read_frame(inp.mlm_comparison), centroids)),
    ],
    ignore_index=True,
)
claims = pd.concat(
    [
        claim_frame(nbc_claims(read_frame(inp.nbc_claims))),
        read_frame(inp.trees_claims),
        claim_frame(mlm_claims(read_frame(inp.mlm_accuracy), centroids, paper_moved)),
    ],
    ignore_index=True,
)
runtimes = pd.read_csv(inp.trees_runtimes, sep="\t")
extra = {"002": ["", *runtime_ratio_lines(runtimes, snakemake.params.trees_paper)]}
write_frame(comparisons, snakemake.output.comparisons, COMPARISON_SCHEMA)
write_frame(claims, snakemake.output.claims, CLAIM_SCHEMA)
write_text(render_summary(comparisons, claims, snakemake.params.papers, extra), snakemake.output.md)
log.info(
    "%d comparisons, %d claims (%d hold)", len(comparisons), len(claims), int(claims["holds"].sum())
)
