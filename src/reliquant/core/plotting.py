"""Shared matplotlib style so every figure of the project reads the same way."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["PALETTE", "apply_style"]

#: One colour per method/metric family, reused across figures.
PALETTE = plt.get_cmap("tab10").colors


def apply_style() -> None:
    """Apply the project's figure style (call once before drawing)."""
    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "font.size": 9,
            "axes.titlesize": 10,
            "axes.labelsize": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "legend.frameon": False,
            "legend.fontsize": 8,
            "svg.hashsalt": "reliquant",
        }
    )
