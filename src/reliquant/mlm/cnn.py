"""The MNIST CNN of the MLM paper (paper 004, Sections 3.1 and 4.1): build, train, save, load.

Architecture (Section 3.1), 206,922 parameters::

    conv 1->16, 3x3, pad 1 -> ReLU -> max pool 2      (28x28 -> 14x14)
    conv 16->32, 3x3, pad 1 -> ReLU -> max pool 2     (14x14 -> 7x7)
    flatten (32*7*7 = 1568) -> fc 128 -> ReLU -> fc 10 -> log-softmax

Training (Sections 3.1, 4.1): inputs normalised to mean 0.5 and std 0.5 (``x = (u/255 - 0.5)
/ 0.5``, i.e. ``u/255*2 - 1`` in [-1, 1]), SGD with learning rate 0.01 and batch size 64,
cross-entropy (negative log-likelihood of the log-softmax output), 10 epochs.

Determinism: the weights are initialised under ``torch.manual_seed(block_int_seed(seed,
"mlm", "cnn_init"))`` inside a forked RNG state (the caller's global state is untouched), the
batches are drawn with ``torch.randperm`` from a separate ``torch.Generator`` seeded with
``block_int_seed(seed, "mlm", "cnn_shuffle")``, and ``torch.use_deterministic_algorithms``
is on while training. On the CPU with the same thread count, the same seed gives bit-identical
weights on the same machine. Across CPUs (AVX2 vs AVX-512, Intel vs AMD) only where the
process pinned its CPU kernels before importing torch
(:func:`reliquant.mlm.determinism.pin_cpu_kernels`, called first by the workflow scripts);
:func:`train_cnn` logs whether it did.
"""

from __future__ import annotations

import io
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import torch
from torch import nn
from torch.nn import functional as F
from tqdm.auto import tqdm

from reliquant.core.io import atomic_path, file_sha256, frame_to_markdown, seal_zip, verify_zip_seal
from reliquant.core.progress import show_progress
from reliquant.core.seeding import block_int_seed
from reliquant.mlm.determinism import describe_cpu_kernels, full_precision_cuda, pinned_level

__all__ = [
    "EXTERNAL_TRAINING_LOG_SCHEMA",
    "IMAGE_SIDE",
    "N_CLASSES",
    "N_PARAMETERS",
    "TRAINING_LOG_SCHEMA",
    "MnistCNN",
    "TrainResult",
    "build_cnn",
    "count_parameters",
    "external_model_markdown",
    "external_training_log",
    "load_model",
    "load_model_file",
    "normalise_images",
    "save_model",
    "train_cnn",
    "training_markdown",
]

log = logging.getLogger("reliquant.mlm.cnn")

#: Parameter count stated in paper 004, Section 3.1.
N_PARAMETERS = 206_922
N_CLASSES = 10
IMAGE_SIDE = 28

#: Columns of the per-epoch training log written by the workflow.
TRAINING_LOG_SCHEMA = pa.schema(
    [
        pa.field("epoch", pa.int32(), nullable=False),
        pa.field("loss", pa.float64(), nullable=False),
        pa.field("train_accuracy", pa.float64(), nullable=False),
        pa.field("test_accuracy", pa.float64()),
    ]
)
#: The training log of a model read from a file (config ``mlm.model.source: file``): the
#: columns of :data:`TRAINING_LOG_SCHEMA`, loss and accuracies null (not trained here).
EXTERNAL_TRAINING_LOG_SCHEMA = pa.schema(
    [field.with_nullable(field.name != "epoch") for field in TRAINING_LOG_SCHEMA]
)


