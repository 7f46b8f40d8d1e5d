"""Constraints between keys of the ``compare`` config section and the topics it reads, and
the sizes its data allows, checked before any job is planned.

The JSON schema checks each key alone; these need several sections at once, or the size of
a data set: the MNIST corruptions must be partitions the mlm topic scores (their softmax is
reused); each NBC cell must be a cell of the nbc topic's grid (its per-instance metrics are
reused, every training set of it); ``mnist.n_clean`` and
``mnist.n_per_corruption`` images are drawn without replacement from the test images of the
Perturbed MNIST partitions (:func:`partition_images`); the scikit-learn table's split
(:func:`split_sizes` of :data:`TABLE_ROWS`) holds at least one test row and at least
``table.cv_folds`` training rows (each fold of the cross-validation needs one). The benchmark sets
(:func:`check_benchmarks`): each configured set is a table the data topic converts
(``data.benchmarks``), has a title (:data:`reliquant.compare.reproduction.tables.BENCHMARK_TITLES`),
a declared comparison ``compare.comparisons.bench_<name>``, and only the hyperparameters its
model kind takes; a ``bench_<name>`` comparison without its set is refused too (it would
declare a comparison nothing computes). The dynamic-selection protocol
(:func:`check_selection`): its data sets (and those of its ``default`` case) are tables the
data topic converts (``data.benchmarks``), ``k_range`` is ``[k_min, k_max]`` with
``k_min <= k_max``, and the validation share leaves a test part
(``validation_fraction < 1 - train_fraction``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reliquant.compare.reproduction.tables import BENCHMARK_TITLES, benchmark_dataset
from reliquant.core.datasets import MNIST_TEST_CLASS_COUNTS

__all__ = [
    "TABLE_ROWS",
    "check_benchmarks",
    "check_selection",
    "check_settings",
    "mnist_corruptions",
    "partition_images",
    "split_sizes",
]

#: Rows of each table bundled with scikit-learn that the compare topic reads
#: (``sklearn.datasets.load_<name>``).
TABLE_ROWS: dict[str, int] = {"breast_cancer": 569, "wine": 178}


def split_sizes(n: int, test_fraction: float) -> tuple[int, int]:
    """``(n_train, n_test)`` of a random split of ``n`` rows holding out ``test_fraction``:
    ``n_test = round(test_fraction n)`` (ties to even, Python's ``round``)."""
    n_test = int(round(test_fraction * n))
    return n - n_test, n_test


def partition_images(images_per_class: int | None) -> int:
    """Test images of every Perturbed MNIST partition: all 10,000 (``None``), else the first
    ``images_per_class`` of each digit, ``sum_c min(images_per_class, n_c)`` with ``n_c``
    the digit's test images (:data:`reliquant.core.datasets.MNIST_TEST_CLASS_COUNTS`)."""
    if images_per_class is None:
        return sum(MNIST_TEST_CLASS_COUNTS)
    return sum(min(int(images_per_class), n) for n in MNIST_TEST_CLASS_COUNTS)


def mnist_corruptions(compare: Mapping[str, Any], mlm_corruptions: Sequence[str]) -> list[str]:
    """The corruptions of the MNIST cases: ``compare.mnist.corruptions``, or (null) every
    partition the mlm topic scores."""
    chosen = compare["mnist"]["corruptions"]
    return list(chosen) if chosen else list(mlm_corruptions)


def _size_problems(compare: Mapping[str, Any], images_per_class: int | None) -> list[str]:
    """The sizes of ``compare`` that its data cannot hold (module docstring)."""
    problems = []
    n_images = partition_images(images_per_class)
    which = (
        "all" if images_per_class is None else f"the first {int(images_per_class)} of each digit"
    )
    for key in ("n_clean", "n_per_corruption"):
        n = compare["mnist"][key]
        if n > n_images:
            problems.append(
                f"compare.mnist.{key} = {n} exceeds the {n_images} test images of the Perturbed "
                f"MNIST partitions (pmnist.images_per_class = "
                f"{'null' if images_per_class is None else images_per_class}: {which})"
            )
    table = compare["table"]
    rows = TABLE_ROWS.get(table["name"])
    if rows is not None:
        n_train, n_test = split_sizes(rows, table["test_fraction"])
        split = (
            f"compare.table.name = {table['name']} has {rows} rows; test_fraction "
            f"{table['test_fraction']} holds out {n_test}"
        )
        if n_test < 1:
            problems.append(f"compare.table.test_fraction = {table['test_fraction']}: {split}")
        if table["cv_folds"] > n_train:
            problems.append(
                f"compare.table.cv_folds = {table['cv_folds']} exceeds the {n_train} training "
                f"rows ({split}): each fold of the cross-validation needs a row"
            )
    return problems


def check_settings(
    compare: Mapping[str, Any],
    mlm_corruptions: Sequence[str],
    nbc: Mapping[str, Any],
    *,
    images_per_class: int | None,
) -> None:
    """Raise a ValueError naming the keys at fault when ``compare`` does not fit the
    configuration of the topics it reads or the size of its data (module docstring);
    ``images_per_class``: ``pmnist.images_per_class``."""
    problems = _size_problems(compare, images_per_class)
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
    if problems:
        raise ValueError("compare config: " + "; ".join(problems))


def check_benchmarks(compare: Mapping[str, Any], data_benchmarks: Sequence[str]) -> None:
    """Raise a ValueError naming the keys at fault when ``compare.benchmarks`` does not fit
    ``data.benchmarks`` (``data_benchmarks``), the known titles, ``compare.comparisons`` or
    its model kinds (module docstring)."""
    from reliquant.trees.reproduction.models import model_hyperparameters

    problems = []
    sets = dict(compare["benchmarks"])
    comparisons = compare["comparisons"]
    for name, entry in sets.items():
        key = f"compare.benchmarks.{name}"
        if name not in data_benchmarks:
            problems.append(f"{key}: {name!r} is not in data.benchmarks {list(data_benchmarks)}")
        if name not in BENCHMARK_TITLES:
            problems.append(
                f"{key}: {name!r} has no title in reliquant.compare.reproduction.tables."
                f"BENCHMARK_TITLES ({', '.join(BENCHMARK_TITLES)})"
            )
            continue
        if benchmark_dataset(name) not in comparisons:
            problems.append(
                f"{key} has no declared comparison compare.comparisons.{benchmark_dataset(name)}"
            )
        model = entry["model"]
        accepted = model_hyperparameters(model["kind"])
        unknown = sorted(set(model) - {"kind"} - set(accepted))
        if unknown:
            problems.append(
                f"{key}.model: kind {model['kind']} takes no {', '.join(unknown)} "
                f"(hyperparameters: {', '.join(accepted)})"
            )
    declared = {f"bench_{n}" for n in sets}
    orphans = sorted(k for k in comparisons if k.startswith("bench_") and k not in declared)
    if orphans:
        problems.append(
            f"compare.comparisons {orphans} declare benchmark sets that compare.benchmarks does "
            f"not list ({', '.join(sets) or 'none'})"
        )
    if problems:
        raise ValueError("compare config: " + "; ".join(problems))


def check_selection(compare: Mapping[str, Any], data_benchmarks: Sequence[str]) -> None:
    """Raise a ValueError naming the keys at fault when ``compare.selection`` does not fit
    ``data.benchmarks`` (``data_benchmarks``) or is inconsistent (module docstring)."""
    sel = compare["selection"]
    problems = []
    for key, names in (
        ("datasets", sel["datasets"]),
        ("default.datasets", sel["default"]["datasets"]),
    ):
        unknown = [n for n in names if n not in data_benchmarks]
        if unknown:
            problems.append(
                f"compare.selection.{key}: {unknown} are not in data.benchmarks "
                f"{list(data_benchmarks)}"
            )
    k_min, k_max = sel["k_range"]
    if k_min > k_max:
        problems.append(f"compare.selection.k_range = {[k_min, k_max]}: k_min must be <= k_max")
    train, val = sel["train_fraction"], sel["validation_fraction"]
    if not val < 1 - train:
        problems.append(
            f"compare.selection.validation_fraction = {val} must be below 1 - "
            f"compare.selection.train_fraction = {1 - train:g} (the rest is the test part)"
        )
    if problems:
        raise ValueError("config compare.selection:\n  " + "\n  ".join(problems))
