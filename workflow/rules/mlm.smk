# mlm: the Misclassification Likelihood Matrix (paper 004, Sections 3-4).
# train the CNN once -> softmax per partition (train, test, each perturbed partition)
# -> centroids + K-Means (Table 1, Figures 3-4) -> distance/likelihood matrices (Figure 2,
# per level, per corruption, mean/std) -> accuracy tables and figures (Figures 1, 5, 6, 7).
# Resources (threads, mem_mb, runtime in minutes): measured benchmarks/ peaks x 1.5 + 500 MB
# and wall times x 3, at least 1000 MB and 5 minutes (CONTRIBUTING.md, Resources).
# Priorities: the critical path of a whole run is training, then inference (every softmax
# waits for the CNN), so mlm_train / mlm_model_file go first as soon as the data are ready,
# and mlm_infer before the jobs that do not feed it (pmnist.smk gives the partitions 50).

from reliquant.mlm.reproduction.settings import check_settings

MLM = config["mlm"]
MLM_CODE = code_digest("mlm")
mlm_report = topic_report("MLM (paper 004)")
# Corruption partitions scored: mlm.perturbed.corruptions, else every pmnist corruption.
MLM_CORRUPTIONS = list(MLM["perturbed"]["corruptions"] or PMNIST_CORRUPTIONS)
# The clean partition plus every corruption partition of results/pmnist/.
MLM_PERTURBED = [MLM["perturbed"]["clean_partition"]] + MLM_CORRUPTIONS
MLM_PERTURBED_SOFTMAX = expand("results/mlm/softmax/{p}.parquet", p=MLM_PERTURBED)
MLM_SOURCES = {
    "train": "results/data/mnist_train.parquet",
    "test": "results/data/mnist_test.parquet",
}

# The topic's final outputs (collected by all_targets()).
MLM_TARGETS = [
    "results/mlm/training_log.md",
    "results/mlm/table1_centroid_shift.md",
    "results/mlm/misclustered.parquet",
    "results/mlm/matrices.parquet",
    "results/mlm/accuracy.md",
    "results/mlm/paper_comparison.parquet",
    "results/mlm/paper_claims.parquet",
    "results/figures/mlm/figure1_confusion_matrix.png",
    "results/figures/mlm/figure2_mlm.png",
    "results/figures/mlm/figure3_misclustered_softmax.png",
    "results/figures/mlm/figure4_misclustered_distances.png",
    "results/figures/mlm/figure5_accuracy_by_level.png",
    "results/figures/mlm/figure6_pixelation.png",
    "results/figures/mlm/figure7_accuracy_heatmap.png",
    "results/figures/mlm/mlm_mean_std.png",
    "results/figures/mlm/mlm_per_level.png",
]


rule mlm:
    input:
        MLM_TARGETS,


# mlm.model.source: train the CNN here (rule mlm_train, default), or read the user's state dict
# of the paper's CNN (rule mlm_model_file). Both write results/mlm/cnn.pt and the training log;
# the ruleorder picks the configured one. A missing file is an error here: Snakemake would
# otherwise fall back to training. A wrong digest is one too, so it stops the run before any
# job (rule mlm_model_file checks it again, with the architecture, when it reads the file).
check_settings(MLM, Path.cwd())
if MLM["model"]["source"] == "file":

    ruleorder: mlm_model_file > mlm_train

else:

    ruleorder: mlm_train > mlm_model_file


rule mlm_train:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    output:
        model="results/mlm/cnn.pt",
        log="results/mlm/training_log.parquet",
        md="results/mlm/training_log.md",
        html=mlm_report(
            "results/mlm/training_log.html",
            "mlm_training_log",
            "Training",
            name="CNN training log: loss and accuracy per epoch",
        ),
    params:
        code=MLM_CODE,
        train=config["mlm"]["train"],
        seed=config["mlm"]["seed"],
        device=config["mlm"]["device"],
        # only the two numbers the training report sets beside ours
        paper_accuracy={
            key: config["mlm"]["paper"][key] for key in ["train_accuracy", "test_accuracy"]
        },
    log:
        "logs/mlm/train.log",
    benchmark:
        "benchmarks/mlm/train.tsv"
    priority: 100
    threads: config["mlm"]["threads"]
    resources:
        mem_mb=3500,
        runtime=9,
        gpu=config["mlm"]["gpus_per_job"],
    conda:
        ENV_TORCH
    script:
        "../../scripts/mlm/mlm_train.py"


