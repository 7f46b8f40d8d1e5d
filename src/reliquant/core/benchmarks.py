"""One markdown document from the benchmark reports of every topic (``bench/<topic>.py``)."""

from __future__ import annotations


def collect_benchmarks(sections: dict[str, str]) -> str:
    """One markdown document from each topic's benchmark report (topic -> markdown)."""
    lines = [
        "# reliquant benchmarks",
        "",
        "Each section was produced by `bench/<topic>.py` (rule `bench_<topic>`); ratios are "
        "measured side by side in one run, so they hold across machines better than seconds.",
    ]
    for topic, text in sections.items():
        body = text.strip()
        if body.startswith("# "):
            body = "\n".join(body.splitlines()[1:]).strip()
        lines += ["", f"## {topic}", "", body]
    return "\n".join(lines) + "\n"
