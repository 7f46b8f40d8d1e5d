# custom: your own cases (config `custom:`, README "Your own model and data"), one job each,
# by kind: nbc (paper 000), trees (papers 001/002), mlm (paper 004). Every case writes
# results/custom/<name>.parquet, .md and the .html page and the figure
# results/figures/custom/<name>.png that the report shows under "Your cases".
# A job's params are its case's config entry only, so editing one case reruns only its job;
# its code digest is the kind's package and core. `snakemake custom` runs only these jobs, and
# `snakemake --report report.html custom` reports only them ("Your cases"; report_guard.py
# then checks only their results, not the papers').
# Resources: 2000 MB; trees: 3 x (samples x time_budget + 60 s), other kinds 10 minutes (at
# least 5 minutes, CONTRIBUTING.md, Resources); --set-resources overrides them per rule.

from reliquant.core.custom import case_inputs, case_name_pattern, case_runtime, check_cases

# Names, kinds, files, suffixes, columns and a model's sha256 checked before any job is
# planned; a file outside the repository is logged with its SHA-256 (logger reliquant.custom).
CUSTOM_CASES = check_cases(config["custom"])
# trees cases: each model file is read now, so an unsupported model or one whose feature
# count differs from the case's columns stops the run before any job.
if any(case["kind"] == "trees" for case in CUSTOM_CASES):

    from reliquant.trees.custom import check_models

    check_models(CUSTOM_CASES)

CUSTOM = {case["name"]: case for case in CUSTOM_CASES}
# Per kind: a regex matching exactly its cases' names (the {case} wildcard of its rule).
CUSTOM_KINDS = ["nbc", "trees", "mlm"]
CUSTOM_NAMES = {kind: case_name_pattern(CUSTOM_CASES, kind) for kind in CUSTOM_KINDS}
# Per kind: the digest of its package and core (a library edit reruns only that kind's cases).
CUSTOM_CODE = {kind: code_digest(kind) for kind in CUSTOM_KINDS}
CUSTOM_RUNTIME = {name: case_runtime(case) for name, case in CUSTOM.items()}
custom_report = topic_report("Your cases")

# The topic's final outputs (collected by all_targets()); none without cases.
CUSTOM_TARGETS = expand(
    "results/custom/{case}.{ext}", case=list(CUSTOM), ext=["parquet", "md", "html"]
) + expand("results/figures/custom/{case}.png", case=list(CUSTOM))


rule custom:
    input:
        CUSTOM_TARGETS,


rule custom_nbc:
    input:
        unpack(lambda wc: case_inputs(CUSTOM[wc.case])),
    output:
        table="results/custom/{case}.parquet",
        md="results/custom/{case}.md",
        html=custom_report(
            "results/custom/{case}.html",
            "custom_nbc",
            "Naive Bayes (paper 000)",
            name="{case}: Naive Bayes robustness per test row",
        ),
        figure=custom_report(
            "results/figures/custom/{case}.png",
            "custom_nbc_figure",
            "Naive Bayes (paper 000)",
            name="{case}: eps_glob and eps_loc histograms",
        ),
    params:
        code=CUSTOM_CODE["nbc"],
        case=lambda wc: CUSTOM[wc.case],
    log:
        "logs/custom/{case}.log",
    benchmark:
        "benchmarks/custom/{case}.tsv"
    wildcard_constraints:
        case=CUSTOM_NAMES["nbc"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        ENV_CORE
    script:
        "../../scripts/custom/custom_nbc.py"


rule custom_trees:
    input:
        unpack(lambda wc: case_inputs(CUSTOM[wc.case])),
        kernels=TREES_KERNELS,
    output:
        table="results/custom/{case}.parquet",
        md="results/custom/{case}.md",
        html=custom_report(
            "results/custom/{case}.html",
            "custom_trees",
            "Tree ensembles (papers 001/002)",
            name="{case}: tree-ensemble robustness per sample",
        ),
        figure=custom_report(
            "results/figures/custom/{case}.png",
            "custom_trees_figure",
            "Tree ensembles (papers 001/002)",
            name="{case}: robustness per sample with certified bounds",
        ),
    params:
        code=CUSTOM_CODE["trees"],
        case=lambda wc: CUSTOM[wc.case],
    log:
        "logs/custom/{case}.log",
    benchmark:
        "benchmarks/custom/{case}.tsv"
    wildcard_constraints:
        case=CUSTOM_NAMES["trees"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=lambda wc: CUSTOM_RUNTIME[wc.case],
    conda:
        ENV_CORE
    script:
        "../../scripts/custom/custom_trees.py"


rule custom_mlm:
    input:
        unpack(lambda wc: case_inputs(CUSTOM[wc.case])),
    output:
        table="results/custom/{case}.parquet",
        md="results/custom/{case}.md",
        html=custom_report(
            "results/custom/{case}.html",
            "custom_mlm",
            "Misclassification Likelihood Matrix (paper 004)",
            name="{case}: Misclassification Likelihood Matrix",
        ),
        figure=custom_report(
            "results/figures/custom/{case}.png",
            "custom_mlm_figure",
            "Misclassification Likelihood Matrix (paper 004)",
            name="{case}: likelihood matrix heatmap",
        ),
    params:
        code=CUSTOM_CODE["mlm"],
        case=lambda wc: CUSTOM[wc.case],
    log:
        "logs/custom/{case}.log",
    benchmark:
        "benchmarks/custom/{case}.tsv"
    wildcard_constraints:
        case=CUSTOM_NAMES["mlm"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        ENV_CORE
    script:
        "../../scripts/custom/custom_mlm.py"
