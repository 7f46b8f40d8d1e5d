"""Rule custom_nbc: a custom case of kind nbc: Naive Bayes fitted on the case's train table,
eps_glob and eps_loc of every test row (paper 000)."""

from reliquant.core.io import read_table_file, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.nbc.custom import run_case

start_job(snakemake.log[0], "nbc")
result = run_case(
    read_table_file(snakemake.input.train),
    read_table_file(snakemake.input.test),
    case=snakemake.params.case,
)
write_frame(result.table, snakemake.output.table, result.schema)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.figure)
