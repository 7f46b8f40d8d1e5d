"""The CNN's logits and penultimate features on the compare subsample (issue 44, item 4).

The mlm topic keeps only the softmax of paper 004's CNN (eq. 1, ``p = softmax(z)``). The
failure-detection comparators need what comes before it: the logits ``z = fc2(h)`` (maximum
logit and energy, Liu et al. 2020) and the penultimate features ``h = relu(fc1(...))`` (128
values; trust score, Mahalanobis distance, k-NN distance). :func:`cnn_outputs` computes both
for the compare topic's images only (the subsample and a training subsample), so the mlm
topic's tables do not grow: forward hooks on ``fc1`` and ``fc2`` read them from the model's
own ``forward`` (``relu`` applied to ``fc1``'s output, as ``MnistCNN.forward`` does), in
passes of :func:`reliquant.mlm.inference.pass_rows` rows padded with blank images, as
:func:`reliquant.mlm.predict_softmax` runs them: on the CPU a row's outputs do not depend on
the batch it lands in. :func:`check_logits` refuses logits whose softmax is not the stored
softmax (a model file that is not the one the mlm topic scored with).

Public API: :data:`SOFTMAX_TOLERANCE`, :class:`CnnRepresentations`, :func:`cnn_outputs`, :func:`check_logits`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SOFTMAX_TOLERANCE", "CnnRepresentations", "check_logits", "cnn_outputs"]

#: Largest absolute difference allowed between ``softmax(logits)`` and the stored softmax
#: (float32 rounding of two computations of the same values; a CPU vs GPU run differs by
#: about 1e-7).
SOFTMAX_TOLERANCE = 1e-5


@dataclass(frozen=True, eq=False)
class CnnRepresentations:
    """What the CNN's feature- and logit-space comparators need: ``logits`` ``(n, 10)`` and
    ``features`` ``(n, d)`` of the subsample's images, and the penultimate features
    ``train_features`` ``(N, d)`` of training images with their labels ``train_labels``."""

    logits: np.ndarray
    features: np.ndarray
    train_features: np.ndarray
    train_labels: np.ndarray


def cnn_outputs(
    model: Any, images_uint8: np.ndarray, *, batch_size: int = 512, device: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(logits, features)`` float32 of paper 004's CNN (:class:`reliquant.mlm.cnn.MnistCNN`)
    for uint8 images ``(n, 28, 28)``: ``logits = fc2(h)`` ``(n, 10)``, the input of its
    log-softmax (``p_i = exp(z_i) / sum_j exp(z_j)``, paper 004 eq. 1), and ``features = h =
    relu(fc1(flatten(conv blocks)))`` ``(n, 128)``, read by forward hooks during the model's
    own ``forward`` on images normalised as in training (``u/255*2 - 1``,
    :func:`reliquant.mlm.cnn.normalise_images`), under ``torch.inference_mode`` in
    channels-last layout, every pass of :func:`reliquant.mlm.inference.pass_rows` rows."""
    import torch

    from reliquant.mlm.cnn import MnistCNN, normalise_images
    from reliquant.mlm.determinism import full_precision_cuda
    from reliquant.mlm.inference import pass_rows

    if not isinstance(model, MnistCNN):
        raise TypeError(f"model must be paper 004's MnistCNN; got {type(model).__name__}")
    images = np.asarray(images_uint8)
    if device is None:
        device = next(model.parameters()).device
    device = torch.device(device)
    model = model.to(device=device, memory_format=torch.channels_last).eval()
    rows = pass_rows(batch_size, device)
    step = rows if device.type == "cpu" else batch_size
    seen: dict[str, torch.Tensor] = {}
    hooks = [
        model.fc1.register_forward_hook(lambda _m, _i, out: seen.__setitem__("fc1", out)),
        model.fc2.register_forward_hook(lambda _m, _i, out: seen.__setitem__("fc2", out)),
    ]
    logits = np.empty((len(images), model.fc2.out_features), dtype=np.float32)
    features = np.empty((len(images), model.fc1.out_features), dtype=np.float32)
    try:
        with torch.inference_mode(), full_precision_cuda():
            for start in range(0, len(images), step):
                batch = images[start : start + step]
                pad = np.zeros((rows - len(batch), *images.shape[1:]), dtype=np.uint8)
                x = normalise_images(np.concatenate([batch, pad]) if len(pad) else batch)
                model(x.to(device).contiguous(memory_format=torch.channels_last))
                end = start + len(batch)
                logits[start:end] = seen["fc2"][: len(batch)].float().cpu().numpy()
                features[start:end] = torch.relu(seen["fc1"][: len(batch)]).float().cpu().numpy()
    finally:
        for hook in hooks:
            hook.remove()
    return logits, features


def check_logits(logits: np.ndarray, proba: np.ndarray, *, what: str = "the subsample") -> None:
    """Raise a ValueError when ``softmax(logits)`` differs from the stored probabilities
    ``proba`` by more than :data:`SOFTMAX_TOLERANCE` anywhere (the logits are then not those of
    the model whose softmax the table holds)."""
    from scipy.special import softmax  # imported here: compare jobs do not load scipy for it

    logits = np.asarray(logits, dtype=np.float64)
    proba = np.asarray(proba, dtype=np.float64)
    if logits.shape != proba.shape:
        raise ValueError(
            f"the CNN's logits of {what} have shape {logits.shape}; its softmax {proba.shape}"
        )
    gap = float(np.abs(softmax(logits, axis=1) - proba).max(initial=0.0))
    if not gap <= SOFTMAX_TOLERANCE:
        raise ValueError(
            f"softmax of the CNN's logits of {what} differs from the stored softmax by {gap:.3g} "
            f"(> {SOFTMAX_TOLERANCE:g}): is results/mlm/cnn.pt the model the mlm topic's softmax "
            "partitions were scored with?"
        )
