# Report: the cross-paper summary (every topic's paper comparison and claims) and the
# benchmark collection, and the environment of the run.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

import importlib.metadata

REPORT_CODE = code_digest()
#: docs_blocks calls each topic's highlights module.
DOCS_CODE = code_digest("nbc", "trees", "pmnist", "mlm", "compare")
summary_report = topic_report("Summary")
#: Topics whose claims the summary lists: the papers' and the compare topic's ("beyond").
SUMMARY_TOPICS = PAPER_TOPICS + ["compare"]
#: Benchmark reports (results/bench/<topic>.md, each written by rule bench_<topic>) that rule
#: bench collects; "workflow" times the whole workflow (bench/workflow.py).
BENCH_TOPICS = ["nbc", "trees", "pmnist", "mlm", "compare", "workflow"]
#: Digest of the installed package versions: installing other versions rewrites
#: results/environment.json (a params rerun trigger); nothing else reruns it.
ENVIRONMENT_PACKAGES = hashlib.sha256(
    "\n".join(
        sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    ).encode()
).hexdigest()[:16]


#: Generated blocks of the README and docs/*.md (reliquant.core.docs); *_timings blocks hold
#: runtimes, which differ between machines.
DOC_BLOCKS = [
    "nbc_cells",
    "nbc_statements",
    "readme_nbc",
    "trees_results",
    "trees_timings",
    "readme_trees",
    "mlm_results",
    "mlm_matrices",
    "readme_mlm",
    "pmnist_accuracy",
    "pmnist_pixel_means",
    "pmnist_quirks",
    "readme_compare",
    "compare_declared",
    "compare_rule",
    "compare_cases",
    "compare_noise",
    "compare_hybrid",
    "compare_certified",
    "readme_certified",
    "compare_families",
    "readme_families",
]
DOC_PAGES = [
    "README.md",
    "docs/nbc.md",
    "docs/trees.md",
    "docs/pmnist.md",
    "docs/mlm.md",
    "docs/compare.md",
    "docs/benchmarks.md",
]


REPORT_TARGETS = [
    "results/summary.md",
    "results/environment.json",
    "results/docs_check.md",
]


rule report_summary:
    input:
        comparisons=expand("results/{topic}/paper_comparison.parquet", topic=SUMMARY_TOPICS),
        claims=expand("results/{topic}/paper_claims.parquet", topic=SUMMARY_TOPICS),
        notes=expand("results/{topic}/paper_notes.md", topic=SUMMARY_TOPICS),
    output:
        md="results/summary.md",
        html=summary_report(
            "results/summary.html",
            "summary",
            name="All papers: their numbers beside ours, claims",
        ),
        comparisons="results/summary_comparisons.parquet",
        claims="results/summary_claims.parquet",
    params:
        code=REPORT_CODE,
    log:
        "logs/report/summary.log",
    benchmark:
        "benchmarks/report/summary.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/report/report_summary.py"


rule docs_blocks:
    input:
        comparisons="results/summary_comparisons.parquet",
        claims="results/summary_claims.parquet",
        trees_notes="results/trees/paper_notes.md",
        pima_sensitivity="results/trees/pima_sensitivity.parquet",
        nbc_claims="results/nbc/claims.parquet",
        nbc_auc="results/nbc/auc.parquet",
        mlm_accuracy="results/mlm/accuracy.parquet",
        mlm_matrices="results/mlm/matrices.parquet",
        mlm_misclustered="results/mlm/misclustered.parquet",
        mlm_confusion="results/mlm/confusion_test.parquet",
        pmnist_summary="results/pmnist/summary.md",
        pmnist_stats="results/pmnist/summary.parquet",
        compare_auarc="results/compare/auarc.parquet",
        compare_contrast="results/compare/contrast.parquet",
        compare_headline="results/compare/headline.parquet",
        compare_declared="results/compare/declared.parquet",
        compare_hybrid="results/compare/hybrid.parquet",
        compare_noise="results/compare/noise.parquet",
        compare_certified_summary="results/compare/certified_summary.parquet",
        compare_certified_claims="results/compare/certified_claims.parquet",
        compare_families="results/compare/families.parquet",
    output:
        expand("results/docs/{block}.md", block=DOC_BLOCKS),
    params:
        code=DOCS_CODE,
    log:
        "logs/report/docs_blocks.log",
    benchmark:
        "benchmarks/report/docs_blocks.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/report/docs_blocks.py"


rule docs_check:
    input:
        blocks=expand("results/docs/{block}.md", block=DOC_BLOCKS),
        pages=DOC_PAGES,
    output:
        md="results/docs_check.md",
        html=summary_report(
            "results/docs_check.html",
            "docs_check",
            name="README and docs: generated numbers current or stale",
        ),
    params:
        code=REPORT_CODE,
    log:
        "logs/report/docs_check.log",
    benchmark:
        "benchmarks/report/docs_check.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/report/docs_check.py"


rule bench:
    input:
        expand("results/bench/{topic}.md", topic=BENCH_TOPICS),
    output:
        summary="results/bench/summary.md",
        readme="results/docs/readme_bench_timings.md",
        topics=expand("results/docs/bench_{topic}_timings.md", topic=BENCH_TOPICS),
    params:
        code=REPORT_CODE,
    log:
        "logs/report/bench.log",
    benchmark:
        "benchmarks/report/bench.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/report/bench.py"


# ---- bench_workflow: the whole workflow timed in a fresh copy (bench/workflow.py) ---------
# The default and the smoke configuration, each in a fresh copy with `snakemake --cores 2`
# (the rule's threads): wall time, job time per rule, the critical path, start-up vs work.
# No input: it copies the repository itself; any library code change reruns it.
rule bench_workflow:
    output:
        md="results/bench/workflow.md",
        jobs="results/bench/workflow_jobs.parquet",
    params:
        code=code_digest("nbc", "trees", "pmnist", "mlm", "compare"),
        configs=["default", "smoke"],
    log:
        "logs/report/bench_workflow.log",
    benchmark:
        "benchmarks/report/bench_workflow.tsv"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    conda:
        ENV_CORE
    script:
        "../../bench/workflow.py"


rule report_environment:
    output:
        summary_report(
            "results/environment.json",
            "environment",
            name="Environment: package versions, CPU capability, threads",
        ),
    params:
        packages=ENVIRONMENT_PACKAGES,
    log:
        "logs/report/environment.log",
    benchmark:
        "benchmarks/report/environment.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_TORCH
    script:
        "../../scripts/report/report_environment.py"
