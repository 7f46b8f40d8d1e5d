"""Random fields of a batch: per-image, counter-based draws from one block stream.

Randomness enters the corruptions only through these fields. Image ``i`` of block
(corruption, level) reads the PCG64 stream of
``reliquant.core.seeding.block_rng(seed, corruption, level)`` from position
``i * IMAGE_STRIDE`` (``advance``), so its fields, and hence its corrupted bytes, depend only
on (seed, corruption, level, test index, parameters): never on batch size, chunking or the
number of processes, and parameter searches (:mod:`reliquant.pmnist.reproduction.calibration`) see
common random numbers.

The draws are NumPy's own (``Generator.standard_normal`` / ``Generator.random`` on that
stream), made by the compiled copy of the stream in :mod:`reliquant.pmnist.streams`: no
``Generator`` is positioned image by image in Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from reliquant.core.seeding import block_rng
from reliquant.pmnist.corruptions import SIDE
from reliquant.pmnist.registry import check_level, get_spec
from reliquant.pmnist.streams import MULT, apply, fill_normal, fill_uniform, jump, split128

__all__ = [
    "IMAGE_STRIDE",
    "KIND_CODES",
    "MAX_TEST_INDEX",
    "check_test_index",
    "draw_fields",
    "image_states",
]

#: Draws reserved for one image in its block's stream (2^40, far more than the 3 x 784 used).
IMAGE_STRIDE = 1 << 40
#: Test indices must be below this, so that image streams never overlap (2^24 x 2^40 < 2^128).
MAX_TEST_INDEX = 1 << 24
#: Field kinds as the compiled draw loop reads them.
KIND_CODES = {"normal": 0, "uniform": 1}


@njit(cache=True)
def _image_states(idx, s0h, s0l, ah, al, ch, cl):
    """PCG64 state of each image: ``idx[r]`` steps ``s <- A s + C`` from ``s0``.

    Walks on from the previous image while the indices increase (one step when consecutive).
    """
    out = np.empty((idx.size, 2), dtype=np.uint64)
    cur = 0
    sh, sl = s0h, s0l
    for r in range(idx.size):
        i = idx[r]
        if i < cur:
            cur, sh, sl = 0, s0h, s0l
        jh, jl, kh, kl = jump(np.uint64(i - cur), ah, al, ch, cl)
        sh, sl = apply(sh, sl, jh, jl, kh, kl)
        cur = i
        out[r, 0], out[r, 1] = sh, sl
    return out


def check_test_index(test_index: np.ndarray) -> np.ndarray:
    """``test_index`` as int64 if every index is in ``[0, 2^24)``; raise otherwise."""
    idx = np.asarray(test_index)
    if idx.size and (idx.min() < 0 or idx.max() >= MAX_TEST_INDEX):
        raise ValueError(f"test indices must be in [0, 2^24); got {idx.min()}..{idx.max()}")
    return idx.astype(np.int64, copy=False).reshape(-1)


def image_states(
    seed: int, name: str, level: int, test_index: np.ndarray
) -> tuple[np.ndarray, np.uint64, np.uint64]:
    """Where each image's fields start: ``(states (n, 2) uint64, inc_high, inc_low)``.

    Row ``r`` is the PCG64 state (high, low 64 bits) of ``block_rng(seed, name, level)``
    after ``advance(test_index[r] * IMAGE_STRIDE)``; ``inc`` is the stream's increment.
    """
    idx = check_test_index(test_index)
    state = block_rng(seed, name, level).bit_generator.state["state"]
    ih, il = split128(state["inc"])
    step = [np.uint64(v) for v in jump(np.uint64(IMAGE_STRIDE), MULT[0], MULT[1], ih, il)]
    s0h, s0l = split128(state["state"])
    return _image_states(idx, s0h, s0l, *step), ih, il


@njit(cache=True)
def _fill_fields(out, kinds, states, ih, il):
    """``out[f, r]`` = field ``f`` of image ``r`` (784 draws each, fields in order)."""
    for r in range(states.shape[0]):
        sh, sl = states[r, 0], states[r, 1]
        for f in range(kinds.size):
            if kinds[f] == 0:
                sh, sl = fill_normal(out[f, r].reshape(-1), sh, sl, ih, il)
            else:
                sh, sl = fill_uniform(out[f, r].reshape(-1), sh, sl, ih, il)


def draw_fields(name: str, seed: int, level: int, test_index: np.ndarray) -> dict[str, np.ndarray]:
    """Random fields of a batch, image by image, from the block stream of (seed, name, level).

    Image ``i = test_index[r]`` reads the stream of ``block_rng(seed, name, level)`` from
    position ``i * IMAGE_STRIDE``, so each image's fields depend only on
    (seed, name, level, i), not on which other images are in the batch. Each image draws its
    fields in the registry's order, each ``(28, 28)``: ``normal`` = standard normal,
    ``uniform`` = U[0, 1). Returns ``{field: (n, 28, 28) float64}``.
    """
    spec = get_spec(name)
    level = check_level(level)
    idx = np.asarray(test_index)
    out = np.empty((len(spec.fields), idx.size, SIDE, SIDE), dtype=np.float64)
    if spec.fields:
        states, ih, il = image_states(seed, name, level, idx)
        kinds = np.array([KIND_CODES[k] for _, k in spec.fields], dtype=np.int64)
        _fill_fields(out, kinds, states, ih, il)
    return {f: out[j] for j, (f, _) in enumerate(spec.fields)}
