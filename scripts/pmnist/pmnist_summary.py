"""Per (corruption, level) mean intensity and histogram table + figure (rule pmnist_summary)."""

import pyarrow as pa

from reliquant.core.io import (
    frame_to_markdown,
    read_table,
    save_figure,
    write_markdown,
    write_table,
)
from reliquant.core.runlog import start_job
from reliquant.pmnist.reproduction import figures as F
from reliquant.pmnist.reproduction import partitions as P

log = start_job(snakemake.log[0], "pmnist")
table = pa.concat_tables([read_table(p, schema=P.SUMMARY_SCHEMA) for p in snakemake.input])
write_table(table, snakemake.output.table, P.SUMMARY_SCHEMA)
frame = table.to_pandas()
write_markdown(
    frame_to_markdown(P.summary_markdown_frame(frame), floatfmt=".3f"),
    snakemake.output.md,
    snakemake.output.html,
)
fig = F.plot_mean_intensity(frame)
save_figure(fig, snakemake.output.fig)
save_figure(fig, snakemake.output.pdf)
log.info("summary of %d blocks", len(frame))
