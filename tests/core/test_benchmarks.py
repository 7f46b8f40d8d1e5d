"""What the benchmarks share (reliquant.core.benchmarks): timing and memory-peak helpers, and
the markdown of their reports."""

from __future__ import annotations

import math
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest

from reliquant.core.benchmarks import (
    TracedPeak,
    best_time,
    collect_benchmarks,
    headline_markdown,
    headline_table,
    peak_rss_mb,
    report_body,
    report_summary,
    traced_memory_peak,
)


def test_collect_benchmarks_keeps_order_and_drops_inner_titles():
    text = collect_benchmarks({"nbc": "# NBC bench\n| a | b |", "mlm": "ratio 12x"})
    assert text.index("## nbc") < text.index("## mlm")
    assert "# NBC bench" not in text and "| a | b |" in text and "ratio 12x" in text


def test_headline_rows_of_every_report_make_the_readme_table():
    nbc = "# NBC\n| other | table |\n\n" + headline_markdown([("eps_loc", "99x", ">= 50x")])
    mlm = "# MLM\n\n" + headline_markdown([("train", "90 s", "< 240 s"), ("infer", "1", "2")])
    table = headline_table({"nbc": nbc, "mlm": mlm}).splitlines()
    assert table[2:] == [
        "| eps_loc | 99x | >= 50x |",
        "| train | 90 s | < 240 s |",
        "| infer | 1 | 2 |",
    ]
    assert "| other | table |" not in table
    with pytest.raises(ValueError, match="report trees has no '## Headline' section"):
        headline_table({"trees": "# T\n| a | b |"})
    assert report_body(nbc).startswith("| other | table |")


def test_report_summary_drops_collapsed_parts_and_the_headline():
    text = (
        "# Workflow benchmark\n\n| run | wall s |\n|---|---:|\n| default | 300 |\n\n"
        "## default run\n\n- wall time: 300 s\n\n<details><summary>per rule</summary>\n\n"
        "| rule | s |\n|---|---:|\n| a | 1 |\n\n</details>\n\n## smoke run\n\n- wall 80 s\n\n"
        "<details>\n| b | 2 |\n</details>\n\n"
    ) + headline_markdown([("Workflow", "300 s", "<= 240 s")])
    short = report_summary(text)
    assert short == (
        "| run | wall s |\n|---|---:|\n| default | 300 |\n\n## default run\n\n"
        "- wall time: 300 s\n\n## smoke run\n\n- wall 80 s\n"
    )
    assert report_summary(short) == short  # nothing left to drop


def test_best_time_is_the_fastest_call_and_returns_the_last_result():
    """Calls sleep 30, 10, 20 ms: the best is the 10 ms one (not the mean, not the last)."""
    delays = iter([0.03, 0.01, 0.02])
    calls = []

    def fn():
        time.sleep(next(delays))
        calls.append(len(calls))
        return len(calls)

    seconds, result = best_time(fn, 3)
    assert calls == [0, 1, 2] and result == 3
    assert 0.01 <= seconds < 0.02


def test_best_time_needs_one_call():
    with pytest.raises(ValueError, match="at least 1"):
        best_time(lambda: None, 0)
    assert best_time(lambda: "once", 1)[1] == "once"


def test_peak_rss_grows_with_a_touched_allocation():
    """A 400 MiB array written to (so that its pages are resident) puts the peak of a fresh
    process above 400 MiB, and by no more than that above the peak before it."""
    code = (
        "import numpy as np; from reliquant.core.benchmarks import peak_rss_mb\n"
        "before = peak_rss_mb()\n"
        "a = np.ones(400 * 2**20, dtype=np.uint8)\n"
        "print(before, peak_rss_mb())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = map(float, out.stdout.split())
    assert 400 <= after <= before + 400 + 50, (before, after)


def test_peak_rss_matches_getrusage_and_counts_children_apart():
    scale = 2**20 if sys.platform == "darwin" else 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
    assert math.isclose(peak_rss_mb(), own, rel_tol=0.05)
    subprocess.run([sys.executable, "-c", "import os"], check=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / scale
    assert math.isclose(peak_rss_mb(children=True), children, rel_tol=0.05)
    assert peak_rss_mb(children=True) > 0


def test_traced_memory_peak_sees_a_temporary_array():
    """The peak counts a 40 MiB array freed inside the block (the current size would not)."""
    with traced_memory_peak() as peak:
        assert math.isnan(peak.mb)
        big = np.zeros(40 * 2**20 // 8)
        big[:] = 1.0
        del big
    assert 40 <= peak.mb < 48, peak.mb
    assert not tracemalloc.is_tracing()
    assert isinstance(peak, TracedPeak)


def test_traced_memory_peak_does_not_nest_and_stops_on_error():
    with (
        pytest.raises(RuntimeError, match="does not nest"),
        traced_memory_peak(),
        traced_memory_peak(),
    ):
        pass
    assert not tracemalloc.is_tracing()
    with pytest.raises(KeyError), traced_memory_peak() as peak:
        raise KeyError("inside")
    assert not tracemalloc.is_tracing() and peak.mb >= 0
