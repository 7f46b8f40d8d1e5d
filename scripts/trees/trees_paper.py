"""Rule trees_paper: every number of the tree papers beside ours (results/trees/summary.md)
plus the comparison and claim tables and notes the cross-paper summary collects."""

import pandas as pd

from reliquant.core.io import read_frame, write_frame, write_markdown, write_text
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.paper import paper_tables

start_job(snakemake.log[0], "trees")
inp = snakemake.input
result = paper_tables(
    table1=read_frame(inp.table1),
    table2=read_frame(inp.table2),
    runtimes=pd.read_csv(inp.runtimes, sep="\t"),
    table3=read_frame(inp.table3),
    pima=read_frame(inp.pima),
    pima_sensitivity=read_frame(inp.pima_sensitivity),
    iris_mixed=read_frame(inp.iris_mixed),
    paper=snakemake.params.paper,
    iris_tol=snakemake.params.iris_tol,
    mc_draws=snakemake.params.mc_draws,
)
# the parquet tables hold only run-independent numbers; runtimes go to the markdown only
write_frame(result.comparison, snakemake.output.comparison, COMPARISON_SCHEMA)
write_frame(result.claims, snakemake.output.claims, CLAIM_SCHEMA)
write_markdown(result.summary, snakemake.output.md, snakemake.output.html)
write_text(result.notes, snakemake.output.notes)
