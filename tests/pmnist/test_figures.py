"""Figures of Perturbed MNIST: the digits chosen for the grids and the plots' layout.

The plotting functions set the Agg backend themselves (reliquant.core.plotting).
"""

from __future__ import annotations

import numpy as np
import pytest

from reliquant.pmnist.registry import N_LEVELS
from reliquant.pmnist.reproduction import figures as F
from reliquant.pmnist.reproduction import partitions as P

LABELS = np.array([3, 1, 3, 0, 1, 0, 3], dtype=np.uint8)
TEST_INDEX = np.array([10, 11, 12, 13, 14, 15, 16])
IMAGES = (
    np.arange(7, dtype=np.uint8)[:, None, None] * 30 + np.zeros((1, 28, 28), np.uint8)
).astype(np.uint8)


@pytest.fixture()
def partitions(tmp_path):
    """A clean partition and a two-level 'fog' partition of the 7 images above."""
    clean, fog = tmp_path / "clean.parquet", tmp_path / "fog.parquet"
    P.write_partition(clean, [P.level_table(IMAGES, LABELS, TEST_INDEX, "clean", 0)])
    P.write_partition(
        fog, [P.level_table(IMAGES + lv, LABELS, TEST_INDEX, "fog", lv) for lv in (1, 2)]
    )
    return clean, fog


def test_grid_examples_are_the_kth_image_of_each_class(partitions) -> None:
    clean, _ = partitions
    assert F.grid_examples(clean, 0) == {0: 13, 1: 11, 3: 10}
    assert F.grid_examples(clean, 1) == {0: 15, 1: 14, 3: 12}
    with pytest.raises(ValueError, match="class 0 has only 2 images"):
        F.grid_examples(clean, 2)


def test_read_grid_cells_names_cells_by_file(partitions) -> None:
    cells = F.read_grid_cells(partitions, [12, 13])
    assert set(cells) == {
        ("clean", 0, 12),
        ("clean", 0, 13),
        ("fog", 1, 12),
        ("fog", 1, 13),
        ("fog", 2, 12),
        ("fog", 2, 13),
    }
    np.testing.assert_array_equal(cells[("fog", 2, 13)], IMAGES[3] + 2)


def test_plots_have_one_cell_per_level_and_one_line_per_corruption() -> None:
    cells = {("clean", 0, 5): IMAGES[0]}
    cells.update({(n, lv, 5): IMAGES[lv % 7] for n in ("fog", "snow") for lv in range(1, 11)})
    fig = F.plot_sample_grid(cells, ["fog", "snow"], 5, title="t")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(v) for v in range(N_LEVELS + 1)]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["fog", "snow"]
    np.testing.assert_array_equal(
        ax.images[0].get_array(), F.sample_grid_mosaic(cells, ["fog", "snow"], 5)
    )
    rows = [P.summarize_block(IMAGES, "clean", 0)]
    rows += [P.summarize_block(IMAGES + lv, n, lv) for n in ("fog", "snow") for lv in (1, 2)]
    fig = F.plot_mean_intensity(P.summary_table(rows).to_pandas())
    left = fig.axes[0]
    assert [line.get_label() for line in left.get_lines()] == ["fog", "snow"]
    np.testing.assert_allclose(
        left.get_lines()[0].get_ydata(), [r["mean_intensity"] for r in rows[:3]]
    )


def test_one_reused_figure_draws_each_grid_as_plot_sample_grid(tmp_path) -> None:
    """iter_sample_grids redraws one figure per digit: the files equal fresh figures'."""
    from reliquant.core.io import save_figure

    cells = {}
    for i in (5, 6):
        cells[("clean", 0, i)] = IMAGES[i]
        cells.update(
            {(n, lv, i): IMAGES[(lv + i) % 7] for n in ("fog", "snow") for lv in range(1, 11)}
        )
    grids = [(5, "first"), (6, "second")]
    for test_index, fig in F.iter_sample_grids(cells, ["fog", "snow"], grids):
        save_figure(fig, tmp_path / f"reused{test_index}.png")
    for test_index, title in grids:
        fresh = F.plot_sample_grid(cells, ["fog", "snow"], test_index, title=title)
        save_figure(fresh, tmp_path / f"fresh{test_index}.png")
        reused = (tmp_path / f"reused{test_index}.png").read_bytes()
        assert reused == (tmp_path / f"fresh{test_index}.png").read_bytes()


@pytest.mark.parametrize("corruptions", [["fog"], ["fog", "snow", "frost"]])
def test_mosaic_holds_each_cell_at_its_row_and_level(corruptions) -> None:
    """Cell (corruption r, level c) of the mosaic is that image, pixel for pixel; the gaps
    between cells are white."""
    rng = np.random.default_rng(3)
    cells = {("clean", 0, 5): rng.integers(0, 255, (28, 28)).astype(np.uint8)}
    cells.update(
        {(n, lv, 5): rng.integers(0, 255, (28, 28)).astype(np.uint8)
         for n in corruptions for lv in range(1, N_LEVELS + 1)}
    )  # fmt: skip
    mosaic = F.sample_grid_mosaic(cells, corruptions, 5)
    step = 28 + F.GRID_GAP
    assert mosaic.shape == (
        len(corruptions) * step - F.GRID_GAP,
        (N_LEVELS + 1) * step - F.GRID_GAP,
    )
    white = np.ones(mosaic.shape, dtype=bool)
    for r, name in enumerate(corruptions):
        for level in range(N_LEVELS + 1):
            want = cells[("clean", 0, 5)] if level == 0 else cells[(name, level, 5)]
            block = (slice(r * step, r * step + 28), slice(level * step, level * step + 28))
            np.testing.assert_array_equal(mosaic[block], want)
            white[block] = False
    assert (mosaic[white] == 255).all()
