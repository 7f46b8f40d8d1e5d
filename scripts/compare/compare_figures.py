"""Rule compare_figures: the forest plot of the headline, the heat map of every declared
comparison, the accuracy-rejection curves (a panel per data set) and AU-ARC against the noise
scale."""

from reliquant.compare.reproduction.figures import (
    difference_heatmap,
    forest_figure,
    noise_figure,
    rejection_figure,
)
from reliquant.core.io import read_frame, save_figure
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
inp, out = snakemake.input, snakemake.output
fig = rejection_figure(read_frame(inp.curves))
save_figure(fig, out.curves_png)
save_figure(fig, out.curves_pdf)
save_figure(difference_heatmap(read_frame(inp.declared)), out.heatmap)
forest = forest_figure(read_frame(inp.headline), read_frame(inp.families))
save_figure(forest, out.forest_png)
save_figure(forest, out.forest_pdf)
save_figure(noise_figure(read_frame(inp.noise)), out.noise)
log.info("wrote %s", ", ".join(out))
