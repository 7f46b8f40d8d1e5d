"""
Every score of a fitted model in one call
=========================================

``score_predictions`` picks every score that applies to the model (here a random forest:
the probability scores, the centroid proximity and the tree robustness), ranks them with
``compare_scores`` and says which scores it skipped and why.
"""

from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier
from reliquant.compare import compare_scores, score_predictions

X, y = load_wine(return_X_y=True, as_frame=True)
rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X[::2], y[::2])
scores = score_predictions(rf, X[1::2], noise=0.05 * X.var(), X_train=X[::2], y_train=y[::2])
correct = scores.pop("prediction") == y[1::2]
comparison = compare_scores(scores, correct, n_boot=200, seed=0)
print(scores.attrs["skipped"])  # the scores that do not apply to this model, and why

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
    title="random forest, wine: every score",
)
plt.show()
print(comparison)
