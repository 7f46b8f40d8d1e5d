"""Rule nbc_figures: Figures 1 (mean curves) and 2 (standard deviations) of paper 000."""

import matplotlib.pyplot as plt
import pandas as pd

from reliquant.core.io import read_frame, save_figure
from reliquant.core.runlog import start_job
from reliquant.nbc.reproduction.figures import plot_curve_grid

log = start_job(snakemake.log[0], "nbc")
curves = pd.concat([read_frame(p) for p in snakemake.input], ignore_index=True)
out = snakemake.output
for stat, png, pdf in [("mean", out.mean_png, out.mean_pdf), ("std", out.std_png, out.std_pdf)]:
    fig = plot_curve_grid(curves, stat)
    save_figure(fig, png)
    save_figure(fig, pdf)
    plt.close(fig)
    log.info("wrote %s and %s", png, pdf)
