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
# Every score's accuracy-rejection curve (robustness solid, uncertainty dashed): the table's
# AU-ARC is the mean of each curve.
import matplotlib.pyplot as plt
from reliquant.compare import accuracy_rejection_curve, plot_accuracy_rejection, score_family

curves = {name: accuracy_rejection_curve(scores[name], correct) for name in scores}
families = {name: score_family(name) for name in scores}
plot_accuracy_rejection(curves, families=families, title="random forest, wine: every score")
plt.show()
print(comparison)
