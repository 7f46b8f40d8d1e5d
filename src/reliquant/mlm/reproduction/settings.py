"""Checks of the ``mlm`` config section that Snakemake cannot express, run before any job.

``mlm.model.source: file`` replaces training by the user's state dict of the paper's CNN
(rule ``mlm_model_file``). The file must exist (else Snakemake would fall back to training)
and match its digest ``mlm.model.sha256``, so a changed file stops the run before any job.
The architecture needs torch and is checked when the rule reads the file
(:func:`reliquant.mlm.cnn.load_model_file`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reliquant.core.io import file_sha256

__all__ = ["check_settings"]


def check_settings(mlm: Mapping[str, Any], root: str | os.PathLike) -> None:
    """Raise a ValueError naming the key at fault when ``mlm.model`` names a bad weights file.

    ``mlm`` is the ``mlm`` config section; ``root`` the folder relative paths are taken from
    (the workflow's working directory). Nothing is checked unless ``mlm.model.source`` is
    ``file``; then ``mlm.model.path`` must be a file whose SHA-256 is ``mlm.model.sha256``
    (either case).
    """
    model = mlm["model"]
    if model["source"] != "file":
        return
    path = Path(root) / model["path"]
    if not path.is_file():
        raise ValueError(
            f"mlm.model.path: no CNN weights file at {model['path']} (relative to {root})"
        )
    digest = file_sha256(path)
    if digest != model["sha256"].lower():
        raise ValueError(
            f"mlm.model.sha256: {model['sha256']} is not the SHA-256 of "
            f"mlm.model.path {model['path']} "
            f"({digest}); the file changed or the digest is wrong"
        )
