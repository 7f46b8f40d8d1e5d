"""The temporary files of the atomic writers, named after their writer, so that one left by a
killed writer is told from one another writer is still filling.

:func:`reliquant.core.io.atomic_path` writes next to its destination ``<dir>/<name>`` into
``<dir>/.<name>.w<pid>-<host>.<random><suffix>`` (:func:`temporary_prefix`): the writing
process's id and the first 8 hex digits of the SHA-256 of its host name. Before a write,
the destination's temporaries whose writer is gone are removed (:func:`stale_temporaries`),
and only those: two ``snakemake --nolock`` runs in one tree may write the same output at
the same time, and removing the other's live temporary makes its rename fail. A temporary
is stale when

* its writer ran on this host and no process with its id runs any more
  (``os.kill(pid, 0)`` fails with ProcessLookupError);
* its writer ran on another host (a shared file system; its processes cannot be seen from
  here) and the file was last written more than :data:`STALE_AFTER_S` ago;
* it has no writer tag (written before tags were) and is older than :data:`STALE_AFTER_S`.

A live writer's temporary is never removed; a dead writer whose id another process reuses
leaves its temporary until that process ends (a leaked file, never a lost write).

Public API: :data:`STALE_AFTER_S`, :func:`stale_temporaries`, :func:`temporary_prefix`,
:func:`writer_gone`.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import time
from pathlib import Path

__all__ = ["STALE_AFTER_S", "stale_temporaries", "temporary_prefix", "writer_gone"]

#: Seconds after its last write that a temporary whose writer cannot be checked is stale.
STALE_AFTER_S = 24 * 3600.0
#: ``tempfile.mkstemp``'s random part: 8 characters of this alphabet.
_RANDOM = r"[a-z0-9_]{8}"


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8")).hexdigest()[:8]


def temporary_prefix(dest: Path) -> str:
    """The prefix of this process's temporary files of ``dest``: ``.<name>.w<pid>-<host>.``."""
    return f".{dest.name}.w{os.getpid()}-{_host_tag()}."


def _process_runs(pid: int) -> bool:
    """Whether a process with id ``pid`` runs on this host (``kill(pid, 0)``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def writer_gone(pid: int | None, host: str | None, age_s: float) -> bool:
    """Whether the writer of a temporary (its process id and host tag, both None for an
    untagged one) is gone, the temporary last written ``age_s`` seconds ago (module
    docstring)."""
    if pid is not None and host == _host_tag():
        return pid != os.getpid() and not _process_runs(pid)
    return age_s > STALE_AFTER_S


def stale_temporaries(dest: Path) -> list[Path]:
    """The temporary files of ``dest`` (in its folder) whose writer is gone
    (:func:`writer_gone`), to be removed before the next write of ``dest``."""
    pattern = re.compile(
        rf"\.{re.escape(dest.name)}\.(?:w(?P<pid>\d+)-(?P<host>[0-9a-f]{{8}})\.)?{_RANDOM}.*"
    )
    now = time.time()
    stale = []
    for path in dest.parent.glob(f".{dest.name}.*"):
        match = pattern.fullmatch(path.name)
        if match is None:
            continue
        try:
            age = now - path.stat().st_mtime
        except FileNotFoundError:  # renamed into place or removed meanwhile
            continue
        pid = int(match["pid"]) if match["pid"] else None
        if writer_gone(pid, match["host"], age):
            stale.append(path)
    return sorted(stale)
