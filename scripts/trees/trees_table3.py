"""Rule trees_table3: Table 3 of paper 002, R^2 between exact robustness and Monte Carlo per
(size, depth, variance) over every size, with a scatter figure."""

from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.experiments import table3

start_job(snakemake.log[0], "trees")
result = table3([read_frame(path) for path in snakemake.input])
write_frame(result.table, snakemake.output.table, result.schema)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.png)
