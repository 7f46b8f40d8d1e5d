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
