"""Rule trees_pima: Figure 4 of paper 002 (Section 5.4): Pima, XGBoost, NORTA noise (normal /
exponential marginals scaled by a signal-to-noise ratio, Spearman correlations from the
training data); robustness of every test subject."""

from reliquant.core.io import read_frame, save_figure, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.trees.experiments import pima

setup_logging(snakemake.log[0], "trees")
result = pima(
    read_frame(snakemake.input.pima),
    exp=snakemake.params.exp,
    seed=snakemake.params.seed,
    threshold=snakemake.params.threshold,
)
write_frame(result.table, snakemake.output.table, result.schema)
write_text(result.markdown, snakemake.output.md)
save_figure(result.figure, snakemake.output.png)
save_figure(result.figure, snakemake.output.pdf)
