"""The 12 corruptions as compiled per-image pipelines: uint8 and seed in, uint8 out.

:func:`corrupt_block` gives, byte for byte, what :func:`reliquant.pmnist.fields.draw_fields`
followed by :func:`reliquant.pmnist.registry.corrupt` gives (``tests/pmnist/test_corruptions.py``
checks every corruption and level, and random parameters), without the float64 batch in
between: one compiled loop per corruption takes each image through

    u -> x = u / 255 * 2 - 1 -> its random fields (NumPy's PCG64 stream of the image,
    :mod:`reliquant.pmnist.streams`) -> the corruption -> clip -> trunc((y/2 + 1/2) 255)

while the image and its fields stay in the CPU cache. Every float operation is the one the
batch code does, in the same order, with no fused multiply-add and no reassociation:

* filters replicate ``scipy.ndimage`` (reflect-101 line buffers; ``uniform_filter1d``'s
  running sum ``s += x[i + k - 1] - x[i - 1]``, output ``s / k``; ``correlate1d``'s symmetric,
  antisymmetric and general sums);
* the image mean is NumPy's pairwise sum (8 accumulators, blocks of 128) over the 784 pixels;
* impulse noise salts the ``m`` smallest keys (a 256-bucket selection; an image whose m-th
  key is tied is handed to ``numpy.argpartition``, as the batch code does);
* brightness, a function of the grey value alone, is a 256-entry table; where a pixel gets
  one of two values (impulse noise, snow) the output is a table look-up of the same kind.

Each kernel and helper is compiled on first use and cached on disk (numba ``cache=True``).

Modules
-------
compiled         every compiled function and the constants they read, in one file (numba's
                 disk cache follows no call into another file)
level_constants  per-level constants computed in Python (a filter's symmetry, Poisson steps)
dispatch         each corruption's compiled pipeline (``BLOCKS``) and ``corrupt_block``

Every name below is importable from ``reliquant.pmnist.fused`` itself.
"""

from __future__ import annotations

# public names of the module before it became a package (not in __all__), still importable
from reliquant.pmnist.fused.compiled import JIT as JIT
from reliquant.pmnist.fused.compiled import NP as NP
from reliquant.pmnist.fused.compiled import SUM784_SIZES as SUM784_SIZES
from reliquant.pmnist.fused.compiled import SUM784_STARTS as SUM784_STARTS
from reliquant.pmnist.fused.compiled import TO_FLOAT, salt_threshold, sum784
from reliquant.pmnist.fused.compiled import N as N
from reliquant.pmnist.fused.dispatch import BLOCKS, Block, corrupt_block
from reliquant.pmnist.fused.level_constants import poisson_breaks, symmetry

__all__ = [
    "BLOCKS",
    "TO_FLOAT",
    "Block",
    "corrupt_block",
    "poisson_breaks",
    "salt_threshold",
    "sum784",
    "symmetry",
]
