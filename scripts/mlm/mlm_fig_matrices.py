"""Figure 1 (test confusion matrix), Figure 2 (MLM), mean/std and per-level MLMs.

Rule mlm_fig_matrices; paper 004, Sections 3.4, 4.1 and 4.5.
"""

import numpy as np

from reliquant.core.io import read_frame, save_figure, write_frame
from reliquant.core.plotting import apply_style
from reliquant.core.runlog import start_job
from reliquant.mlm.matrices import long_to_matrix
from reliquant.mlm.reproduction.accuracy import CONFUSION_SCHEMA, confusion_frame, confusion_matrix
from reliquant.mlm.reproduction.figures import (
    confusion_figure,
    mean_std_figure,
    mlm_figure,
    per_level_figure,
)

log = start_job(snakemake.log[0], "mlm")
apply_style()
out = snakemake.output

test = read_frame(snakemake.input.test, columns=["label", "prediction"])
cm = confusion_matrix(test["label"].to_numpy(), test["prediction"].to_numpy())
acc = np.trace(cm) / cm.sum()
fig = confusion_figure(cm, f"MNIST test set ({cm.sum()} images, accuracy {acc:.2%})")
save_figure(fig, out.fig1)
save_figure(fig, out.fig1_pdf)
write_frame(confusion_frame(cm), out.confusion, CONFUSION_SCHEMA)

mats = read_frame(snakemake.input.matrices)
overall = long_to_matrix(mats[mats["scope"] == "overall"])
fig = mlm_figure(overall, "Misclassification Likelihood Matrix, perturbed MNIST")
save_figure(fig, out.fig2)
save_figure(fig, out.fig2_pdf)

levels = mats[mats["scope"] == "level"]
per_level = {int(k): long_to_matrix(g) for k, g in levels.groupby("level")}
mean = long_to_matrix(mats[mats["scope"] == "mean"])
std = long_to_matrix(mats[mats["scope"] == "std"])
save_figure(mean_std_figure(mean, std, len(per_level)), out.mean_std)
save_figure(per_level_figure(per_level), out.per_level)
off = ~np.eye(10, dtype=bool)
top = np.argsort(-np.where(off, overall, -np.inf), axis=None)[:5]
log.info(
    "clean test accuracy %.4f; most likely confusions (true->pred): %s",
    acc,
    [(int(i // 10), int(i % 10), round(float(overall.flat[i]), 3)) for i in top],
)
