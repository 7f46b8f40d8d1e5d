"""Figure 6: one digit under increasing pixelation, mean softmax of its class per level.

Rule mlm_fig_pixelation; paper 004, Section 4.4.
"""

import numpy as np
import pandas as pd

from reliquant.core.io import arrow_to_images, read_frame, read_table, save_figure
from reliquant.core.plotting import apply_style
from reliquant.core.runlog import start_job
from reliquant.mlm.reproduction.figures import pixelation_figure
from reliquant.mlm.softmax import P_COLUMNS

log = start_job(snakemake.log[0], "mlm")
apply_style()
cfg = snakemake.params.figures
clean = snakemake.params.clean_partition
digit = cfg["pixelation_class"]

soft = pd.concat(
    [
        read_frame(p, columns=["index", "label", "corruption", "level", *P_COLUMNS])
        for p in snakemake.input.softmax
    ],
    ignore_index=True,
)
pert = soft[(soft["corruption"] != clean) & (soft["label"] == digit)]
mean_softmax = {int(k): g[P_COLUMNS].to_numpy(np.float64).mean(0) for k, g in pert.groupby("level")}

index = cfg["pixelation_test_index"]
if index is None:
    index = int(pert["index"].min())
table = read_table(snakemake.input.images, filters=[("test_index", "==", index)])
if table.num_rows == 0:
    raise ValueError(
        f"config key mlm.figures.pixelation_test_index = {index}: this test image is not in "
        f"{snakemake.input.images} (it holds pmnist.images_per_class images per class)"
    )
labels = table.column("label").to_numpy()
if labels[0] != digit:
    log.warning("test image %d has label %d, not %d", index, labels[0], digit)
imgs = arrow_to_images(table.column("image"), source=snakemake.input.images)
images = {int(lev): img for lev, img in zip(table.column("level").to_numpy(), imgs, strict=True)}
fig = pixelation_figure(
    images,
    mean_softmax,
    digit,
    f"{cfg['pixelation_corruption']} of test image {index} (top); mean softmax of class {digit} "
    "over all corruptions per level (bottom)",
)
save_figure(fig, snakemake.output.fig6)
save_figure(fig, snakemake.output.fig6_pdf)
for lev, m in mean_softmax.items():
    log.info("level %d: mean softmax argmax %d (%.3f)", lev, int(m.argmax()), m.max())
