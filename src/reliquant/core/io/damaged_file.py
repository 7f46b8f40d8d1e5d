"""The error every check of a file the workflow wrote raises: :class:`DamagedFileError`.

Raised by the verified parquet readers (:mod:`reliquant.core.io.verified_parquet`), the content
digest's checks (:mod:`reliquant.core.io.content_digest`) and the zip seals
(:mod:`reliquant.core.io.zip_seal`); the message names the file and says what to do.
"""

from __future__ import annotations

import os

__all__ = [
    "DamagedFileError",
]


class DamagedFileError(OSError):
    """A file the workflow wrote (parquet, a sealed model) that differs from what was written,
    or that cannot be checked.

    The message names the file and says what to do (delete it and rerun the step that
    writes it); ``path`` holds the file's path.
    """

    def __init__(self, path: str | os.PathLike, problem: str, advice: str | None = None) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(
            f"{path}: {problem}; "
            + (
                advice
                or "the file changed after it was written (damaged or truncated): delete it "
                "and rerun the step that writes it (snakemake rebuilds it)"
            )
        )
