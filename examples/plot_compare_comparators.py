"""
The failure-detection comparators on your own model
===================================================

DOCTOR, the maximum logit, the energy, the trust score, the Mahalanobis and the k-NN distance
of a logistic regression on the digits, ranked by AU-ARC and measured by FD-Shifts' AURC,
AUGRC and AUROC_f.
"""

from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from reliquant.compare import (augrc, aurc, auroc_f, compare_scores, decision_logits,
                               doctor_alpha, energy_score, fit_knn_distance, fit_mahalanobis,
                               fit_trust_score, max_logit, max_probability)  # fmt: skip

X, y = load_digits(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.5, random_state=0)
scaler = StandardScaler().fit(X_tr)  # distances in standardised features
Z_tr, Z_te = scaler.transform(X_tr), scaler.transform(X_te)
clf = LogisticRegression(max_iter=2000).fit(Z_tr, y_tr)
pred, proba = clf.predict(Z_te), clf.predict_proba(Z_te)
logits = decision_logits(clf.decision_function(Z_te))  # softmax(logits) == proba
scores = {"max_probability": max_probability(proba), "doctor": doctor_alpha(proba),
          "max_logit": max_logit(logits), "energy": energy_score(logits),
          "trust_score": fit_trust_score(Z_tr, y_tr, alpha=0.1, k=10).score(Z_te, pred),
          "mahalanobis": fit_mahalanobis(Z_tr, y_tr).score(Z_te, pred),
          "knn_distance": fit_knn_distance(Z_tr, k=10).score(Z_te)}  # fmt: skip
correct = pred == y_te
comparison = compare_scores(scores, correct, n_boot=200, seed=0)
failure = {name: {"aurc": aurc(s, correct), "augrc": augrc(s, correct),
                  "auroc_f": auroc_f(s, correct)} for name, s in scores.items()}  # fmt: skip

# %%
# Every score's selective risk-coverage curve: one point per distinct score value, and the
# area under it is the AURC.
import matplotlib.pyplot as plt
import pandas as pd
from reliquant.compare import risk_coverage_curve

fig, ax = plt.subplots(figsize=(5, 3.2))
for name, score in scores.items():
    coverage, risk = risk_coverage_curve(score, correct)
    ax.plot(coverage, risk, label=name)
ax.set(xlabel="coverage", ylabel="selective risk", title="logistic regression, digits")
ax.legend(fontsize="small")
plt.show()
print(comparison)
print(pd.DataFrame(failure).T)