class MnistCNN(nn.Module):
    """Two conv blocks and two fully connected layers; ``forward`` returns log-probabilities."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, N_CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: normalised images ``(n, 1, 28, 28)``; returns log-softmax ``(n, 10)``.

        Each conv block computes ``relu(max_pool(conv))``: value for value the paper's
        ``max_pool(relu(conv))`` (ReLU is monotone and a maximum rounds nothing), with a quarter
        of the ReLU work. The gradients are equal too: where a window's maximum is positive,
        both orders route its gradient to the same first maximum; elsewhere both give zero.
        The pooling is :func:`reliquant.mlm.pooling.max_pool_2x2`: ``F.max_pool2d(x, 2)`` bit
        for bit, values and gradients, compiled on the CPU; so are the weight and bias
        gradients of ``conv1`` (:func:`reliquant.mlm.first_conv.first_conv`) and, in
        one-thread training, of ``conv2`` (:func:`reliquant.mlm.second_conv.second_conv`),
        oneDNN's bit for bit (checked at first use, :mod:`reliquant.mlm.checked_conv`).
        """
        x = F.relu(_max_pool_2x2(_first_conv(self.conv1, x)))
        x = F.relu(_max_pool_2x2(_second_conv(self.conv2, x)))
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.log_softmax(self.fc2(x), dim=1)


def _first_conv(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)`` for the first layer, through :func:`reliquant.mlm.first_conv.first_conv`
    in CPU training (:func:`_compiled_conv`)."""
    return _compiled_conv("first_conv", conv, x)


def _second_conv(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)`` for the second layer, through :func:`reliquant.mlm.second_conv.second_conv`
    in CPU training (:func:`_compiled_conv`)."""
    return _compiled_conv("second_conv", conv, x)


def _compiled_conv(layer: str, conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """``conv(x)``; in CPU training through ``reliquant.mlm.<layer>.<layer>``, whose weight and
    bias gradients come from a compiled kernel (oneDNN's values, checked on first use),
    imported then (inference and GPU runs do not load numba for it)."""
    if x.device.type != "cpu" or not torch.is_grad_enabled():
        return conv(x)
    from importlib import import_module

    return getattr(import_module(f"reliquant.mlm.{layer}"), layer)(conv, x)


def _max_pool_2x2(x: torch.Tensor) -> torch.Tensor:
    """``F.max_pool2d(x, 2)``; contiguous CPU activations (training) through the compiled
    :func:`reliquant.mlm.pooling.max_pool_2x2`, imported on first use so that inference
    (channels-last, or on a GPU) does not load numba."""
    if x.device.type == "cpu" and x.is_contiguous():
        from reliquant.mlm import pooling

        return pooling.max_pool_2x2(x)
    return F.max_pool2d(x, 2)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def build_cnn() -> MnistCNN:
    """A fresh (randomly initialised from torch's global RNG) CNN; checks the parameter count.

    Raises ``AssertionError`` if the architecture does not have the paper's 206,922 parameters.
    """
    model = MnistCNN()
    n = count_parameters(model)
    assert n == N_PARAMETERS, f"CNN has {n} parameters; paper 004 Section 3.1 states {N_PARAMETERS}"
    return model


def normalise_images(images_uint8: np.ndarray) -> torch.Tensor:
    """uint8 ``(n, 28, 28)`` -> float32 tensor ``(n, 1, 28, 28)``: ``(u/255 - 0.5) / 0.5``.

    The same arithmetic as torchvision's ``ToTensor()`` + ``Normalize((0.5,), (0.5,))``
    (Section 4.1), so the values lie in [-1, 1].
    """
    images = np.asarray(images_uint8)
    if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE):
        raise ValueError(
            f"images must be uint8 of shape (n, {IMAGE_SIDE}, {IMAGE_SIDE}); "
            f"got {images.dtype} {images.shape}"
        )
    images = np.ascontiguousarray(images)
    if not images.flags.writeable:  # torch.from_numpy warns on read-only buffers
        images = images.copy()
    x = torch.from_numpy(images).to(torch.float32).div_(255.0)
    return x.sub_(0.5).div_(0.5).unsqueeze(1)


