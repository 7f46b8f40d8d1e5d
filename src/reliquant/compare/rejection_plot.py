"""Accuracy-rejection curves on a grid of rejected fractions, their pointwise bands, and the
plot that draws them (what :meth:`reliquant.compare.ScoreVerdict.plot` shows).

* :func:`curve_at`: the curve (:func:`reliquant.compare.accuracy_rejection_curve`) at the
  rejected fractions of a grid (the workflow's curve table reads it too).
* :func:`group_curves`: the mean over groups of the per-group curves and their pointwise
  t-interval ``mean -/+ t_{(1+level)/2, G-1} sd / sqrt(G)``, clipped to [0, 1].
* :func:`bootstrap_curves`: the curves on all predictions and their pointwise percentile band
  over bootstrap resamples of the predictions (the same resamples for every score).
* :func:`plot_accuracy_rejection`: step lines (their mean is the AU-ARC) with filled bands.

Public API: :data:`CURVE_COLUMNS`, :func:`curve_at`, :func:`group_curves`,
:func:`bootstrap_curves`, :func:`plot_accuracy_rejection`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from reliquant.compare.rejection import accuracy_rejection_curve
from reliquant.core.seeding import block_rng

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CURVE_COLUMNS",
    "bootstrap_curves",
    "curve_at",
    "group_curves",
    "plot_accuracy_rejection",
]

#: The columns of :attr:`reliquant.compare.ScoreVerdict.curves` (long format, one row per
#: score and point).
CURVE_COLUMNS = ("score", "family", "rejected", "accuracy", "band_low", "band_high")


def curve_at(score: np.ndarray, correct: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The accuracy-rejection curve (:func:`reliquant.compare.accuracy_rejection_curve`) at
    the rejected fractions ``grid``: at each, the curve's value at the largest ``k / n`` not
    above it (the workflow's curve table and :attr:`ScoreVerdict.curves`)."""
    n = correct.size
    k = np.minimum(np.floor(grid * n + 1e-9).astype(np.int64), n - 1)
    return accuracy_rejection_curve(score, correct)[1][k]


def bootstrap_curves(
    s: np.ndarray, c: np.ndarray, grid: np.ndarray, n_resamples: int, level: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Curves ``(S, points)`` of the scores ``s`` ``(S, n)`` on all predictions and their
    pointwise percentile band over ``n_resamples`` bootstrap resamples of the predictions
    (``block_rng(seed, "which_score", "band")``, the same resamples for every score).
    Resample indices are positions: pass the predictions in an order that does not depend on
    how the user sorted them (:func:`reliquant.compare.crossfit.canonical_order`)."""
    curve = np.stack([curve_at(row, c, grid) for row in s])
    rng = block_rng(seed, "which_score", "band")
    boot = np.empty((n_resamples, *curve.shape))
    for b in range(n_resamples):
        idx = rng.integers(0, c.size, size=c.size)
        boot[b] = [curve_at(row[idx], c[idx], grid) for row in s]
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return curve, lo, hi


def group_curves(
    s: np.ndarray, c: np.ndarray, members: list[np.ndarray], grid: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mean over groups (``members``: the prediction indices of each) of the per-group
    curves ``(S, points)`` and their pointwise t-interval ``mean -/+ t_{(1+level)/2, G-1} sd
    / sqrt(G)``, clipped to [0, 1] (an accuracy)."""
    from scipy import stats

    per = np.stack([[curve_at(row[m], c[m], grid) for row in s] for m in members])
    mean = per.mean(axis=0)
    half = stats.t.ppf((1 + level) / 2, len(members) - 1) * per.std(axis=0, ddof=1)
    half /= math.sqrt(len(members))
    return mean, np.clip(mean - half, 0.0, 1.0), np.clip(mean + half, 0.0, 1.0)


def plot_accuracy_rejection(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    bands: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
    families: Mapping[str, str] | None = None,
    highlight: Sequence[str] = (),
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw accuracy-rejection curves: ``curves`` maps a name to ``(rejected, accuracy)``
    (as :func:`reliquant.compare.accuracy_rejection_curve` returns them), one step line each
    (``drawstyle="steps-post"``: the curve is constant between rejected fractions, and its
    mean is the AU-ARC). ``bands`` maps a name to ``(low, high)`` on the same rejected
    fractions, drawn as a filled band; ``families`` (name -> family) draws robustness scores
    solid and uncertainty scores dashed; ``highlight`` names the lines drawn thicker; ``title``
    the Axes' title. ``ax``: the Axes to draw on (default a new figure). Returns the Axes.

    Raises ``ValueError`` naming the curve or band whose arrays are not 1-D of equal length,
    or a band without its curve."""
    import matplotlib.pyplot as plt

    if not curves:
        raise ValueError("curves is empty: give name -> (rejected, accuracy)")
    bands = dict(bands or {})
    extra = sorted(set(bands) - set(curves))
    if extra:
        raise ValueError(f"bands {extra} have no curve: bands are drawn on curves of that name")
    new = ax is None
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6))
    colors = plt.get_cmap("tab10").colors
    for i, (name, pair) in enumerate(curves.items()):
        x, y = (np.asarray(v, dtype=np.float64) for v in pair)
        if x.ndim != 1 or x.shape != y.shape or x.size == 0:
            raise ValueError(
                f"curves[{name!r}] must be (rejected, accuracy), 1-D of equal length; got "
                f"shapes {x.shape} and {y.shape}"
            )
        color = colors[i % len(colors)]
        family = (families or {}).get(name)
        thick = name in highlight
        ax.plot(x, y, drawstyle="steps-post", color=color,
                linestyle="--" if family == "uncertainty" else "-",
                linewidth=2.2 if thick else 1.2, alpha=1.0 if thick or not highlight else 0.75,
                label=f"{name} ({family})" if family else name)  # fmt: skip
        if name in bands:
            lo, hi = (np.asarray(v, dtype=np.float64) for v in bands[name])
            if lo.shape != x.shape or hi.shape != x.shape:
                raise ValueError(
                    f"bands[{name!r}] must be (low, high) of the curve's length {x.size}; got "
                    f"shapes {lo.shape} and {hi.shape}"
                )
            ax.fill_between(x, lo, hi, step="post", color=color, alpha=0.2, linewidth=0)
    ax.set_xlabel("fraction rejected (least reliable first)")
    ax.set_ylabel("accuracy of the kept predictions")
    ax.set_xlim(0, 1)
    ax.legend(fontsize="small", loc="lower right")
    if title is not None:
        ax.set_title(title)
    if new:
        ax.figure.tight_layout()
    return ax
