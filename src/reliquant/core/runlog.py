"""Logging set-up for workflow steps: one log file per job, also echoed to stderr."""

from __future__ import annotations

import atexit
import logging
import os
import re
import sys
from pathlib import Path

__all__ = [
    "EXIT_PATTERN",
    "EXIT_RECORD",
    "LOG_FORMAT",
    "exit_record",
    "progress_enabled",
    "record_usage_at_exit",
    "setup_logging",
    "start_job",
]

#: The message of a job's last log record (:func:`exit_record`), which
#: :func:`reliquant.core.runtimes.read_exit_record` parses.
EXIT_RECORD = (
    "usage at exit: cpu {cpu:.3f} s (user {user:.3f} s, system {system:.3f} s), "
    "peak rss {rss:.1f} MB"
)
#: What :data:`EXIT_RECORD` reads back as (groups ``cpu`` and ``rss``).
EXIT_PATTERN = re.compile(
    r"usage at exit: cpu (?P<cpu>[0-9.]+) s \(user [0-9.]+ s, system [0-9.]+ s\), "
    r"peak rss (?P<rss>[0-9.]+) MB$"
)
#: Every job log's line format (the workflow benchmark reads its time stamps).
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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
    fmt = logging.Formatter(LOG_FORMAT)
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
    if log_path:
        record_usage_at_exit(log_path)
    if not retained:
        log.info("heap thresholds left as they are (the C library is not glibc)")
    return log


def progress_enabled() -> bool:
    """Whether progress bars should draw (off when RELIQUANT_NO_PROGRESS is set)."""
    return not os.environ.get("RELIQUANT_NO_PROGRESS")


def exit_record() -> str:
    """The process's CPU time and peak resident memory so far, as a log line (no newline).

    CPU is ``ru_utime + ru_stime`` of ``getrusage`` for the process (every thread, the
    interpreter's start-up included) plus its waited-for children; the peak RSS is the larger
    of the process's and its largest child's ``ru_maxrss``
    (:func:`reliquant.core.benchmarks.peak_rss_mb`). Both are the kernel's own counts:
    Snakemake's ``benchmark:`` file samples the process tree, after its first 30 half-second
    samples only every 30 s, so its ``cpu_time`` and ``max_rss`` miss whatever a job does
    after its last sample. The line is in :data:`LOG_FORMAT`, like every other record.
    """
    import resource  # POSIX only, like peak_rss_mb

    from reliquant.core.benchmarks import peak_rss_mb

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = own.ru_utime + kids.ru_utime
    system = own.ru_stime + kids.ru_stime
    rss = max(peak_rss_mb(), peak_rss_mb(children=True))
    message = EXIT_RECORD.format(cpu=user + system, user=user, system=system, rss=rss)
    fields = {"name": "reliquant.job", "levelno": logging.INFO, "levelname": "INFO"}
    record = logging.makeLogRecord({**fields, "msg": message})
    return logging.Formatter(LOG_FORMAT).format(record)


_EXIT_LOG: list[str] = []  # the log the exit record goes to (the last start_job's)


def _write_exit_record() -> None:
    """Append :func:`exit_record` to the job's log; a log that is gone is left alone."""
    try:
        with open(_EXIT_LOG[-1], "a", encoding="utf-8") as handle:
            handle.write(exit_record() + "\n")
    except OSError:
        pass


def record_usage_at_exit(log_path: str | os.PathLike) -> None:
    """End the job's log at interpreter exit, also after an exception, with one
    :func:`exit_record` line (the workflow benchmark's CPU and peak memory per job).

    The line is appended to the file directly, not through ``logging``, so that it does not
    depend on which handlers are still open at exit. Called again, only the newest
    ``log_path`` gets the line.
    """
    if not _EXIT_LOG:
        atexit.register(_write_exit_record)
    _EXIT_LOG.append(os.fspath(log_path))
