"""Text, markdown (with its HTML page) and figure files, each written atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from reliquant.core.io.atomic import atomic_path, log_written
from reliquant.core.report import markdown_to_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "frame_to_markdown",
    "save_figure",
    "write_markdown",
    "write_text",
]


def write_text(text: str, path: str | os.PathLike) -> None:
    """Write a text file (markdown tables, schedules) atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    log_written(path)


def write_markdown(
    text: str, path: str | os.PathLike, html_path: str | os.PathLike, title: str | None = None
) -> None:
    """Write markdown ``text`` to ``path`` and its HTML page (what the report shows) to
    ``html_path``, each atomically (:func:`reliquant.core.report.markdown_to_html`)."""
    write_text(text, path)
    write_text(markdown_to_html(text, title=title), html_path)


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 150) -> None:
    """Save a matplotlib figure atomically; the format follows the path's suffix.

    PNG metadata carries no software version or date, so reruns give identical files
    for identical figures.
    """
    suffix = Path(path).suffix.lower()
    metadata: dict[str, str | None] = {"Software": None}
    if suffix == ".pdf":
        metadata = {"Creator": None, "Producer": None, "CreationDate": None}
    elif suffix == ".svg":
        metadata = {"Date": None, "Creator": None}
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", metadata=metadata)
    log_written(path)


def frame_to_markdown(frame: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """Render a DataFrame as a GitHub markdown table (index dropped)."""
    return frame.to_markdown(index=False, floatfmt=floatfmt) + "\n"