# mlm.model.source file: the user's state dict of the paper's CNN replaces training; the
# training log says "not trained here" (NaN accuracies), so every consumer runs unchanged.
rule mlm_model_file:
    input:
        # train: no input (never chosen, see the ruleorder above)
        weights=MLM["model"].get("path", []),
    output:
        model="results/mlm/cnn.pt",
        log="results/mlm/training_log.parquet",
        md="results/mlm/training_log.md",
        html=mlm_report(
            "results/mlm/training_log.html",
            "mlm_training_log",
            "Training",
            name="CNN weights read from a file (not trained here)",
        ),
    params:
        code=MLM_CODE,
        model=config["mlm"]["model"],
    log:
        "logs/mlm/model_file.log",
    benchmark:
        "benchmarks/mlm/model_file.tsv"
    priority: 100
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_TORCH
    script:
        "../../scripts/mlm/mlm_model_file.py"


rule mlm_infer:
    input:
        model="results/mlm/cnn.pt",
        # an MNIST split or a perturbed-MNIST partition
        images=lambda wc: MLM_SOURCES.get(wc.partition, f"results/pmnist/{wc.partition}.parquet"),
    output:
        "results/mlm/softmax/{partition}.parquet",
    params:
        code=MLM_CODE,
        device=config["mlm"]["device"],
        n_images=lambda wc: (
            config["mlm"]["train"]["n_images"] if wc.partition == "train" else None
        ),
        # changes the float rounding of the convolutions (batch and chunk sizes do not)
        channels_last=config["mlm"]["infer"]["channels_last"],
        # a perturbed partition must hold its own corruption (checked row by row)
        corruption=lambda wc: None if wc.partition in MLM_SOURCES else wc.partition,
    log:
        "logs/mlm/infer_{partition}.log",
    benchmark:
        "benchmarks/mlm/infer_{partition}.tsv"
    wildcard_constraints:
        partition="[a-z0-9_]+",
    priority: 40
    threads: config["mlm"]["threads"]
    resources:
        mem_mb=2500,
        runtime=5,
        gpu=config["mlm"]["gpus_per_job"],
    conda:
        ENV_TORCH
    script:
        "../../scripts/mlm/mlm_infer.py"


rule mlm_centroids:
    input:
        "results/mlm/softmax/train.parquet",
    output:
        centroids="results/mlm/centroids.parquet",
        table1="results/mlm/table1_centroid_shift.parquet",
        table1_md="results/mlm/table1_centroid_shift.md",
        table1_html=mlm_report(
            "results/mlm/table1_centroid_shift.html",
            "mlm_table1",
            "Centroids",
            name="Table 1: centroid shift under K-Means",
        ),
        misclustered="results/mlm/misclustered.parquet",
    params:
        code=MLM_CODE,
        kmeans=config["mlm"]["kmeans"],
        seed=config["mlm"]["seed"],
        paper_shift=config["mlm"]["paper"]["centroid_shift"],
    log:
        "logs/mlm/centroids.log",
    benchmark:
        "benchmarks/mlm/centroids.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_centroids.py"


rule mlm_fig_misclustered:
    input:
        misclustered="results/mlm/misclustered.parquet",
        centroids="results/mlm/centroids.parquet",
        train="results/data/mnist_train.parquet",
    output:
        fig3=mlm_report(
            "results/figures/mlm/figure3_misclustered_softmax.png",
            "mlm_figure3",
            "Centroids",
            name="Figure 3: softmax of two misclustered training images",
        ),
        fig3_pdf="results/figures/mlm/figure3_misclustered_softmax.pdf",
        fig4=mlm_report(
            "results/figures/mlm/figure4_misclustered_distances.png",
            "mlm_figure4",
            "Centroids",
            name="Figure 4: distances of the misclustered images to the centroids",
        ),
        fig4_pdf="results/figures/mlm/figure4_misclustered_distances.pdf",
    params:
        code=MLM_CODE,
        examples=config["mlm"]["figures"]["misclustered_examples"],
    log:
        "logs/mlm/fig_misclustered.log",
    benchmark:
        "benchmarks/mlm/fig_misclustered.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_fig_misclustered.py"


rule mlm_matrices:
    input:
        centroids="results/mlm/centroids.parquet",
        softmax=MLM_PERTURBED_SOFTMAX,
    output:
        "results/mlm/matrices.parquet",
    params:
        code=MLM_CODE,
        perturbed=config["mlm"]["perturbed"],
    log:
        "logs/mlm/matrices.log",
    benchmark:
        "benchmarks/mlm/matrices.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_matrices.py"


