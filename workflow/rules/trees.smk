# trees: probabilistic robustness of tree ensembles (papers 001/002, Section 5).
# One job per experiment (Table 1, Table 2, Figure 4 of 002, Figure 5 of 001) and one per
# resized MNIST size of Table 3; a summary job compares every number with the papers'.
# The numba kernels are compiled once, by trees_kernels, before every job that runs them.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

TREES = config["trees"]
TREES_CODE = code_digest("trees")
trees_report = topic_report("Tree robustness (papers 001/002)")


wildcard_constraints:
    trees_size=r"\d+",


# Table 3: resized MNIST size -> model depths (the rows of the paper's table).
TREES_TABLE3_DEPTHS = {int(m["size"]): list(m["depths"]) for m in TREES["table3"]["sizes"]}
# Table 3 parameters shared by every size (everything but the size list).
TREES_TABLE3_SETTINGS = {k: v for k, v in TREES["table3"].items() if k != "sizes"}
# Topic-wide parameters every robustness job uses.
TREES_COMMON = {k: TREES[k] for k in ("seed", "engine_tol", "prune_level", "mnist_resize")}
TREES_FIGS = "results/figures/trees"
# Written once the numba kernels are in numba's disk cache (rule trees_kernels): an input of
# every job that runs them (the trees experiments, bench_trees, compare_pima, custom_trees;
# trees_table3 and trees_paper only import the package, after those), which then load them
# instead of compiling them. A plain input, not ancient(): with ancient(), a trees code edit
# planned trees_kernels alone and none of the jobs whose code changed (tests/workflow).
TREES_KERNELS = "results/trees/kernels.tsv"


# The topic's final outputs (collected by all_targets()).
TREES_TARGETS = [
    "results/trees/table1.parquet",
    "results/trees/table1.md",
    f"{TREES_FIGS}/table1_scatter.png",
    "results/trees/table2.parquet",
    "results/trees/table2.md",
    f"{TREES_FIGS}/table2_runtimes.png",
    "results/trees/table3.parquet",
    "results/trees/table3.md",
    f"{TREES_FIGS}/table3_scatter.png",
    "results/trees/pima.parquet",
    "results/trees/pima.md",
    f"{TREES_FIGS}/pima_hist.png",
    f"{TREES_FIGS}/pima_hist.pdf",
    "results/trees/iris_mixed.parquet",
    "results/trees/iris_mixed.md",
    f"{TREES_FIGS}/iris_mixed.png",
    f"{TREES_FIGS}/iris_mixed.pdf",
    "results/trees/summary.md",
    "results/trees/paper_comparison.parquet",
    "results/trees/paper_claims.parquet",
]


rule trees:
    input:
        TREES_TARGETS,


rule trees_kernels:
    output:
        TREES_KERNELS,
    params:
        code=TREES_CODE,
    log:
        "logs/trees/kernels.log",
    benchmark:
        "benchmarks/trees/kernels.tsv"
    # every trees job waits for it: start it at once, beside the data jobs (in the smoke run
    # it was the critical path, started only after the perturbed MNIST partitions)
    priority: 60
    threads: 1
    resources:
        mem_mb=1300,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_kernels.py"


rule trees_table1:
    input:
        iris="results/data/iris.parquet",
        kernels=TREES_KERNELS,
    output:
        table="results/trees/table1.parquet",
        md="results/trees/table1.md",
        html=trees_report(
            "results/trees/table1.html",
            "trees_table1",
            "Table 1: Iris, all vs 99 % boxes",
            name="Table 1 (002): Iris robustness per sample, all vs 99 % boxes",
        ),
        png=trees_report(
            "results/figures/trees/table1_scatter.png",
            "trees_table1",
            "Table 1: Iris, all vs 99 % boxes",
            name="Figure 4 (001): scatter of all-box against 99 %-box robustness",
        ),
        pdf="results/figures/trees/table1_scatter.pdf",
    params:
        code=TREES_CODE,
        exp=TREES["table1"],
        common=TREES_COMMON,
    log:
        "logs/trees/table1.log",
    benchmark:
        "benchmarks/trees/table1.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table1.py"


rule trees_table2:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
        kernels=TREES_KERNELS,
    output:
        table="results/trees/table2.parquet",
        runtimes="results/trees/table2_runtimes.tsv",
        md="results/trees/table2.md",
        html=trees_report(
            "results/trees/table2.html",
            "trees_table2",
            "Table 2: MNIST 5x5 random forest runtimes",
            name="Table 2 (002): MNIST 5x5 runtimes per method",
        ),
        png=trees_report(
            "results/figures/trees/table2_runtimes.png",
            "trees_table2",
            "Table 2: MNIST 5x5 random forest runtimes",
            name="Table 2 (002): runtimes per image and method (figure)",
        ),
    params:
        code=TREES_CODE,
        exp=TREES["table2"],
        common=TREES_COMMON,
    log:
        "logs/trees/table2.log",
    benchmark:
        "benchmarks/trees/table2.tsv"
    # the second longest: long jobs start first, so that a run does not end on one of them alone
    # (Pima ran alone for the last 60 s of a 284 s default run); see workflow/rules/mlm.smk
    priority: 25
    threads: 1
    resources:
        mem_mb=3000,
        runtime=7,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table2.py"


