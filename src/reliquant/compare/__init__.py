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
                    every score the library computes
paired_stats        paired t-interval over groups, the verdict rule, identical rankings, ties
crossfit            the verdict cross-fitted: each group (or fold of the predictions) judged
                    once by the two scores picked without it; folds from the rows' contents
rejection_plot      accuracy-rejection curves on a grid, their bands over groups or bootstrap
                    resamples, and their plot
verdict             which score to trust: the best robustness against the best uncertainty
                    score, cross-fitted, a paired t-test over groups (or folds), a sentence
                    to act on and the curves' plot (which_score -> ScoreVerdict)
"""

from reliquant.compare.all_scores import MODEL_SCORES, score_predictions
from reliquant.compare.comparison import (
    COMPARISON_COLUMNS,
    bootstrap_auarc,
    compare_scores,
    min_boot,
)
from reliquant.compare.hybrid import (
    HybridScore,
    RankTransform,
    evaluate_hybrid,
    fit_hybrid,
    fit_rank_transform,
)
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
from reliquant.compare.robustness_scores import (
    MonteCarloScores,
    black_box_robustness,
    black_box_throughput,
    clopper_pearson_interval,
    nbc_robustness,
    tree_robustness,
)
from reliquant.compare.selection import (
    SELECTION_RULES,
    RobustnessSelector,
    protocol_log_ratio,
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

__all__ = [
    "COMPARISON_COLUMNS",
    "CURVE_COLUMNS",
    "FAMILIES",
    "JUDGED_COLUMNS",
    "MODEL_SCORES",
    "PROBABILITY_SCORES",
    "SCORE_FAMILY",
    "SCORE_VERDICTS",
    "SELECTION_RULES",
    "VERDICT_COLUMNS",
    "HybridScore",
    "MonteCarloScores",
    "RankTransform",
    "RobustnessSelector",
    "ScoreVerdict",
    "accuracy_rejection_curve",
    "auarc",
    "black_box_robustness",
    "black_box_throughput",
    "bootstrap_auarc",
    "centroid_proximity",
    "check_probabilities",
    "clopper_pearson_interval",
    "compare_scores",
    "evaluate_hybrid",
    "expected_kept_correct",
    "family_verdict",
    "fit_centroids",
    "fit_hybrid",
    "fit_rank_transform",
    "identical_ranking",
    "log_ratio",
    "margin",
    "max_probability",
    "min_boot",
    "nbc_robustness",
    "negative_entropy",
    "paired_t",
    "plot_accuracy_rejection",
    "probability_scores",
    "protocol_log_ratio",
    "robustness_ratio",
    "rs_d_cut",
    "rs_i_cut",
    "score_family",
    "score_predictions",
    "tied_share",
    "tree_robustness",
    "which_score",
]
