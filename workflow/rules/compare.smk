# compare: which reliability score should a user trust? (issue 23; docs/compare.md)
# Every score of every paper on the same predictions, clean and under shift, over independent
# splits: per data set one per-prediction table (one row per split and prediction; MNIST
# subsample -> CNN, random forest, XGBoost; Pima; every training set of the NBC paper's
# synthetic cells; a scikit-learn table) -> AU-ARC per split, the declared comparisons (mean
# paired difference over splits, t-interval, Holm), paper 000's rule, the headline against a
# comparator picked on validation parts, the hybrid over splits -> figures and the claim.
# The topic's rules, by stage: compare_predictions.smk (one per-prediction table per data
# set), compare_evaluation.smk (AU-ARC over splits, contrasts, figures, the claim),
# compare_protocols.smk (the follow-up's protocols: named targets, and the dynamic
# selection's small case). This file holds the topic's constants and COMPARE_TARGETS.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

from reliquant.compare.reproduction.cnn_ensemble import ensemble_member_seeds
from reliquant.compare.reproduction.settings import (
    check_benchmarks,
    check_selection,
    check_settings,
    mnist_corruptions,
)
from reliquant.nbc.reproduction.experiment import gamma_key

COMPARE = config["compare"]
# The compare package uses the public APIs of the mlm, nbc and trees packages.
COMPARE_CODE = code_digest("compare", "mlm", "nbc", "trees")
compare_report = topic_report("Beyond the papers")
# Corruptions of the MNIST cases: compare.mnist.corruptions, else every mlm partition.
COMPARE_CORRUPTIONS = mnist_corruptions(COMPARE, MLM_CORRUPTIONS)
# The MNIST corruptions scored by mlm, NBC cells of the nbc grid, and sizes the data holds
# (MNIST test images, the table's rows), checked before any job.
check_settings(COMPARE, MLM_CORRUPTIONS, config["nbc"], images_per_class=PMNIST["images_per_class"])
# The benchmark sets: each in data.benchmarks, with a title and a declared comparison.
check_benchmarks(COMPARE, DATA_BENCHMARKS)
COMPARE_BENCHMARKS = list(COMPARE["benchmarks"])
COMPARE_CLEAN = MLM["perturbed"]["clean_partition"]
COMPARE_MNIST = COMPARE["mnist"]
# The deep ensemble of the CNN: compare.mnist.ensemble_members members (0 = none, the default
# run), member m trained from block_int_seed(compare.seed, "cnn_ensemble", m); a seed equal to
# mlm.seed is refused (reliquant.compare.reproduction.cnn_ensemble).
COMPARE_ENSEMBLE_SEEDS = ensemble_member_seeds(
    COMPARE["seed"], COMPARE_MNIST["ensemble_members"], mlm_seed=MLM["seed"]
)
COMPARE_ENSEMBLE_MODELS = expand(
    "results/compare/ensemble/cnn_member{member}.pt", member=range(len(COMPARE_ENSEMBLE_SEEDS))
)
# Per-data-set settings of the MNIST tree models (their kind -> data set key).
COMPARE_TREE_KINDS = {"rf_mnist": "random_forest", "xgb_mnist": "xgboost"}
COMPARE_NBC_CELLS = [
    f"results/nbc/cells/n{int(c['n_train'])}_g{gamma_key(c['gamma'])}.parquet"
    for c in COMPARE["nbc"]["cells"]
]
# One per-prediction table per data set, in report order.
COMPARE_DATASETS = [
    "cnn_mnist",
    "rf_mnist",
    "xgb_mnist",
    "pima_xgb",
    "nbc_synthetic",
    "table_nbc",
] + [f"bench_{name}" for name in COMPARE_BENCHMARKS]
COMPARE_PREDICTIONS = expand("results/compare/predictions/{d}.parquet", d=COMPARE_DATASETS)
COMPARE_FIGS = "results/figures/compare"

# The topic's final outputs (collected by all_targets()).
# Rule compare_certified's outputs (compare_certified.smk), listed here: a rule's input list
# is taken when the rule is defined, so a later extend would not reach rule compare.
COMPARE_CERTIFIED = [
    "results/compare/certified.parquet",
    "results/compare/certified_summary.parquet",
    "results/compare/certified_claims.parquet",
    "results/compare/certified.md",
    f"{COMPARE_FIGS}/certified.png",
    f"{COMPARE_FIGS}/certified.pdf",
]
COMPARE_TARGETS = (
    COMPARE_PREDICTIONS
    + COMPARE_CERTIFIED
    + [
        "results/compare/auarc.parquet",
        "results/compare/auarc.md",
        "results/compare/contrast.parquet",
        "results/compare/declared.parquet",
        "results/compare/headline.parquet",
        "results/compare/families.parquet",
        "results/compare/families.md",
        "results/compare/hybrid.parquet",
        "results/compare/hybrid.md",
        "results/compare/paper_comparison.parquet",
        "results/compare/paper_claims.parquet",
        f"{COMPARE_FIGS}/rejection_curves.png",
        f"{COMPARE_FIGS}/rejection_curves.pdf",
        f"{COMPARE_FIGS}/difference_heatmap.png",
        f"{COMPARE_FIGS}/forest.png",
        f"{COMPARE_FIGS}/forest.pdf",
        f"{COMPARE_FIGS}/noise_scale.png",
        "results/compare/noise.parquet",
        # the dynamic-selection protocol's small case (rule compare_selection_default)
        "results/compare/selection_default.parquet",
        "results/compare/selection_default.md",
        f"{COMPARE_FIGS}/selection_default.png",
    ]
)


rule compare:
    input:
        COMPARE_TARGETS,
