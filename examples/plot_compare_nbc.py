"""
Compare eps_glob and eps_loc of a Naive Bayes classifier
========================================================

The two robustness metrics of paper 000 side by side on the wine table, binned.
"""

import numpy as np
import pandas as pd
from sklearn.datasets import load_wine
from reliquant.compare import compare_scores, nbc_robustness
from reliquant.nbc import fit_table

wine = load_wine(as_frame=True).frame
table = wine.drop(columns="target").apply(pd.qcut, q=3, labels=["lo", "mid", "hi"])
table["target"] = wine["target"]
fitted = fit_table(table.iloc[::2], "target", seed=0)
scores = nbc_robustness(fitted, table.iloc[1::2].drop(columns="target"))
correct = np.asarray(scores.pop("prediction")) == table["target"].iloc[1::2].to_numpy()
comparison = compare_scores(scores, correct, n_boot=200, seed=0)

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5, 3.2))
rows = range(len(comparison))
ax.errorbar(
    comparison["auarc"],
    rows,
    xerr=[comparison["auarc"] - comparison["ci_low"], comparison["ci_high"] - comparison["auarc"]],
    fmt="o",
)
ax.set(
    yticks=list(rows),
    yticklabels=comparison["score"],
    xlabel="AU-ARC, 95 % interval",
    title="Naive Bayes, wine",
)
plt.show()
print(comparison)
