"""Random fields of a batch: per-image, counter-based draws from one block stream.

Randomness enters the corruptions only through these fields. Image ``i`` of block
(corruption, level) reads the PCG64 stream of
``reliquant.core.seeding.block_rng(seed, corruption, level)`` from position
``i * IMAGE_STRIDE`` (``advance``), so its fields, and hence its corrupted bytes, depend only
on (seed, corruption, level, test index, parameters): never on batch size, chunking or the
number of processes, and parameter searches (:mod:`reliquant.pmnist.calibration`) see
common random numbers.
"""

from __future__ import annotations

import numpy as np

from reliquant.core.seeding import block_rng
from reliquant.pmnist.corruptions import SIDE
from reliquant.pmnist.registry import check_level, get_spec

#: Draws reserved for one image in its block's stream (2^40, far more than the 3 x 784 used).
IMAGE_STRIDE = 1 << 40
#: Test indices must be below this, so that image streams never overlap (2^24 x 2^40 < 2^128).
MAX_TEST_INDEX = 1 << 24


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
    out = {f: np.empty((idx.size, SIDE, SIDE), dtype=np.float64) for f, _ in spec.fields}
    if not spec.fields:
        return out
    if idx.size and (idx.min() < 0 or idx.max() >= MAX_TEST_INDEX):
        raise ValueError(f"test indices must be in [0, 2^24); got {idx.min()}..{idx.max()}")
    rng = block_rng(seed, name, level)
    bitgen = rng.bit_generator
    start = bitgen.state
    for row, i in enumerate(idx.tolist()):
        bitgen.state = start
        bitgen.advance(int(i) * IMAGE_STRIDE)
        for f, kind in spec.fields:
            if kind == "normal":
                out[f][row] = rng.standard_normal((SIDE, SIDE))
            else:
                out[f][row] = rng.random((SIDE, SIDE))
    return out
