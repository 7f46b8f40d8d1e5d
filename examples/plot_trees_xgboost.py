"""
Robustness of an XGBoost model, one variance per feature
========================================================

Gaussian noise with a tenth of each feature's variance on the breast cancer table.
"""

import xgboost as xgb
from sklearn.datasets import load_breast_cancer
from reliquant.trees import Gaussian, robustness_batch

X, y = load_breast_cancer(return_X_y=True)
model = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
scores = robustness_batch(model, X[:8], Gaussian(0.1 * X.var(axis=0)), time_budget=0.5)

# %%
import matplotlib.pyplot as plt
import numpy as np

rows = np.arange(len(scores))
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.vlines(rows, scores["lower"], scores["upper"], lw=6, alpha=0.4, label="certified [lower, upper]")
ax.plot(rows, scores["estimate"], "o", label="estimate")
ax.set(xlabel="sample", ylabel="R(x)", title="XGBoost, breast cancer")
ax.legend()
plt.show()
