"""Bring-your-own cases of the workflow (config ``custom:``): checked before any job is planned.

Each case is a mapping with a ``name`` (``[a-z0-9_]+``, unique: it names
``results/custom/<name>.parquet``) and a ``kind``:

* ``nbc``: ``train`` and ``test`` tables and the ``target`` column (paper 000's robustness of
  a Naive Bayes fitted on ``train``; optional ``alpha``, else cross-validated with ``alphas``,
  ``cv_folds`` and ``seed``; optional ``bootstrap``: that many bootstrap models for the
  uncertainty metrics u_m .. u_e; optional ``categories``: ``{column: [value, ...]}``, the
  possible values of a column, so that a test value declared but unseen in training is scored
  with eq. 18's smoothing);
* ``trees``: a ``model`` file (XGBoost ``.json``/``.ubj``, LightGBM ``.txt``, scikit-learn
  ``.skops``), the ``samples`` table (optional ``columns``: its feature columns, matched to
  the model's feature names by name when the model knows them, else in the model's order),
  ``noise: {variance: v}`` (a number, or one per feature) and ``time_budget`` seconds per
  sample (papers 001/002; optional ``seed``, ``confidence``, ``max_boxes`` + ``max_draws``;
  optional ``sha256``: the model file's SHA-256, checked before any job);
* ``mlm``: a ``softmax`` table with columns ``p0 .. p{K-1}`` and ``label`` (paper 004's
  Misclassification Likelihood Matrix; optional ``reference`` table of the same form for the
  centroids, ``refine``, ``seed``).

Tables are CSV (with a header row) or parquet. :func:`check_cases` checks what the JSON schema
cannot: unique names, that each file exists and has the right suffix, that named columns are
in the files, a model file's ``sha256``, and keys that depend on each other; every problem is
one line naming the case, the key and the path. A file outside the working directory (the
repository) is allowed; it is logged (logger ``reliquant.custom``, a warning) with its case,
key, path and SHA-256, so that the run's log says which bytes were read. The JSON schema (``workflow/schemas/custom.schema.yaml``) checks types
and bounds. No Snakemake here: the workflow calls these functions when it loads.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.errors import ConfigError
from reliquant.core.io import TABLE_SUFFIXES, file_sha256, table_file_columns, table_file_rows

__all__ = [
    "CASE_KEYS",
    "MODEL_SUFFIXES",
    "CaseError",
    "CaseResult",
    "case_inputs",
    "case_name_pattern",
    "case_runtime",
    "check_cases",
    "label_values",
    "outside_files",
    "softmax_columns",
]

log = logging.getLogger("reliquant.custom")

NAME_PATTERN = re.compile(r"[a-z0-9_]+")
#: Model files a ``trees`` case reads (reliquant.trees.load_model).
MODEL_SUFFIXES = (".json", ".ubj", ".txt", ".skops")
#: Per kind: (required keys, optional keys). ``name`` and ``kind`` are required everywhere.
CASE_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "nbc": (
        ("train", "test", "target"),
        ("alpha", "alphas", "cv_folds", "seed", "bootstrap", "categories"),
    ),
    "trees": (
        ("model", "samples", "noise", "time_budget"),
        ("columns", "seed", "confidence", "max_boxes", "max_draws", "sha256"),
    ),
    "mlm": (("softmax",), ("reference", "refine", "seed")),
}
#: Per kind, the keys that name input files and the suffixes each may have.
FILE_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "nbc": {"train": TABLE_SUFFIXES, "test": TABLE_SUFFIXES},
    "trees": {"model": MODEL_SUFFIXES, "samples": TABLE_SUFFIXES},
    "mlm": {"softmax": TABLE_SUFFIXES, "reference": TABLE_SUFFIXES},
}
#: Per kind, the file key whose SHA-256 the optional ``sha256`` key gives.
DIGEST_KEYS: dict[str, str] = {"trees": "model"}
SHA256_PATTERN = re.compile(r"[0-9a-fA-F]{64}")
#: Minutes a ``trees`` job needs besides its samples (imports, kernel compilation, writing).
TREES_OVERHEAD_S = 60.0
#: Runtime headroom (CONTRIBUTING.md, Resources: wall time x 3, at least 5 minutes).
RUNTIME_FACTOR, MIN_RUNTIME = 3.0, 5


class CaseError(ConfigError):
    """A custom case the workflow cannot run; one line per problem, each naming the case."""


@dataclass(frozen=True)
class CaseResult:
    """What one custom job writes: its table with the Arrow schema to write it with, a
    markdown summary (the report shows its HTML page) and a matplotlib figure (PNG)."""

    table: pd.DataFrame
    schema: pa.Schema
    markdown: str
    figure: Any = None


def _where(case: Any, index: int) -> str:
    name = case.get("name") if isinstance(case, Mapping) else None
    return f"custom case {name!r}" if isinstance(name, str) else f"custom case #{index}"


def softmax_columns(columns: Sequence[str]) -> list[str]:
    """The softmax columns ``p0 .. p{K-1}`` of a table's column names, in class order; a
    ValueError says what is missing (``K >= 2`` contiguous columns and ``label``)."""
    numbers = sorted(int(c[1:]) for c in columns if re.fullmatch(r"p\d+", str(c)))
    problems = []
    if len(numbers) < 2 or numbers != list(range(len(numbers))):
        got = [f"p{n}" for n in numbers]
        problems.append(f"softmax columns p0 .. p{{K-1}} (K >= 2) expected; got {got}")
    if "label" not in columns:
        problems.append("a 'label' column (the true class 0 .. K-1) expected")
    if problems:
        raise ValueError("; ".join(problems) + f" (columns: {list(columns)[:12]})")
    return [f"p{n}" for n in numbers]


def _check_file(where: str, key: str, value: Any, suffixes: Sequence[str], root: Path) -> bool:
    """Problems of one file key, raised as ValueError lines; True when the file can be read."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}, key {key!r}: expected a file path; got {value!r}")
    suffix = Path(value).suffix.lower()
    if suffix not in suffixes:
        raise ValueError(
            f"{where}, key {key!r}: {value}: expected a file ending in {', '.join(suffixes)}; "
            f"got {suffix or 'no suffix'!r}"
        )
    if not (root / value).is_file():
        raise ValueError(f"{where}, key {key!r}: {value}: no such file")
    return True


