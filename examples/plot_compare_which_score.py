"""
Which score should I trust? One answer with its interval
========================================================

Eight training sets of a logistic regression, every score that applies to each test
prediction (``score_predictions``: the probability scores and a Monte Carlo robustness under
``N(0, 0.01)`` noise on the scaled features): ``which_score`` ranks the scores by AU-ARC, judges
each split by the best robustness and the best uncertainty score picked on the other seven
(cross-fitting: every split judged once), tests the mean held-out difference with a
t-interval over the eight splits, and says which to use. ``answer.plot()`` draws every
score's accuracy-rejection curve, with the band of the two compared.
"""

import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from reliquant.compare import score_predictions, which_score

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X, parts = X / X.max(), []
for split in range(8):  # eight training sets: eight fitted models
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=split)
    clf = LogisticRegression(max_iter=1000).fit(X_tr, y_tr)
    scores = score_predictions(clf, X_te, noise=0.01, n_draws=200, seed=split)  # all that apply
    parts.append(scores.assign(correct=scores.pop("prediction") == y_te, split=split))
table = pd.concat(parts, ignore_index=True)
correct, groups = table.pop("correct"), table.pop("split")
answer = which_score(table, correct, groups=groups)  # groups: one per fitted model
print(answer.recommendation)
answer.plot()

# %%
# The table behind the sentence: every score's AU-ARC on all predictions, best first; ``*``
# marks the two compared. ``answer.judged``: every split with the two scores that judged it.
print(answer)
print(answer.judged)
