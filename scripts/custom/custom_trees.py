"""Rule custom_trees: a custom case of kind trees: probabilistic robustness of the case's model
file on every row of its samples table (papers 001/002)."""

from reliquant.core.io import read_table_file, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.trees import load_model
from reliquant.trees.custom import run_case

start_job(snakemake.log[0], "trees")
result = run_case(
    load_model(snakemake.input.model),
    read_table_file(snakemake.input.samples),
    case=snakemake.params.case,
)
write_frame(result.table, snakemake.output.table, result.schema)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.figure)
