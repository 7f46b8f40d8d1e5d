"""What the benchmarks of every topic (``bench/<topic>.py``) share: timing and memory-peak
helpers, and the markdown of their reports (one document, one headline table).

Timing: :func:`best_time` (the shortest wall time of a few calls: the machine is shared, so
the minimum is the least disturbed). Memory: :func:`peak_rss_mb` (the process's resident
peak so far, or that of its finished children) and :func:`traced_memory_peak` (the peak of
Python allocations inside a block, ``tracemalloc``).
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "HEADLINE",
    "TracedPeak",
    "best_time",
    "collect_benchmarks",
    "headline_markdown",
    "headline_table",
    "peak_rss_mb",
    "read_headline",
    "report_body",
    "report_summary",
    "traced_memory_peak",
]

_T = TypeVar("_T")


def best_time(fn: Callable[[], _T], repeats: int = 3) -> tuple[float, _T]:
    """The shortest wall time of ``repeats`` calls of ``fn`` and the last call's result.

    Parameters
    ----------
    fn
        Called with no argument (wrap arguments in a ``lambda``).
    repeats
        How many calls; at least 1. The minimum over calls is the time least disturbed by
        other work on a shared machine; warm-up (compilation, caches) is the caller's.

    Returns
    -------
    tuple
        ``(seconds, result)``: ``time.perf_counter`` seconds of the fastest call, and what the
        last call returned.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident set size so far, in MiB (``getrusage`` ``ru_maxrss``).

    Parameters
    ----------
    children
        False: this process. True: the largest of its terminated, waited-for children (e.g.
        the workers of a finished process pool), not their sum.

    Returns
    -------
    float
        MiB (``ru_maxrss`` is KiB on Linux, bytes on macOS).
    """
    import resource  # POSIX only: imported here so that the module loads everywhere

    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    maxrss = resource.getrusage(who).ru_maxrss
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024


@dataclass
class TracedPeak:
    """The peak of Python allocations of a :func:`traced_memory_peak` block, in MiB (NaN
    until the block ends)."""

    mb: float = math.nan


@contextlib.contextmanager
def traced_memory_peak() -> Iterator[TracedPeak]:
    """Trace Python allocations (``tracemalloc``) inside the block; its peak lands in ``.mb``.

    Counts what Python allocators hand out (numpy arrays included), not the process's resident
    memory; tracing slows allocation-heavy code down. Not nestable: a block inside another
    (or inside code that already traces) raises ``RuntimeError``.

    Examples
    --------
    >>> with traced_memory_peak() as peak:
    ...     data = bytearray(8 * 2**20)
    >>> peak.mb >= 8
    True
    """
    if tracemalloc.is_tracing():
        raise RuntimeError("tracemalloc is already tracing: traced_memory_peak does not nest")
    peak = TracedPeak()
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()


def collect_benchmarks(sections: dict[str, str]) -> str:
    """One markdown document from each topic's benchmark report (topic -> markdown)."""
    lines = [
        "# reliquant benchmarks",
        "",
        "Each section was produced by `bench/<topic>.py` (rule `bench_<topic>`); ratios are "
        "measured side by side in one run, so they hold across machines better than seconds.",
    ]
    for topic, text in sections.items():
        lines += ["", f"## {topic}", "", report_body(text).strip()]
    return "\n".join(lines) + "\n"


#: Heading of the few-rows summary every benchmark report ends with (README's table).
HEADLINE = "## Headline"


def headline_markdown(rows: Sequence[tuple[str, str, str]]) -> str:
    """The closing section of a benchmark report: one row per target, ``(benchmark, measured,
    target)``; :func:`headline_table` collects these rows of every topic for the README."""
    lines = [HEADLINE, "", "| benchmark | measured | target |", "|---|---|---|"]
    lines += [f"| {b} | {m} | {t} |" for b, m, t in rows]
    return "\n".join(lines) + "\n"


def read_headline(text: str, source: str = "<report>") -> list[str]:
    """The table rows of a report's headline section; a ValueError names a report without."""
    if HEADLINE not in text:
        raise ValueError(f"benchmark report {source} has no '{HEADLINE}' section")
    body = text.split(HEADLINE, 1)[1].splitlines()
    rows = [line for line in body if line.startswith("| ")]
    return [r for r in rows if not r.startswith("| benchmark | measured | target |")]


def headline_table(sections: Mapping[str, str]) -> str:
    """One table of every topic's headline rows (topic -> report markdown), in order."""
    lines = ["| benchmark | measured | target |", "|---|---|---|"]
    for topic, text in sections.items():
        lines += read_headline(text, topic)
    return "\n".join(lines) + "\n"


def report_body(text: str) -> str:
    """A report without its top-level title (for a docs page's generated block)."""
    body = text.strip()
    if body.startswith("# "):
        body = "\n".join(body.splitlines()[1:]).strip()
    return body + "\n"


def report_summary(text: str) -> str:
    """:func:`report_body` without its collapsed parts (``<details>`` ... ``</details>``) and
    its headline section: the short form of a long report for a page's generated block (the
    README's ``bench_workflow_timings``)."""
    body = report_body(text).split(f"\n{HEADLINE}", 1)[0]
    body = re.sub(r"\n?<details>.*?</details>\n?", "\n", body, flags=re.S)
    return re.sub(r"\n{3,}", "\n\n", body).strip() + "\n"
