# pmnist: Perturbed MNIST (paper 004, Section 3.2): the 10,000 MNIST test images as level 0
# plus 12 corruptions x 10 levels (1,210,000 images). One job per corruption (parallel);
# each job gets only its own corruption's parameters, so editing one reruns only it.
# The `calibrated` preset (pmnist_calibrate) is a separate target that needs the MLM CNN.
# Speed-only settings (pmnist.chunk_size, pmnist.calibration.batch_size) are no params: the
# scripts read them from the config, so changing them reruns nothing.
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).
# Priority 50 for the partitions: mlm_infer (40) scores them as soon as the CNN (mlm_train, 100)
# is trained, so they are made beside the training, before jobs that feed nothing on that path.

from reliquant.pmnist.registry import validate_schedule

PMNIST = config["pmnist"]
# The schema leaves the corruption parameters to the registry (their one source of types
# and bounds): check the paper preset here, before any job starts.
validate_schedule(PMNIST["corruptions"], complete=True)
PMNIST_CODE = code_digest("pmnist")
PMNIST_CORRUPTIONS = list(PMNIST["corruptions"])
pmnist_report = topic_report("MLM (paper 004)")


wildcard_constraints:
    corruption="|".join(PMNIST_CORRUPTIONS),


# The 13 partition files: clean (level 0) and one per corruption (levels 1..10).
PMNIST_PARTITIONS = ["results/pmnist/clean.parquet"] + expand(
    "results/pmnist/{corruption}.parquet", corruption=PMNIST_CORRUPTIONS
)


# The topic's final outputs (collected by all_targets()).
PMNIST_TARGETS = PMNIST_PARTITIONS + [
    "results/pmnist/summary.parquet",
    "results/pmnist/summary.md",
    "results/figures/pmnist/sample_grid.png",
    "results/figures/pmnist/mean_intensity.png",
]


rule pmnist:
    input:
        PMNIST_TARGETS,


rule pmnist_clean:
    input:
        "results/data/mnist_test.parquet",
    output:
        images="results/pmnist/clean.parquet",
        stats="results/pmnist/stats/clean.parquet",
    params:
        code=PMNIST_CODE,
        images_per_class=PMNIST["images_per_class"],
    log:
        "logs/pmnist/clean.log",
    benchmark:
        "benchmarks/pmnist/clean.tsv"
    priority: 50
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/pmnist/pmnist_clean.py"


rule pmnist_generate:
    input:
        test="results/data/mnist_test.parquet",
        # the calibrated schedule file when that preset is selected, else nothing
        schedule=lambda wc: (
            [PMNIST["calibrated_schedule"]] if PMNIST["preset"] == "calibrated" else []
        ),
    output:
        images="results/pmnist/{corruption}.parquet",
        stats="results/pmnist/stats/{corruption}.parquet",
    params:
        code=PMNIST_CODE,
        # only this corruption's parameters (paper) or just the preset name (calibrated)
        corruption=lambda wc: (
            {"preset": "calibrated"}
            if PMNIST["preset"] == "calibrated"
            else {"preset": "paper", **PMNIST["corruptions"][wc.corruption]}
        ),
        seed=PMNIST["seed"],
        images_per_class=PMNIST["images_per_class"],
    log:
        "logs/pmnist/generate_{corruption}.log",
    benchmark:
        "benchmarks/pmnist/generate_{corruption}.tsv"
    priority: 50
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/pmnist/pmnist_generate.py"


rule pmnist_summary:
    input:
        expand(
            "results/pmnist/stats/{part}.parquet",
            part=["clean"] + PMNIST_CORRUPTIONS,
        ),
    output:
        table="results/pmnist/summary.parquet",
        md="results/pmnist/summary.md",
        html=pmnist_report(
            "results/pmnist/summary.html",
            "pmnist_summary",
            "Perturbed MNIST",
            name="Perturbed MNIST: pixel statistics per corruption and level (table)",
        ),
        fig=pmnist_report(
            "results/figures/pmnist/mean_intensity.png",
            "pmnist_mean_intensity",
            "Perturbed MNIST",
            name="Perturbed MNIST: mean intensity and saturation per level",
        ),
        pdf="results/figures/pmnist/mean_intensity.pdf",
    params:
        code=PMNIST_CODE,
    log:
        "logs/pmnist/summary.log",
    benchmark:
        "benchmarks/pmnist/summary.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/pmnist/pmnist_summary.py"


rule pmnist_grid:
    input:
        PMNIST_PARTITIONS,
    output:
        fig=pmnist_report(
            "results/figures/pmnist/sample_grid.png",
            "pmnist_sample_grid",
            "Perturbed MNIST",
            name="Perturbed MNIST: one digit under every corruption and level",
        ),
        pdf="results/figures/pmnist/sample_grid.pdf",
        per_class=directory("results/figures/pmnist/sample_grid_by_class"),
    params:
        code=PMNIST_CODE,
        grid=PMNIST["grid"],
    log:
        "logs/pmnist/grid.log",
    benchmark:
        "benchmarks/pmnist/grid.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/pmnist/pmnist_grid.py"


rule pmnist_calibrate:
    input:
        model=PMNIST["calibration"]["model"],
        test="results/data/mnist_test.parquet",
    output:
        PMNIST["calibrated_schedule"],
    params:
        code=PMNIST_CODE,
        floor=PMNIST["calibration"]["floor"],
        images_per_class=PMNIST["calibration"]["images_per_class"],
        tol=PMNIST["calibration"]["tol"],
        max_iter=PMNIST["calibration"]["max_iter"],
        corruptions=PMNIST["corruptions"],
        seed=PMNIST["seed"],
    log:
        "logs/pmnist/calibrate.log",
    benchmark:
        "benchmarks/pmnist/calibrate.tsv"
    threads: 2
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_TORCH
    script:
        "../../scripts/pmnist/pmnist_calibrate.py"


rule bench_pmnist:
    input:
        test="results/data/mnist_test.parquet",
    output:
        "results/bench/pmnist.md",
    params:
        code=PMNIST_CODE,
    log:
        "logs/pmnist/bench.log",
    benchmark:
        "benchmarks/pmnist/bench.tsv"
    threads: PMNIST["bench"]["workers"]
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        ENV_BENCH
    script:
        "../../bench/pmnist.py"
