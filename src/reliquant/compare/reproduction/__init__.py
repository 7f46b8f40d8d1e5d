"""The workflow's ``compare`` topic (issue 23): every reliability score on the same predictions
of several models and data sets, in distribution and under shift.

Everything the ``compare_*`` rules run; a user scoring their own model needs none of it (see
:mod:`reliquant.compare`).

Modules
-------
tables       the per-prediction table (one per data set): columns, explicit pyarrow schema,
             score families (robustness or uncertainty), data set and case labels
mnist        the MNIST subsample (clean test images and each corruption at chosen levels),
             the CNN's scores (softmax partitions + black-box Monte Carlo robustness) and the
             random forest / XGBoost models fitted here with their scores
cnn_features the CNN's logits and penultimate features on the compare subsample and a
             training subsample (forward hooks), checked against the stored softmax
cnn_ensemble the deep ensemble of the CNN (compare.mnist.ensemble_members members, each
             seeded from compare.seed): member seeds, softmax stack, its two score columns
comparators  the failure-detection comparator columns of the tables (DOCTOR, logit scores,
             feature-space distances)
tabular      Pima (XGBoost, tree robustness, a noise shift), the NBC paper's synthetic cells
             (read from the nbc topic's outputs), a scikit-learn table (breast cancer or
             wine) discretised for a Naive Bayes, with a synthetic shift
evaluation   AU-ARC per data set, case, split and part, the noise scale of grid scores,
             accuracy-rejection curves on a grid; every evaluation name importable from it
cases        a data set's cases and conditions: pooled cases, the case of a condition
contrasts    scores contrasted over splits: paper 000's rule, the declared comparisons, the
             headline, the hybrid per condition, Holm's adjusted p-values
paper        the claim "robustness flags unreliable predictions better than uncertainty
             under shift", judged per data set (``paper_tables``)
figures      accuracy-rejection curves (a panel per data set) and the heat map of ranks
highlights   the generated blocks of the README and docs/compare.md
settings     constraints between keys of the compare config section and the sizes its data
             allows (``check_settings``)
shift        shifted conditions of a tabular set: a covariate shift at a feature's within-class
             quantile, additive Gaussian noise scaled by the training sd
logratio_protocol
             the log-ratio follow-up's own protocol (arXiv 2603.23318) on its benchmark
             tables: 15 splits, three tuned models, the log-ratio's AU-ARC
resolution   the CNN's Monte Carlo robustness rescored at more draws: tie shares and AU-ARC
             per number of draws (are the ties the model's or the estimator's?)
selection_protocol
             the follow-up's dynamic selection by robustness (RS-D, RS-I) against the single
             best model and DESlib's MCB, KNORA-U, KNORA-E and META-DES, clean and with label
             noise: stratified 70/15/15 splits, test accuracy per split
deslib_pool  DESlib's four methods as the protocol runs them on the pool (k on validation),
             the scikit-learn >= 1.6 shim, frozen models, META-DES's one-class-safe NB
selection_summary
             the protocol's summary over splits (paired differences to the single best with
             t-intervals, ranks, mean ranks), its markdown and figure
"""

__all__: list[str] = []
