"""Logging set-up for workflow steps: one log file per job, also echoed to stderr."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

__all__ = ["progress_enabled", "setup_logging", "start_job"]


def setup_logging(log_path: str | os.PathLike | None, name: str = "reliquant") -> logging.Logger:
    """Send the ``reliquant`` loggers to ``log_path`` (created) and to stderr.

    Returns the named logger, after logging one line that marks the end of the caller's
    imports (the workflow benchmark's start-up boundary). Safe to call twice: handlers are
    replaced, not stacked.
    """
    root = logging.getLogger("reliquant")
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        root.removeHandler(handler)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    stream = logging.StreamHandler(sys.stderr)
    stream.setFormatter(fmt)
    root.addHandler(stream)
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(log_path, mode="w", encoding="utf-8")
        file_handler.setFormatter(fmt)
        root.addHandler(file_handler)
    log = logging.getLogger(name if name.startswith("reliquant") else f"reliquant.{name}")
    # The first line of every job's log: a script calls this after its imports, so the
    # workflow benchmark (reliquant.core.runtimes) reads start-up as job start -> this line.
    log.info("logging started (imports done)")
    return log


def start_job(log_path: str | os.PathLike | None, name: str = "reliquant") -> logging.Logger:
    """Start a workflow job: keep freed heap memory in the process, then :func:`setup_logging`.

    :func:`reliquant.core.allocator.retain_freed_memory` stops glibc from unmapping and
    re-faulting the blocks a job frees and allocates again on every step; results are
    unchanged. Every script calls this after its imports.
    """
    from reliquant.core.allocator import retain_freed_memory

    retained = retain_freed_memory()
    log = setup_logging(log_path, name)
    if not retained:
        log.info("heap thresholds left as they are (the C library is not glibc)")
    return log


def progress_enabled() -> bool:
    """Whether progress bars should draw (off when RELIQUANT_NO_PROGRESS is set)."""
    return not os.environ.get("RELIQUANT_NO_PROGRESS")
