"""The MLM and perturbed-MNIST accuracy numbers the README and docs quote, from the run.

Each function returns the markdown of one generated block (:mod:`reliquant.core.docs`):
``mlm_results`` (paper 004: every number beside ours, and the claims), ``readme_mlm`` (the
README's short version), ``mlm_matrices`` (misclustered images, largest likelihoods) and
``pmnist_accuracy`` (accuracy of the trained CNN per corruption and level, for
``docs/pmnist.md``). Inputs: the summary's comparison and claim tables,
``results/mlm/accuracy.parquet`` (:data:`reliquant.mlm.reproduction.accuracy.ACCURACY_SCHEMA`),
``matrices.parquet`` and ``misclustered.parquet``.
"""

from __future__ import annotations

import pandas as pd

from reliquant.core.paper import claim_lines, paper_section, picked_lines
from reliquant.mlm.reproduction.accuracy import accuracy_pivot

__all__ = [
    "README_ROWS",
    "accuracy_block",
    "highlight_blocks",
    "matrix_block",
    "readme_block",
    "results_block",
]

README_ROWS = (
    ("CNN test accuracy", "CNN test accuracy (the paper's train/test look swapped)"),
    ("mean accuracy at level 1", "mean accuracy over the 12 corruptions, level 1"),
    ("mean accuracy at level 10", "mean accuracy, level 10"),
    ("maximum over corruption x level", "maximum over corruption x level"),
    ("minimum over corruption x level", "minimum over corruption x level"),
    ("brightness, level 1", "brightness, level 1"),
    ("brightness, level 10", "brightness, level 10"),
)


def results_block(comparisons: pd.DataFrame, claims: pd.DataFrame) -> str:
    """Paper 004: its numbers beside ours (accuracies, Table 1) and its claims."""
    return "\n".join(paper_section(comparisons, claims, "004")) + "\n"


def readme_block(comparisons: pd.DataFrame, claims: pd.DataFrame) -> str:
    """The README's table of MLM numbers beside the paper's, and the claims."""
    lines = picked_lines(comparisons, README_ROWS)
    lines += ["", *claim_lines(claims[claims["paper"] == "004"])]
    return "\n".join(lines) + "\n"


def accuracy_block(accuracy: pd.DataFrame) -> str:
    """Accuracy (%) of the trained CNN per corruption (rows) and level (columns), with the
    clean test accuracy and the mean over corruptions per level."""
    wide = accuracy_pivot(accuracy) * 100
    levels = list(wide.columns)
    lines = ["| corruption | " + " | ".join(str(v) for v in levels) + " |"]
    lines.append("|:---|" + "---:|" * len(levels))
    for name, row in wide.iterrows():
        lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
    lines.append("| **mean** | " + " | ".join(f"{v:.1f}" for v in wide.mean()) + " |")
    clean = accuracy[accuracy["corruption"] == "clean"]["accuracy"]
    text = "\n".join(lines) + "\n"
    if len(clean):
        text += f"\nClean test set: {100 * float(clean.iloc[0]):.2f} %.\n"
    return text


def _top_cells(matrices: pd.DataFrame, scope: str, n: int) -> str:
    cells = matrices[(matrices["scope"] == scope) & (matrices["true"] != matrices["predicted"])]
    top = cells.nlargest(n, "likelihood")
    return ", ".join(
        f"{r.true} -> {r.predicted} ({r.likelihood:.2f})" for r in top.itertuples(index=False)
    )


def matrix_block(matrices: pd.DataFrame, misclustered: pd.DataFrame, n_top: int = 5) -> str:
    """The misclustered training images (K-Means, Section 3.3) and the largest off-diagonal
    likelihoods of the whole-set MLM (Figure 2) and of the mean over levels (eq. 9)."""
    moves = "; ".join(
        f"#{r.index}: {r.label} -> cluster {r.cluster}" for r in misclustered.itertuples()
    )
    lines = [
        f"- Correctly classified training images that K-Means assigns to another class's "
        f"cluster: {len(misclustered)}" + (f" ({moves})." if len(misclustered) else "."),
        f"- Largest likelihoods of the whole-set MLM (Figure 2): {_top_cells(matrices, 'overall', n_top)}.",
        f"- Largest likelihoods of the mean over levels (eq. 9): {_top_cells(matrices, 'mean', n_top)}.",
    ]
    return "\n".join(lines) + "\n"


def highlight_blocks(
    comparisons: pd.DataFrame,
    claims: pd.DataFrame,
    accuracy: pd.DataFrame,
    matrices: pd.DataFrame,
    misclustered: pd.DataFrame,
) -> dict[str, str]:
    """Every generated MLM block, by name."""
    return {
        "mlm_results": results_block(comparisons, claims),
        "mlm_matrices": matrix_block(matrices, misclustered),
        "readme_mlm": readme_block(comparisons, claims),
        "pmnist_accuracy": accuracy_block(accuracy),
    }
