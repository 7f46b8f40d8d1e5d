"""Figures of Perturbed MNIST: sample grids (Figure 6 style) and intensity per level.

matplotlib is imported inside the plotting functions, so the rest of the package does not
need it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from reliquant.core.io import read_table
from reliquant.pmnist.registry import N_LEVELS
from reliquant.pmnist.reproduction.partitions import CLEAN, read_images

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "grid_examples",
    "iter_sample_grids",
    "plot_mean_intensity",
    "plot_sample_grid",
    "read_grid_cells",
    "sample_grid_mosaic",
    "GRID_GAP",
]


def grid_examples(clean_path: str | os.PathLike, example: int = 0) -> dict[int, int]:
    """``{class: test_index}``: the ``example``-th image of each class in the clean partition
    (in file order; only its ``label`` and ``test_index`` columns are read)."""
    table = read_table(clean_path, columns=["label", "test_index"])
    lab = table.column("label").to_numpy()
    ti = table.column("test_index").to_numpy()
    out = {}
    for c in np.unique(lab):
        members = ti[lab == c]
        if example >= members.size:
            raise ValueError(
                f"pmnist.grid.example = {example} but class {c} has only {members.size} images"
            )
        out[int(c)] = int(members[example])
    return out


def read_grid_cells(
    paths: Iterable[str | os.PathLike], test_indices: Iterable[int]
) -> dict[tuple[str, int, int], np.ndarray]:
    """``{(corruption, level, test_index): image}`` of the given digits in every partition.

    The corruption is the file name without ``.parquet`` (``clean`` for level 0), as the
    workflow names its partitions.
    """
    wanted = list(test_indices)
    cells: dict[tuple[str, int, int], np.ndarray] = {}
    for path in paths:
        name = Path(path).stem
        for (level, test_index), img in read_images(path, wanted).items():
            cells[(name, level, test_index)] = img
    return cells


def plot_sample_grid(
    cells: Mapping[tuple[str, int, int], np.ndarray],
    corruptions: list[str],
    test_index: int,
    title: str = "",
) -> Figure:
    """Grid of one digit: rows = corruptions, columns = levels 0 (clean) .. 10 (Figure 6 style).

    ``cells[(name, level, test_index)]`` holds the images (clean under ``("clean", 0, i)``).
    """
    return next(iter_sample_grids(cells, corruptions, [(test_index, title)]))[1]


def iter_sample_grids(
    cells: Mapping[tuple[str, int, int], np.ndarray],
    corruptions: list[str],
    grids: Iterable[tuple[int, str]],
) -> Iterator[tuple[int, Figure]]:
    """:func:`plot_sample_grid` of each ``(test_index, title)`` of ``grids``, in one figure.

    The figure is built once and each grid replaces the mosaic and the title of the one
    before, so save each figure before taking the next: the figure saved is the one
    :func:`plot_sample_grid` draws (the same file, byte for byte). Yields
    ``(test_index, figure)``.
    """
    fig, image, titled = None, None, False
    for test_index, title in grids:
        mosaic = sample_grid_mosaic(cells, corruptions, test_index)
        if fig is None:
            fig, image = _sample_grid_figure(mosaic, corruptions)
        else:
            image.set_data(mosaic)
        if title or titled:  # a grid without a title clears the one before
            fig.suptitle(f"{title}; columns: level 0 (clean) to 10" if title else "", fontsize=9)
            titled = True
        yield test_index, fig


#: Pixels between two cells of :func:`sample_grid_mosaic` (white, as the page around them).
GRID_GAP = 3


def sample_grid_mosaic(
    cells: Mapping[tuple[str, int, int], np.ndarray], corruptions: list[str], test_index: int
) -> np.ndarray:
    """The grid of one digit as one uint8 image: row ``r`` (corruption ``corruptions[r]``),
    column ``c`` (level ``c``, 0 = clean) holds that cell's image at
    ``[r (h + GRID_GAP) : r (h + GRID_GAP) + h, c (w + GRID_GAP) : ...]``; the gaps are white
    (255)."""
    clean = np.asarray(cells[(CLEAN, 0, test_index)])
    h, w = clean.shape
    n_rows, n_cols = len(corruptions), N_LEVELS + 1
    out = np.full(
        (n_rows * (h + GRID_GAP) - GRID_GAP, n_cols * (w + GRID_GAP) - GRID_GAP), 255, np.uint8
    )
    for r, name in enumerate(corruptions):
        for level in range(n_cols):
            img = clean if level == 0 else cells[(name, level, test_index)]
            top, left = r * (h + GRID_GAP), level * (w + GRID_GAP)
            out[top : top + h, left : left + w] = img
    return out


def _sample_grid_figure(mosaic: np.ndarray, corruptions: list[str]) -> tuple[Figure, object]:
    """The grid figure of one digit, untitled: one image (the mosaic, drawn pixel for pixel
    by a single ``imshow``, not 132 axes), levels over the columns, corruptions by the rows;
    returns the figure and its image."""
    import matplotlib.pyplot as plt

    from reliquant.core.plotting import apply_style

    apply_style()
    n_rows, n_cols = len(corruptions), N_LEVELS + 1
    cell_h = (mosaic.shape[0] + GRID_GAP) / n_rows
    cell_w = (mosaic.shape[1] + GRID_GAP) / n_cols
    fig, ax = plt.subplots(figsize=(n_cols * 0.75, n_rows * 0.8))
    image = ax.imshow(mosaic, cmap="gray", vmin=0, vmax=255, interpolation="nearest")
    ax.set_xticks([c * cell_w + (cell_w - GRID_GAP - 1) / 2 for c in range(n_cols)])
    ax.set_xticklabels([str(level) for level in range(n_cols)], fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([r * cell_h + (cell_h - GRID_GAP - 1) / 2 for r in range(n_rows)])
    ax.set_yticklabels([name.replace("_", " ") for name in corruptions], fontsize=8)
    ax.tick_params(length=0)
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)
    fig.tight_layout()
    return fig, image


def plot_mean_intensity(frame: pd.DataFrame) -> Figure:
    """Mean pixel intensity (0..255) and fraction of white pixels against level.

    One line per corruption of ``frame`` (rows of :data:`~reliquant.pmnist.reproduction.partitions.SUMMARY_SCHEMA`);
    level 0 is the clean set.
    """
    import matplotlib.pyplot as plt

    from reliquant.core.plotting import PALETTE, apply_style

    apply_style()
    clean = frame.loc[frame["corruption"] == CLEAN, "mean_intensity"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    names = [c for c in frame["corruption"].unique() if c != CLEAN]
    styles = ["-", "--", ":"]
    for i, name in enumerate(names):
        sub = frame[frame["corruption"] == name].sort_values("level")
        lv = [0, *sub["level"].tolist()]
        mi = [float(clean.iloc[0]) if len(clean) else np.nan, *sub["mean_intensity"].tolist()]
        kw = {
            "color": PALETTE[i % len(PALETTE)],
            "ls": styles[i // len(PALETTE)],
            "marker": "o",
            "ms": 3,
        }
        ax.plot(lv, mi, label=name.replace("_", " "), **kw)
        fw = [
            float(frame.loc[frame["corruption"] == CLEAN, "frac_white"].iloc[0])
            if len(clean)
            else np.nan,
            *sub["frac_white"].tolist(),
        ]
        ax2.plot(lv, fw, **kw)
    ax.set_xlabel("level (0 = clean)")
    ax.set_ylabel("mean pixel value (0-255)")
    ax.set_xticks(range(N_LEVELS + 1))
    ax2.set_xlabel("level (0 = clean)")
    ax2.set_ylabel("fraction of white (255) pixels")
    ax2.set_xticks(range(N_LEVELS + 1))
    ax.legend(ncol=2, loc="best")
    fig.suptitle("Perturbed MNIST: what each level does to the pixels")
    fig.tight_layout()
    return fig
