"""
Robustness of one prediction of a random forest
===============================================

The README's example: R = P(model(x') = model(x)) for x' ~ N(x, 0.1 I), with certified
bounds, within a time budget (papers 001/002). The figure then follows R as the noise grows.
"""

from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from reliquant.trees import Gaussian, robustness

iris = load_iris()
forest = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
forest.fit(iris.data, iris.target)
result = robustness(forest, iris.data[70], Gaussian(0.1), time_budget=2.0)
print(result.lower, result.upper, result.exact)  # 0.4558711667 0.4558711667 True

# %%
import matplotlib.pyplot as plt
import numpy as np

variances = np.geomspace(0.005, 1.0, 12)
answers = [robustness(forest, iris.data[70], Gaussian(v), time_budget=2.0) for v in variances]
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.fill_between(
    variances,
    [a.lower for a in answers],
    [a.upper for a in answers],
    alpha=0.3,
    label="certified bounds",
)
ax.plot(variances, [a.estimate for a in answers], marker="o", label="estimate")
ax.set(xscale="log", xlabel="noise variance", ylabel="R(x)", title="Iris sample 70")
ax.legend()
plt.show()
