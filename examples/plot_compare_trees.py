"""
Compare robustness and uncertainty of a tree ensemble
=====================================================

The forest's exact robustness (papers 001/002), a black-box Monte Carlo robustness (any model
with a batch ``predict``) and the margin, on the same predictions.
"""

from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from reliquant.compare import black_box_robustness, compare_scores, margin, tree_robustness
from reliquant.trees import Gaussian

X, y = load_wine(return_X_y=True)
rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X[::2], y[::2])
variance = 0.05 * X.var(axis=0)  # per-feature Gaussian noise
scores = {"robustness": tree_robustness(rf, X[1::2], Gaussian(variance), time_budget=0.1),
          "monte_carlo": black_box_robustness(rf.predict, X[1::2], variance, n_draws=2000).estimate,
          "margin": margin(rf.predict_proba(X[1::2]))}  # fmt: skip
comparison = compare_scores(scores, rf.predict(X[1::2]) == y[1::2], n_boot=200, seed=0)

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
    title="random forest, wine",
)
plt.show()
print(comparison)
