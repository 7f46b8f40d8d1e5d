# Shared helpers for every rule file: target lists, input functions, constants.
# Each topic file defines a `<topic>_targets()` function; `all_targets()` joins them.

import os

import pandas as pd

ENV_CORE = "../../envs/core.yaml"
ENV_TORCH = "../../envs/torch.yaml"


RAW_DIR = config["data"]["raw_dir"].rstrip("/")


def present_raw_files(wildcards):
    """The manifest's raw files that exist: inputs of data_verify, so editing one reruns it.

    Missing files are not inputs (no rule owns data/raw); data_verify fetches them from the
    mirrors when data.allow_download is set, or stops naming them.
    """
    manifest = pd.read_csv(config["data"]["manifest"], sep="\t", comment="#", dtype=str)
    paths = [f"{RAW_DIR}/{path}" for path in manifest["path"]]
    return [path for path in paths if os.path.exists(path)]


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
