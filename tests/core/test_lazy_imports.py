"""Start-up of the workflow's jobs: what a script imports before its first log line pulls in no
heavy package the job does not use (issue 24).

Each case imports, in a fresh interpreter, the library modules that jobs import at their top
and lists the heavy packages then loaded: one imported at module level where a function would
do (scikit-learn in ``reliquant.compare.hybrid``, scipy in ``reliquant.core.binomial``) costs
0.3-1 s in every job that imports the module without calling the function. (pandas is no such
case: pyarrow imports it on its first ``pa.array`` or ``to_numpy``, so every job loads it.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
HEAVY = ("matplotlib", "numba", "pandas", "scipy", "sklearn", "torch", "xgboost")

# (modules imported in this order, heavy packages those imports may load)
CASES = {
    # pandas: every compare job reads and writes data frames; scikit-learn (the hybrid's
    # logistic regression, the random forest) and scipy (Clopper-Pearson) are imported by the
    # functions that use them, so compare_cnn, _figures, _mnist_sample, _nbc, _paper and
    # docs_blocks do not pay for them
    "compare jobs": (
        [
            "reliquant.compare",
            "reliquant.compare.reproduction.evaluation",
            "reliquant.compare.reproduction.highlights",
            "reliquant.compare.reproduction.mnist",
            "reliquant.compare.reproduction.paper",
            "reliquant.compare.reproduction.tables",
            "reliquant.compare.reproduction.tabular",
        ],
        {"pandas"},
    ),
    # pandas: reliquant.core imports reliquant.core.io
    "Clopper-Pearson interval": (["reliquant.core.binomial"], {"pandas"}),
    # trees_table3_size draws no figure: the experiments' figures import matplotlib when they
    # draw (numba and scipy: the kernels and the noise models it runs)
    # trees_paper and docs_blocks read tables: the trees and pmnist packages import their
    # names on first use (PEP 562), so neither numba nor scipy is loaded (1.8-1.9 -> 0.4-0.6 s)
    "tables of the papers and doc blocks": (
        [
            "reliquant.compare.reproduction.highlights",
            "reliquant.core.docs",
            "reliquant.core.paper",
            "reliquant.mlm.reproduction.highlights",
            "reliquant.nbc.reproduction.highlights",
            "reliquant.pmnist.reproduction.highlights",
            "reliquant.trees.reproduction.highlights",
            "reliquant.trees.reproduction.paper",
        ],
        {"pandas"},
    ),
    "trees experiments": (
        ["reliquant.trees.reproduction.experiments"],
        {"numba", "pandas", "scipy"},
    ),
}


def heavy_loaded(modules: list[str]) -> set[str]:
    """The :data:`HEAVY` packages in ``sys.modules`` of a fresh interpreter after importing
    ``modules``."""
    code = "\n".join(
        [
            "import importlib, sys",
            f"for name in {modules!r}:",
            "    importlib.import_module(name)",
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))",
        ]
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return set(out.stdout.split())


@pytest.mark.parametrize("case", sorted(CASES))
def test_job_imports_load_no_unused_heavy_package(case: str) -> None:
    modules, allowed = CASES[case]
    extra = heavy_loaded(modules) - allowed
    assert not extra, f"importing {modules} loads {sorted(extra)} (import them where used)"


def test_the_check_sees_a_heavy_import() -> None:
    """The probe itself: importing a module that imports pandas at its top is seen."""
    assert "pandas" in heavy_loaded(["reliquant.nbc.reproduction.curves"])


@pytest.mark.parametrize("package", ["reliquant.pmnist", "reliquant.trees"])
def test_lazy_package_names_are_their_modules_objects(package: str) -> None:
    """Every name of a lazily importing package's ``__all__`` is the object its module defines
    (loaded on first use, then kept), ``dir()`` lists it, and an unknown name is refused."""
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        home = importlib.import_module(f"{package}.{module._HOMES[name]}")
        assert getattr(module, name) is getattr(home, name), name
        assert name in dir(module)
    assert set(module._HOMES) == set(module.__all__)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


@pytest.mark.slow
def test_importing_robustness_compiles_the_kernel_before_any_budget() -> None:
    """``import reliquant.trees`` alone loads no numba; importing ``robustness`` from it does,
    and compiles (or loads) the sampling kernel then: the kernels of a one-stump plan are
    already in the compiled set when the name is returned."""
    code = "\n".join(
        [
            "import sys",
            "import reliquant.trees",
            "assert 'numba' not in sys.modules",
            "from reliquant.trees import robustness",
            "from reliquant.trees.kernel import agreement",
            "print(len(agreement._COMPILED))",
        ]
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert int(out.stdout.split()[-1]) >= 1
