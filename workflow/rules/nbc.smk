# nbc: the synthetic Naive Bayes experiment of paper 000 (Detavernier & De Bock), Section 7.
# distributions -> one job per (N_train, gamma) cell (metrics) -> curves per cell ->
# AUC table + claims check, Figure 1 (means) and Figure 2 (standard deviations).
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

from reliquant.nbc.reproduction.experiment import gamma_key
from reliquant.nbc.reproduction.settings import check_settings

# Constraints between keys (class probabilities, the favoured table, folds, file names).
check_settings(config["nbc"])

NBC_CODE = code_digest("nbc")
nbc_report = topic_report("NBC robustness (paper 000)")


wildcard_constraints:
    nbc_n=r"\d+",
    nbc_g=r"[0-9.e+-]+",


# (n_train, gamma text) of every cell of the configured grid.
NBC_CELLS = [
    (int(n), gamma_key(g))
    for n in config["nbc"]["grid"]["n_train"]
    for g in config["nbc"]["grid"]["gamma"]
]
NBC_CURVE_FILES = [f"results/nbc/curves/n{n}_g{g}.parquet" for n, g in NBC_CELLS]
# The topic's final outputs (collected by all_targets()).
NBC_TARGETS = [
    "results/nbc/auc.parquet",
    "results/nbc/auc.md",
    "results/figures/nbc/mean_curves.png",
    "results/figures/nbc/mean_curves.pdf",
    "results/figures/nbc/std_curves.png",
    "results/figures/nbc/std_curves.pdf",
    "results/nbc/paper_comparison.parquet",
    "results/nbc/paper_claims.parquet",
]


rule nbc:
    input:
        NBC_TARGETS,


rule nbc_distributions:
    output:
        dists="results/nbc/distributions.parquet",
        test="results/nbc/test_set.parquet",
    params:
        code=NBC_CODE,
        design=config["nbc"]["design"],
        seed=config["nbc"]["seed"],
    log:
        "logs/nbc/distributions.log",
    benchmark:
        "benchmarks/nbc/distributions.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_distributions.py"


rule nbc_cell:
    input:
        dists="results/nbc/distributions.parquet",
        test="results/nbc/test_set.parquet",
    output:
        cell="results/nbc/cells/n{nbc_n}_g{nbc_g}.parquet",
        # the cell's accuracy-acceptance curves (Section 7.4), from the table as written: in
        # the same job (a job of their own cost more to start than to compute)
        curves="results/nbc/curves/n{nbc_n}_g{nbc_g}.parquet",
    params:
        code=NBC_CODE,
        fit=config["nbc"]["fit"],
        seed=config["nbc"]["seed"],
    log:
        "logs/nbc/cell_n{nbc_n}_g{nbc_g}.log",
    benchmark:
        "benchmarks/nbc/cell_n{nbc_n}_g{nbc_g}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_cell.py"


rule nbc_auc:
    input:
        NBC_CURVE_FILES,
    output:
        table="results/nbc/auc.parquet",
        per_set="results/nbc/auc_per_set.parquet",
        claims="results/nbc/claims.parquet",
        md="results/nbc/auc.md",
        html=nbc_report(
            "results/nbc/auc.html",
            "nbc_auc",
            "Tables",
            name="AUC of the accuracy-acceptance curves per cell, claims check",
        ),
    params:
        code=NBC_CODE,
        paper=config["nbc"]["paper"],
    log:
        "logs/nbc/auc.log",
    benchmark:
        "benchmarks/nbc/auc.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_auc.py"


rule nbc_figures:
    input:
        NBC_CURVE_FILES,
    output:
        mean_png=nbc_report(
            "results/figures/nbc/mean_curves.png",
            "nbc_mean_curves",
            "Figures",
            name="Figure 1: mean accuracy-acceptance curves",
        ),
        mean_pdf="results/figures/nbc/mean_curves.pdf",
        std_png=nbc_report(
            "results/figures/nbc/std_curves.png",
            "nbc_std_curves",
            "Figures",
            name="Figure 2: standard deviation of the accuracy-acceptance curves",
        ),
        std_pdf="results/figures/nbc/std_curves.pdf",
    params:
        code=NBC_CODE,
    log:
        "logs/nbc/figures.log",
    benchmark:
        "benchmarks/nbc/figures.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_figures.py"


rule nbc_paper:
    input:
        claims="results/nbc/claims.parquet",
    output:
        comparison="results/nbc/paper_comparison.parquet",
        claims="results/nbc/paper_claims.parquet",
        notes="results/nbc/paper_notes.md",
    params:
        code=NBC_CODE,
        paper=config["nbc"]["paper"],
    log:
        "logs/nbc/paper.log",
    benchmark:
        "benchmarks/nbc/paper.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/nbc/nbc_paper.py"


rule bench_nbc:
    output:
        "results/bench/nbc.md",
    params:
        code=NBC_CODE,
    log:
        "logs/nbc/bench.log",
    benchmark:
        "benchmarks/nbc/bench.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        ENV_CORE
    script:
        "../../bench/nbc.py"
