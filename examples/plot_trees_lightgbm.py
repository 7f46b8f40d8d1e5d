"""
Robustness of one LightGBM prediction
=====================================

``robustness`` on one sample returns one result with its bounds and estimate.
"""

import lightgbm as lgb
from sklearn.datasets import load_iris
from reliquant.trees import Gaussian, robustness

X, y = load_iris(return_X_y=True)
model = lgb.LGBMClassifier(n_estimators=20, num_leaves=4, verbose=-1).fit(X, y)
result = robustness(model, X[70], Gaussian(0.1), time_budget=1.0)  # .lower, .estimate, .upper

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5, 2.4))
ax.barh(
    [0],
    [result.upper - result.lower],
    left=[result.lower],
    height=0.4,
    alpha=0.4,
    label="certified [lower, upper]",
)
ax.plot([result.estimate], [0], "o", label=f"estimate {result.estimate:.4f}")
ax.set(xlim=(0, 1), yticks=[], xlabel="R(x)", title="LightGBM, Iris sample 70")
ax.legend()
plt.show()