def _check_labels(labels: np.ndarray, n: int, what: str) -> torch.Tensor:
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"{what} must have shape ({n},); got {labels.shape}")
    if n and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ValueError(
            f"{what} must lie in 0..{N_CLASSES - 1}; got {labels.min()}..{labels.max()}"
        )
    return torch.from_numpy(labels.astype(np.int64))


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 256) -> float:
    """Share of rows of ``x`` whose most likely class is ``y``, scored ``batch_size`` at a time.

    The logits do not depend on the batch size (checked bit for bit on the 10,000 test images
    for 128 to 2048); 256 keeps each batch's activations (13 MB) in the heap, where 2048 rows
    (103 MB) were mapped and faulted afresh for every batch: 0.7 s instead of 2.0-2.5 s per
    evaluation, once per epoch.
    """
    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(x), batch_size):
            pred = model(x[start : start + batch_size]).argmax(1)
            correct += int((pred == y[start : start + batch_size]).sum())
    return correct / max(len(x), 1)


@dataclass
class TrainResult:
    """A trained model and its per-epoch log.

    ``log`` columns: ``epoch`` (1-based), ``loss`` (mean training NLL over the epoch's
    batches), ``train_accuracy`` (running accuracy over the epoch's batches, as the usual
    PyTorch training loop reports it), ``test_accuracy`` (evaluated after the epoch; NaN
    when no test set was given). ``seconds`` holds the wall time per epoch (kept out of the
    log so that the log is reproducible).
    """

    model: MnistCNN
    log: pd.DataFrame
    seconds: list[float]


def train_cnn(
    images_uint8: np.ndarray,
    labels: np.ndarray,
    epochs: int = 10,
    lr: float = 0.01,
    batch_size: int = 64,
    seed: int = 0,
    test_images: np.ndarray | None = None,
    test_labels: np.ndarray | None = None,
    momentum: float = 0.0,
    threads: int | None = None,
    progress: bool | None = None,
    device: torch.device | str | None = None,
    lr_name: str = "lr",
) -> TrainResult:
    """Train :class:`MnistCNN` with SGD on cross-entropy (paper 004, Sections 3.1 and 4.1).

    Loss per batch ``B``: ``-1/|B| sum_{i in B} log softmax(f(x_i))[y_i]`` (NLL of the
    log-softmax output = cross-entropy). Each epoch visits every image once in the order of
    ``torch.randperm(n, generator=g)``; the last batch may be smaller than ``batch_size``.

    Parameters
    ----------
    images_uint8, labels : training images ``(n, 28, 28)`` uint8 and labels ``(n,)`` in 0..9.
    epochs, lr, batch_size : paper values 10, 0.01, 64.
    seed : root seed; initialisation and shuffling use independent streams derived from it.
    test_images, test_labels : optional; when given, test accuracy is logged after each epoch.
    momentum : SGD momentum (the paper states none; 0).
    threads : ``torch.set_num_threads`` for the duration of the call (``None``: unchanged).
    progress : show a tqdm bar per epoch (default: in a terminal only,
        :func:`reliquant.core.progress.show_progress`).
    device : where to train (default CPU). The initial weights and the batch order do not
        depend on it; on CUDA, cuBLAS is put in its deterministic mode
        (``CUBLAS_WORKSPACE_CONFIG=:4096:8``, set only if not already set before CUDA starts)
        and convolutions and matrix products run in full float32, not TF32
        (:func:`reliquant.mlm.determinism.full_precision_cuda`).
    lr_name : how an error names the learning rate (the workflow: ``mlm.train.lr``). A loss
        (after an epoch) or weights (at the end) that are no longer finite stop the training
        with a ValueError naming it: a too large step diverges, and no model is returned.
    """
    device = torch.device(device if device is not None else "cpu")
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    x = normalise_images(images_uint8)
    y = _check_labels(labels, len(x), "labels")
    if epochs < 1 or batch_size < 1 or not lr > 0:
        raise ValueError(
            f"need epochs >= 1, batch_size >= 1, lr > 0; got {epochs}, {batch_size}, {lr}"
        )
    if (test_images is None) != (test_labels is None):
        raise ValueError("give both test_images and test_labels, or neither")
    xt = yt = None
    if test_images is not None:
        xt = normalise_images(test_images)
        yt = _check_labels(test_labels, len(xt), "test_labels")
    show = show_progress(progress)
    if device.type == "cpu":
        if pinned_level() is None:
            log.warning(
                "CPU kernels: %s; weights may differ on another CPU", describe_cpu_kernels()
            )
        else:
            log.info("CPU kernels: %s", describe_cpu_kernels())

    old_threads = torch.get_num_threads()
    old_det = torch.are_deterministic_algorithms_enabled()
    if threads is not None:
        torch.set_num_threads(int(threads))
    torch.use_deterministic_algorithms(True)
    try:
        with full_precision_cuda():
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(block_int_seed(seed, "mlm", "cnn_init"))
                model = build_cnn()
            model = model.to(device)
            x, y = x.to(device), y.to(device)
            if xt is not None:
                xt, yt = xt.to(device), yt.to(device)
            gen = torch.Generator().manual_seed(block_int_seed(seed, "mlm", "cnn_shuffle"))
            opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
            n = len(x)
            rows, seconds = [], []
            for epoch in range(1, epochs + 1):
                t0 = time.perf_counter()
                model.train()
                perm = torch.randperm(n, generator=gen)
                loss_sum = torch.zeros((), dtype=torch.float64, device=device)
                correct = torch.zeros((), dtype=torch.int64, device=device)
                bar = tqdm(
                    range(0, n, batch_size),
                    desc=f"epoch {epoch}/{epochs}",
                    unit="batch",
                    disable=not show,
                    leave=False,
                )
                for start in bar:
                    idx = perm[start : start + batch_size].to(device)
                    xb, yb = x[idx], y[idx]
                    out = model(xb)
                    loss = F.nll_loss(out, yb)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    with torch.no_grad():
                        loss_sum += loss.detach().double() * len(idx)
                        correct += (out.argmax(1) == yb).sum()
                row = {
                    "epoch": epoch,
                    "loss": float(loss_sum) / n,
                    "train_accuracy": int(correct) / n,
                    "test_accuracy": _accuracy(model, xt, yt) if xt is not None else float("nan"),
                }
                _check_finite(row["loss"], epoch, lr, lr_name)
                rows.append(row)
                seconds.append(time.perf_counter() - t0)
                log.info(
                    "epoch %d/%d: loss %.4f, train acc %.4f, test acc %.4f (%.1f s)",
                    epoch,
                    epochs,
                    row["loss"],
                    row["train_accuracy"],
                    row["test_accuracy"],
                    seconds[-1],
                )
    finally:
        torch.use_deterministic_algorithms(old_det)
        torch.set_num_threads(old_threads)
    model.eval()
    _check_finite(
        all(bool(torch.isfinite(p).all()) for p in model.parameters()), epochs, lr, lr_name
    )
    frame = pd.DataFrame(rows).astype({"epoch": np.int32})
    return TrainResult(model=model.cpu(), log=frame, seconds=seconds)


