# compare, stage 1: one per-prediction table per data set (one row per split and prediction,
# every score as a column): the MNIST subsample -> CNN, random forest and XGBoost; Pima; the
# NBC paper's synthetic cells; a scikit-learn table; the benchmark sets. Constants in
# compare.smk.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).


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
        train_images="results/data/mnist_train.parquet",
        # the deep ensemble's members: none in the default run (compare.mnist.ensemble_members)
        members=COMPARE_ENSEMBLE_MODELS,
    output:
        "results/compare/predictions/cnn_mnist.parquet",
    params:
        code=COMPARE_CODE,
        exp={k: COMPARE_MNIST[k] for k in ("variances", "n_draws", "n_train")},
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


# Member m of the CNN's deep ensemble (compare.mnist.ensemble_members > 0 only: the
# compare_full preset): the mlm topic's training (mlm.train, mlm.threads, mlm.device) from the
# member's seed, so each member costs one mlm_train job.
rule compare_ensemble_member:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    output:
        model="results/compare/ensemble/cnn_member{member}.pt",
    params:
        code=script_code_digest("scripts/compare/compare_ensemble_member.py"),
        member=lambda wc: int(wc.member),
        seed=lambda wc: COMPARE_ENSEMBLE_SEEDS[int(wc.member)],
        train=config["mlm"]["train"],
        device=config["mlm"]["device"],
    log:
        "logs/compare/ensemble_member{member}.log",
    benchmark:
        "benchmarks/compare/ensemble_member{member}.tsv"
    wildcard_constraints:
        member="|".join(str(m) for m in range(len(COMPARE_ENSEMBLE_SEEDS))) or "^$",
    threads: config["mlm"]["threads"]
    # as mlm_train (the same training)
    resources:
        mem_mb=3500,
        runtime=9,
        gpu=config["mlm"]["gpus_per_job"],
    conda:
        ENV_TORCH
    script:
        "../../scripts/compare/compare_ensemble_member.py"


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
