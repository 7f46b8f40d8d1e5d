"""Every numba kernel of the package compiled in one go, once per machine (rule
``trees_kernels``), so that later processes load them from numba's disk cache.

The kernels (:mod:`reliquant.trees.kernel`, :mod:`reliquant.trees.grid_kernel`) are
``@njit(cache=True)``: the first process that calls one with new argument types compiles it
(seconds to tens of seconds) and saves it to numba's cache, later ones load it
(milliseconds). The cache lives in ``__pycache__`` beside the module (an editable install or
a checkout), or, where that folder is not writable, in the user's cache folder
(``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``), or in ``$NUMBA_CACHE_DIR`` when set; an
entry is keyed by the module's source, the argument types and the CPU, so an edited module
or another kind of CPU compiles afresh. In a workflow run every job that runs the kernels
waits for :func:`compile_kernels` (rule ``trees_kernels``), so no two jobs compile the same
kernel at the same time and none pays for it.

:func:`compile_kernels` compiles (or loads) every kernel with every argument type the
workflow's calls pass: plans of independent, correlated and NORTA noise (one numba type:
their differences are values, not types; each distinct type is compiled), the score store
of :func:`reliquant.trees.kernel.shared_normal_scores`, and the box grid for float64 and
float32 scores (:func:`reliquant.trees.kernel.kernel_signatures`,
:func:`reliquant.trees.grid_kernel.kernel_signatures`). Not the kernel's testing and
validation helpers (:func:`reliquant.trees.kernel.sample_bins`, ``labels_of_bins``,
``bins_of``: no job calls them; a test or benchmark that does compiles them on first use,
about 4 s on a fresh machine). :func:`cache_stats` says, per
kernel, what the calling process loaded and compiled so far (a process that compiled
nothing has no cache misses).

Public API: :func:`compile_kernels`, :func:`cache_stats`, :data:`KERNEL_COLUMNS`,
:data:`STATS_COLUMNS`.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import pandas as pd
from numba import types
from scipy import stats

from reliquant.trees import grid_kernel, kernel
from reliquant.trees.box_mass import CorrelatedNormal, IndependentNormal, NortaNoise
from reliquant.trees.plan import Plan, build_plan
from reliquant.trees.structure import stump_ensemble

__all__ = ["KERNEL_COLUMNS", "STATS_COLUMNS", "cache_stats", "compile_kernels"]

log = logging.getLogger(__name__)

#: Columns of :func:`compile_kernels`' table.
KERNEL_COLUMNS = ("kernel", "signature", "status", "seconds", "cache_dir")
#: Columns of :func:`cache_stats`' table.
STATS_COLUMNS = ("kernel", "signatures", "cache_hits", "cache_misses", "cache_dir")
_MODULES = {"kernel": kernel, "grid_kernel": grid_kernel}


def _stump_plans() -> list[Plan]:
    """Plans of a one-stump model under independent, correlated and NORTA noise."""
    ens = stump_ensemble(n_features=2)
    corr = np.array([[1.0, 0.5], [0.5, 1.0]])
    noises = [
        IndependentNormal(np.zeros(2), 1.0),
        CorrelatedNormal(np.zeros(2), corr),
        NortaNoise(np.zeros(2), [stats.norm(), stats.expon()], corr),
    ]
    return [build_plan(ens, noise, 0) for noise in noises]


def _items(module) -> list:
    """``(name, dispatcher)`` of a kernel module, by name."""
    return sorted(module.dispatchers().items())


def _signature(args: tuple) -> str:
    """Argument types, shortly: a plan's named tuple as ``Plan``."""
    return ", ".join("Plan" if isinstance(t, types.BaseNamedTuple) else str(t) for t in args)


def compile_kernels() -> pd.DataFrame:
    """Compile every kernel the workflow calls with every argument type its calls pass
    (module docstring), or load it from numba's disk cache; one row per kernel and signature
    (:data:`KERNEL_COLUMNS`): ``status`` ``"compiled"`` (compiled by this process and saved to
    the cache) or ``"cached"`` (loaded from the cache); ``seconds``: the compilation (numba's
    compiler timer) or the load, NaN for one loaded while ``reliquant.trees`` was imported
    (:func:`reliquant.trees.warm_up`, milliseconds); ``cache_dir``: numba's cache folder for
    the kernel's module. Kernels compiled first take longest: the helpers they call are
    compiled with them and reused by the next ones."""
    targets = [pair for plan in _stump_plans() for pair in kernel.kernel_signatures(plan)]
    targets += grid_kernel.kernel_signatures()
    names = {id(f): f"{mod}.{name}" for mod, m in _MODULES.items() for name, f in _items(m)}
    rows, seen = [], set()
    for dispatcher, args in targets:
        key = (id(dispatcher), args)
        if key in seen:  # plans of several noises share one numba type
            continue
        seen.add(key)
        before = args in dispatcher.overloads
        t0 = time.perf_counter()
        dispatcher.compile(args)
        seconds = time.perf_counter() - t0
        compiled = dispatcher.stats.cache_misses[args] > 0
        if before:  # compiled or loaded at import (reliquant.trees' warm_up)
            metadata = dispatcher.overloads[args].metadata or {}
            seconds = metadata.get("timers", {}).get("compiler_lock", math.nan)
        rows.append({
            "kernel": names[id(dispatcher)], "signature": _signature(args),
            "status": "compiled" if compiled else "cached", "seconds": seconds,
            "cache_dir": str(dispatcher.stats.cache_path),
        })  # fmt: skip
    table = pd.DataFrame(rows, columns=list(KERNEL_COLUMNS))
    n_compiled = int((table["status"] == "compiled").sum())
    log.info(
        "%d kernel signatures: %d compiled (%.1f s), %d loaded from numba's cache in %s",
        len(table), n_compiled, table.loc[table["status"] == "compiled", "seconds"].sum(),
        len(table) - n_compiled, ", ".join(sorted(set(table["cache_dir"]))),
    )  # fmt: skip
    return table


def cache_stats() -> pd.DataFrame:
    """Per kernel of the package (every ``@njit`` function of :mod:`reliquant.trees.kernel`
    and :mod:`reliquant.trees.grid_kernel`, helpers included; :data:`STATS_COLUMNS`): how many
    signatures this process holds, how many it loaded from numba's disk cache
    (``cache_hits``) and how many it compiled (``cache_misses``) so far."""
    rows = [
        {
            "kernel": f"{mod}.{name}",
            "signatures": len(f.signatures),
            "cache_hits": int(sum(f.stats.cache_hits.values())),
            "cache_misses": int(sum(f.stats.cache_misses.values())),
            "cache_dir": str(f.stats.cache_path),
        }
        for mod, m in _MODULES.items()
        for name, f in _items(m)
    ]
    return pd.DataFrame(rows, columns=list(STATS_COLUMNS))