def _columns(where: str, key: str, path: str, root: Path) -> list[str]:
    try:
        return table_file_columns(root / path)
    except Exception as err:  # a truncated parquet file, a CSV that is not one
        raise ValueError(f"{where}, key {key!r}: {path}: cannot read its columns ({err})") from err


def _has_no_rows(path: Path) -> bool:
    """Whether a readable CSV or parquet table has no data row (a CSV: its header only)."""
    if path.suffix.lower() == ".parquet":
        return table_file_rows(path) == 0
    return len(pd.read_csv(path, nrows=1)) == 0


def _empty_tables(where: str, case: Mapping[str, Any], root: Path) -> list[str]:
    """A table of the case with no data row: nothing to fit, score or sample."""
    return [
        f"{where}, key {key!r}: {case[key]} has no data rows (a header only); a case needs "
        "at least one row in each of its tables"
        for key, suffixes in FILE_KEYS[case["kind"]].items()
        if key in case and suffixes == TABLE_SUFFIXES and _has_no_rows(root / case[key])
    ]


def _check_columns(where: str, case: Mapping[str, Any], root: Path) -> list[str]:
    """Cross-file and cross-key problems of one case whose files all exist."""
    kind, problems = case["kind"], _empty_tables(where, case, root)
    if kind == "nbc":
        target = case["target"]
        train = _columns(where, "train", case["train"], root)
        test = _columns(where, "test", case["test"], root)
        if target not in train:
            problems.append(
                f"{where}, key 'target': column {target!r} is not in {case['train']} "
                f"(columns: {train})"
            )
        missing = [c for c in train if c != target and c not in test]
        if missing:
            problems.append(
                f"{where}, key 'test': {case['test']} lacks the training columns {missing} "
                f"(columns: {test})"
            )
        categories = case.get("categories")
        if categories is not None:
            if not isinstance(categories, Mapping) or not all(
                isinstance(v, list) and v for v in categories.values()
            ):
                problems.append(
                    f"{where}, key 'categories': expected a mapping of column -> non-empty list "
                    f"of values; got {categories!r}"
                )
            else:
                unknown = [c for c in categories if str(c) not in train]
                if unknown:
                    problems.append(
                        f"{where}, key 'categories': {unknown} not columns of {case['train']} "
                        f"(columns: {train})"
                    )
    elif kind == "trees":
        present = _columns(where, "samples", case["samples"], root)
        columns = case.get("columns")
        if columns is not None:
            unknown = [c for c in columns if c not in present]
            if unknown:
                problems.append(
                    f"{where}, key 'columns': {unknown} not in {case['samples']} "
                    f"(columns: {present})"
                )
        n_features = len(columns if columns is not None else present)
        variance = case["noise"].get("variance") if isinstance(case["noise"], Mapping) else None
        if isinstance(variance, list) and len(variance) != n_features:
            of = "columns" if columns is not None else f"columns of {case['samples']}"
            problems.append(
                f"{where}, key 'noise.variance': {len(variance)} values for {n_features} "
                f"features (the {of})"
            )
        if ("max_boxes" in case) != ("max_draws" in case):
            problems.append(
                f"{where}, keys 'max_boxes' and 'max_draws': give both (a reproducible "
                "result, no time limit) or neither"
            )
    elif kind == "mlm":
        k = None
        for key in ("softmax", "reference"):
            if key not in case:
                continue
            names = _columns(where, key, case[key], root)
            try:
                cols = softmax_columns(names)
            except ValueError as err:
                problems.append(f"{where}, key {key!r}: {case[key]}: {err}")
                continue
            if k is not None and len(cols) != k:
                problems.append(
                    f"{where}, key 'reference': {case[key]} has K = {len(cols)} softmax "
                    f"columns, the softmax table K = {k}"
                )
            k = len(cols)
    return problems


