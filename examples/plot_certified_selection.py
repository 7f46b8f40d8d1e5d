"""
Act only on predictions you can trust: a certified threshold
============================================================

A safety engineer's question: "I may act only on predictions whose error rate is at most
5 %, with 90 % confidence; reject the rest. Which score, which threshold, and how many
predictions do I keep?" A random forest on scikit-learn's digits; a calibration set it was
not trained on. ``CertifiedSelectiveClassifier(..., score="all")`` rates every calibration
prediction with each score ``score_predictions`` gives for the model, certifies for each the
threshold that keeps the most predictions at a selective risk ``P(error | kept) <= 5 %``
with probability ``>= 90 %`` (SGR, Geifman & El-Yaniv 2017), ``delta`` split over the scores
so that choosing the best on the same data keeps the guarantee, and keeps the best score.
``predict`` abstains (``-1``) below its threshold. The figure: each score's error rate among
the kept test predictions against the share kept; the dots, where each certified threshold
lands on the test set.
"""

from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from reliquant.compare import CertifiedSelectiveClassifier, plot_risk_coverage, score_predictions

X, y = load_digits(return_X_y=True)
X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.2, random_state=0)
X_cal, X_te, y_cal, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=0)
forest = RandomForestClassifier(n_estimators=50, max_depth=6, random_state=0).fit(X_tr, y_tr)
safe = CertifiedSelectiveClassifier(forest, score="all", risk=0.05, delta=0.1).fit(X_cal, y_cal)
print(safe.selection_.message)  # which score, which threshold, how many predictions kept
test = score_predictions(forest, X_te)
correct, kept = test.pop("prediction") == y_te, safe.accepts(X_te)
print(f"test: {kept.mean():.1%} kept, {1 - correct[kept].mean():.2%} wrong")
plot_risk_coverage(test, correct, risk=0.05, certificates=safe.selection_.certificates)

# %%
# Every score's certificate on the calibration set, largest certified coverage first (each at
# ``delta / 4``), and the same question answered by Learn-then-Test, whose guarantee needs no
# assumption on how the risk varies with the threshold.
print(safe.selection_.table())
ltt = CertifiedSelectiveClassifier(forest, score="all", risk=0.05, delta=0.1, method="ltt")
print(ltt.fit(X_cal, y_cal).selection_.message)
