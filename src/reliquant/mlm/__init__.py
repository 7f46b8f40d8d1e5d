"""The Misclassification Likelihood Matrix (paper 004, Sikar et al.).

Modules
-------
matrices   class centroids, K-Means refinement, distance and likelihood matrices
cnn        the CNN of Section 3.1 and its training (imports torch)
inference  batched softmax on the GPU when present, else the CPU (imports torch)
figures    the paper's Figures 1-7

The torch-based names (``train_cnn``, ``load_model``, ``predict_softmax``) are imported on
first use, so the matrix functions work on any classifier's softmax outputs without torch.
"""

from importlib import import_module
from typing import Any

from reliquant.mlm.matrices import (
    class_centroids,
    distances_to_centroids,
    likelihood_matrix,
    min_distance_matrix,
    refine_centroids,
)

_LAZY = {
    "build_cnn": "reliquant.mlm.cnn",
    "load_model": "reliquant.mlm.cnn",
    "train_cnn": "reliquant.mlm.cnn",
    "predict_softmax": "reliquant.mlm.inference",
}

__all__ = [
    "build_cnn",
    "class_centroids",
    "distances_to_centroids",
    "likelihood_matrix",
    "load_model",
    "min_distance_matrix",
    "predict_softmax",
    "refine_centroids",
    "train_cnn",
]


def __getattr__(name: str) -> Any:
    """Import the torch-based names lazily (PEP 562)."""
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reliquant.mlm' has no attribute {name!r}")
