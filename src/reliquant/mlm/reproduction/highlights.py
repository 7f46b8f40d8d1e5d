"""The MLM and perturbed-MNIST accuracy numbers the README and docs quote, from the run.

Each function returns the markdown of one generated block (:mod:`reliquant.core.docs`):
``mlm_results`` (paper 004: every number beside ours, and the claims), ``readme_mlm`` (the
README's short version), ``mlm_matrices`` (misclustered images, largest likelihoods) and
``pmnist_accuracy`` (accuracy of the trained CNN per corruption and level, for
``docs/pmnist.md``). Inputs: the summary's comparison and claim tables,
``results/mlm/accuracy.parquet`` (:data:`reliquant.mlm.reproduction.accuracy.ACCURACY_SCHEMA`),
``matrices.parquet``, ``misclustered.parquet`` and ``confusion_test.parquet``.
"""

from __future__ import annotations

import pandas as pd

from reliquant.core.paper import claim_lines, paper_section, picked_lines
from reliquant.mlm.reproduction.accuracy import accuracy_pivot

__all__ = [
    "README_ROWS",
    "accuracy_block",
    "highlight_blocks",
    "likelihood_vs_confusion",
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


def likelihood_vs_confusion(
    matrices: pd.DataFrame, confusion: pd.DataFrame, scope: str = "clean"
) -> pd.DataFrame:
    """Per true class ``y``: the most likely confusion by L (``argmax_{c != y} L[y, c]`` of
    ``scope``, eq. 6) beside the most frequent actual one (``argmax_{c != y} C[y, c]`` of
    the confusion counts of the same images; ``-1`` when none of its images is
    misclassified), with ``agree``. L ranks classes by how near the nearest misclassified
    example of ``y`` comes to each centroid (eqs. 5-6), not by how often ``y`` is confused,
    so the two need not agree."""
    cells = matrices[(matrices["scope"] == scope) & (matrices["true"] != matrices["predicted"])]
    off = confusion[confusion["true"] != confusion["predicted"]]
    rows = []
    for y, group in cells.groupby("true", sort=True):
        best = group.loc[group["likelihood"].idxmax()]
        errors = off[(off["true"] == y) & (off["count"] > 0)]
        actual = errors.loc[errors["count"].idxmax()] if len(errors) else None
        rows.append({
            "true": int(y), "by_likelihood": int(best["predicted"]),
            "likelihood": float(best["likelihood"]),
            "most_confused": -1 if actual is None else int(actual["predicted"]),
            "count": 0 if actual is None else int(actual["count"]),
        })  # fmt: skip
    out = pd.DataFrame(rows)
    if len(out):
        out["agree"] = out["by_likelihood"] == out["most_confused"]
    return out


def _confusion_line(matrices: pd.DataFrame, confusion: pd.DataFrame) -> str:
    both = likelihood_vs_confusion(matrices, confusion)
    cells = "; ".join(
        f"{r.true}: L {r.by_likelihood}, actual "
        + (f"{r.most_confused} ({r.count})" if r.most_confused >= 0 else "none")
        for r in both.itertuples(index=False)
    )
    return (
        "- Per true class of the clean test set, the most likely confusion by L (eq. 6) and the "
        "class its images are actually misclassified as most often (count): they agree in "
        f"{int(both['agree'].sum()) if len(both) else 0} of {len(both)} classes ({cells}). L "
        "is not a confusion-frequency estimate: it ranks classes by how near the nearest "
        "misclassified example comes to their centroids."
    )


def matrix_block(
    matrices: pd.DataFrame,
    misclustered: pd.DataFrame,
    n_top: int = 5,
    confusion: pd.DataFrame | None = None,
) -> str:
    """The misclustered training images (K-Means, Section 3.3), the largest off-diagonal
    likelihoods of the whole-set MLM (Figure 2) and of the mean over levels (eq. 9), and,
    with the clean test set's ``confusion`` counts, L's most likely confusion beside the
    most frequent actual one per class (:func:`likelihood_vs_confusion`)."""
    moves = "; ".join(
        f"#{r.index}: {r.label} -> cluster {r.cluster}" for r in misclustered.itertuples()
    )
    lines = [
        f"- Correctly classified training images that K-Means assigns to another class's "
        f"cluster: {len(misclustered)}" + (f" ({moves})." if len(misclustered) else "."),
        f"- Largest likelihoods of the whole-set MLM (Figure 2): {_top_cells(matrices, 'overall', n_top)}.",
        f"- Largest likelihoods of the mean over levels (eq. 9): {_top_cells(matrices, 'mean', n_top)}.",
    ]
    if confusion is not None:
        lines.append(_confusion_line(matrices, confusion))
    return "\n".join(lines) + "\n"


def highlight_blocks(
    comparisons: pd.DataFrame,
    claims: pd.DataFrame,
    accuracy: pd.DataFrame,
    matrices: pd.DataFrame,
    misclustered: pd.DataFrame,
    confusion: pd.DataFrame | None = None,
) -> dict[str, str]:
    """Every generated MLM block, by name (``confusion``: the clean test set's counts,
    ``results/mlm/confusion_test.parquet``)."""
    return {
        "mlm_results": results_block(comparisons, claims),
        "mlm_matrices": matrix_block(matrices, misclustered, confusion=confusion),
        "readme_mlm": readme_block(comparisons, claims),
        "pmnist_accuracy": accuracy_block(accuracy),
    }
