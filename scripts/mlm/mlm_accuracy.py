"""Accuracy per corruption and level, beside the paper's figures; Figures 5 and 7.

Rule mlm_accuracy; paper 004, Sections 4.1 and 4.4.
"""

import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown, read_frame, save_figure, write_frame, write_text
from reliquant.core.plotting import apply_style
from reliquant.core.runlog import setup_logging
from reliquant.mlm.figures import accuracy_heatmap_figure, accuracy_lines_figure
from reliquant.mlm.matrices import COMPARISON_SCHEMA, accuracy_by_group, accuracy_paper_comparison

log = setup_logging(snakemake.log[0], "mlm")
apply_style()
paper = snakemake.params.paper
clean = snakemake.params.clean_partition
cols = ["label", "prediction", "corruption", "level"]
frame = pd.concat([read_frame(p, columns=cols) for p in snakemake.input.softmax], ignore_index=True)
acc = accuracy_by_group(frame, ["corruption", "level"])
schema = pa.schema(
    [
        pa.field("corruption", pa.string()),
        pa.field("level", pa.uint8()),
        pa.field("n", pa.int64()),
        pa.field("accuracy", pa.float64()),
    ]
)
write_frame(acc, snakemake.output.table, schema)

pert = acc[acc["corruption"] != clean]
train_log = read_frame(snakemake.input.training_log).iloc[-1]
summary = accuracy_paper_comparison(
    acc, train_log["train_accuracy"], train_log["test_accuracy"], paper, clean
)
write_frame(summary, snakemake.output.comparison, COMPARISON_SCHEMA)
pivot = pert.pivot(index="corruption", columns="level", values="accuracy")
pivot.loc["mean"] = pivot.mean(0)
table = pivot.reset_index()
table.columns = [str(c) for c in table.columns]
write_text(
    "# Accuracy of the CNN on perturbed MNIST\n\n"
    "Paper numbers: Sections 4.1 and 4.4 of paper 004 (levels 1..10).\n\n"
    + frame_to_markdown(summary, floatfmt=".4f")
    + "\n## Accuracy per corruption (rows) and level (columns)\n\n"
    + frame_to_markdown(table, floatfmt=".4f"),
    snakemake.output.md,
)
for row in summary.itertuples():
    log.info("%s: ours %.4f, paper %.4f", row.quantity, row.ours, row.paper)

fig = accuracy_lines_figure(pert)
save_figure(fig, snakemake.output.fig5)
save_figure(fig, snakemake.output.fig5_pdf)
fig = accuracy_heatmap_figure(pivot.drop(index="mean"))
save_figure(fig, snakemake.output.fig7)
save_figure(fig, snakemake.output.fig7_pdf)
