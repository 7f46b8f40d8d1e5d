"""The raw files' manifest (``checksums.tsv``: path, sha256, md5, mirrors) and its checks.

:func:`verify_manifest` checks every digest before anything is parsed; a missing or altered
file raises :class:`ChecksumError` naming the file and the expected and found digests.
:func:`open_maybe_gzip` opens a raw file, gunzipped when it is gzip.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reliquant.core.io import atomic_path

__all__ = [
    "ChecksumError",
    "ManifestEntry",
    "download_from_mirrors",
    "file_digest",
    "read_manifest",
    "verified_files",
    "open_maybe_gzip",
    "verify_manifest",
]


log = logging.getLogger("reliquant.core.datasets")


class ChecksumError(RuntimeError):
    """A raw file is missing or its digest differs from the manifest."""


@dataclass(frozen=True)
class ManifestEntry:
    """One raw file of the manifest."""

    path: str
    sha256: str
    md5: str | None
    mirrors: tuple[str, ...]


def read_manifest(manifest: str | os.PathLike) -> list[ManifestEntry]:
    """Parse ``checksums.tsv`` (tab-separated, ``#`` comments, header row)."""
    frame = pd.read_csv(manifest, sep="\t", comment="#", dtype=str, keep_default_na=False)
    expected = ["path", "sha256", "md5", "mirrors"]
    if list(frame.columns) != expected:
        raise ValueError(f"{manifest}: expected columns {expected}, found {list(frame.columns)}")
    entries = []
    for row in frame.itertuples(index=False):
        mirrors = tuple(m for m in row.mirrors.split() if m != "-")
        entries.append(
            ManifestEntry(
                row.path, row.sha256.lower(), None if row.md5 == "-" else row.md5, mirrors
            )
        )
    return entries


def file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB chunks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download_from_mirrors(entry: ManifestEntry, dest: Path, timeout: float = 30.0) -> bool:
    """Try each mirror for a missing file; keep it only if its SHA-256 matches.

    Returns True when a verified copy was written to ``dest``. Network errors are logged
    and the next mirror is tried (the same behaviour torchvision's MNIST has).
    """
    name = Path(entry.path).name
    for mirror in entry.mirrors:
        url = mirror.rstrip("/") + "/" + name
        try:
            with atomic_path(dest) as tmp:
                with (
                    urllib.request.urlopen(url, timeout=timeout) as response,
                    open(tmp, "wb") as out,
                ):
                    shutil.copyfileobj(response, out)
                found = file_digest(tmp)
                if found != entry.sha256:
                    raise ChecksumError(
                        f"{url}: downloaded file has sha256 {found}, expected {entry.sha256}"
                    )
            log.info("downloaded %s from %s", entry.path, url)
            return True
        except (urllib.error.URLError, OSError, ChecksumError) as err:
            log.warning("could not fetch %s: %s", url, err)
    return False


def verify_manifest(
    manifest: str | os.PathLike, allow_download: bool = False, dataset: str | None = None
) -> pd.DataFrame:
    """Check every manifest entry (paths relative to the manifest's folder), or only those of
    ``dataset`` (the path's first folder, e.g. ``mnist``).

    Returns one row per verified file: ``path`` (as in the manifest), ``file`` (where it
    lies), ``sha256`` and ``bytes``. A missing file is fetched from its mirrors when
    ``allow_download`` is true. Raises :class:`ChecksumError` naming the file, the expected
    and the found digest.
    """
    raw = Path(manifest).parent
    entries = read_manifest(manifest)
    if dataset is not None:
        entries = [e for e in entries if e.path.split("/")[0] == dataset]
        if not entries:
            raise ValueError(f"manifest {manifest} lists no file of data set {dataset!r}")
    rows = []
    for entry in entries:
        path = raw / entry.path
        if not path.exists() and not (
            allow_download and entry.mirrors and download_from_mirrors(entry, path)
        ):
            raise ChecksumError(
                f"raw file {path} is missing (expected sha256 {entry.sha256}); "
                "restore it from the repository (git checkout -- data/raw)"
            )
        found = file_digest(path)
        if found != entry.sha256:
            raise ChecksumError(
                f"raw file {path} is corrupt: sha256 expected {entry.sha256}, found {found}"
            )
        if entry.md5 is not None:
            found_md5 = file_digest(path, "md5")
            if found_md5 != entry.md5:
                raise ChecksumError(
                    f"raw file {path} is corrupt: md5 expected {entry.md5}, found {found_md5}"
                )
        rows.append(
            {"path": entry.path, "file": str(path), "sha256": found, "bytes": path.stat().st_size}
        )
    return pd.DataFrame(rows)


def verified_files(verified_tsv: str | os.PathLike) -> dict[str, Path]:
    """Map manifest path -> file location from the record written after verification."""
    frame = pd.read_csv(verified_tsv, sep="\t", dtype=str)
    return {row.path: Path(row.file) for row in frame.itertuples(index=False)}


def open_maybe_gzip(path: str | os.PathLike):
    """``path`` opened for reading bytes, gunzipped when it is gzip (its first two bytes)."""
    with open(path, "rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")
