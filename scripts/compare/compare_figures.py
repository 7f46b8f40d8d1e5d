"""Rule compare_figures: accuracy-rejection curves (a panel per data set) and the heat map
of score ranks."""

from reliquant.compare.reproduction.figures import rank_heatmap, rejection_figure
from reliquant.core.io import read_frame, save_figure
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
out = snakemake.output
fig = rejection_figure(read_frame(snakemake.input.curves))
save_figure(fig, out.curves_png)
save_figure(fig, out.curves_pdf)
save_figure(rank_heatmap(read_frame(snakemake.input.auarc)), out.heatmap)
log.info("wrote %s", ", ".join(out))
