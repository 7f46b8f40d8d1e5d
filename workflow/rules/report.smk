# Report: the cross-paper summary (papers' numbers beside ours) and the benchmark collection.


rule report_summary:
    input:
        nbc_claims="results/nbc/claims.parquet",
        trees_comparison="results/trees/comparison.parquet",
        trees_claims="results/trees/claims.parquet",
        trees_runtimes="results/trees/table2_runtimes.tsv",
        mlm_comparison="results/mlm/paper_comparison.parquet",
        mlm_accuracy="results/mlm/accuracy.parquet",
        mlm_centroids="results/mlm/table1_centroid_shift.parquet",
    output:
        md=report(
            "results/summary.md",
            caption="../report/summary.rst",
            category="Summary",
        ),
        comparisons="results/summary_comparisons.parquet",
        claims="results/summary_claims.parquet",
    params:
        papers=PAPER_TITLES,
        trees_paper=config["trees"]["paper"],
    log:
        "logs/report/summary.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/report/report_summary.py"


rule bench:
    input:
        expand("results/bench/{topic}.md", topic=BENCH_TOPICS),
    output:
        "results/bench/summary.md",
    log:
        "logs/report/bench.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/report/bench.py"
