"""A user's ``mlm`` case (config ``custom:``): the Misclassification Likelihood Matrix of their
classifier, from a table of its softmax outputs.

The ``softmax`` table holds one row per example: columns ``p0 .. p{K-1}`` (the softmax
``s(x)``, eq. 1) and ``label`` (the true class ``0 .. K-1``, compared by value:
``1``, ``1.0`` and ``"1"`` are class 1; a missing label is refused naming its row). :func:`misclassification_likelihood`
computes the class centroids (eq. 3, refined by K-Means unless ``refine`` is false, Section
3.3 a), from the ``reference`` table when given (e.g. the training set, as in the paper), the
nearest distances ``D`` (eqs. 4-5) and the likelihoods ``L`` (eq. 6). The figure is ``L``
as a heatmap, as the paper's Figure 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.custom import CaseResult, softmax_columns
from reliquant.core.io import frame_to_markdown
from reliquant.core.labels import match_labels
from reliquant.core.plotting import apply_style
from reliquant.mlm.likelihood import MLMResult, misclassification_likelihood
from reliquant.mlm.reproduction.figures import heatmap

__all__ = ["SCHEMA", "run_case"]

#: The long table of D and L (MLMResult.to_frame), one row per off-diagonal pair.
SCHEMA = pa.schema(
    [
        ("true", pa.int64()),
        ("predicted", pa.int64()),
        ("distance", pa.float64()),
        ("likelihood", pa.float64()),
    ]
)


def _arrays(frame: pd.DataFrame, where: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        columns = softmax_columns(list(frame.columns))
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from err
    # the true class by value: a CSV's 1.0 (one empty cell makes the column float) or "1" is
    # class 1; a missing label, or one outside 0 .. K-1, is refused naming its row
    labels = match_labels(frame["label"], range(len(columns)), what=f"{where}, column 'label'")
    return frame[columns].to_numpy(np.float64), labels


def run_case(
    softmax: pd.DataFrame,
    *,
    case: Mapping[str, Any],
    reference: pd.DataFrame | None = None,
) -> CaseResult:
    """``D`` and ``L`` of one ``mlm`` case (module docstring) as a long table (``true``,
    ``predicted``, ``distance``, ``likelihood``; ``K (K - 1)`` rows) and a markdown summary
    with ``L`` as a matrix. ``case``: the case's config entry (optional ``refine`` (default
    true), ``seed`` (0)); ``reference``: the ``reference`` table, if the case has one."""
    name = case["name"]
    s, y = _arrays(softmax, f"custom case {name!r}, key 'softmax'")
    ref: dict[str, np.ndarray] = {}
    if reference is not None:
        ref_s, ref_y = _arrays(reference, f"custom case {name!r}, key 'reference'")
        ref = {"reference_softmax": ref_s, "reference_labels": ref_y}
    try:
        res = misclassification_likelihood(
            s, y, refine=bool(case.get("refine", True)), seed=int(case.get("seed", 0)), **ref
        )
    except ValueError as err:
        raise ValueError(f"custom case {name!r}: {err}") from err
    table = res.to_frame()
    return CaseResult(table, SCHEMA, _markdown(res, case, len(s)), _figure(res, name))


def _figure(res: MLMResult, name: str):
    """``L`` (eq. 6) as an annotated heatmap with an empty diagonal (the paper's Figure 2, for
    any K)."""
    import matplotlib.pyplot as plt

    apply_style()
    k = res.n_classes
    side = min(2.0 + 0.45 * k, 12.0)
    fig, ax = plt.subplots(figsize=(side + 1.0, side))
    labels = list(range(k))
    im = heatmap(
        ax, res.likelihood, "YlGnBu", fmt="{:.3f}", xlabels=labels, ylabels=labels,
        annotate=k <= 15,
    )  # fmt: skip
    ax.set_xlabel("misclassified as (centroid c)")
    ax.set_ylabel("true class y")
    ax.set_title(f"{name}: Misclassification Likelihood Matrix")
    fig.colorbar(im, ax=ax, shrink=0.85, label="likelihood $L_{y,c}$")
    return fig


def _markdown(res: MLMResult, case: Mapping[str, Any], n: int) -> str:
    k = res.n_classes
    source = f"`{case['reference']}`" if "reference" in case else "the same table"
    refined = "refined by K-Means" if case.get("refine", True) else "not refined"
    text = (
        f"{n} examples of `{case['softmax']}`, K = {k} classes; centroids from {source} "
        f"({refined}; Section 3.3 a). L[y, c] (eq. 6): how likely examples of true class y "
        "are mistaken for class c (rows sum to 1); D (eq. 5) is in the parquet table."
    )
    matrix = pd.DataFrame(res.likelihood, columns=[f"L[., {c}]" for c in range(k)])
    matrix.insert(0, "true class", [str(c) for c in range(k)])  # text: kept out of floatfmt
    centroids = pd.DataFrame(
        {
            "class": np.arange(k),
            "n_correct": res.n_correct,
            "n_misclustered": res.n_misclustered,
            "centroid_shift": res.centroid_shift,
        }
    )
    return (
        f"# Your case {case['name']}: Misclassification Likelihood Matrix\n\n{text}\n\n"
        + frame_to_markdown(matrix, floatfmt=".4f")
        + "\nCentroids (eq. 3, Table 1's shift):\n\n"
        + frame_to_markdown(centroids, floatfmt=".3g")
    )
