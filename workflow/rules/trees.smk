# trees: probabilistic robustness of tree ensembles (papers 001/002, Section 5).
# One job per experiment (Table 1, Table 2, Figure 4 of 002, Figure 5 of 001) and one per
# resized MNIST size of Table 3; a summary job compares every number with the papers'.


rule trees:
    input:
        trees_targets(),


rule trees_table1:
    input:
        iris="results/data/iris.parquet",
    output:
        table="results/trees/table1.parquet",
        md=report(
            "results/trees/table1.md",
            caption="../report/trees_table1.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Table 1: Iris, all vs 99 % boxes",
        ),
        png=report(
            "results/figures/trees/table1_scatter.png",
            caption="../report/trees_table1.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Table 1: Iris, all vs 99 % boxes",
        ),
        pdf="results/figures/trees/table1_scatter.pdf",
    params:
        exp=config["trees"]["table1"],
        common=TREES_COMMON,
    log:
        "logs/trees/table1.log",
    benchmark:
        "benchmarks/trees/table1.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table1.py"


rule trees_table2:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    output:
        table="results/trees/table2.parquet",
        runtimes="results/trees/table2_runtimes.tsv",
        md=report(
            "results/trees/table2.md",
            caption="../report/trees_table2.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Table 2: MNIST 5x5 random forest runtimes",
        ),
        png=report(
            "results/figures/trees/table2_runtimes.png",
            caption="../report/trees_table2.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Table 2: MNIST 5x5 random forest runtimes",
        ),
    params:
        exp=config["trees"]["table2"],
        common=TREES_COMMON,
    log:
        "logs/trees/table2.log",
    benchmark:
        "benchmarks/trees/table2.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table2.py"


rule trees_table3_size:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    output:
        "results/trees/table3/size{trees_size}.parquet",
    params:
        depths=lambda wildcards: TREES_TABLE3_DEPTHS[int(wildcards.trees_size)],
        exp=TREES_TABLE3_SETTINGS,
        common=TREES_COMMON,
    log:
        "logs/trees/table3_size{trees_size}.log",
    benchmark:
        "benchmarks/trees/table3_size{trees_size}.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table3_size.py"


rule trees_table3:
    input:
        expand("results/trees/table3/size{size}.parquet", size=list(TREES_TABLE3_DEPTHS)),
    output:
        table="results/trees/table3.parquet",
        md=report(
            "results/trees/table3.md",
            caption="../report/trees_table3.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Table 3: MNIST decision trees, exact vs Monte Carlo",
        ),
        png=report(
            "results/figures/trees/table3_scatter.png",
            caption="../report/trees_table3.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Table 3: MNIST decision trees, exact vs Monte Carlo",
        ),
    log:
        "logs/trees/table3.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_table3.py"


rule trees_pima:
    input:
        pima="results/data/pima.parquet",
    output:
        table="results/trees/pima.parquet",
        md=report(
            "results/trees/pima.md",
            caption="../report/trees_pima.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Figure 4 (002): Pima, XGBoost, NORTA noise",
        ),
        png=report(
            "results/figures/trees/pima_hist.png",
            caption="../report/trees_pima.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Figure 4 (002): Pima, XGBoost, NORTA noise",
        ),
        pdf="results/figures/trees/pima_hist.pdf",
    params:
        exp=config["trees"]["pima"],
        seed=config["trees"]["seed"],
    log:
        "logs/trees/pima.log",
    benchmark:
        "benchmarks/trees/pima.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_pima.py"


rule trees_iris_mixed:
    input:
        iris="results/data/iris.parquet",
    output:
        table="results/trees/iris_mixed.parquet",
        md=report(
            "results/trees/iris_mixed.md",
            caption="../report/trees_iris_mixed.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Figure 5 (001): Iris, XGBoost, mixed noise",
        ),
        png=report(
            "results/figures/trees/iris_mixed.png",
            caption="../report/trees_iris_mixed.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Figure 5 (001): Iris, XGBoost, mixed noise",
        ),
        pdf="results/figures/trees/iris_mixed.pdf",
    params:
        exp=config["trees"]["iris_mixed"],
        seed=config["trees"]["seed"],
    log:
        "logs/trees/iris_mixed.log",
    benchmark:
        "benchmarks/trees/iris_mixed.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_iris_mixed.py"


rule trees_summary:
    input:
        table1="results/trees/table1.parquet",
        table2="results/trees/table2.parquet",
        runtimes="results/trees/table2_runtimes.tsv",
        table3="results/trees/table3.parquet",
        pima="results/trees/pima.parquet",
        iris_mixed="results/trees/iris_mixed.parquet",
    output:
        md=report(
            "results/trees/summary.md",
            caption="../report/trees_summary.rst",
            category="Tree robustness (papers 001/002)",
            subcategory="Summary",
        ),
        comparison="results/trees/comparison.parquet",
        claims="results/trees/claims.parquet",
    params:
        paper=config["trees"]["paper"],
        pima_threshold=config["trees"]["pima"]["threshold"],
        iris_tol=config["trees"]["iris_mixed"]["engine_tol"],
    log:
        "logs/trees/summary.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/trees/trees_summary.py"


# ---- bench_trees: the exact-engine benchmark (bench/trees.py, docs/trees.md) ----------------
rule bench_trees:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    output:
        "results/bench/trees.md",
    log:
        "logs/trees/bench.log",
    benchmark:
        "benchmarks/trees/bench.tsv"
    threads: 2
    conda:
        ENV_CORE
    script:
        "../../bench/trees.py"


# ---- end bench_trees ----------------------------------------------------------------------
