"""Writing a file atomically: a temporary file next to the destination, renamed onto it.

``os.replace`` is atomic on POSIX, so a step that fails half-way leaves no valid-looking output
behind; a temporary file left by a killed writer is removed the next time the same output is
written. Every file written is logged (logger ``reliquant.io``) with its size and SHA-256
(:func:`log_written`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from reliquant.core.temporaries import stale_temporaries, temporary_prefix

__all__ = [
    "atomic_path",
    "file_sha256",
    "log_written",
]


log = logging.getLogger("reliquant.io")


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def log_written(path: str | os.PathLike, what: str = "") -> None:
    """Log that ``path`` was written (``what``: a detail such as its rows), with its size
    and SHA-256."""
    dest = Path(path)
    log.info("wrote %s%s (%d bytes, sha256 %s)", dest, what, dest.stat().st_size, file_sha256(dest))


def _remove_stale_temporaries(dest: Path) -> None:
    """Delete temporaries of ``dest`` left by a writer that was killed (SIGKILL, power loss);
    one whose writer still runs (a second ``snakemake --nolock``) stays
    (:func:`reliquant.core.temporaries.stale_temporaries`)."""
    for stale in stale_temporaries(dest):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            log.warning("removed %s, left by an interrupted write of %s", stale, dest)


def _current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    On any exception the temporary file is removed and ``path`` is left untouched.
    ``suffix`` defaults to the destination's suffix (some writers infer the format from it).
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(dest)
    fd, tmp = tempfile.mkstemp(
        dir=dest.parent,
        prefix=temporary_prefix(dest),
        suffix=suffix if suffix is not None else dest.suffix,
    )
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_current_umask())
    try:
        yield tmp_path
        os.replace(tmp_path, dest)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
