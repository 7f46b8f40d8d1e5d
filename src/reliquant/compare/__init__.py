"""Which score should a user trust? Every reliability score on the same predictions (issue 23).

A cross-paper package: it uses the public APIs of :mod:`reliquant.trees`, :mod:`reliquant.nbc`
and :mod:`reliquant.mlm`; they never import it. Numpy in, numpy out; every score is oriented
so that higher = more reliable.

Modules
-------
rejection           accuracy-rejection curves and AU-ARC, ties averaged in closed form
comparison          several scores on the same predictions: AU-ARC with bootstrap intervals,
                    paired differences against the best score (same resamples), the fewest
                    resamples for an interval (min_boot)
probability_scores  scores from any classifier's probabilities: maximum probability, negative
                    entropy, margin, log-ratio (arXiv 2603.23318), centroid proximity (MLM)
robustness_scores   robustness scores: tree ensembles (trees.robustness_batch), Naive Bayes
                    (eps_glob, eps_loc), black-box Monte Carlo with Clopper-Pearson intervals
selection           per prediction, the best or the second-best of several fitted models by
                    robustness (RS-D, RS-I; arXiv 2603.23318): RobustnessSelector
all_scores          every score that applies to a fitted model, in one call: score_predictions
model_inputs        score_predictions' inputs matched to the model: rows in its feature order,
                    the noise as each robustness function takes it
hybrid              one RQ and one UQ score, rank-normalised, combined by a logistic regression
                    fitted on a validation split; weights and held-out AU-ARC
families            the two families of scores (robustness, uncertainty) and the family of
                    every score the library computes; the five comparator families
                    (probability, logit, feature distance, ensemble, robustness)
model_comparators   score_predictions' failure-detection comparators: DOCTOR, the logits a
                    model exposes (checked against predict_proba), feature-space distances
paired_stats        paired t-interval over groups, the verdict rule, identical rankings, ties
crossfit            the verdict cross-fitted: each group (or fold of the predictions) judged
                    once by the two scores picked without it; folds from the rows' contents
rejection_plot      accuracy-rejection curves on a grid, their bands over groups or bootstrap
                    resamples, and their plot
failure_metrics     failure-detection metrics as FD-Shifts defines them: AURC, E-AURC, AUGRC,
                    AUROC_f, risk at coverage (one operating point per distinct score value)
logit_scores        scores from logits (maximum logit, energy; binary margins as [0, f]) and
                    DOCTOR's D_alpha, D_beta from probabilities
ensemble_scores     deep-ensemble scores from the members' stacked probabilities (M, n, K): mean
                    maximum probability, minus the mutual information (BALD)
feature_scores      feature-space scores fitted on training data: trust score with its density
                    filter, Mahalanobis distance under tied-covariance class Gaussians, k-th
                    nearest-neighbour distance (TrustScore, MahalanobisScore, KNNDistance)
certified_selection a rejection threshold with a finite-sample guarantee on the selective risk,
                    for any score: SGR (Geifman & El-Yaniv 2017) and Learn-then-Test
                    (certify_threshold -> ThresholdCertificate; certify_rows, vectorised)
certified_scores    the best of several scores at a certified risk, delta split over them
                    (certify_best_score); the risk-coverage plot
certified_classifier  a scikit-learn style wrapper that abstains below the certified
                    threshold (CertifiedSelectiveClassifier)
risk_bounds         the exact binomial bound and p-value of a selective risk
verdict             which score to trust: the best robustness against the best uncertainty
                    score, cross-fitted, a paired t-test over groups (or folds), a sentence
                    to act on and the curves' plot (which_score -> ScoreVerdict)
"""