def _check_digest(where: str, case: Mapping[str, Any], root: Path) -> str | None:
    """The problem with a case's ``sha256`` key (None when absent or matching): the file of
    :data:`DIGEST_KEYS` must have that SHA-256 (hex, either case)."""
    kind = case["kind"]
    if "sha256" not in case or kind not in DIGEST_KEYS:
        return None
    key, expected = DIGEST_KEYS[kind], case["sha256"]
    if not isinstance(expected, str) or not SHA256_PATTERN.fullmatch(expected):
        return f"{where}, key 'sha256': expected 64 hex digits; got {expected!r}"
    actual = file_sha256(root / case[key])
    if actual != expected.lower():
        return (
            f"{where}, key 'sha256': {case[key]} (key {key!r}) has SHA-256 {actual}, not the "
            f"configured {expected.lower()}; the file changed or the digest is wrong"
        )
    return None


def outside_files(
    cases: Sequence[Mapping[str, Any]], root: str | os.PathLike = "."
) -> list[tuple[str, str, str, str]]:
    """The input files of checked ``cases`` that lie outside ``root`` (the repository), as
    ``(case, key, path, sha256)``; symbolic links are resolved first."""
    base = Path(root).resolve()
    out = []
    for case in cases:
        for key, path in case_inputs(case).items():
            full = (base / path).resolve()
            if not full.is_relative_to(base):
                out.append((case["name"], key, path, file_sha256(full)))
    return out


