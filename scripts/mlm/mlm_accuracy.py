"""Accuracy per corruption and level, beside the paper's figures; Figures 5 and 7.

Rule mlm_accuracy; paper 004, Sections 4.1 and 4.4.
"""

import pandas as pd

from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown
from reliquant.core.plotting import apply_style
from reliquant.core.runlog import start_job
from reliquant.mlm.reproduction.accuracy import ACCURACY_SCHEMA, accuracy_report
from reliquant.mlm.reproduction.figures import accuracy_heatmap_figure, accuracy_lines_figure

log = start_job(snakemake.log[0], "mlm")
apply_style()
cols = ["label", "prediction", "corruption", "level"]
frame = pd.concat([read_frame(p, columns=cols) for p in snakemake.input.softmax], ignore_index=True)
report = accuracy_report(
    frame,
    read_frame(snakemake.input.training_log),
    snakemake.params.paper,
    snakemake.params.clean_partition,
)
write_frame(report.table, snakemake.output.table, ACCURACY_SCHEMA)
write_markdown(report.markdown, snakemake.output.md, snakemake.output.html)
for row in report.comparison.itertuples():
    log.info("%s: ours %.4f, paper %.4f", row.quantity, row.ours, row.paper_value)

fig = accuracy_lines_figure(report.perturbed)
save_figure(fig, snakemake.output.fig5)
save_figure(fig, snakemake.output.fig5_pdf)
fig = accuracy_heatmap_figure(report.pivot)
save_figure(fig, snakemake.output.fig7)
save_figure(fig, snakemake.output.fig7_pdf)
