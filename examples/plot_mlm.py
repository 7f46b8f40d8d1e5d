"""
The Misclassification Likelihood Matrix of any classifier
=========================================================

Class centroids of the training set's softmax outputs (the reference set, eq. 3, refined by
K-Means), the distance matrix D and the likelihood matrix L (eqs. 5-8) of the test examples,
as in paper 004, for a logistic regression on the digits.
"""

from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from reliquant.mlm import misclassification_likelihood

X, y = load_digits(return_X_y=True)
model = LogisticRegression(max_iter=1000).fit(X[:1200] / 16, y[:1200])
p, ref = model.predict_proba(X[1200:] / 16), model.predict_proba(X[:1200] / 16)
mlm = misclassification_likelihood(p, y[1200:], reference_softmax=ref, reference_labels=y[:1200])
scores = mlm.to_frame()  # true, predicted, distance, likelihood

# %%
import matplotlib.pyplot as plt

L = scores.pivot(index="true", columns="predicted", values="likelihood")
fig, ax = plt.subplots(figsize=(4.5, 4))
image = ax.imshow(L.to_numpy(), cmap="viridis")
ax.set(
    xticks=range(len(L.columns)),
    xticklabels=L.columns,
    yticks=range(len(L.index)),
    yticklabels=L.index,
    xlabel="predicted",
    ylabel="true",
    title="L (off-diagonal)",
)
fig.colorbar(image, ax=ax)
plt.show()