def check_cases(
    cases: Sequence[Mapping[str, Any]] | None, root: str | os.PathLike = "."
) -> list[dict[str, Any]]:
    """The custom cases as plain dicts (in config order) once every check passes; else a
    :class:`CaseError` with one line per problem, each naming the case, the key and the path.

    Checked: each case is a mapping with a ``name`` matching ``[a-z0-9_]+``, unique, and a
    ``kind`` of :data:`CASE_KEYS`; its required keys are there and no key is unknown; every
    file key names an existing file (paths relative to ``root``, the workflow's working
    directory) with an allowed suffix and, for a table, at least one data row; the columns a
    case names are in its tables (``nbc``:
    ``target`` in ``train``, the training features in ``test``, the ``categories`` columns in
    ``train``; ``trees``: ``columns`` in ``samples`` and one ``noise.variance`` per feature
    when it is a list; ``mlm``: ``p0 .. p{K-1}`` and ``label``, the same K in
    ``reference``); ``max_boxes`` and ``max_draws`` together; a ``trees`` case's ``sha256``
    is its model file's SHA-256 (the message names both digests).

    Files outside ``root`` are allowed; once every check passed, each is logged (a warning
    of logger ``reliquant.custom``) naming its case, key, path and SHA-256
    (:func:`outside_files`).
    """
    root = Path(root)
    problems: list[str] = []
    seen: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for index, case in enumerate(cases or []):
        where = _where(case, index)
        if not isinstance(case, Mapping):
            problems.append(f"{where}: expected a mapping of keys; got {case!r}")
            continue
        name, kind = case.get("name"), case.get("kind")
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            problems.append(
                f"{where}, key 'name': {name!r} must match [a-z0-9_]+ (it names "
                "results/custom/<name>.parquet)"
            )
        elif name in seen:
            problems.append(
                f"{where}, key 'name': {name!r} is used by entries {seen[name]} and {index}; "
                "names must be unique"
            )
        else:
            seen[name] = index
        if kind not in CASE_KEYS:
            problems.append(f"{where}, key 'kind': {kind!r} must be one of {sorted(CASE_KEYS)}")
            continue
        required, optional = CASE_KEYS[kind]
        allowed = {"name", "kind", *required, *optional}
        unknown = sorted(set(case) - allowed)
        missing = [key for key in required if key not in case]
        if unknown:
            problems.append(
                f"{where}: unknown key(s) {unknown} for kind {kind!r}; allowed: {sorted(allowed)}"
            )
        if missing:
            problems.append(f"{where}: kind {kind!r} needs the key(s) {missing}")
        files_ok = not missing
        for key, suffixes in FILE_KEYS[kind].items():
            if key in case:
                try:
                    _check_file(where, key, case[key], suffixes, root)
                except ValueError as err:
                    problems.append(str(err))
                    files_ok = False
        if files_ok:
            try:
                problems.extend(_check_columns(where, case, root))
            except ValueError as err:
                problems.append(str(err))
            digest = _check_digest(where, case, root)
            if digest:
                problems.append(digest)
        out.append(dict(case))
    if problems:
        raise CaseError("invalid custom cases:\n  " + "\n  ".join(problems))
    for name, key, path, digest in outside_files(out, root):
        log.warning(
            "custom case %r, key %r: %s is outside the repository (%s); read with sha256 %s",
            name, key, path, Path(root).resolve(), digest,
        )  # fmt: skip
    return out


def case_inputs(case: Mapping[str, Any]) -> dict[str, str]:
    """The input files of one checked case, by key (``train``, ``model``, ``softmax`` ...)."""
    return {key: case[key] for key in FILE_KEYS[case["kind"]] if key in case}


def case_name_pattern(cases: Sequence[Mapping[str, Any]], kind: str) -> str:
    """A regular expression matching exactly the names of the cases of ``kind`` (one that
    matches nothing when there are none): the ``case`` wildcard of that kind's rule."""
    names = [case["name"] for case in cases if case["kind"] == kind]
    return "|".join(names) if names else "(?!)"


def case_runtime(case: Mapping[str, Any], root: str | os.PathLike = ".") -> int:
    """Minutes a job of one checked case may run (its SLURM ``runtime``).

    ``trees``: every sample gets ``time_budget`` seconds, so ``3 (n_samples time_budget +
    60 s)``; other kinds: 10 minutes. At least 5 minutes (CONTRIBUTING.md, Resources).
    """
    if case["kind"] != "trees":
        return 10
    n = table_file_rows(Path(root) / case["samples"])
    seconds = n * float(case["time_budget"]) + TREES_OVERHEAD_S
    return max(MIN_RUNTIME, math.ceil(RUNTIME_FACTOR * seconds / 60.0))


def label_values(values: Sequence[Any]) -> tuple[list[Any], pa.DataType]:
    """Class labels as a column and its Arrow type: int64 when every label is an integer
    (bools excepted), else strings."""
    items = [v.item() if isinstance(v, np.generic) else v for v in values]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        return items, pa.int64()
    return [str(v) for v in items], pa.string()
