"""Issue 42 split large modules into folders of small ones: every name that was importable from
an old module (its top-level definitions, listed from the file before the split) still is, from
the old path, and each old module's ``__all__`` still lists what it listed."""

from __future__ import annotations

import importlib

import pytest

#: Old module -> (its ``__all__`` before the split, its other public top-level names).
BEFORE = {
    "reliquant.core.io": (
        [
            "DIGEST_KEY",
            "ZIP_SEAL_PREFIX",
            "PARQUET_COMPRESSION",
            "PARQUET_WRITE_OPTIONS",
            "TABLE_SUFFIXES",
            "IMAGE_LAYOUT_VERSION",
            "DamagedFileError",
            "VerifiedParquetFile",
            "arrow_to_images",
            "atomic_path",
            "damaged_outputs",
            "file_sha256",
            "frame_to_markdown",
            "image_type",
            "images_to_arrow",
            "open_parquet",
            "pandas_index_columns",
            "read_frame",
            "read_table",
            "read_table_file",
            "remove_damaged_outputs",
            "save_figure",
            "seal_zip",
            "table_digest",
            "table_file_columns",
            "table_file_rows",
            "write_frame",
            "write_markdown",
            "write_row_groups",
            "write_table",
            "verify_zip_seal",
            "write_text",
            "zip_seal_problem",
        ],
        ["log"],
    ),
    "reliquant.trees.kernel": (
        [
            "BLOCK",
            "LINEAR_MAX",
            "MASK_ACROSS_MAX",
            "ZLINEAR_MAX",
            "bins_of",
            "chunk_seeds",
            "compile_for",
            "count_agree",
            "dispatchers",
            "kernel_signatures",
            "labels_of_bins",
            "profile_draws",
            "sample_bins",
            "shared_normal_scores",
        ],
        [],
    ),
    "reliquant.pmnist.fused": (
        [
            "BLOCKS",
            "TO_FLOAT",
            "Block",
            "corrupt_block",
            "poisson_breaks",
            "salt_threshold",
            "sum784",
            "symmetry",
        ],
        ["JIT", "N", "NP", "SUM784_SIZES", "SUM784_STARTS"],
    ),
    "reliquant.core.datasets": (
        [
            "BENCHMARK_CLASS",
            "IDX_IMAGES_MAGIC",
            "IDX_LABELS_MAGIC",
            "IRIS_FEATURES",
            "IRIS_SCHEMA",
            "MNIST_RAW_FILES",
            "MNIST_SCHEMA",
            "MNIST_TEST_CLASS_COUNTS",
            "PIMA_COLUMNS",
            "PIMA_RANGES",
            "PIMA_SCHEMA",
            "ChecksumError",
            "IdxFormatError",
            "ManifestEntry",
            "benchmark_schema",
            "download_from_mirrors",
            "file_digest",
            "iris_table",
            "load_mnist",
            "load_mnist_split",
            "mnist_table",
            "pima_table",
            "read_benchmark_csv",
            "read_idx",
            "read_manifest",
            "verified_files",
            "verify_manifest",
        ],
        ["log"],
    ),
    "reliquant.nbc.scoring": (
        [
            "DEFAULT_ALPHAS",
            "UNCERTAINTY_COLUMNS",
            "CategoryEncoder",
            "FittedTable",
            "bootstrap_uncertainty",
            "fit_table",
            "from_sklearn",
            "robustness",
        ],
        [],
    ),
    "reliquant.trees.reproduction.per_sample": (
        [
            "ANYTIME_SCHEMA",
            "NORTA_METHODS",
            "RUNTIME_COLUMNS",
            "TABLE1_SCHEMA",
            "TABLE2_SCHEMA",
            "anytime_norta_robustness",
            "anytime_norta_tables",
            "box_comparison",
            "certified_robustness",
            "grid_size",
            "mc_comparison",
            "norta_robustness",
            "norta_schema",
            "runtime_comparison",
        ],
        ["log"],
    ),
    "reliquant.trees.plan": (
        [
            "LEAF_CUT",
            "LINK_CODES",
            "MASK_LEAVES",
            "MASK_MIN_TREES",
            "MAX_CUTS",
            "Plan",
            "U53",
            "bin_ranges",
            "build_plan",
        ],
        [],
    ),
    "reliquant.trees.reproduction.paper": (
        [
            "MONTE_CARLO_NOTE",
            "NOT_RUN",
            "PIMA_MATCH_DISTANCES",
            "RUNTIME_METHODS",
            "RUNTIME_RATIOS",
            "TREE_PAPERS",
            "bounded_noise_claim",
            "draws_label",
            "faster_pruning_claim",
            "fully_robust",
            "mc_r2_claim",
            "method_name",
            "paper_tables",
            "pima_best_match",
            "pima_cell_name",
            "pima_comparisons",
            "pima_match_distances",
            "pima_match_sentence",
            "pima_sensitivity_comparisons",
            "pruning_claim",
            "ratio_lines",
            "runtime_comparisons",
            "runtime_ratios",
            "summary_markdown",
            "table1_comparisons",
            "table3_comparisons",
        ],
        [],
    ),
    "reliquant.compare.reproduction.evaluation": (
        [
            "CONTRAST_SCHEMA",
            "CURVE_SCHEMA",
            "DECLARED_SCHEMA",
            "HEADLINE_SCHEMA",
            "HYBRID_SCHEMA",
            "NOISE_SCHEMA",
            "POOLED",
            "pooled_case",
            "SPLIT_AUARC_SCHEMA",
            "TWO_CLASS_EQUIVALENTS",
            "VERDICTS",
            "case_order",
            "condition_case",
            "curve_table",
            "declared_pairs",
            "declared_table",
            "family_contrast",
            "headline_table",
            "holm",
            "hybrid_table",
            "identical_ranking",
            "noise_table",
            "paired_t",
            "pick_noise",
            "split_auarc",
            "tied_share",
        ],
        [],
    ),
}


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_every_name_of_a_split_module_is_still_importable_from_it(module: str) -> None:
    listed, others = BEFORE[module]
    imported = importlib.import_module(module)
    missing = [name for name in [*listed, *others] if not hasattr(imported, name)]
    assert missing == [], f"{module} lost {missing}"
    assert sorted(set(listed) - set(imported.__all__)) == [], f"{module}.__all__ shrank"
    namespace: dict = {}
    exec(f"from {module} import *", namespace)  # noqa: S102 - the star import users may write
    assert set(listed) <= set(namespace)


