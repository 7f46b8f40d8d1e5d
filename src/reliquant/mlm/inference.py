"""Batched softmax inference of the MNIST CNN on the GPU when present, else on the CPU.

:func:`predict_softmax` turns uint8 images into the ``(n, 10)`` float32 softmax outputs
``p_i = exp(z_i) / sum_j exp(z_j)`` (paper 004, eq. 1), computed as ``exp`` of the model's
log-softmax; given a ``preprocess`` callable it scores any ``torch.nn.Module`` that maps a float
tensor batch to ``K`` logits (softmax over the last dimension). It works on one batch at a
time under ``torch.inference_mode``, so that memory stays bounded by the batch size, whatever
``n`` is. :func:`score_image_table` does the same for
a parquet file of images (an MNIST split or a Perturbed MNIST partition), read chunk by chunk,
and returns the Arrow table the workflow writes; :func:`score_image_file` returns it as a
DataFrame.

Batch size and chunk size are speed settings only: an image's scores must not depend on the
batch it happens to land in, yet the matrix kernels of the fully connected layers choose their
code path by the number of rows of a pass (on the CPU, passes of fewer than about 5 rows round
differently; with MKL's ``COMPATIBLE`` branch, which :mod:`reliquant.mlm.determinism` pins, so
does every row count that is not a multiple of 4; and with 8 or more threads MKL splits the
sums of some row counts among its threads, 64 and 304 rows but not 128 on the machines
measured, moving scores by 1-2 ulp). So every forward pass has a fixed shape, a short pass
padded with blank images whose outputs are dropped (:func:`pass_rows`): on the CPU exactly
:data:`CPU_FORWARD_ROWS` rows whatever ``batch_size`` is (the fastest size on one core,
bench/mlm.py), so a row's scores are the same for every batch and chunk size at any thread
count; on a GPU :func:`forward_rows` ``(batch_size)`` rows, ``max(batch_size,
MIN_FORWARD_ROWS)`` rounded up to a multiple of ``FORWARD_ROW_MULTIPLE`` (large passes are
what make a GPU fast; GPU scores are not bit-identical to the CPU's anyway, and on an H100
they moved by up to 6e-8 between batches of 128 and 4,096).

Across CPUs, the scores are bit-identical where the workflow script pinned the CPU kernels
(:func:`reliquant.mlm.determinism.pin_cpu_kernels`) and the thread count is the same;
:func:`score_image_table` logs the kernel state.

On the CPU in channels-last layout, the paper's :class:`~reliquant.mlm.cnn.MnistCNN` is
evaluated by :func:`pooled_forward`: its own layers (``conv1``, ``conv2``, ``fc1``, ``fc2``)
in the order of ``MnistCNN.forward``, with each 2x2 max pooling taken as two elementwise
``torch.maximum`` of strided views instead of ``F.max_pool2d`` (forward passes about 15 %
faster). A maximum rounds nothing, so the outputs are bit-identical to ``model(x)``; every
:func:`predict_softmax` call checks this on its first batch (both ways, bit for bit) and uses
``model(x)`` for the whole call if they differ (a changed ``MnistCNN.forward``), with a
warning. :func:`score_image_table` does so once per file, not once per chunk.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch
from torch import nn
from torch.nn import functional as F

from reliquant.core.io import arrow_to_images, open_parquet
from reliquant.core.progress import progress_bar
from reliquant.mlm.cnn import IMAGE_SIDE, N_CLASSES, MnistCNN, normalise_images
from reliquant.mlm.determinism import describe_cpu_kernels, full_precision_cuda
from reliquant.mlm.softmax import softmax_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CPU_FORWARD_ROWS",
    "DEFAULT_BATCH_SIZE",
    "FORWARD_ROW_MULTIPLE",
    "MIN_FORWARD_ROWS",
    "forward_rows",
    "pass_rows",
    "pooled_forward",
    "predict_softmax",
    "score_image_file",
    "score_image_table",
    "select_device",
]

log = logging.getLogger("reliquant.mlm.inference")

#: Default inference batch size (images per step; on a GPU also the rows of a forward pass).
DEFAULT_BATCH_SIZE = 512
#: Rows of every forward pass on the CPU, whatever the batch size (see the module doc).
CPU_FORWARD_ROWS = 128
#: Fewest rows of one forward pass: smaller batches are padded up to it (see the module doc).
MIN_FORWARD_ROWS = 32
#: Every forward pass has a multiple of this many rows (MKL's COMPATIBLE branch rounds passes
#: whose row count is not a multiple of 4 differently).
FORWARD_ROW_MULTIPLE = 8


def forward_rows(batch_size: int) -> int:
    """Rows of every forward pass for ``batch_size``: at least :data:`MIN_FORWARD_ROWS`,
    rounded up to a multiple of :data:`FORWARD_ROW_MULTIPLE` (512 -> 512, 299 -> 304, 1 -> 32)."""
    rows = max(batch_size, MIN_FORWARD_ROWS)
    return -(-rows // FORWARD_ROW_MULTIPLE) * FORWARD_ROW_MULTIPLE


def pass_rows(batch_size: int, device: torch.device | str) -> int:
    """Rows of every forward pass of :func:`predict_softmax` on ``device``:
    :data:`CPU_FORWARD_ROWS` on the CPU (any ``batch_size``), else :func:`forward_rows`."""
    if torch.device(device).type == "cpu":
        return CPU_FORWARD_ROWS
    return forward_rows(batch_size)


def select_device(prefer: str | None = None) -> torch.device:
    """The device to run on: ``prefer`` if usable, else CUDA when present, else the CPU.

    ``prefer`` is ``None`` (automatic), ``"cpu"``, ``"cuda"`` or ``"cuda:<k>"``. A CUDA
    request on a machine without CUDA falls back to the CPU with a warning, so the same rule
    runs on a laptop and on a GPU node.
    """
    if prefer is not None:
        try:
            dev = torch.device(prefer)
        except RuntimeError:
            dev = None
        if dev is None or dev.type not in ("cpu", "cuda"):
            raise ValueError(f"device must be None, 'cpu' or 'cuda[:k]'; got {prefer!r}")
        if dev.type == "cpu":
            return dev
        if torch.cuda.is_available() and (
            dev.index is None or dev.index < torch.cuda.device_count()
        ):
            return dev
        log.warning("device %r requested but CUDA is not available; using the CPU", prefer)
        return torch.device("cpu")
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def _max_pool2(x: torch.Tensor) -> torch.Tensor:
    """``F.max_pool2d(x, 2)`` of an NCHW tensor ``x`` with even H and W, in channels-last layout.

    Each output is the maximum of its 2x2 window, taken as two ``torch.maximum`` of strided
    views of the NHWC data (columns, then rows): the same values as ``F.max_pool2d`` (a
    maximum rounds nothing; NaN propagates in both).
    """
    n, c, h, w = x.shape
    nhwc = x.permute(0, 2, 3, 1).reshape(n, h // 2, 2, w // 2, 2 * c)
    rows = torch.maximum(nhwc[:, :, 0], nhwc[:, :, 1]).view(n, h // 2, w // 2, 2, c)
    return torch.maximum(rows[:, :, :, 0], rows[:, :, :, 1]).permute(0, 3, 1, 2)


def pooled_forward(model: MnistCNN, x: torch.Tensor) -> torch.Tensor:
    """``model(x)`` of the paper's CNN, its max pooling taken by elementwise maxima.

    The layers and order of :meth:`reliquant.mlm.cnn.MnistCNN.forward`
    (``relu(max_pool(conv))`` twice, ``fc1``, ReLU, ``fc2``, log-softmax), each 2x2 max pool
    computed as two ``torch.maximum`` of strided views (faster than ``F.max_pool2d`` on the
    CPU for channels-last activations). The outputs equal ``model(x)`` bit for bit;
    :func:`predict_softmax` checks that on its first batch before relying on it.
    """
    x = F.relu(_max_pool2(model.conv1(x)))
    x = F.relu(_max_pool2(model.conv2(x)))
    x = F.relu(model.fc1(torch.flatten(x, 1)))
    return F.log_softmax(model.fc2(x), dim=1)


def _forward_for(
    model: nn.Module, device: torch.device, channels_last: bool
) -> Callable[[torch.Tensor], torch.Tensor]:
    """The forward pass :func:`predict_softmax` runs: :func:`pooled_forward` for the paper's
    CNN on the CPU in channels-last layout (checked against ``model`` on the first batch),
    else ``model`` itself."""
    if not (type(model) is MnistCNN and device.type == "cpu" and channels_last):
        return model
    state: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {}

    def forward(x: torch.Tensor) -> torch.Tensor:
        if "forward" in state:
            return state["forward"](x)
        want = model(x)
        try:
            got = pooled_forward(model, x)
        except RuntimeError:  # inputs it cannot pool (odd sizes): the model's own forward
            got = None
        same = (
            got is not None
            and got.shape == want.shape
            and torch.equal(got.contiguous().view(torch.int32), want.contiguous().view(torch.int32))
        )
        if not same:
            log.warning(
                "pooled_forward differs from MnistCNN.forward on the first batch; "
                "scoring with the model's own forward"
            )
        state["forward"] = (lambda b: pooled_forward(model, b)) if same else model
        return want

    return forward


def predict_softmax(
    model: nn.Module,
    images_uint8: np.ndarray,
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: torch.device | str | None = None,
    channels_last: bool = True,
    preprocess: Callable[[np.ndarray], torch.Tensor] | None = None,
    outputs: str | None = None,
    progress: bool | None = None,
) -> np.ndarray:
    """Softmax outputs ``(n, K)`` float32 of ``model`` for a batch of inputs ``(n, ...)``.

    By default (``preprocess=None``) the inputs are uint8 images ``(n, 28, 28)``, normalised as
    in training (``u/255*2 - 1``, Section 4.1). Any other ``torch.nn.Module`` that maps a float
    tensor batch to ``K`` scores per row works too: ``preprocess`` turns a numpy batch
    ``(rows, ...)`` into the model's input tensor (e.g. ``torch.from_numpy``). ``outputs``
    says what the model returns: ``"log_softmax"`` (returned as ``exp``, eq. 1; the default for
    the paper's :class:`reliquant.mlm.cnn.MnistCNN`) or ``"logits"`` (softmax over the last
    dimension; the default for every other module).

    Inputs are scored in batches of ``batch_size`` under ``torch.inference_mode`` (on CUDA in
    full float32, not TF32: :func:`reliquant.mlm.determinism.full_precision_cuda`) on
    ``device`` (default: the model's own device). ``channels_last`` stores 4-D activations
    NHWC, which is faster for this CNN on the CPU; the values do not depend on it beyond float
    rounding. The model is moved to ``device`` (and that memory format) in place and left in
    eval mode. Every forward pass has :func:`pass_rows` rows (a short pass is padded with zero
    rows, outputs dropped): :data:`CPU_FORWARD_ROWS` on the CPU whatever ``batch_size`` is,
    ``batch_size`` rounded up (:func:`forward_rows`) on a GPU. On the CPU a row's scores do not
    depend on ``batch_size`` or on where the batches are cut, at any thread count; on a GPU they
    do in the last bits (cuDNN and cuBLAS pick kernels by shape: up to 6e-8 between batches of
    128 and 4,096 on an H100). On the CPU in channels-last layout the paper's CNN runs through
    :func:`pooled_forward` (bit-identical to ``model``, checked on the first batch; see the
    module doc). ``progress``: a bar over the inputs with the time left
    (:func:`reliquant.core.progress.show_progress`: by default on in a terminal only).
    """
    images, preprocess, outputs = _checked_inputs(
        model, images_uint8, batch_size, preprocess, outputs
    )
    model, device, fmt = _prepared(model, device, channels_last)
    forward = _forward_for(model, device, channels_last)
    return _predict(model, images, batch_size, device, fmt, forward, preprocess, outputs,
                    progress)  # fmt: skip


def _checked_inputs(
    model: nn.Module,
    images_uint8: np.ndarray,
    batch_size: int,
    preprocess: Callable[[np.ndarray], torch.Tensor] | None,
    outputs: str | None,
) -> tuple[np.ndarray, Callable[[np.ndarray], torch.Tensor], str]:
    """:func:`predict_softmax`'s inputs checked: the array, the preprocess and outputs used."""
    images = np.asarray(images_uint8)
    if preprocess is None:
        if (
            images.dtype != np.uint8
            or images.ndim != 3
            or images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE)
        ):
            raise ValueError(
                f"images must be uint8 of shape (n, {IMAGE_SIDE}, {IMAGE_SIDE}); "
                f"got {images.dtype} {images.shape} (pass preprocess= for other inputs)"
            )
        preprocess = normalise_images
    elif images.ndim < 1:
        raise ValueError(f"inputs must have a leading batch dimension; got shape {images.shape}")
    if outputs is None:
        outputs = "log_softmax" if isinstance(model, MnistCNN) else "logits"
    if outputs not in ("log_softmax", "logits"):
        raise ValueError(f"outputs must be 'log_softmax' or 'logits'; got {outputs!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1; got {batch_size}")
    return images, preprocess, outputs


