"""Paper 004 beside our run: accuracies, Table 1 centroid shifts, and the paper's claims."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reliquant.core.paper import Claim, Comparison


def mlm_comparisons(accuracy: pd.DataFrame, centroid_shift: pd.DataFrame) -> list[Comparison]:
    """Paper 004's accuracies and Table 1 centroid shifts beside ours."""
    rows = [
        Comparison("004", r.quantity, r.paper, r.ours, "accuracy")
        for r in accuracy.itertuples(index=False)
        if not np.isnan(r.paper)
    ]
    rows += [
        Comparison("004", f"Table 1: centroid shift, class {int(c)}", float(paper), float(ours))
        for c, paper, ours in zip(
            centroid_shift["class"],
            centroid_shift["paper_distance"],
            centroid_shift["distance"],
            strict=True,
        )
    ]
    return rows


def mlm_claims(
    per_level: pd.DataFrame, centroid_shift: pd.DataFrame, moved_classes: list[int]
) -> list[Claim]:
    """Paper 004's claims: accuracy falls roughly linearly with the level, and K-Means moves
    the class means of ``moved_classes`` by about 1e-4 and the others by about 1e-14."""
    mean = per_level.groupby("level")["accuracy"].mean()
    x, y = mean.index.to_numpy(dtype=float), mean.to_numpy(dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1 - np.sum((y - (slope * x + intercept)) ** 2) / np.sum((y - y.mean()) ** 2)
    moved = sorted(int(c) for c in centroid_shift.loc[centroid_shift["distance"] > 1e-8, "class"])
    return [
        Claim(
            "004",
            "mean accuracy over corruptions decreases roughly linearly with the level",
            bool(slope < 0 and r2 >= 0.95),
            f"least-squares line: slope {slope:.4f} per level, R^2 = {r2:.3f}",
        ),
        Claim(
            "004",
            "K-Means leaves most class means in place (~1e-14) and moves a few by ~1e-4",
            0 < len(moved) < len(centroid_shift),
            f"moved by more than 1e-8: classes {moved}",
        ),
        Claim(
            "004",
            f"the classes whose means move are {sorted(moved_classes)}",
            moved == sorted(moved_classes),
            f"ours: {moved}",
        ),
    ]
