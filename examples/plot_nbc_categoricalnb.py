"""
A fitted scikit-learn CategoricalNB
===================================

eps_loc of a scikit-learn ``CategoricalNB`` fitted on the 8x8 digits (intensities as
categories): wrong predictions sit at small eps_loc.
"""

from sklearn.datasets import load_digits
from sklearn.naive_bayes import CategoricalNB
from reliquant.nbc import robustness

X, y = load_digits(return_X_y=True)  # 64 pixels, intensities 0..16 as categories
model = CategoricalNB(min_categories=17).fit(X[:1500], y[:1500])
scores = robustness(model, X[1500:])  # prediction, eps_glob, eps_loc

# %%
import matplotlib.pyplot as plt

correct = scores["prediction"].to_numpy() == y[1500:]
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.hist(
    [scores["eps_loc"][correct], scores["eps_loc"][~correct]],
    bins=20,
    stacked=True,
    label=["correct", "wrong"],
)
ax.set(xlabel="eps_loc", ylabel="test digits", title="CategoricalNB on 8x8 digits")
ax.legend()
plt.show()