def test_the_io_names_are_the_objects_of_their_new_modules() -> None:
    """``reliquant.core.io.X`` is the object its new module defines (not a copy)."""
    import reliquant.core.io as io
    from reliquant.core.io import content_digest, parquet_writers, verified_parquet

    assert io.write_table is parquet_writers.write_table
    assert io.read_table is verified_parquet.read_table
    assert io.DIGEST_KEY is content_digest.DIGEST_KEY
    assert io.log is verified_parquet.log  # one logger, "reliquant.io"


@pytest.mark.parametrize(
    ("package", "siblings"),
    [
        ("reliquant.trees.kernel", ("agreement", "bins", "score_store", "threads")),
        ("reliquant.pmnist.fused", ("dispatch", "level_constants")),
    ],
)
def test_every_numba_function_of_a_split_package_lives_in_its_compiled_module(
    package: str, siblings: tuple[str, ...]
) -> None:
    """The compiled code of a split package stays in one file, ``compiled`` (numba's disk
    cache follows no call into another file): its siblings define no numba function, and
    ``reliquant.trees.kernel.dispatchers()`` (what ``kernel_cache`` compiles and counts) lists
    every one."""
    from numba.core.dispatcher import Dispatcher

    def defined(module) -> set[str]:
        return {
            n
            for n, f in vars(module).items()
            if isinstance(f, Dispatcher) and f.__module__ == module.__name__
        }

    top = importlib.import_module(package)
    compiled = importlib.import_module(f"{package}.compiled")
    for name in ("", *siblings):
        module = importlib.import_module(f"{package}.{name}" if name else package)
        assert defined(module) == set(), f"{module.__name__} defines numba functions"
    assert len(defined(compiled)) >= 10
    if hasattr(top, "dispatchers"):
        assert set(top.dispatchers()) == defined(compiled)
