"""Zip archives (a trained model) sealed with the SHA-256 of their own bytes.

:func:`seal_zip` writes the SHA-256 of every byte before it into the archive comment (which
zip readers, torch's among them, ignore); :func:`verify_zip_seal` checks it before the file is
read and raises :class:`~reliquant.core.io.damaged_file.DamagedFileError` naming the file.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from reliquant.core.io.damaged_file import DamagedFileError

__all__ = [
    "ZIP_SEAL_PREFIX",
    "seal_zip",
    "verify_zip_seal",
    "zip_seal_problem",
]


log = logging.getLogger("reliquant.io")

#: Start of the archive comment that seals a zip file (:func:`seal_zip`); 64 hex digits follow.
ZIP_SEAL_PREFIX = b"reliquant.digest sha256:"
_EOCD = b"PK\x05\x06"  # signature of a zip archive's end-of-central-directory record
_EOCD_SIZE = 22  # its size without the comment; the comment's length is its last 2 bytes
_SEAL_SIZE = len(ZIP_SEAL_PREFIX) + 64


def seal_zip(data: bytes) -> bytes:
    """A zip archive's bytes (no archive comment), sealed with their own SHA-256.

    The archive comment (the last field of the end-of-central-directory record) becomes
    ``ZIP_SEAL_PREFIX + sha256(b).hexdigest()``, where ``b`` is every byte of the archive
    before the comment's 2-byte length field. Zip readers (``torch.load``, ``zipfile``)
    ignore the comment, so the archive reads as before; :func:`verify_zip_seal` recomputes
    the hash. Deterministic: equal archives give equal sealed bytes.
    """
    if (
        len(data) < _EOCD_SIZE
        or data[-_EOCD_SIZE : -_EOCD_SIZE + 4] != _EOCD
        or data[-2:] != b"\0\0"
    ):
        raise ValueError(
            "expected a zip archive that ends with its end-of-central-directory record and "
            "has no archive comment"
        )
    body = data[:-2]
    seal = ZIP_SEAL_PREFIX + hashlib.sha256(body).hexdigest().encode()
    return body + len(seal).to_bytes(2, "little") + seal


def zip_seal_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a zip archive sealed by :func:`seal_zip` with its bytes unchanged
    (any bit flipped, a byte missing or added), or None when it is."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return f"unreadable ({err})"
    eocd = data[-(_SEAL_SIZE + _EOCD_SIZE) : -_SEAL_SIZE]
    seal = data[-_SEAL_SIZE:]
    if (
        len(data) < _SEAL_SIZE + _EOCD_SIZE
        or eocd[:4] != _EOCD
        or int.from_bytes(eocd[-2:], "little") != _SEAL_SIZE
        or not seal.startswith(ZIP_SEAL_PREFIX)
    ):
        return f"truncated or not sealed ({len(data)} bytes, no {ZIP_SEAL_PREFIX.decode()} seal at the end)"
    expected = seal[len(ZIP_SEAL_PREFIX) :].decode("ascii", errors="replace")
    actual = hashlib.sha256(data[: -(_SEAL_SIZE + 2)]).hexdigest()
    if actual != expected:
        return f"content SHA-256 {actual} differs from the sealed {expected}"
    return None


def verify_zip_seal(path: str | os.PathLike) -> None:
    """Raise :class:`DamagedFileError` naming ``path`` unless its seal matches its bytes
    (:func:`zip_seal_problem`); log the check."""
    problem = zip_seal_problem(path)
    if problem is not None:
        raise DamagedFileError(path, problem)
    log.info("read %s (seal verified)", path)
