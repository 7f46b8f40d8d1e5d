"""The perturbed-MNIST quirks ``docs/pmnist.md`` quotes, generated from the run's statistics.

:func:`quirks_block` returns the markdown of the generated block ``pmnist_quirks``
(:mod:`reliquant.core.docs`) from the per-block summary (``results/pmnist/summary.parquet``,
:data:`reliquant.pmnist.reproduction.partitions.SUMMARY_SCHEMA`): per corruption, levels whose bytes are
identical, the pixels level 1 changes, and how the background (pixels 0 in the clean image)
changes from level 1 to level 10.
"""

from __future__ import annotations

import pandas as pd

from reliquant.pmnist.reproduction.partition_names import CLEAN

__all__ = [
    "highlight_blocks",
    "identical_levels",
    "quirks_block",
]


def identical_levels(block: pd.DataFrame) -> str:
    """Groups of levels of one corruption with equal digests, e.g. ``6 = 7``; ``–`` if none."""
    groups = block.groupby("sha256", sort=False)["level"].apply(sorted)
    same = sorted(levels for levels in groups if len(levels) > 1)
    return ", ".join(" = ".join(str(v) for v in levels) for levels in same) or "–"


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def quirks_block(summary: pd.DataFrame) -> str:
    """One row per corruption: identical levels, pixels changed at level 1, background pixels
    changed and background mean (0-255) at the first and last level."""
    lines = [
        "| corruption | levels with identical bytes | pixels changed, level 1 "
        "| background pixels changed, L1 -> L10 | background mean, L1 -> L10 |",
        "|:---|---|---:|---:|---:|",
    ]
    corrupted = summary[summary["corruption"] != CLEAN]
    for name, block in corrupted.groupby("corruption", sort=True):
        block = block.sort_values("level")
        first, last = block.iloc[0], block.iloc[-1]
        lines.append(
            f"| {name} | {identical_levels(block)} | {_pct(first.frac_changed)} "
            f"| {_pct(first.frac_background_changed)} -> {_pct(last.frac_background_changed)} "
            f"| {first.background_mean:.1f} -> {last.background_mean:.1f} |"
        )
    return "\n".join(lines) + "\n"


def highlight_blocks(summary: pd.DataFrame) -> dict[str, str]:
    """Every generated pmnist block, by name."""
    return {"pmnist_quirks": quirks_block(summary)}
