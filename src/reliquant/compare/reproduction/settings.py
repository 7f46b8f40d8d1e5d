"""Constraints between keys of the ``compare`` config section and the topics it reads,
checked before any job is planned.

The JSON schema checks each key alone; these need several sections at once: the MNIST
corruptions must be partitions the mlm topic scores (their softmax is reused), and each NBC
cell must be a cell of the nbc topic's grid (its per-instance metrics are reused), with a
training set that exists there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["check_settings", "mnist_corruptions"]


def mnist_corruptions(compare: Mapping[str, Any], mlm_corruptions: Sequence[str]) -> list[str]:
    """The corruptions of the MNIST cases: ``compare.mnist.corruptions``, or (null) every
    partition the mlm topic scores."""
    chosen = compare["mnist"]["corruptions"]
    return list(chosen) if chosen else list(mlm_corruptions)


def check_settings(
    compare: Mapping[str, Any], mlm_corruptions: Sequence[str], nbc: Mapping[str, Any]
) -> None:
    """Raise a ValueError naming the keys at fault when ``compare`` does not fit the
    configuration of the topics it reads (module docstring)."""
    problems = []
    chosen = mnist_corruptions(compare, mlm_corruptions)
    unknown = [c for c in chosen if c not in mlm_corruptions]
    if unknown:
        problems.append(
            f"compare.mnist.corruptions {unknown} are not scored by the mlm topic "
            f"(mlm.perturbed.corruptions: {list(mlm_corruptions)})"
        )
    if len(set(chosen)) != len(chosen):
        problems.append(f"compare.mnist.corruptions has duplicates: {chosen}")
    n_grid = [int(n) for n in nbc["grid"]["n_train"]]
    g_grid = [float(g) for g in nbc["grid"]["gamma"]]
    seen = set()
    for cell in compare["nbc"]["cells"]:
        key = (int(cell["n_train"]), float(cell["gamma"]))
        if key[0] not in n_grid or key[1] not in g_grid:
            problems.append(
                f"compare.nbc.cells: (n_train {key[0]}, gamma {key[1]:g}) is not a cell of the "
                f"nbc grid (nbc.grid.n_train {n_grid}, nbc.grid.gamma {g_grid})"
            )
        if key in seen:
            problems.append(f"compare.nbc.cells lists (n_train {key[0]}, gamma {key[1]:g}) twice")
        seen.add(key)
    if int(compare["nbc"]["train_set"]) >= int(nbc["fit"]["n_train_sets"]) * int(
        nbc["design"]["n_shift"]
    ):
        problems.append(
            f"compare.nbc.train_set {compare['nbc']['train_set']} is not a training set of the "
            "nbc cells (there are nbc.design.n_shift x nbc.fit.n_train_sets of them)"
        )
    if problems:
        raise ValueError("compare config: " + "; ".join(problems))
