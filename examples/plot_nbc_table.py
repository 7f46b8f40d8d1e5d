"""
Naive Bayes on your own table, with bootstrap uncertainty
=========================================================

eps_glob, eps_loc (paper 000) and the uncertainty metrics u_m .. u_e of 20 bootstrap models,
on the Iris measurements binned into three levels each.
"""

import pandas as pd
from sklearn.datasets import load_iris
from reliquant.nbc import fit_table, robustness

iris = load_iris(as_frame=True).frame
table = iris.drop(columns="target").apply(pd.qcut, q=3, labels=["low", "mid", "high"])
table["species"] = iris["target"]
fitted = fit_table(table, "species", seed=0)  # eq. 18 smoothing, alpha by 5-fold CV
scores = robustness(fitted, table.drop(columns="species"), bootstrap=20, seed=0)

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.scatter(scores["u_t"], scores["eps_loc"], s=12)
ax.set(xlabel="total uncertainty u_t (bits)", ylabel="eps_loc", title="150 Iris rows")
plt.show()