rule mlm_fig_matrices:
    input:
        matrices="results/mlm/matrices.parquet",
        test="results/mlm/softmax/test.parquet",
    output:
        fig1=mlm_report(
            "results/figures/mlm/figure1_confusion_matrix.png",
            "mlm_figure1",
            "Matrices",
            name="Figure 1: confusion matrix on the clean test set",
        ),
        fig1_pdf="results/figures/mlm/figure1_confusion_matrix.pdf",
        fig2=mlm_report(
            "results/figures/mlm/figure2_mlm.png",
            "mlm_figure2",
            "Matrices",
            name="Figure 2: Misclassification Likelihood Matrix",
        ),
        fig2_pdf="results/figures/mlm/figure2_mlm.pdf",
        mean_std=mlm_report(
            "results/figures/mlm/mlm_mean_std.png",
            "mlm_mean_std",
            "Matrices",
            name="MLM mean and standard deviation over levels (eqs. 9-10)",
        ),
        per_level=mlm_report(
            "results/figures/mlm/mlm_per_level.png",
            "mlm_per_level",
            "Matrices",
            name="MLM of each perturbation level (eqs. 7-8)",
        ),
        confusion="results/mlm/confusion_test.parquet",
    params:
        code=MLM_CODE,
    log:
        "logs/mlm/fig_matrices.log",
    benchmark:
        "benchmarks/mlm/fig_matrices.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_fig_matrices.py"


rule mlm_accuracy:
    input:
        softmax=MLM_PERTURBED_SOFTMAX,
        training_log="results/mlm/training_log.parquet",
    output:
        table="results/mlm/accuracy.parquet",
        md="results/mlm/accuracy.md",
        html=mlm_report(
            "results/mlm/accuracy.html",
            "mlm_accuracy_table",
            "Perturbed accuracy",
            name="Accuracy per corruption and level, beside the paper's",
        ),
        fig5=mlm_report(
            "results/figures/mlm/figure5_accuracy_by_level.png",
            "mlm_figure5",
            "Perturbed accuracy",
            name="Figure 5: accuracy against perturbation level",
        ),
        fig5_pdf="results/figures/mlm/figure5_accuracy_by_level.pdf",
        fig7=mlm_report(
            "results/figures/mlm/figure7_accuracy_heatmap.png",
            "mlm_figure7",
            "Perturbed accuracy",
            name="Figure 7: accuracy heatmap, corruption x level",
        ),
        fig7_pdf="results/figures/mlm/figure7_accuracy_heatmap.pdf",
    params:
        code=MLM_CODE,
        paper=config["mlm"]["paper"],
        clean_partition=config["mlm"]["perturbed"]["clean_partition"],
    log:
        "logs/mlm/accuracy.log",
    benchmark:
        "benchmarks/mlm/accuracy.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_accuracy.py"


rule mlm_fig_pixelation:
    input:
        images=f"results/pmnist/{config['mlm']['figures']['pixelation_corruption']}.parquet",
        softmax=MLM_PERTURBED_SOFTMAX,
    output:
        fig6=mlm_report(
            "results/figures/mlm/figure6_pixelation.png",
            "mlm_figure6",
            "Perturbed accuracy",
            name="Figure 6: pixelation levels of a class-5 digit, mean softmax",
        ),
        fig6_pdf="results/figures/mlm/figure6_pixelation.pdf",
    params:
        code=MLM_CODE,
        figures=config["mlm"]["figures"],
        clean_partition=config["mlm"]["perturbed"]["clean_partition"],
    log:
        "logs/mlm/fig_pixelation.log",
    benchmark:
        "benchmarks/mlm/fig_pixelation.tsv"
    threads: 1
    resources:
        mem_mb=1500,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_fig_pixelation.py"


rule mlm_paper:
    input:
        accuracy="results/mlm/accuracy.parquet",
        training_log="results/mlm/training_log.parquet",
        table1="results/mlm/table1_centroid_shift.parquet",
    output:
        comparison="results/mlm/paper_comparison.parquet",
        claims="results/mlm/paper_claims.parquet",
        notes="results/mlm/paper_notes.md",
    params:
        code=MLM_CODE,
        paper=config["mlm"]["paper"],
        clean_partition=config["mlm"]["perturbed"]["clean_partition"],
    log:
        "logs/mlm/paper.log",
    benchmark:
        "benchmarks/mlm/paper.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_paper.py"


rule bench_mlm:
    input:
        train="results/data/mnist_train.parquet",
    output:
        "results/bench/mlm.md",
    params:
        code=MLM_CODE,
    log:
        "logs/mlm/bench.log",
    benchmark:
        "benchmarks/mlm/bench.tsv"
    threads: config["mlm"]["bench"]["threads"]
    resources:
        mem_mb=4000,
        runtime=15,
    conda:
        ENV_TORCH
    script:
        "../../bench/mlm.py"
