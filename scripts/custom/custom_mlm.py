"""Rule custom_mlm: a custom case of kind mlm: the Misclassification Likelihood Matrix of the
case's softmax table (paper 004)."""

from reliquant.core.io import read_table_file, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.mlm.custom import run_case

start_job(snakemake.log[0], "mlm")
reference = snakemake.input.get("reference")
result = run_case(
    read_table_file(snakemake.input.softmax),
    case=snakemake.params.case,
    reference=read_table_file(reference) if reference else None,
)
write_frame(result.table, snakemake.output.table, result.schema)
write_markdown(result.markdown, snakemake.output.md, snakemake.output.html)
save_figure(result.figure, snakemake.output.figure)
