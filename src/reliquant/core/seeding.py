"""Deterministic random generators derived from one seed and a block key.

Every random step of the workflow takes its seed from config and derives an independent
stream per block, e.g. ``block_rng(seed, "gaussian_noise", 3)``. The stream depends only on
the seed and the key (never on the order in which blocks are computed, the number of cores
or the batch size), so any block can be regenerated alone with identical bytes.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["block_int_seed", "block_rng", "block_seed_sequence"]


def _key_to_int(part: int | str) -> int:
    """Map one key part to a non-negative int: ints as they are, strings by CRC-32."""
    if isinstance(part, bool):
        raise TypeError("booleans are not valid seed key parts")
    if isinstance(part, int | np.integer):
        if part < 0:
            raise ValueError(f"seed key parts must be non-negative; got {part}")
        return int(part)
    if isinstance(part, str):
        return zlib.crc32(part.encode("utf-8"))
    raise TypeError(f"seed key parts must be int or str; got {type(part).__name__}")


def block_seed_sequence(seed: int, *key: int | str) -> np.random.SeedSequence:
    """SeedSequence for the block named by ``key`` under the root ``seed``.

    The key's length is part of the entropy: SeedSequence pads with zeros, so without it
    the keys ``(a, 3)`` and ``(a, 3, 0)`` would give the same stream.
    """
    return np.random.SeedSequence([_key_to_int(seed), len(key), *(_key_to_int(k) for k in key)])


def block_rng(seed: int, *key: int | str) -> np.random.Generator:
    """A PCG64 ``numpy.random.Generator`` for the block named by ``key``."""
    return np.random.Generator(np.random.PCG64(block_seed_sequence(seed, *key)))


def block_int_seed(seed: int, *key: int | str) -> int:
    """A 63-bit integer seed for libraries that take an int (torch, scikit-learn, xgboost)."""
    return int(
        block_seed_sequence(seed, *key).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)
    )
