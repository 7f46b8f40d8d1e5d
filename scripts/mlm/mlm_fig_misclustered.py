"""Figures 3-4: softmax and centroid distances of misclustered training images.

Rule mlm_fig_misclustered; paper 004, Section 4.3.
"""

import numpy as np

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import read_frame, save_figure
from reliquant.core.plotting import apply_style
from reliquant.core.runlog import start_job
from reliquant.mlm.reproduction.centroid_tables import choose_examples
from reliquant.mlm.reproduction.figures import bars_figure
from reliquant.mlm.softmax import D_COLUMNS, P_COLUMNS

log = start_job(snakemake.log[0], "mlm")
apply_style()
mis = read_frame(snakemake.input.misclustered).set_index("index", drop=False)
preferred = list(snakemake.params.examples)
chosen = choose_examples(mis["index"].to_numpy(), preferred)
absent = [p for p in preferred if p not in chosen]
if absent:
    log.warning(
        "paper examples %s are not misclustered under our model; showing %s", absent, chosen
    )
images, _ = load_mnist_split(snakemake.input.train)

rows = [mis.loc[i] for i in chosen]
imgs = [images[i] for i in chosen]
titles = [
    f"train #{int(r['index'])}: label {int(r['label'])}, nearest centroid {int(r['cluster'])}"
    for r in rows
]
if not rows:
    log.warning("no misclustered image: the figures say so")
    titles, imgs = ["no misclustered image"], [None]
    soft, dist, marks = [np.zeros(10)], [np.zeros(10)], [[]]
else:
    soft = [r[P_COLUMNS].to_numpy(float) for r in rows]
    dist = [r[D_COLUMNS].to_numpy(float) for r in rows]
    marks = [[int(r["label"]), int(r["cluster"])] for r in rows]
fig = bars_figure(soft, titles, "softmax output", images=imgs, highlight=marks)
save_figure(fig, snakemake.output.fig3)
save_figure(fig, snakemake.output.fig3_pdf)
fig = bars_figure(dist, titles, "distance to K-Means centroid", images=imgs, highlight=marks)
save_figure(fig, snakemake.output.fig4)
save_figure(fig, snakemake.output.fig4_pdf)
log.info("figures 3-4 for training images %s", chosen)