def _prepared(
    model: nn.Module, device: torch.device | str | None, channels_last: bool
) -> tuple[nn.Module, torch.device, torch.memory_format]:
    """``model`` moved to ``device`` (default: its own) and the memory format, in eval mode."""
    if device is None:
        param = next(model.parameters(), None)
        device = param.device if param is not None else torch.device("cpu")
    device = torch.device(device)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    return model.to(device=device, memory_format=fmt).eval(), device, fmt


def _predict(
    model: nn.Module,
    images: np.ndarray,
    batch_size: int,
    device: torch.device,
    fmt: torch.memory_format,
    forward: Callable[[torch.Tensor], torch.Tensor],
    preprocess: Callable[[np.ndarray], torch.Tensor],
    outputs: str,
    progress: bool | None = False,
) -> np.ndarray:
    """The scoring loop of :func:`predict_softmax` (inputs checked, model prepared)."""
    rows = pass_rows(batch_size, device)
    step = rows if device.type == "cpu" else batch_size  # images per forward pass
    out: np.ndarray | None = None
    bar = progress_bar(total=len(images), desc="softmax", unit="input", progress=progress)
    with torch.inference_mode(), full_precision_cuda(), bar:
        # an empty input still makes one (all-padding) pass, to learn K
        for start in range(0, max(len(images), 1), step):
            batch = images[start : start + step]
            xb = preprocess(_pad_rows(batch, rows))
            if not isinstance(xb, torch.Tensor):
                raise TypeError(f"preprocess must return a torch.Tensor; got {type(xb).__name__}")
            xb = xb.to(device)
            if xb.ndim == 4:
                xb = xb.contiguous(memory_format=fmt)
            scores = forward(xb)[: len(batch)]
            probs = scores.exp() if outputs == "log_softmax" else torch.softmax(scores, dim=-1)
            if out is None:
                if probs.ndim != 2:
                    raise ValueError(
                        f"model must return scores of shape (rows, K); got {tuple(probs.shape)}"
                    )
                out = np.empty((len(images), probs.shape[-1]), dtype=np.float32)
            out[start : start + len(batch)] = probs.float().cpu().numpy()
            bar.update(len(batch))
    return out


