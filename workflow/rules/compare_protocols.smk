# compare, stage 3: the log-ratio follow-up's protocols (arXiv 2603.23318) and the CNN's
# robustness at more draws: named targets outside the default run, but the dynamic
# selection's small case (compare_selection_default). Constants of the topic in compare.smk.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

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


# ---- the dynamic-selection protocol's cost per table (not in the default run) --------------
# bench/selection_cost.py: one split of every table of compare.selection.datasets estimated
# from a timed fraction (two grid points per model on one fold, scaled), beside the split
# jobs a run of compare_selection measured. A named target: `snakemake --cores 1
# compare_selection_cost`; it writes the generated block compare_selection_cost_timings.
rule compare_selection_cost:
    output:
        block="results/docs/compare_selection_cost_timings.md",
    params:
        code=COMPARE_CODE,
    log:
        "logs/compare/selection_cost.log",
    benchmark:
        "benchmarks/named/compare/selection_cost.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        ENV_CORE
    script:
        "../../bench/selection_cost.py"