def _check_finite(value: float | bool, epoch: int, lr: float, lr_name: str) -> None:
    """A ValueError naming the learning rate when ``value`` (a loss, or whether every weight
    is finite) says that the training diverged by ``epoch``."""
    if value is True or (value is not False and np.isfinite(value)):
        return
    what = f"the mean loss of epoch {epoch} ({value})" if value is not False else "a weight"
    raise ValueError(
        f"training diverged: {what} is not finite; lower the learning rate {lr_name} = {lr!r} "
        "(the paper's is 0.01)"
    )


def save_model(model: nn.Module, path: str | os.PathLike) -> None:
    """Save the model's ``state_dict`` atomically (temporary file + rename), sealed.

    Serialised to memory first: ``torch.save`` names the zip records after the file it writes,
    and the temporary file name is random, so equal weights would give different bytes. The
    archive is sealed with its SHA-256 (:func:`reliquant.core.io.seal_zip`: the archive
    comment, which ``torch.load`` ignores), so the file stays a plain state dict and
    :func:`load_model` catches any byte changed after the write.
    """
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    with atomic_path(path) as tmp:
        tmp.write_bytes(seal_zip(buffer.getvalue()))


def load_model(
    path: str | os.PathLike,
    device: torch.device | str | None = None,
    *,
    require_seal: bool = True,
) -> MnistCNN:
    """Load a :class:`MnistCNN` saved by :func:`save_model`, in eval mode on ``device``.

    The file's seal is verified before it is read (``require_seal``, the default: a file
    whose bytes changed after :func:`save_model` wrote it, or one it did not write, raises
    :class:`reliquant.core.io.DamagedFileError` naming it; delete it and the workflow trains
    again). ``require_seal=False`` is for a user's file, checked otherwise
    (:func:`load_model_file`). ``device`` defaults to the CPU. Only tensors are unpickled
    (``weights_only=True``).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no CNN weights file at {path}")
    if require_seal:
        verify_zip_seal(path)
    state = torch.load(path, map_location="cpu", weights_only=True)
    model = MnistCNN()
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"{path} does not hold MnistCNN weights: {exc}") from exc
    return model.to(device if device is not None else "cpu").eval()


def load_model_file(
    path: str | os.PathLike, sha256: str, device: torch.device | str | None = None
) -> MnistCNN:
    """Load a user's state dict of the paper's CNN (config ``mlm.model.source: file``).

    The file's SHA-256 must equal ``sha256`` (a ValueError naming the path and both digests
    otherwise), and its tensors must fit :class:`MnistCNN` (a ValueError naming the path
    otherwise). Only tensors are unpickled (``torch.load(..., weights_only=True)``).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"mlm.model.path: no CNN weights file at {path}")
    actual = file_sha256(path)
    if actual != sha256.lower():
        raise ValueError(
            f"{path}: SHA-256 {actual} does not match mlm.model.sha256 {sha256.lower()}; "
            "the file changed or the digest in the config is wrong"
        )
    try:
        return load_model(path, device, require_seal=False)
    except ValueError:
        raise
    except Exception as exc:  # not a torch file, or pickled objects other than tensors
        raise ValueError(f"{path} does not hold MnistCNN weights: {exc}") from exc