def _pad_rows(images: np.ndarray, rows: int) -> np.ndarray:
    """``images`` followed by blank (zero) images up to ``rows`` rows."""
    if len(images) >= rows:
        return images
    pad = np.zeros((rows - len(images), *images.shape[1:]), dtype=images.dtype)
    return np.concatenate([images, pad])


def _check_corruption(column: pa.Array, expected: str, path, first_row: int) -> None:
    """Raise a ValueError naming ``path`` when a row's corruption is not ``expected``."""
    names = pc.unique(column).to_pylist()
    if names != [expected]:
        wrong = [n for n in names if n != expected]
        raise ValueError(
            f"{path}: rows from {first_row} on hold corruption {wrong[0]!r}, expected "
            f"{expected!r}: the partition was replaced or mislabelled; regenerate it"
        )


def score_image_table(
    model: nn.Module,
    path: str | os.PathLike,
    chunk_rows: int = 20_000,
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: torch.device | str | None = None,
    channels_last: bool = True,
    limit: int | None = None,
    on_chunk: Callable[[int], object] | None = None,
    corruption: str | None = None,
) -> pa.Table:
    """Softmax rows (:data:`reliquant.mlm.softmax.SOFTMAX_SCHEMA`) for the images of a parquet file.

    The file is an MNIST split (columns ``index``, ``label``, ``image``; scored as corruption
    ``"none"``, level 0) or a Perturbed MNIST partition (``test_index``, ``label``, ``image``,
    ``corruption``, ``level``). It is read ``chunk_rows`` rows at a time and each chunk is
    scored by :func:`predict_softmax`, so the images held stay bounded whatever the file's
    size (the table returned holds 15 narrow columns per row). ``limit`` scores only the
    first rows; ``on_chunk(n)`` is called after each chunk of ``n`` images (a progress bar's
    ``update``). ``corruption``: the corruption the file must hold (a partition's own name); a
    file whose rows name another corruption, or an MNIST split in its place, raises a
    ValueError naming the file, so a replaced or mislabelled partition cannot pass for the
    one the rule asked for. Returns one Arrow table (one chunk per column), built by
    :func:`reliquant.mlm.softmax.softmax_table`.
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1; got {chunk_rows}")
    source = open_parquet(path)
    names = source.schema_arrow.names
    index_col = "test_index" if "test_index" in names else "index"
    perturbed = "corruption" in names and "level" in names
    missing = [c for c in (index_col, "label", "image") if c not in names]
    if missing:
        raise ValueError(f"{path}: not an MNIST image table, missing columns {missing}")
    if corruption is not None and not perturbed:
        raise ValueError(
            f"{path}: expected a Perturbed MNIST partition of corruption {corruption!r}, "
            "found a table without corruption and level columns"
        )
    # the model prepared and its forward pass chosen (and checked) once for every chunk
    model, runs_on, fmt = _prepared(model, device, channels_last)
    forward = _forward_for(model, runs_on, channels_last)
    if runs_on.type == "cpu":
        log.info("scoring %s; CPU kernels: %s", path, describe_cpu_kernels())
    columns = [index_col, "label", "image"] + (["corruption", "level"] if perturbed else [])
    total = source.metadata.num_rows if limit is None else min(limit, source.metadata.num_rows)
    parts: dict[str, list] = {"index": [], "label": [], "corruption": [], "level": [], "p": []}
    done = 0
    for batch in source.iter_batches(batch_size=chunk_rows, columns=columns):
        if done >= total:
            break
        batch = batch.slice(0, total - done)
        if corruption is not None:
            _check_corruption(batch.column("corruption"), corruption, path, done)
        images, preprocess, outputs = _checked_inputs(
            model, arrow_to_images(batch.column("image"), source=path), batch_size, None, None
        )
        parts["p"].append(
            _predict(model, images, batch_size, runs_on, fmt, forward, preprocess, outputs)
        )
        parts["index"].append(batch.column(index_col).to_numpy())
        parts["label"].append(batch.column("label").to_numpy())
        if perturbed:
            parts["corruption"].append(batch.column("corruption"))
            parts["level"].append(batch.column("level").to_numpy())
        done += batch.num_rows
        if on_chunk is not None:
            on_chunk(batch.num_rows)
    if not parts["p"]:
        return softmax_table(
            np.zeros(0), np.zeros(0), "none", 0, np.zeros((0, N_CLASSES), np.float32)
        )
    return softmax_table(
        np.concatenate(parts["index"]),
        np.concatenate(parts["label"]),
        pa.chunked_array(parts["corruption"], pa.string()) if perturbed else "none",
        np.concatenate(parts["level"]) if perturbed else 0,
        np.concatenate(parts["p"]),
    )


def score_image_file(
    model: nn.Module,
    path: str | os.PathLike,
    chunk_rows: int = 20_000,
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: torch.device | str | None = None,
    channels_last: bool = True,
    limit: int | None = None,
    on_chunk: Callable[[int], object] | None = None,
    corruption: str | None = None,
) -> pd.DataFrame:
    """:func:`score_image_table` as a DataFrame (the same arguments, rows and checks)."""
    return score_image_table(
        model,
        path,
        chunk_rows=chunk_rows,
        batch_size=batch_size,
        device=device,
        channels_last=channels_last,
        limit=limit,
        on_chunk=on_chunk,
        corruption=corruption,
    ).to_pandas()
