"""Rule trees_iris_mixed: Figure 5 of paper 001 (Section 5.4): Iris, XGBoost, mixed NORTA
noise (normal, exponential, chi-square, lognormal) with normal correlations drawn between 0.1
and 0.3."""

from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.trees.reproduction.experiments import iris_mixed

start_job(snakemake.log[0], "trees")
result = iris_mixed(
    read_frame(snakemake.input.iris), exp=snakemake.params.exp, seed=snakemake.params.seed
)
write_frame(result.table, snakemake.output.table, result.schema)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.png)
save_figure(result.figure, snakemake.output.pdf)
