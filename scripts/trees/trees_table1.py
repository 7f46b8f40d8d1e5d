"""Rule trees_table1: Table 1 of paper 002 (Section 5.1): Iris, robustness from all boxes vs
the 99 % boxes, R^2 between them."""

from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.experiments import table1

start_job(snakemake.log[0], "trees")
result = table1(
    read_frame(snakemake.input.iris), exp=snakemake.params.exp, common=snakemake.params.common
)
write_frame(result.table, snakemake.output.table, result.schema)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.png)
save_figure(result.figure, snakemake.output.pdf)