rule trees_table3_size:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
        kernels=TREES_KERNELS,
    output:
        "results/trees/table3/size{trees_size}.parquet",
    params:
        code=TREES_CODE,
        depths=lambda wildcards: TREES_TABLE3_DEPTHS[int(wildcards.trees_size)],
        exp=TREES_TABLE3_SETTINGS,
        common=TREES_COMMON,
    log:
        "logs/trees/table3_size{trees_size}.log",
    benchmark:
        "benchmarks/trees/table3_size{trees_size}.tsv"
    # four 11-14 s jobs: long jobs start first, so that a run does not end on one of them alone
    # (Pima ran alone for the last 60 s of a 284 s default run); see workflow/rules/mlm.smk
    priority: 20
    threads: 1
    resources:
        mem_mb=3000,
        runtime=10,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table3_size.py"


rule trees_table3:
    input:
        expand("results/trees/table3/size{size}.parquet", size=list(TREES_TABLE3_DEPTHS)),
    output:
        table="results/trees/table3.parquet",
        md="results/trees/table3.md",
        html=trees_report(
            "results/trees/table3.html",
            "trees_table3",
            "Table 3: MNIST decision trees, exact vs Monte Carlo",
            name="Table 3 (002): exact against Monte Carlo robustness, R^2 per setting",
        ),
        png=trees_report(
            "results/figures/trees/table3_scatter.png",
            "trees_table3",
            "Table 3: MNIST decision trees, exact vs Monte Carlo",
            name="Table 3 (002): exact against Monte Carlo robustness (figure)",
        ),
    params:
        code=TREES_CODE,
    log:
        "logs/trees/table3.log",
    benchmark:
        "benchmarks/trees/table3.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table3.py"


rule trees_pima:
    input:
        pima="results/data/pima.parquet",
        kernels=TREES_KERNELS,
    output:
        table="results/trees/pima.parquet",
        sensitivity="results/trees/pima_sensitivity.parquet",
        md="results/trees/pima.md",
        html=trees_report(
            "results/trees/pima.html",
            "trees_pima",
            "Figure 4 (002): Pima, XGBoost, NORTA noise",
            name="Figure 4 (002): Pima sensitivity and per-subject robustness (table)",
        ),
        png=trees_report(
            "results/figures/trees/pima_hist.png",
            "trees_pima",
            "Figure 4 (002): Pima, XGBoost, NORTA noise",
            name="Figure 4 (002): histogram of Pima robustness",
        ),
        pdf="results/figures/trees/pima_hist.pdf",
    params:
        code=TREES_CODE,
        exp=TREES["pima"],
        seed=TREES["seed"],
        paper={k: v for k, v in TREES["paper"].items() if k.startswith("pima_")},
    log:
        "logs/trees/pima.log",
    benchmark:
        "benchmarks/trees/pima.tsv"
    # the longest trees job: long jobs start first, so that a run does not end on one of them alone
    # (Pima ran alone for the last 60 s of a 284 s default run); see workflow/rules/mlm.smk
    priority: 30
    threads: 1
    resources:
        mem_mb=1500,
        runtime=15,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_pima.py"


rule trees_iris_mixed:
    input:
        iris="results/data/iris.parquet",
        kernels=TREES_KERNELS,
    output:
        table="results/trees/iris_mixed.parquet",
        md="results/trees/iris_mixed.md",
        html=trees_report(
            "results/trees/iris_mixed.html",
            "trees_iris_mixed",
            "Figure 5 (001): Iris, XGBoost, mixed noise",
            name="Figure 5 (001): Iris robustness under mixed noise (table)",
        ),
        png=trees_report(
            "results/figures/trees/iris_mixed.png",
            "trees_iris_mixed",
            "Figure 5 (001): Iris, XGBoost, mixed noise",
            name="Figure 5 (001): Iris robustness per sample with certified intervals",
        ),
        pdf="results/figures/trees/iris_mixed.pdf",
    params:
        code=TREES_CODE,
        exp=TREES["iris_mixed"],
        seed=TREES["seed"],
    log:
        "logs/trees/iris_mixed.log",
    benchmark:
        "benchmarks/trees/iris_mixed.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_iris_mixed.py"


rule trees_paper:
    input:
        table1="results/trees/table1.parquet",
        table2="results/trees/table2.parquet",
        runtimes="results/trees/table2_runtimes.tsv",
        table3="results/trees/table3.parquet",
        pima="results/trees/pima.parquet",
        pima_sensitivity="results/trees/pima_sensitivity.parquet",
        iris_mixed="results/trees/iris_mixed.parquet",
    output:
        md="results/trees/summary.md",
        html=trees_report(
            "results/trees/summary.html",
            "trees_paper",
            "Summary",
            name="Papers 001/002: their numbers beside ours, claims",
        ),
        comparison="results/trees/paper_comparison.parquet",
        claims="results/trees/paper_claims.parquet",
        notes="results/trees/paper_notes.md",
    params:
        code=TREES_CODE,
        paper=TREES["paper"],
        iris_tol=TREES["iris_mixed"]["engine_tol"],
        mc_draws=TREES["table2"]["mc_draws"],
    log:
        "logs/trees/paper.log",
    benchmark:
        "benchmarks/trees/paper.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_paper.py"


# ---- bench_trees: the exact-engine benchmark (bench/trees.py, docs/trees.md) ----------------
rule bench_trees:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
        kernels=TREES_KERNELS,
    output:
        "results/bench/trees.md",
    params:
        code=TREES_CODE,
    log:
        "logs/trees/bench.log",
    benchmark:
        "benchmarks/trees/bench.tsv"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        ENV_CORE
    script:
        "../../bench/trees.py"


# ---- end bench_trees ----------------------------------------------------------------------
