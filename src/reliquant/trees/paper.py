"""Papers 001/002 beside our run: runtime ratios of Table 2 (machine-dependent, markdown only)."""

from __future__ import annotations

import pandas as pd


def runtime_ratio_lines(runtimes: pd.DataFrame, paper: dict[str, float]) -> list[str]:
    """Markdown lines with the Table 2 runtime ratios (medians over samples), ours vs paper's.

    Runtimes differ between machines, so only ratios are compared; they are kept out of the
    parquet outputs (which must be identical between runs).
    """
    med = runtimes.median(numeric_only=True)
    ours_prune = med["all_boxes"] / med["pruned_boxes"]
    paper_prune = paper["table2_all_boxes_median_s"] / paper["table2_pruned_median_s"]
    ours_mc = med["all_boxes"] / med["monte_carlo"]
    paper_mc = paper["table2_all_boxes_median_s"] / paper["table2_mc_s"]
    return [
        "| runtime ratio (Table 2, medians over samples) | paper | ours |",
        "|---|---:|---:|",
        f"| all boxes / 99 % boxes | {paper_prune:.0f}x | {ours_prune:.0f}x |",
        f"| all boxes / Monte Carlo (10^6 draws) | {paper_mc:.0f}x | {ours_mc:.1f}x |",
        f"| Monte Carlo / our exact engine | – | {med['monte_carlo'] / med['engine']:.0f}x |",
        f"| all boxes / our exact engine | – | {med['all_boxes'] / med['engine']:.0f}x |",
    ]
