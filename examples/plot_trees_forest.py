"""
Robustness of a scikit-learn random forest
==========================================

One row per sample with certified bounds ``lower <= estimate <= upper`` (``exact`` when they
meet), within ``time_budget`` seconds per sample (papers 001/002).
"""

from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from reliquant.trees import Gaussian, robustness_batch

X, y = load_iris(return_X_y=True)
forest = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, y)
scores = robustness_batch(forest, X[::15], Gaussian(0.05), time_budget=0.5, seed=0)

# %%
import matplotlib.pyplot as plt
import numpy as np

rows = np.arange(len(scores))
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.vlines(rows, scores["lower"], scores["upper"], lw=6, alpha=0.4, label="certified [lower, upper]")
ax.plot(rows, scores["estimate"], "o", label="estimate")
ax.set(xlabel="sample", ylabel="R(x)", title="random forest, Iris")
ax.legend()
plt.show()
