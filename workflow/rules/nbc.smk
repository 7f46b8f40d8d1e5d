# nbc: the synthetic Naive Bayes experiment of paper 000 (Detavernier & De Bock), Section 7.
# distributions -> one job per (N_train, gamma) cell (metrics) -> curves per cell ->
# AUC table + claims check, Figure 1 (means) and Figure 2 (standard deviations).


rule nbc:
    input:
        nbc_targets(),


rule nbc_distributions:
    output:
        dists="results/nbc/distributions.parquet",
        test="results/nbc/test_set.parquet",
    params:
        design=config["nbc"]["design"],
        seed=config["nbc"]["seed"],
    log:
        "logs/nbc/distributions.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_distributions.py"


rule nbc_cell:
    input:
        dists="results/nbc/distributions.parquet",
        test="results/nbc/test_set.parquet",
    output:
        "results/nbc/cells/n{nbc_n}_g{nbc_g}.parquet",
    params:
        fit=config["nbc"]["fit"],
        seed=config["nbc"]["seed"],
    log:
        "logs/nbc/cell_n{nbc_n}_g{nbc_g}.log",
    benchmark:
        "benchmarks/nbc/cell_n{nbc_n}_g{nbc_g}.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_cell.py"


rule nbc_curves:
    input:
        "results/nbc/cells/n{nbc_n}_g{nbc_g}.parquet",
    output:
        "results/nbc/curves/n{nbc_n}_g{nbc_g}.parquet",
    log:
        "logs/nbc/curves_n{nbc_n}_g{nbc_g}.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_curves.py"


rule nbc_auc:
    input:
        nbc_curve_files(),
    output:
        table="results/nbc/auc.parquet",
        per_set="results/nbc/auc_per_set.parquet",
        claims="results/nbc/claims.parquet",
        md=report(
            "results/nbc/auc.md",
            caption="../report/nbc_auc.rst",
            category="NBC robustness (paper 000)",
            subcategory="Tables",
        ),
    params:
        report=config["nbc"]["report"],
    log:
        "logs/nbc/auc.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_auc.py"


rule nbc_figures:
    input:
        nbc_curve_files(),
    output:
        mean_png=report(
            "results/figures/nbc/mean_curves.png",
            caption="../report/nbc_mean_curves.rst",
            category="NBC robustness (paper 000)",
            subcategory="Figures",
        ),
        mean_pdf="results/figures/nbc/mean_curves.pdf",
        std_png=report(
            "results/figures/nbc/std_curves.png",
            caption="../report/nbc_std_curves.rst",
            category="NBC robustness (paper 000)",
            subcategory="Figures",
        ),
        std_pdf="results/figures/nbc/std_curves.pdf",
    log:
        "logs/nbc/figures.log",
    benchmark:
        "benchmarks/nbc/figures.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_figures.py"


rule bench_nbc:
    output:
        "results/bench/nbc.md",
    log:
        "logs/nbc/bench.log",
    benchmark:
        "benchmarks/nbc/bench.tsv"
    conda:
        ENV_CORE
    script:
        "../../bench/nbc.py"
