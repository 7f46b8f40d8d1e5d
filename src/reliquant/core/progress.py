"""Progress bars of the library's long calls, with one rule for when they draw.

A call that can run longer than a few seconds (``reliquant.trees.robustness_batch``, the
bootstrap of ``reliquant.nbc.robustness``, ``reliquant.mlm.predict_softmax``, ...) takes
``progress: bool | None = None`` and wraps its loop in :func:`progress_bar`, a ``tqdm`` bar
on stderr with the count, the rate and the time left. ``progress=True`` or ``False`` decides;
``None`` (the default) draws only for a person watching: stderr is a terminal or the code
runs in a Jupyter kernel, and the environment variable ``RELIQUANT_NO_PROGRESS`` is unset
(so workflow jobs, whose stderr is a log file, and test runs stay quiet).

Public API: :func:`show_progress`, :func:`progress_bar`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["progress_bar", "show_progress"]


def _watched() -> bool:
    """Whether a person is likely watching: stderr is a terminal, or a Jupyter kernel runs."""
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # a replaced or closed stream
        pass
    return "ipykernel" in sys.modules


def show_progress(progress: bool | None = None) -> bool:
    """Whether a progress bar draws: ``progress`` when it is ``True`` or ``False``; for
    ``None``, on when stderr is a terminal (or in a Jupyter kernel) and
    ``RELIQUANT_NO_PROGRESS`` is unset. Anything else is a ValueError naming it."""
    if progress is None:
        return not os.environ.get("RELIQUANT_NO_PROGRESS") and _watched()
    if progress is True or progress is False:
        return progress
    raise ValueError(f"progress must be True, False or None; got {progress!r}")


def progress_bar(
    iterable: Iterable | None = None,
    *,
    total: int | None = None,
    desc: str | None = None,
    unit: str = "it",
    progress: bool | None = None,
    **kwargs: Any,
):
    """A ``tqdm`` bar over ``iterable`` (or updated by hand with ``total``) on stderr, drawn
    when :func:`show_progress` says so; otherwise a disabled bar with the same interface.
    ``kwargs`` go to ``tqdm`` (``leave=False`` by default: the bar goes when the call ends)."""
    from tqdm import tqdm

    kwargs.setdefault("leave", False)
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not show_progress(progress),
                file=sys.stderr, **kwargs)  # fmt: skip
