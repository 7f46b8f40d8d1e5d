"""The Misclassification Likelihood Matrix (paper 004, Sikar et al.).

What a user calls lives here, at ``reliquant.mlm`` (:data:`__all__`): the matrix of any
K-class classifier from its softmax outputs in one call (:func:`misclassification_likelihood`,
inputs checked once there), its steps (class centroids and their K-Means refinement, the
distance and likelihood matrices, their mean and spread over levels), the softmax checks and
table, and the paper's CNN (build, train, load, :func:`predict_softmax`) with the CPU-kernel
pinning that makes it bit-identical across machines.

The code that reproduces the paper's run (the workflow's centroid tables and Table 1, the
accuracy tables, Figures 1-7, the paper's numbers beside ours and its claims, the check of
the ``mlm.model`` config, the generated doc blocks) lives in :mod:`reliquant.mlm.reproduction`;
nothing here imports it except ``custom`` (the workflow's ``custom:`` cases draw the paper's
heatmap).

Modules
-------
softmax      softmax checks, table columns, schema and row builder shared by every module (eq. 1)
centroids    class means, K-Means refinement, centroid shift, distances to centroids (eqs. 3-4)
matrices     nearest-distance and likelihood matrices per scope, mean/std over levels (eqs. 5-10)
likelihood   one call from any K-class softmax to centroids, D and L (eqs. 3-8)
cnn          the CNN of Section 3.1 and its training (imports torch)
inference    batched softmax on the GPU when present, else the CPU (imports torch)
pooling      2x2 max pooling compiled (numba), values and gradients F.max_pool2d's bit for bit
first_conv   conv1's weight and bias gradients compiled, oneDNN's summation order bit for bit
second_conv  conv2's weight and bias gradients compiled (one-thread training), likewise
checked_conv the compiled gradients' first-use check against PyTorch, and the fallback
determinism  pin the CPU kernels (ATen, oneDNN, MKL) before torch is imported, so training and
             inference are bit-identical across x86-64 CPUs (``pin_cpu_kernels``)
custom       a workflow ``custom:`` case of kind mlm: D and L from a softmax table
reproduction the paper's tables, figures, claims and doc blocks (see its docstring)

The torch-based names (``build_cnn``, ``train_cnn``, ``load_model``, ``load_model_file``,
``predict_softmax``, ``score_image_file``) are imported on first use, so the matrix functions
work on any classifier's softmax outputs without torch.
"""

from importlib import import_module
from typing import Any

from reliquant.mlm.centroids import (
    centroid_shift,
    class_centroids,
    distances_to_centroids,
    refine_centroids,
)
from reliquant.mlm.determinism import describe_cpu_kernels, pin_cpu_kernels
from reliquant.mlm.likelihood import MLMResult, misclassification_likelihood
from reliquant.mlm.matrices import (
    level_mean_std,
    likelihood_matrix,
    matrices_long,
    min_distance_matrix,
)
from reliquant.mlm.softmax import SOFTMAX_SCHEMA, check_labels, check_softmax, softmax_frame

_LAZY = {
    "build_cnn": "reliquant.mlm.cnn",
    "load_model": "reliquant.mlm.cnn",
    "load_model_file": "reliquant.mlm.cnn",
    "train_cnn": "reliquant.mlm.cnn",
    "predict_softmax": "reliquant.mlm.inference",
    "score_image_file": "reliquant.mlm.inference",
}

__all__ = [
    "MLMResult",
    "SOFTMAX_SCHEMA",
    "build_cnn",
    "centroid_shift",
    "check_labels",
    "check_softmax",
    "class_centroids",
    "describe_cpu_kernels",
    "distances_to_centroids",
    "level_mean_std",
    "likelihood_matrix",
    "load_model",
    "load_model_file",
    "matrices_long",
    "min_distance_matrix",
    "misclassification_likelihood",
    "pin_cpu_kernels",
    "predict_softmax",
    "refine_centroids",
    "score_image_file",
    "softmax_frame",
    "train_cnn",
]


def __getattr__(name: str) -> Any:
    """Import the torch-based names lazily (PEP 562)."""
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reliquant.mlm' has no attribute {name!r}")
