# Shared helpers: constants, input functions and the target lists of every topic.
# Topic files hold rules only; their final outputs are listed here, joined by all_targets().

import os

import pandas as pd

ENV_CORE = "../../envs/core.yaml"
ENV_TORCH = "../../envs/torch.yaml"


def present_raw_files(wildcards):
    """The manifest's raw files that exist: inputs of data_verify, so editing one reruns it.

    Missing files are not inputs (no rule owns data/raw); data_verify fetches them from the
    mirrors when data.allow_download is set, or stops naming them.
    """
    manifest_path = config["data"]["manifest"]
    manifest = pd.read_csv(manifest_path, sep="\t", comment="#", dtype=str)
    raw_dir = os.path.dirname(manifest_path)
    paths = [os.path.join(raw_dir, path) for path in manifest["path"]]
    return [path for path in paths if os.path.exists(path)]


def data_targets():
    return [
        "results/data/mnist_train.parquet",
        "results/data/mnist_test.parquet",
        "results/data/pima.parquet",
        "results/data/iris.parquet",
    ]


# --- nbc ---------------------------------------------------------------------------------
wildcard_constraints:
    nbc_n=r"\d+",
    nbc_g=r"[0-9.e+-]+",


def nbc_cells():
    """(n_train, gamma text) of every cell of the configured grid."""
    return [
        (int(n), f"{float(g):g}")
        for n in config["nbc"]["grid"]["n_train"]
        for g in config["nbc"]["grid"]["gamma"]
    ]


def nbc_curve_files():
    return [f"results/nbc/curves/n{n}_g{g}.parquet" for n, g in nbc_cells()]


def nbc_targets():
    return [
        "results/nbc/auc.parquet",
        "results/nbc/auc.md",
        "results/figures/nbc/mean_curves.png",
        "results/figures/nbc/mean_curves.pdf",
        "results/figures/nbc/std_curves.png",
        "results/figures/nbc/std_curves.pdf",
    ]


# --- trees -------------------------------------------------------------------------------
wildcard_constraints:
    trees_size=r"\d+",


TREES = config["trees"]
# Table 3: resized MNIST size -> decision-tree depths (the rows of the paper's table).
TREES_TABLE3_DEPTHS = {int(m["size"]): list(m["depths"]) for m in TREES["table3"]["models"]}
# Table 3 parameters shared by every size (everything but the model list).
TREES_TABLE3_SETTINGS = {k: v for k, v in TREES["table3"].items() if k != "models"}
# Topic-wide parameters every robustness job uses.
TREES_COMMON = {k: TREES[k] for k in ("seed", "engine_tol", "prune_level", "mnist_resize")}
TREES_FIGS = "results/figures/trees"
TREES_TARGETS = [
    "results/trees/table1.parquet",
    "results/trees/table1.md",
    f"{TREES_FIGS}/table1_scatter.png",
    "results/trees/table2.parquet",
    "results/trees/table2.md",
    f"{TREES_FIGS}/table2_runtimes.png",
    "results/trees/table3.parquet",
    "results/trees/table3.md",
    f"{TREES_FIGS}/table3_scatter.png",
    "results/trees/pima.parquet",
    "results/trees/pima.md",
    f"{TREES_FIGS}/pima_hist.png",
    f"{TREES_FIGS}/pima_hist.pdf",
    "results/trees/iris_mixed.parquet",
    "results/trees/iris_mixed.md",
    f"{TREES_FIGS}/iris_mixed.png",
    f"{TREES_FIGS}/iris_mixed.pdf",
    "results/trees/summary.md",
    "results/trees/comparison.parquet",
    "results/trees/claims.parquet",
]
# The topic's final outputs for the current config (collected by all_targets()).


def trees_targets():
    return list(TREES_TARGETS)


# --- pmnist ------------------------------------------------------------------------------
PMNIST = config["pmnist"]
PMNIST_CORRUPTIONS = list(PMNIST["corruptions"])


wildcard_constraints:
    corruption="|".join(PMNIST_CORRUPTIONS),


# The 13 partition files: clean (level 0) and one per corruption (levels 1..10).
PMNIST_PARTITIONS = ["results/pmnist/clean.parquet"] + expand(
    "results/pmnist/{corruption}.parquet", corruption=PMNIST_CORRUPTIONS
)


def pmnist_targets():
    return PMNIST_PARTITIONS + [
        "results/pmnist/summary.parquet",
        "results/pmnist/summary.md",
        "results/figures/pmnist/sample_grid.png",
        "results/figures/pmnist/mean_intensity.png",
    ]


# --- mlm ---------------------------------------------------------------------------------
MLM = config["mlm"]
# Corruption partitions scored: mlm.perturbed.corruptions, else every pmnist corruption.
MLM_CORRUPTIONS = list(MLM["perturbed"]["corruptions"] or PMNIST_CORRUPTIONS)
# The clean partition plus every corruption partition of results/pmnist/.
MLM_PERTURBED = [MLM["perturbed"]["clean_partition"]] + MLM_CORRUPTIONS
MLM_PERTURBED_SOFTMAX = expand("results/mlm/softmax/{p}.parquet", p=MLM_PERTURBED)
MLM_SOURCES = {
    "train": "results/data/mnist_train.parquet",
    "test": "results/data/mnist_test.parquet",
}


def mlm_partition_source(wildcards):
    """The images of one partition: an MNIST split or a perturbed-MNIST partition."""
    return MLM_SOURCES.get(wildcards.partition, f"results/pmnist/{wildcards.partition}.parquet")


def mlm_targets():
    return [
        "results/mlm/training_log.md",
        "results/mlm/table1_centroid_shift.md",
        "results/mlm/misclustered.parquet",
        "results/mlm/matrices.parquet",
        "results/mlm/accuracy.md",
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


# --- report ------------------------------------------------------------------------------
# Section titles of the cross-paper summary, keyed by the paper files in shared/papers.
PAPER_TITLES = {
    "000": "Robustness quantification for Naive Bayes (paper 000)",
    "001": "Probabilistic robustness of tree ensembles, first version (paper 001)",
    "002": "Probabilistic robustness of tree ensembles, revised (paper 002)",
    "004": "Misclassification Likelihood Matrix (paper 004)",
}
BENCH_TOPICS = ["nbc", "trees", "pmnist", "mlm"]


def report_targets():
    return ["results/summary.md"]


def all_targets():
    """Every final output of the workflow, in topic order."""
    return (
        data_targets()
        + nbc_targets()
        + trees_targets()
        + pmnist_targets()
        + mlm_targets()
        + report_targets()
    )
