# pmnist: Perturbed MNIST (paper 004, Section 3.2): the 10,000 MNIST test images as level 0
# plus 12 corruptions x 10 levels (1,210,000 images). One job per corruption (parallel);
# each job gets only its own corruption's parameters, so editing one reruns only it.
# The `calibrated` preset (pmnist_calibrate) is a separate target that needs the MLM CNN.


rule pmnist:
    input:
        pmnist_targets(),


rule pmnist_clean:
    input:
        "results/data/mnist_test.parquet",
    output:
        images="results/pmnist/clean.parquet",
        stats="results/pmnist/stats/clean.parquet",
    params:
        images_per_class=PMNIST["images_per_class"],
    log:
        "logs/pmnist/clean.log",
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
        # only this corruption's parameters (paper) or just the preset name (calibrated)
        corruption=lambda wc: (
            {"preset": "calibrated"}
            if PMNIST["preset"] == "calibrated"
            else {"preset": "paper", **PMNIST["corruptions"][wc.corruption]}
        ),
        seed=PMNIST["seed"],
        images_per_class=PMNIST["images_per_class"],
        chunk_size=PMNIST["chunk_size"],
    log:
        "logs/pmnist/generate_{corruption}.log",
    benchmark:
        "benchmarks/pmnist/generate_{corruption}.tsv"
    threads: 1
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
        md=report(
            "results/pmnist/summary.md",
            caption="../report/pmnist_summary.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed MNIST",
        ),
        fig=report(
            "results/figures/pmnist/mean_intensity.png",
            caption="../report/pmnist_mean_intensity.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed MNIST",
        ),
        pdf="results/figures/pmnist/mean_intensity.pdf",
    log:
        "logs/pmnist/summary.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/pmnist/pmnist_summary.py"


rule pmnist_grid:
    input:
        PMNIST_PARTITIONS,
    output:
        fig=report(
            "results/figures/pmnist/sample_grid.png",
            caption="../report/pmnist_sample_grid.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed MNIST",
        ),
        pdf="results/figures/pmnist/sample_grid.pdf",
        per_class=directory("results/figures/pmnist/sample_grid_by_class"),
    params:
        grid=PMNIST["grid"],
    log:
        "logs/pmnist/grid.log",
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
        calibration=PMNIST["calibration"],
        corruptions=PMNIST["corruptions"],
        seed=PMNIST["seed"],
    log:
        "logs/pmnist/calibrate.log",
    benchmark:
        "benchmarks/pmnist/calibrate.tsv"
    threads: 2
    conda:
        ENV_TORCH
    script:
        "../../scripts/pmnist/pmnist_calibrate.py"


rule bench_pmnist:
    output:
        "results/bench/pmnist.md",
    log:
        "logs/pmnist/bench.log",
    benchmark:
        "benchmarks/pmnist/bench.tsv"
    threads: 2
    conda:
        ENV_CORE
    script:
        "../../bench/pmnist.py"