def external_training_log() -> pd.DataFrame:
    """The training log of a model not trained here: one row, epoch 0, NaN loss and accuracies
    (:data:`EXTERNAL_TRAINING_LOG_SCHEMA`), so that the rules reading the log still run."""
    nan = float("nan")
    return pd.DataFrame(
        {
            "epoch": np.array([0], dtype=np.int32),
            "loss": [nan],
            "train_accuracy": [nan],
            "test_accuracy": [nan],
        }
    )


def external_model_markdown(path: str | os.PathLike, sha256: str) -> str:
    """The training report of a model read from a file (``mlm.model.source: file``)."""
    return (
        "# CNN training log\n\n"
        "Not trained here: the CNN weights were read from a file (config `mlm.model`), "
        "so there is no per-epoch loss or accuracy; the training log holds one row of NaN.\n\n"
        f"| quantity | value |\n|---|---|\n| weights file | `{path}` |\n"
        f"| SHA-256 | `{sha256}` |\n"
    )


def training_markdown(
    log_frame: pd.DataFrame, n_images: int, epochs: int, paper: dict[str, float]
) -> str:
    """The training report: last-epoch train and test accuracy beside Section 4.1's
    (``paper``: ``train_accuracy``, ``test_accuracy`` of config ``mlm.paper``), then every
    epoch of the training log (:data:`TRAINING_LOG_SCHEMA`)."""
    last = log_frame.iloc[-1]
    summary = pd.DataFrame(
        {
            "quantity": [
                "train accuracy (last epoch, running)",
                "test accuracy (after last epoch)",
            ],
            "ours": [last["train_accuracy"], last["test_accuracy"]],
            "paper (Section 4.1)": [paper["train_accuracy"], paper["test_accuracy"]],
        }
    )
    return (
        f"# CNN training ({n_images} images, {epochs} epochs)\n\n"
        + frame_to_markdown(summary, floatfmt=".4f")
        + "\n## Per epoch\n\n"
        + frame_to_markdown(log_frame.astype({"epoch": str}), floatfmt=".4f")
    )
