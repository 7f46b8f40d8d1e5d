"""Rule trees_paper: every number of the tree papers beside ours (results/trees/summary.md)
plus the comparison and claim tables the cross-paper summary collects."""

import pandas as pd

from reliquant.core.io import read_frame, write_frame, write_text
from reliquant.core.paper import (
    CLAIM_SCHEMA,
    COMPARISON_SCHEMA,
    claim_frame,
    comparison_frame,
    notes_markdown,
)
from reliquant.core.runlog import setup_logging
from reliquant.trees.experiments import paper_comparison, summary_markdown
from reliquant.trees.paper import runtime_ratio_lines

log = setup_logging(snakemake.log[0], "trees")
inp = snakemake.input
runtimes = pd.read_csv(inp.runtimes, sep="\t")
comps, timing, claims, timing_claims = paper_comparison(
    read_frame(inp.table1),
    read_frame(inp.table2),
    runtimes,
    read_frame(inp.table3),
    read_frame(inp.pima),
    read_frame(inp.iris_mixed),
    snakemake.params.paper,
    snakemake.params.pima_threshold,
    snakemake.params.iris_tol,
)
# the parquet tables hold only run-independent numbers; runtimes go to the markdown only
write_frame(comparison_frame(comps), snakemake.output.comparison, COMPARISON_SCHEMA)
write_frame(claim_frame(claims), snakemake.output.claims, CLAIM_SCHEMA)
write_text(
    summary_markdown(comparison_frame(comps + timing), claim_frame(claims + timing_claims)),
    snakemake.output.md,
)
write_text(
    notes_markdown({"002": ["", *runtime_ratio_lines(runtimes, snakemake.params.paper)]}),
    snakemake.output.notes,
)
