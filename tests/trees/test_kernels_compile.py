"""The trees kernels compiled once per machine (reliquant.trees.kernel_cache, rule
trees_kernels): what compile_kernels compiles covers every call the workflow makes, so that a
later process loads every kernel from numba's disk cache and compiles nothing; the kernel's
testing helpers are left out of it (kernel_signatures(plan, testing=True) lists them)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from reliquant.trees import grid_kernel, kernel
from reliquant.trees.box_mass import IndependentNormal
from reliquant.trees.kernel_cache import (
    KERNEL_COLUMNS,
    STATS_COLUMNS,
    cache_stats,
    compile_kernels,
)
from reliquant.trees.plan import build_plan
from reliquant.trees.structure import stump_ensemble

#: A small robustness computation through every path the workflow's jobs take: forests,
#: XGBoost and gradient boosting; independent noise (stratified and plain draws), correlated
#: and NORTA noise, with and without shared normal scores; the box grid (kernel links and
#: numpy links); Monte Carlo. Not the kernel's testing helpers (TESTING): no job calls them.
WORKLOAD = """
import numpy as np
import xgboost as xgb
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from reliquant.trees import (
    Gaussian, IndependentNormal, Norta, extract_ensemble, grid_robustness,
    monte_carlo_robustness, robustness,
)
from reliquant.trees.kernel import shared_normal_scores
from reliquant.trees.norta import ExponentialMarginal, NormalMarginal
from reliquant.trees.plan import build_plan

X, y = make_classification(300, 3, n_informative=3, n_redundant=0, n_classes=3, random_state=1)
corr = np.array([[1.0, 0.4, 0.1], [0.4, 1.0, 0.2], [0.1, 0.2, 1.0]])
marginals = [lambda v: NormalMarginal(v, 0.6), lambda v: ExponentialMarginal(v, 0.4)]
norta = Norta(marginals + marginals[:1], corr)
models = [
    RandomForestClassifier(4, max_depth=3, random_state=0).fit(X, y),
    xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y),
    GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y == 1),
]
for model in models:
    ens = extract_ensemble(model)
    x = X[0]
    for noise in (Gaussian(0.3), Gaussian(0.3 * corr), norta):
        robustness(model, x, noise, max_boxes=4, max_draws=20_000, seed=1)
        robustness(model, x, noise, max_boxes=0, max_draws=20_000, seed=2)
        with shared_normal_scores():
            robustness(model, x, noise, max_boxes=0, max_draws=20_000, seed=3)
    bound = IndependentNormal(x, np.sqrt(0.3))
    grid_robustness(ens, bound, x)
    grid_robustness(ens, bound, x, prune=0.99)
    monte_carlo_robustness(ens, bound, x, 10_000, np.random.default_rng(0))
"""

#: The kernel's testing and validation helpers, on the workload's last plan.
TESTING = """
from reliquant.trees.kernel import bins_of, labels_of_bins, sample_bins

plan = build_plan(ens, bound, int(ens.predict_index(x[None])[0]))
labels_of_bins(plan, sample_bins(plan, 0, 16)[0])
bins_of(plan, X[:4])
"""


def _overloads() -> dict[str, set]:
    """Every kernel's compiled signatures in this process."""
    return {
        f"{mod.__name__}.{name}": set(f.overloads)
        for mod in (kernel, grid_kernel)
        for name, f in mod.dispatchers().items()
    }


def test_compiled_kernels_cover_every_call():
    """After compile_kernels, the workload needs no kernel signature it did not compile."""
    table = compile_kernels()
    assert tuple(table.columns) == KERNEL_COLUMNS
    assert set(table["status"]) <= {"compiled", "cached"}
    assert not table.duplicated(["kernel", "signature"]).any()
    # the entry points of count_agree (both paths, one kernel), chunk_seeds, the box grid
    assert {"kernel.count_chunk", "kernel.chunk_normal_scores", "kernel.hash_states"} <= set(
        table["kernel"]
    )
    assert not {
        "kernel.sample_bins_kernel",
        "kernel.labels_of_bins_kernel",
        "kernel.bins_of_kernel",
    } & set(table["kernel"])  # the testing helpers are not the workflow's
    assert (table["kernel"] == "grid_kernel._grid_chunk").sum() == 2  # float64, float32 scores
    before = _overloads()
    scope: dict = {}
    exec(WORKLOAD, scope)
    after = _overloads()
    new = {name: after[name] - before[name] for name in after if after[name] - before[name]}
    assert new == {}, f"compiled after compile_kernels(): {new}"
    # the testing helpers: what kernel_signatures(testing=True) lists covers their calls
    stump = build_plan(stump_ensemble(n_features=2), IndependentNormal(np.zeros(2), 1.0), 0)
    for dispatcher, args in kernel.kernel_signatures(stump, testing=True):
        dispatcher.compile(args)
    # what those compiles added is not "new": only what the testing calls compile after them
    # (measured from here, so the result does not depend on which tests ran before in this
    # process and compiled the helpers already)
    compiled = _overloads()
    exec(TESTING, scope)
    new = {name: s - compiled[name] for name, s in _overloads().items() if s - compiled[name]}
    assert new == {}, f"compiled after kernel_signatures(testing=True): {new}"


def _python(code: str, cache_dir: str) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, RELIQUANT_NO_PROGRESS="1")
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.mark.slow
def test_a_later_process_loads_every_kernel_from_the_cache(tmp_path):
    """A process that ran compile_kernels() (fresh cache: it compiles them all) leaves a
    cache from which a later process running the workload loads every kernel it calls, with
    no cache miss (no compilation) anywhere."""
    cache = str(tmp_path / "numba")
    first = pd.read_json(
        io.StringIO(
            _python(
                "from reliquant.trees.kernel_cache import compile_kernels\n"
                "print(compile_kernels().to_json(orient='records'))",
                cache,
            )
        ),
        orient="records",
    )
    assert (first["status"] == "compiled").all(), first
    assert first["cache_dir"].str.startswith(cache).all(), first["cache_dir"]
    second = pd.read_json(
        io.StringIO(
            _python(
                WORKLOAD + "\nfrom reliquant.trees.kernel_cache import cache_stats\n"
                "print(cache_stats().to_json(orient='records'))",
                cache,
            )
        ),
        orient="records",
    )
    assert tuple(second.columns) == STATS_COLUMNS
    assert second["cache_misses"].sum() == 0, second[second["cache_misses"] > 0]
    loaded = second[second["signatures"] > 0]
    assert (loaded["cache_hits"] == loaded["signatures"]).all(), loaded
    # every kernel the workload called was one compile_kernels listed
    assert set(loaded["kernel"]) <= set(first["kernel"]), set(loaded["kernel"])
    assert {"kernel.count_chunk", "kernel.chunk_normal_scores", "grid_kernel._grid_chunk"} <= set(
        loaded["kernel"]
    )


def test_cache_stats_counts_this_process():
    """cache_stats lists every kernel once; a kernel called here counts a hit or a miss."""
    compile_kernels()
    stats = cache_stats()
    assert not stats["kernel"].duplicated().any()
    chunk = stats.set_index("kernel").loc["kernel.count_chunk"]
    assert chunk["signatures"] >= 1
    assert chunk["cache_hits"] + chunk["cache_misses"] >= 1
