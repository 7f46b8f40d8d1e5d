"""
A tour of the library: Naive Bayes and tree ensembles
=====================================================

The first example of the user guide's "Using the library": eps_glob and eps_loc of a Naive
Bayes classifier fitted on a table (paper 000), then the robustness of a random forest's
prediction (papers 001/002), anytime and with the exact engine alone.
"""

import numpy as np
import pandas as pd
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from reliquant.nbc import fit_table, robustness as nbc_robustness
from reliquant.trees import Gaussian, exact_robustness, extract_ensemble, robustness

# Naive Bayes on your own table: how far may the model's probabilities move before each
# prediction changes? (eps_glob: eq. 13; eps_loc: Theorem 6.1 of paper 000)
rng = np.random.default_rng(0)
colour = rng.choice(["red", "green", "blue"], 300)
size = rng.choice(["S", "M", "L"], 300)
label = np.where((colour == "red") ^ (rng.random(300) < 0.2), "yes", "no")
table = pd.DataFrame({"colour": colour, "size": size, "label": label})
fitted = fit_table(table, "label", seed=0)  # eq. 18 smoothing, alpha by 5-fold CV
print(nbc_robustness(fitted, table.drop(columns="label").head(3)))
# a fitted sklearn.naive_bayes.CategoricalNB works too (predictions are its classes_):
# nbc_robustness(model, codes)

# Tree ensembles: R = P(model(x') == model(x)) for x' ~ N(x, 0.1 I)
iris = load_iris()
forest = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
forest.fit(iris.data, iris.target)
x = iris.data[70]
result = robustness(forest, x, Gaussian(0.1), time_budget=2.0)
print(result.lower, result.upper, result.exact)  # 0.4558711667 0.4558711667 True
# the exact engine alone, on the extracted structure:
print(exact_robustness(extract_ensemble(forest), Gaussian(0.1).bind(x), x, tol=1e-9).lower)

# %%
import matplotlib.pyplot as plt

scores = nbc_robustness(fitted, table.drop(columns="label"))
fig, ax = plt.subplots(figsize=(5, 3.2))
for prediction, rows in scores.groupby("prediction"):
    ax.scatter(rows["eps_glob"], rows["eps_loc"], s=12, label=f"predicted {prediction}")
ax.set(xlabel="eps_glob (eq. 13)", ylabel="eps_loc (Theorem 6.1)", title="300 rows")
ax.legend()
plt.show()
