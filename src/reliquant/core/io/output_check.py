"""The damaged-output check run when a real run starts: which outputs no reader would accept.

:func:`damaged_outputs` checks, cheaply, the files it is given (a parquet file: ``PAR1`` at
both ends, a footer that parses, a record that parses and agrees with the footer, no data
read, about 0.2 ms a file; a sealed zip file such as a model: its seal, about 1 ms a MB) and
:func:`remove_damaged_outputs` deletes those no reader here would accept, with a warning.
``workflow/rules/common.smk`` calls it on the outputs of the jobs of a real run; no other file
is ever checked or removed.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from reliquant.core.io.damaged_file import DamagedFileError
from reliquant.core.io.verified_parquet import open_with_record
from reliquant.core.io.zip_seal import zip_seal_problem

__all__ = [
    "damaged_outputs",
    "remove_damaged_outputs",
]


log = logging.getLogger("reliquant.io")

_MAGIC = b"PAR1"


def _footer_problem(path: Path) -> str | None:
    """Why ``path`` would be refused by every reader here, from its footer alone; or None."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(4)
            handle.seek(max(0, size - 4))
            tail = handle.read(4)
    except OSError as err:
        return f"unreadable ({err})"
    if size < 12 or head != _MAGIC or tail != _MAGIC:
        return f"truncated or not parquet ({size} bytes, no PAR1 at both ends)"
    try:
        open_with_record(path, require_digest=True)
    except DamagedFileError as err:
        return err.problem
    return None


#: Suffixes of the files the workflow writes sealed as zip archives (:func:`seal_zip`).
_SEALED_SUFFIXES = (".pt",)


def _output_problem(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _footer_problem(path)
    if suffix in _SEALED_SUFFIXES:
        return zip_seal_problem(path)
    return None


def damaged_outputs(paths: Iterable[str | os.PathLike]) -> dict[Path, str]:
    """Those of ``paths`` that exist and that no reader here would accept: ``{path: why}``.

    Cheap: a parquet file's footer and digest record (no data read, :func:`read_table`
    checks the rest), a sealed file's seal (``.pt``, :func:`zip_seal_problem`). Files of
    other suffixes, and missing files, are not reported. Only the given paths are looked
    at: pass the outputs of a workflow's jobs, never a folder's contents.
    """
    found = {}
    for name in paths:
        path = Path(name)
        if not path.is_file():
            continue
        problem = _output_problem(path)
        if problem is not None:
            found[path] = problem
    return found


def remove_damaged_outputs(paths: Iterable[str | os.PathLike]) -> dict[Path, str]:
    """Delete those of ``paths`` that :func:`damaged_outputs` reports, each with a warning.

    For a workflow's outputs whose jobs will run again (``workflow/rules/common.smk``
    passes only the outputs of the jobs of a real run). Returns ``{deleted path: why}``.
    """
    removed = {}
    for path, problem in damaged_outputs(paths).items():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed[path] = problem
            log.warning("removed %s (%s); the job that writes it will run again", path, problem)
    return removed
