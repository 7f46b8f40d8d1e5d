# mlm: the Misclassification Likelihood Matrix (paper 004, Sections 3-4).
# train the CNN once -> softmax per partition (train, test, each perturbed partition)
# -> centroids + K-Means (Table 1, Figures 3-4) -> distance/likelihood matrices (Figure 2,
# per level, per corruption, mean/std) -> accuracy tables and figures (Figures 1, 5, 6, 7).


rule mlm:
    input:
        mlm_targets(),


rule mlm_train:
    input:
        train="results/data/mnist_train.parquet",
        test="results/data/mnist_test.parquet",
    output:
        model="results/mlm/cnn.pt",
        log="results/mlm/training_log.parquet",
        md=report(
            "results/mlm/training_log.md",
            caption="../report/mlm_training_log.rst",
            category="MLM (paper 004)",
            subcategory="Training",
        ),
    params:
        train=config["mlm"]["train"],
        seed=config["mlm"]["seed"],
        device=config["mlm"]["device"],
        paper=config["mlm"]["paper_reference"],
    log:
        "logs/mlm/train.log",
    benchmark:
        "benchmarks/mlm/train.tsv"
    threads: config["mlm"]["threads"]
    resources:
        gpu=config["mlm"]["gpus_per_job"],
    conda:
        ENV_TORCH
    script:
        "../../scripts/mlm/mlm_train.py"


rule mlm_infer:
    input:
        model="results/mlm/cnn.pt",
        images=mlm_partition_source,
    output:
        "results/mlm/softmax/{partition}.parquet",
    params:
        infer=config["mlm"]["infer"],
        device=config["mlm"]["device"],
        n_images=lambda wc: (
            config["mlm"]["train"]["n_images"] if wc.partition == "train" else None
        ),
    log:
        "logs/mlm/infer_{partition}.log",
    benchmark:
        "benchmarks/mlm/infer_{partition}.tsv"
    wildcard_constraints:
        partition="[a-z0-9_]+",
    threads: config["mlm"]["threads"]
    resources:
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
        table1_md=report(
            "results/mlm/table1_centroid_shift.md",
            caption="../report/mlm_table1.rst",
            category="MLM (paper 004)",
            subcategory="Centroids",
        ),
        misclustered="results/mlm/misclustered.parquet",
    params:
        kmeans=config["mlm"]["kmeans"],
        seed=config["mlm"]["seed"],
        paper_shift=config["mlm"]["paper_reference"]["centroid_shift"],
    log:
        "logs/mlm/centroids.log",
    benchmark:
        "benchmarks/mlm/centroids.tsv"
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
        fig3=report(
            "results/figures/mlm/figure3_misclustered_softmax.png",
            caption="../report/mlm_figure3.rst",
            category="MLM (paper 004)",
            subcategory="Centroids",
        ),
        fig3_pdf="results/figures/mlm/figure3_misclustered_softmax.pdf",
        fig4=report(
            "results/figures/mlm/figure4_misclustered_distances.png",
            caption="../report/mlm_figure4.rst",
            category="MLM (paper 004)",
            subcategory="Centroids",
        ),
        fig4_pdf="results/figures/mlm/figure4_misclustered_distances.pdf",
    params:
        examples=config["mlm"]["figures"]["misclustered_examples"],
    log:
        "logs/mlm/fig_misclustered.log",
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
        perturbed=config["mlm"]["perturbed"],
    log:
        "logs/mlm/matrices.log",
    benchmark:
        "benchmarks/mlm/matrices.tsv"
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_matrices.py"


rule mlm_fig_matrices:
    input:
        matrices="results/mlm/matrices.parquet",
        test="results/mlm/softmax/test.parquet",
    output:
        fig1=report(
            "results/figures/mlm/figure1_confusion_matrix.png",
            caption="../report/mlm_figure1.rst",
            category="MLM (paper 004)",
            subcategory="Matrices",
        ),
        fig1_pdf="results/figures/mlm/figure1_confusion_matrix.pdf",
        fig2=report(
            "results/figures/mlm/figure2_mlm.png",
            caption="../report/mlm_figure2.rst",
            category="MLM (paper 004)",
            subcategory="Matrices",
        ),
        fig2_pdf="results/figures/mlm/figure2_mlm.pdf",
        mean_std=report(
            "results/figures/mlm/mlm_mean_std.png",
            caption="../report/mlm_mean_std.rst",
            category="MLM (paper 004)",
            subcategory="Matrices",
        ),
        per_level=report(
            "results/figures/mlm/mlm_per_level.png",
            caption="../report/mlm_per_level.rst",
            category="MLM (paper 004)",
            subcategory="Matrices",
        ),
        confusion="results/mlm/confusion_test.parquet",
    log:
        "logs/mlm/fig_matrices.log",
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
        comparison="results/mlm/paper_comparison.parquet",
        md=report(
            "results/mlm/accuracy.md",
            caption="../report/mlm_accuracy_table.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed accuracy",
        ),
        fig5=report(
            "results/figures/mlm/figure5_accuracy_by_level.png",
            caption="../report/mlm_figure5.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed accuracy",
        ),
        fig5_pdf="results/figures/mlm/figure5_accuracy_by_level.pdf",
        fig7=report(
            "results/figures/mlm/figure7_accuracy_heatmap.png",
            caption="../report/mlm_figure7.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed accuracy",
        ),
        fig7_pdf="results/figures/mlm/figure7_accuracy_heatmap.pdf",
    params:
        paper=config["mlm"]["paper_reference"],
        clean_partition=config["mlm"]["perturbed"]["clean_partition"],
    log:
        "logs/mlm/accuracy.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_accuracy.py"


rule mlm_fig_pixelation:
    input:
        images=f"results/pmnist/{config['mlm']['figures']['pixelation_corruption']}.parquet",
        softmax=MLM_PERTURBED_SOFTMAX,
    output:
        fig6=report(
            "results/figures/mlm/figure6_pixelation.png",
            caption="../report/mlm_figure6.rst",
            category="MLM (paper 004)",
            subcategory="Perturbed accuracy",
        ),
        fig6_pdf="results/figures/mlm/figure6_pixelation.pdf",
    params:
        figures=config["mlm"]["figures"],
        clean_partition=config["mlm"]["perturbed"]["clean_partition"],
    log:
        "logs/mlm/fig_pixelation.log",
    conda:
        ENV_CORE
    script:
        "../../scripts/mlm/mlm_fig_pixelation.py"


rule bench_mlm:
    input:
        train="results/data/mnist_train.parquet",
    output:
        "results/bench/mlm.md",
    log:
        "logs/mlm/bench.log",
    threads: 2
    conda:
        ENV_TORCH
    script:
        "../../bench/mlm.py"