from reliquant.compare.all_scores import MODEL_SCORES, score_predictions
from reliquant.compare.certified_scores import (
    BestScoreCertificate,
    certify_best_score,
    plot_risk_coverage,
)
from reliquant.compare.certified_selection import (
    CERTIFICATE_COLUMNS,
    CERTIFY_METHODS,
    ThresholdCertificate,
    certify_rows,
    certify_threshold,
    selective_risk_curve,
)
from reliquant.compare.comparison import (
    COMPARISON_COLUMNS,
    bootstrap_auarc,
    compare_scores,
    min_boot,
)
from reliquant.compare.ensemble_scores import (
    check_member_probabilities,
    ensemble_max_probability,
    ensemble_probabilities,
    negative_mutual_information,
)
from reliquant.compare.failure_metrics import (
    COVERAGE_RISKS,
    augrc,
    aurc,
    auroc_f,
    e_aurc,
    risk_at_coverage,
    risk_coverage_curve,
)
from reliquant.compare.families import (
    COMPARATOR_FAMILIES,
    SCORE_COMPARATOR_FAMILY,
    comparator_family,
)
from reliquant.compare.feature_scores import (
    KNNDistance,
    MahalanobisScore,
    TrustScore,
    fit_knn_distance,
    fit_mahalanobis,
    fit_trust_score,
)
from reliquant.compare.hybrid import (
    HybridScore,
    RankTransform,
    evaluate_hybrid,
    fit_hybrid,
    fit_rank_transform,
)
from reliquant.compare.logit_scores import (
    check_logits,
    decision_logits,
    doctor_alpha,
    doctor_beta,
    energy_score,
    max_logit,
)
from reliquant.compare.model_comparators import model_logits
from reliquant.compare.probability_scores import (
    PROBABILITY_SCORES,
    centroid_proximity,
    check_probabilities,
    fit_centroids,
    log_ratio,
    margin,
    max_probability,
    negative_entropy,
    probability_scores,
)
from reliquant.compare.rejection import accuracy_rejection_curve, auarc, expected_kept_correct
from reliquant.compare.risk_bounds import binomial_p_value, binomial_upper_bound
from reliquant.compare.robustness_scores import (
    MonteCarloScores,
    black_box_robustness,
    black_box_throughput,
    clopper_pearson_interval,
    nbc_robustness,
    tree_robustness,
)
from reliquant.compare.selection import (
    SELECTION_CONVENTIONS,
    SELECTION_RULES,
    RobustnessSelector,
    protocol_log_ratio,
    rank_models,
    robustness_ratio,
    rs_d_cut,
    rs_i_cut,
)
from reliquant.compare.verdict import (
    CURVE_COLUMNS,
    FAMILIES,
    JUDGED_COLUMNS,
    SCORE_FAMILY,
    SCORE_VERDICTS,
    VERDICT_COLUMNS,
    ScoreVerdict,
    family_verdict,
    identical_ranking,
    paired_t,
    plot_accuracy_rejection,
    score_family,
    tied_share,
    which_score,
)
from reliquant.core.lazy import lazy_attributes

__all__ = [
    "CERTIFICATE_COLUMNS",
    "CERTIFY_METHODS",
    "COMPARISON_COLUMNS",
    "COVERAGE_RISKS",
    "CURVE_COLUMNS",
    "COMPARATOR_FAMILIES",
    "FAMILIES",
    "JUDGED_COLUMNS",
    "MODEL_SCORES",
    "PROBABILITY_SCORES",
    "SCORE_COMPARATOR_FAMILY",
    "SCORE_FAMILY",
    "SCORE_VERDICTS",
    "SELECTION_CONVENTIONS",
    "SELECTION_RULES",
    "VERDICT_COLUMNS",
    "BestScoreCertificate",
    "CertifiedSelectiveClassifier",
    "HybridScore",
    "KNNDistance",
    "MahalanobisScore",
    "MonteCarloScores",
    "RankTransform",
    "RobustnessSelector",
    "ScoreVerdict",
    "ThresholdCertificate",
    "TrustScore",
    "accuracy_rejection_curve",
    "auarc",
    "augrc",
    "aurc",
    "auroc_f",
    "binomial_p_value",
    "binomial_upper_bound",
    "black_box_robustness",
    "black_box_throughput",
    "bootstrap_auarc",
    "centroid_proximity",
    "certify_best_score",
    "certify_rows",
    "certify_threshold",
    "check_logits",
    "check_member_probabilities",
    "check_probabilities",
    "clopper_pearson_interval",
    "compare_scores",
    "decision_logits",
    "doctor_alpha",
    "doctor_beta",
    "e_aurc",
    "energy_score",
    "ensemble_max_probability",
    "ensemble_probabilities",
    "evaluate_hybrid",
    "expected_kept_correct",
    "family_verdict",
    "fit_centroids",
    "fit_hybrid",
    "fit_knn_distance",
    "fit_mahalanobis",
    "fit_rank_transform",
    "fit_trust_score",
    "identical_ranking",
    "log_ratio",
    "margin",
    "max_logit",
    "max_probability",
    "min_boot",
    "nbc_robustness",
    "negative_entropy",
    "negative_mutual_information",
    "paired_t",
    "plot_accuracy_rejection",
    "plot_risk_coverage",
    "probability_scores",
    "protocol_log_ratio",
    "rank_models",
    "risk_at_coverage",
    "risk_coverage_curve",
    "robustness_ratio",
    "rs_d_cut",
    "rs_i_cut",
    "comparator_family",
    "model_logits",
    "score_family",
    "score_predictions",
    "selective_risk_curve",
    "tied_share",
    "tree_robustness",
    "which_score",
]

#: Names imported on first use: scikit-learn's BaseEstimator would load sklearn in every job
#: that imports the package.
_LAZY = {"CertifiedSelectiveClassifier": "certified_classifier"}
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
