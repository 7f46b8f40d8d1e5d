"""Accuracy per corruption and level, beside the paper's figures; Figures 5 and 7.

Rule mlm_accuracy; paper 004, Sections 4.1 and 4.4.
"""

import pandas as pd
import pyarrow as pa

from reliquant.io import frame_to_markdown, read_frame, save_figure, write_frame, write_text
from reliquant.mlm import accuracy_by_group
from reliquant.mlm_figures import accuracy_heatmap_figure, accuracy_lines_figure
from reliquant.plotting import apply_style
from reliquant.runlog import setup_logging

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
clean_acc = acc.loc[acc["corruption"] == clean, "accuracy"]
by_level = pert.groupby("level")["accuracy"].mean()
levels = sorted(pert["level"].unique())
lo, hi = levels[0], levels[-1]
bright = pert[pert["corruption"] == "brightness"].set_index("level")["accuracy"]
train_log = read_frame(snakemake.input.training_log).iloc[-1]
nan = float("nan")
summary = pd.DataFrame(
    [
        ("CNN train accuracy (last epoch)", train_log["train_accuracy"], paper["train_accuracy"]),
        ("CNN test accuracy", train_log["test_accuracy"], paper["test_accuracy"]),
        ("clean partition accuracy", clean_acc.iloc[0] if len(clean_acc) else nan, nan),
        (f"mean accuracy at level {lo}", by_level[lo], paper["level1_mean_accuracy"]),
        (f"mean accuracy at level {hi}", by_level[hi], paper["level10_mean_accuracy"]),
        (
            "maximum over corruption x level",
            pert["accuracy"].max(),
            paper["perturbed_max_accuracy"],
        ),
        (
            "minimum over corruption x level",
            pert["accuracy"].min(),
            paper["perturbed_min_accuracy"],
        ),
        (f"brightness, level {lo}", bright.get(lo, nan), paper["brightness_level1_accuracy"]),
        (f"brightness, level {hi}", bright.get(hi, nan), paper["brightness_level10_accuracy"]),
    ],
    columns=["quantity", "ours", "paper"],
)
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
