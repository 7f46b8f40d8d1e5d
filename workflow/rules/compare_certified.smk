# compare, certified thresholds under shift (issue 43; docs/compare.md): every score of every
# data set certified on each split's clean validation part (selective risk at most a target
# with probability >= 1 - delta), its coverage and violations measured on the split's clean
# and shifted test parts; the first paper score against the comparator fixed in config.
# Included after compare.smk: it uses that file's constants (its outputs are in COMPARE_TARGETS).
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

from reliquant.compare.reproduction.certified import check_certified

# Every entry of compare.certified.datasets a data set of this run; every comparator one of
# the data set's declared uncertainty scores.
check_certified(COMPARE["certified"], COMPARE_DATASETS, COMPARE["comparisons"])


rule compare_certified:
    input:
        tables=COMPARE_PREDICTIONS,
        noise="results/compare/noise.parquet",
    output:
        table="results/compare/certified.parquet",
        summary="results/compare/certified_summary.parquet",
        claims="results/compare/certified_claims.parquet",
        md="results/compare/certified.md",
        html=compare_report(
            "results/compare/certified.html",
            "compare_certified_table",
            "Certified",
            name="Certified thresholds: which score keeps its promise under shift",
        ),
        png=compare_report(
            f"{COMPARE_FIGS}/certified.png",
            "compare_certified_figure",
            "Certified",
            name="Coverage at the certified threshold and violations under shift",
        ),
        pdf=f"{COMPARE_FIGS}/certified.pdf",
    params:
        code=COMPARE_CODE,
        certified=COMPARE["certified"],
        comparisons=COMPARE["comparisons"],
        confidence=COMPARE["evaluation"]["confidence"],
    log:
        "logs/compare/certified.log",
    benchmark:
        "benchmarks/compare/certified.tsv"
    threads: 1
    # measured on the default run's data sets (6 real tables, MNIST and NBC-cell stand-ins
    # of the default sizes): 14 s CPU, 371 MB peak
    resources:
        mem_mb=1100,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/compare/compare_certified.py"
