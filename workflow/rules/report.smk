# Report: the cross-paper summary (every topic's paper comparison and claims) and the
# benchmark collection, and the environment of the run.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).

import importlib.metadata

REPORT_CODE = code_digest()
summary_report = topic_report("Summary")
BENCH_TOPICS = ["nbc", "trees", "pmnist", "mlm"]
#: Digest of the installed package versions: installing other versions rewrites
#: results/environment.json (a params rerun trigger); nothing else reruns it.
ENVIRONMENT_PACKAGES = hashlib.sha256(
    "\n".join(
        sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    ).encode()
).hexdigest()[:16]


REPORT_TARGETS = ["results/summary.md", "results/environment.json"]


rule report_summary:
    input:
        comparisons=expand("results/{topic}/paper_comparison.parquet", topic=PAPER_TOPICS),
        claims=expand("results/{topic}/paper_claims.parquet", topic=PAPER_TOPICS),
        notes=expand("results/{topic}/paper_notes.md", topic=PAPER_TOPICS),
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


rule bench:
    input:
        expand("results/bench/{topic}.md", topic=BENCH_TOPICS),
    output:
        "results/bench/summary.md",
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
