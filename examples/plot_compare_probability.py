"""
Compare the scores of a classifier with predict_proba
=====================================================

Every probability score on the same predictions, ranked by the area under the
accuracy-rejection curve (AU-ARC) with bootstrap intervals.
"""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from reliquant.compare import compare_scores, fit_centroids, probability_scores

X, y = load_breast_cancer(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X / X.max(axis=0), y, test_size=0.5, random_state=0)
clf = LogisticRegression(max_iter=1000).fit(X_tr, y_tr)
centroids = fit_centroids(clf.predict_proba(X_tr), y_tr)  # from correct training predictions
scores = probability_scores(clf.predict_proba(X_te), centroids=centroids)
correct = np.asarray(scores.pop("prediction")) == y_te
comparison = compare_scores(scores, correct, n_boot=200, seed=0)

# %%
import matplotlib.pyplot as plt

from reliquant.compare import accuracy_rejection_curve

fig, ax = plt.subplots(figsize=(5, 3.2))
for name, score in scores.items():
    rejected, accuracy = accuracy_rejection_curve(score, correct)
    ax.plot(rejected, accuracy, label=name)
ax.set(xlabel="fraction rejected", ylabel="accuracy of the rest", title="breast cancer")
ax.legend(fontsize="small")
plt.show()
print(comparison)
