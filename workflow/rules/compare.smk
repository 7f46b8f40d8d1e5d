# compare: which reliability score should a user trust? (issue 23; docs/compare.md)
# Every score of every paper on the same predictions, clean and under shift, over independent
# splits: per data set one per-prediction table (one row per split and prediction; MNIST
# subsample -> CNN, random forest, XGBoost; Pima; every training set of the NBC paper's
# synthetic cells; a scikit-learn table) -> AU-ARC per split, the declared comparisons (mean
# paired difference over splits, t-interval, Holm), paper 000's rule, the headline against a
# comparator picked on validation parts, the hybrid over splits -> figures and the claim.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

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
COMPARE_TARGETS = COMPARE_PREDICTIONS + [
    "results/compare/auarc.parquet",
    "results/compare/auarc.md",
    "results/compare/contrast.parquet",
    "results/compare/declared.parquet",
    "results/compare/headline.parquet",
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


rule compare:
    input:
        COMPARE_TARGETS,


rule compare_mnist_sample:
    input:
        clean=f"results/pmnist/{COMPARE_CLEAN}.parquet",
        partitions=expand("results/pmnist/{c}.parquet", c=COMPARE_CORRUPTIONS),
    output:
        "results/compare/mnist_sample.parquet",
    params:
        code=COMPARE_CODE,
        sample={k: COMPARE_MNIST[k] for k in ("levels", "n_clean", "n_per_corruption")},
        corruptions=COMPARE_CORRUPTIONS,
        seed=COMPARE["seed"],
    log:
        "logs/compare/mnist_sample.log",
    benchmark:
        "benchmarks/compare/mnist_sample.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_mnist_sample.py"


rule compare_cnn:
    input:
        model="results/mlm/cnn.pt",
        sample="results/compare/mnist_sample.parquet",
        softmax=expand("results/mlm/softmax/{p}.parquet", p=[COMPARE_CLEAN] + COMPARE_CORRUPTIONS),
        train="results/mlm/softmax/train.parquet",
    output:
        "results/compare/predictions/cnn_mnist.parquet",
    params:
        code=COMPARE_CODE,
        exp={k: COMPARE_MNIST[k] for k in ("variances", "n_draws")},
        seed=COMPARE["seed"],
        n_splits=COMPARE_MNIST["n_splits"],
        validation_fraction=COMPARE["evaluation"]["validation_fraction"],
        device=config["mlm"]["device"],
    log:
        "logs/compare/cnn.log",
    benchmark:
        "benchmarks/compare/cnn.tsv"
    # one thread: a job asking for both cores of a 2-core machine waits until both are free,
    # which put this job and compare_trees_mnist at the end of the run, one after another
    # (11 s); the scores do not depend on the threads (K-Means runs on one, mlm.centroids).
    # After the inference it gates, before the jobs nothing waits for:
    priority: 15
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
        gpu=config["mlm"]["gpus_per_job"],
    conda:
        ENV_TORCH
    script:
        "../../scripts/compare/compare_cnn.py"


rule compare_trees_mnist:
    input:
        train="results/data/mnist_train.parquet",
        sample="results/compare/mnist_sample.parquet",
    output:
        "results/compare/predictions/{compare_tree}.parquet",
    params:
        code=COMPARE_CODE,
        kind=lambda wc: COMPARE_TREE_KINDS[wc.compare_tree],
        exp=lambda wc: {
            **{k: COMPARE_MNIST[k] for k in ("variances", "n_draws", "n_train")},
            COMPARE_TREE_KINDS[wc.compare_tree]: COMPARE_MNIST[
                COMPARE_TREE_KINDS[wc.compare_tree]
            ],
        },
        seed=COMPARE["seed"],
        n_splits=COMPARE_MNIST["n_splits"],
        validation_fraction=COMPARE["evaluation"]["validation_fraction"],
    log:
        "logs/compare/trees_{compare_tree}.log",
    benchmark:
        "benchmarks/compare/trees_{compare_tree}.tsv"
    wildcard_constraints:
        compare_tree="rf_mnist|xgb_mnist",
    # one thread and an early start, as compare_cnn
    priority: 15
    threads: 1
    resources:
        mem_mb=2500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_trees_mnist.py"


rule compare_pima:
    input:
        pima="results/data/pima.parquet",
        kernels=TREES_KERNELS,
    output:
        "results/compare/predictions/pima_xgb.parquet",
    params:
        code=COMPARE_CODE,
        exp=COMPARE["pima"],
        seed=COMPARE["seed"],
        validation_fraction=COMPARE["evaluation"]["validation_fraction"],
    log:
        "logs/compare/pima.log",
    benchmark:
        "benchmarks/compare/pima.tsv"
    # ready once the trees kernels are compiled: start it then, beside the training, not last
    # (it ran alone before compare_evaluate at the end of a default run)
    priority: 15
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_pima.py"


rule compare_nbc:
    input:
        COMPARE_NBC_CELLS,
    output:
        "results/compare/predictions/nbc_synthetic.parquet",
    params:
        code=COMPARE_CODE,
        exp=COMPARE["nbc"],
        seed=COMPARE["seed"],
        validation_fraction=COMPARE["evaluation"]["validation_fraction"],
    log:
        "logs/compare/nbc.log",
    benchmark:
        "benchmarks/compare/nbc.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_nbc.py"


rule compare_table:
    output:
        "results/compare/predictions/table_nbc.parquet",
    params:
        code=COMPARE_CODE,
        exp=COMPARE["table"],
        seed=COMPARE["seed"],
        validation_fraction=COMPARE["evaluation"]["validation_fraction"],
    log:
        "logs/compare/table.log",
    benchmark:
        "benchmarks/compare/table.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_table.py"


# One rule for every benchmark set of compare.benchmarks (data set bench_<name>).
rule compare_benchmark:
    input:
        "results/data/benchmarks/{compare_benchmark}.parquet",
    output:
        "results/compare/predictions/bench_{compare_benchmark}.parquet",
    params:
        code=COMPARE_CODE,
        exp=lambda wc: COMPARE["benchmarks"][wc.compare_benchmark],
        seed=COMPARE["seed"],
        validation_fraction=COMPARE["evaluation"]["validation_fraction"],
    log:
        "logs/compare/benchmark_{compare_benchmark}.log",
    benchmark:
        "benchmarks/compare/benchmark_{compare_benchmark}.tsv"
    wildcard_constraints:
        compare_benchmark="|".join(COMPARE_BENCHMARKS) or "^$",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_benchmark.py"


rule compare_evaluate:
    input:
        COMPARE_PREDICTIONS,
    output:
        auarc="results/compare/auarc.parquet",
        auarc_md="results/compare/auarc.md",
        auarc_html=compare_report(
            "results/compare/auarc.html",
            "compare_auarc",
            "Scores",
            name="AU-ARC of every score per data set and case, mean over splits, and the declared comparisons",
        ),
        contrast="results/compare/contrast.parquet",
        declared="results/compare/declared.parquet",
        headline="results/compare/headline.parquet",
        hybrid="results/compare/hybrid.parquet",
        hybrid_md="results/compare/hybrid.md",
        hybrid_html=compare_report(
            "results/compare/hybrid.html",
            "compare_hybrid",
            "Hybrid",
            name="Hybrid of robustness and uncertainty over splits: gain and importance",
        ),
        curves="results/compare/curves.parquet",
        noise="results/compare/noise.parquet",
    params:
        code=COMPARE_CODE,
        evaluation=COMPARE["evaluation"],
        comparisons=COMPARE["comparisons"],
        # paper 000's rule with the nbc topic's threshold, so the two topics cannot disagree
        z=config["nbc"]["paper"]["z"],
    log:
        "logs/compare/evaluate.log",
    benchmark:
        "benchmarks/compare/evaluate.tsv"
    priority: 15
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_evaluate.py"


rule compare_figures:
    input:
        curves="results/compare/curves.parquet",
        noise="results/compare/noise.parquet",
        declared="results/compare/declared.parquet",
        headline="results/compare/headline.parquet",
    output:
        curves_png=compare_report(
            f"{COMPARE_FIGS}/rejection_curves.png",
            "compare_rejection_curves",
            "Scores",
            name="Accuracy-rejection curves under shift, a panel per data set",
        ),
        curves_pdf=f"{COMPARE_FIGS}/rejection_curves.pdf",
        heatmap=compare_report(
            f"{COMPARE_FIGS}/difference_heatmap.png",
            "compare_difference_heatmap",
            "Scores",
            name="Every paper score minus every uncertainty score: mean over splits, Holm",
        ),
        forest_png=compare_report(
            f"{COMPARE_FIGS}/forest.png",
            "compare_forest",
            "Claim",
            name="Paper score minus comparator per data set and condition, t-intervals",
        ),
        forest_pdf=f"{COMPARE_FIGS}/forest.pdf",
        noise=compare_report(
            f"{COMPARE_FIGS}/noise_scale.png",
            "compare_noise_scale",
            "Scores",
            name="AU-ARC of the Monte Carlo robustness against its noise scale",
        ),
    params:
        code=COMPARE_CODE,
    log:
        "logs/compare/figures.log",
    benchmark:
        "benchmarks/compare/figures.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_figures.py"


rule compare_paper:
    input:
        headline="results/compare/headline.parquet",
    output:
        comparison="results/compare/paper_comparison.parquet",
        claims="results/compare/paper_claims.parquet",
        notes="results/compare/paper_notes.md",
        md="results/compare/claims.md",
        html=compare_report(
            "results/compare/claims.html",
            "compare_claims",
            "Claim",
            name="Robustness against uncertainty under shift: the claim per data set",
        ),
    params:
        code=COMPARE_CODE,
        evaluation=COMPARE["evaluation"],
    log:
        "logs/compare/paper.log",
    benchmark:
        "benchmarks/compare/paper.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_paper.py"


# compare_scores' bootstrap timed, and the last run's compare jobs' job time against the
# topic's budget (bench/compare.py; rule bench collects its headline rows). No input: it
# reads benchmarks/compare/*.tsv as the last run left them (named targets: benchmarks/named/)
# (`snakemake --cores 2 --forcerun bench_compare bench` after a run). Its own record goes to
# benchmarks/report/, so that it never counts itself.
rule bench_compare:
    output:
        "results/bench/compare.md",
    params:
        code=COMPARE_CODE,
    log:
        "logs/compare/bench.log",
    benchmark:
        "benchmarks/report/bench_compare.tsv"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=10,
    conda:
        ENV_CORE
    script:
        "../../bench/compare.py"


# ---- The log-ratio follow-up's own protocol (not in the default run) ---------------------
# Lassance & De Bock (arXiv 2603.23318): on their benchmark tables (data.benchmarks), 15
# splits at test size 0.7, GradientBoosting / RandomForest / XGBoost tuned by grid search,
# the log-ratio's AU-ARC per model (reliquant.compare.reproduction.logratio_protocol).
# A named target: `snakemake --cores 2 compare_protocol`; it writes the table, its markdown
# and the generated block compare_protocol_timings of docs/compare.md (a run's table and
# runtime, kept by `python -m reliquant.core.docs sync` when a run did not make it).
COMPARE_PROTOCOL = COMPARE["logratio_protocol"]
COMPARE_PROTOCOL_UNKNOWN = sorted(set(COMPARE_PROTOCOL["datasets"]) - set(DATA_BENCHMARKS))
if COMPARE_PROTOCOL_UNKNOWN:
    raise ValueError(
        f"config compare.logratio_protocol.datasets: {COMPARE_PROTOCOL_UNKNOWN} are not in "
        f"data.benchmarks {DATA_BENCHMARKS}"
    )
COMPARE_PROTOCOL_TABLES = expand(
    "results/compare/protocol/{d}.parquet", d=COMPARE_PROTOCOL["datasets"]
)
# each table's timings (seconds per row) beside it: a timing is no result, so not in the table
COMPARE_PROTOCOL_RUNTIMES = expand(
    "results/compare/protocol/{d}_runtimes.tsv", d=COMPARE_PROTOCOL["datasets"]
)


rule compare_protocol:
    input:
        "results/compare/logratio_protocol.parquet",
        "results/compare/logratio_protocol.md",
        "results/docs/compare_protocol_timings.md",


rule compare_logratio_protocol:
    input:
        # its time does not count, its content does (params data): minutes a split
        ancient("results/data/benchmarks/{protocol_dataset}.parquet"),
    output:
        table="results/compare/protocol/{protocol_dataset}.parquet",
        runtimes="results/compare/protocol/{protocol_dataset}_runtimes.tsv",
    params:
        # the code the script runs, not the whole topic: a split's fits take minutes
        code=script_code_digest("scripts/compare/compare_logratio_protocol.py"),
        data=lambda wc: benchmark_table_digest(wc.protocol_dataset),
        protocol={k: v for k, v in COMPARE_PROTOCOL.items() if k != "datasets"},
    log:
        "logs/compare/logratio_protocol_{protocol_dataset}.log",
    benchmark:
        "benchmarks/named/compare/logratio_protocol_{protocol_dataset}.tsv"
    wildcard_constraints:
        protocol_dataset="|".join(COMPARE_PROTOCOL["datasets"]),
    # grid-search fits in parallel (speed only: compare.speed.protocol_threads)
    threads: COMPARE["speed"]["protocol_threads"]
    resources:
        mem_mb=2000,
        runtime=180,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_logratio_protocol.py"


rule compare_logratio_protocol_table:
    input:
        tables=COMPARE_PROTOCOL_TABLES,
        runtimes=COMPARE_PROTOCOL_RUNTIMES,
    output:
        table="results/compare/logratio_protocol.parquet",
        md="results/compare/logratio_protocol.md",
        block="results/docs/compare_protocol_timings.md",
    params:
        code=script_code_digest("scripts/compare/compare_logratio_protocol_table.py"),
        protocol=COMPARE_PROTOCOL,
    log:
        "logs/compare/logratio_protocol_table.log",
    benchmark:
        "benchmarks/named/compare/logratio_protocol_table.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_logratio_protocol_table.py"


# ---- The CNN's Monte Carlo robustness at more draws (not in the default run) -------------
# Are its ties the model's or the estimator's (docs/compare.md, "Resolution and noise
# scale")? `snakemake --cores 2 -- compare_resolution`.
COMPARE_RESOLUTION = COMPARE["resolution"]


rule compare_resolution:
    input:
        model="results/mlm/cnn.pt",
        sample="results/compare/mnist_sample.parquet",
        softmax=expand("results/mlm/softmax/{p}.parquet", p=[COMPARE_CLEAN] + COMPARE_CORRUPTIONS),
        train="results/mlm/softmax/train.parquet",
    output:
        table="results/compare/resolution.parquet",
        block="results/docs/compare_resolution_timings.md",
        figure=f"{COMPARE_FIGS}/resolution.png",
    params:
        code=script_code_digest("scripts/compare/compare_resolution.py"),
        resolution=COMPARE_RESOLUTION,
        seed=COMPARE["seed"],
        n_splits=COMPARE_MNIST["n_splits"],
        device=config["mlm"]["device"],
    log:
        "logs/compare/resolution.log",
    benchmark:
        "benchmarks/named/compare/resolution.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
        gpu=config["mlm"]["gpus_per_job"],
    conda:
        ENV_TORCH
    script:
        "../../scripts/compare/compare_resolution.py"


# ---- The log-ratio follow-up's dynamic selection by robustness ----------------------------
# Lassance & De Bock (arXiv 2603.23318): per data set, setting (clean, label_noise) and
# split, the three models of the log-ratio protocol tuned on 70 %, RS-D / RS-I between the two
# best on 15 % validation, the single best and DESlib's MCB, KNORA-U, KNORA-E, META-DES, test
# accuracy on 15 % (reliquant.compare.reproduction.selection_protocol).
# `compare.selection.default`: a small case in the default run (one job, in COMPARE_TARGETS).
# The full protocol is a named target, `snakemake --cores 2 compare_selection`: one job per
# data set, setting and split (resumable, parallel), then the table, ranks, figure and the
# generated block compare_selection_timings of docs/compare.md.
check_selection(COMPARE, DATA_BENCHMARKS)
COMPARE_SELECTION = COMPARE["selection"]
COMPARE_SELECTION_DEFAULT = COMPARE_SELECTION["default"]
# what one split uses of compare.selection (its data sets, settings and split count are the
# job's wildcards, so editing them reruns no finished split)
COMPARE_SELECTION_SPLIT = {
    k: COMPARE_SELECTION[k]
    for k in ("train_fraction", "validation_fraction", "label_noise", "k_range", "seed")
}
COMPARE_SELECTION_JOBS = expand(
    "results/compare/selection/{d}/{s}_{i}",
    d=COMPARE_SELECTION["datasets"],
    s=COMPARE_SELECTION["settings"],
    i=range(COMPARE_SELECTION["n_splits"]),
)


rule compare_selection:
    input:
        "results/compare/selection.parquet",
        "results/compare/selection.md",
        f"{COMPARE_FIGS}/selection.png",
        "results/docs/compare_selection_timings.md",


rule compare_selection_split:
    input:
        # its time does not count, its content does (params data): minutes a split
        ancient("results/data/benchmarks/{sel_dataset}.parquet"),
    output:
        table="results/compare/selection/{sel_dataset}/{sel_setting}_{sel_split}.parquet",
        runtimes="results/compare/selection/{sel_dataset}/{sel_setting}_{sel_split}_runtimes.tsv",
    params:
        # the code the script runs, not the whole topic: 420 jobs of minutes each
        code=script_code_digest("scripts/compare/compare_selection_split.py"),
        data=lambda wc: benchmark_table_digest(wc.sel_dataset),
        selection=COMPARE_SELECTION_SPLIT,
        models=COMPARE_PROTOCOL["models"],
        cv_folds=COMPARE_PROTOCOL["cv_folds"],
    log:
        "logs/compare/selection_protocol_{sel_dataset}_{sel_setting}_{sel_split}.log",
    benchmark:
        "benchmarks/named/compare/selection_protocol_{sel_dataset}_{sel_setting}_{sel_split}.tsv"
    wildcard_constraints:
        sel_dataset="|".join(COMPARE_SELECTION["datasets"]),
        sel_setting="|".join(COMPARE_SELECTION["settings"]),
        sel_split=r"\d+",
    # grid-search fits in parallel (speed only: compare.speed.protocol_threads)
    threads: COMPARE["speed"]["protocol_threads"]
    resources:
        mem_mb=3000,
        runtime=120,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_selection_split.py"


rule compare_selection_table:
    input:
        tables=[f"{job}.parquet" for job in COMPARE_SELECTION_JOBS],
        runtimes=[f"{job}_runtimes.tsv" for job in COMPARE_SELECTION_JOBS],
    output:
        splits="results/compare/selection_splits.parquet",
        summary="results/compare/selection.parquet",
        ranks="results/compare/selection_ranks.parquet",
        md="results/compare/selection.md",
        html="results/compare/selection.html",
        figure=f"{COMPARE_FIGS}/selection.png",
        block="results/docs/compare_selection_timings.md",
    params:
        code=script_code_digest("scripts/compare/compare_selection_table.py"),
        selection=COMPARE_SELECTION,
    log:
        "logs/compare/selection_protocol_table.log",
    benchmark:
        "benchmarks/named/compare/selection_protocol_table.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_selection_table.py"


rule compare_selection_default:
    input:
        expand("results/data/benchmarks/{d}.parquet", d=COMPARE_SELECTION_DEFAULT["datasets"]),
    output:
        splits="results/compare/selection_default_splits.parquet",
        runtimes="results/compare/selection_default_runtimes.tsv",
        summary="results/compare/selection_default.parquet",
        ranks="results/compare/selection_default_ranks.parquet",
        md="results/compare/selection_default.md",
        html=compare_report(
            "results/compare/selection_default.html",
            "compare_selection_table",
            "Selection",
            name="Dynamic selection by robustness, small case: test accuracy per method",
        ),
        figure=compare_report(
            f"{COMPARE_FIGS}/selection_default.png",
            "compare_selection_figure",
            "Selection",
            name="Dynamic selection by robustness, small case: each method minus the single best",
        ),
    params:
        # the topic digest, as every job of the default run (a few seconds to rerun)
        code=COMPARE_CODE,
        datasets=COMPARE_SELECTION_DEFAULT["datasets"],
        settings=COMPARE_SELECTION["settings"],
        n_splits=COMPARE_SELECTION_DEFAULT["n_splits"],
        selection=COMPARE_SELECTION_SPLIT,
        models=COMPARE_SELECTION_DEFAULT["models"],
        cv_folds=COMPARE_PROTOCOL["cv_folds"],
    log:
        "logs/compare/selection_default.log",
    benchmark:
        "benchmarks/compare/selection_default.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_selection_default.py"


# ---- which_score's verdict over seeds and row orders (not in the default run) ------------
# bench/which_score.py: how often the verdict changes over 20 seeds and 20 orders of the same
# rows, the algorithm of c0885be (git show) beside the working tree's, on the README's
# example and compare-topic-like data sets. A named target: `snakemake --cores 1
# compare_which_score_stability`; it writes the report and the generated block
# compare_which_score_timings of docs/compare.md (kept by `python -m reliquant.core.docs sync`
# when a run did not make it).
rule compare_which_score_stability:
    output:
        md="results/bench/which_score.md",
        block="results/docs/compare_which_score_timings.md",
    params:
        code=COMPARE_CODE,
    log:
        "logs/compare/which_score_stability.log",
    benchmark:
        "benchmarks/named/compare/which_score_stability.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=90,
    conda:
        ENV_CORE
    script:
        "../../bench/which_score.py"
