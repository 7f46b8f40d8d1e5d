"""Sample grids: rows corruptions, columns levels 0..10, one digit per figure (rule pmnist_grid)."""

from pathlib import Path

from reliquant.core.io import save_figure
from reliquant.core.runlog import setup_logging
from reliquant.pmnist.reproduction import figures as F

log = setup_logging(snakemake.log[0], "pmnist")
grid = snakemake.params.grid
clean_path, *corrupt_paths = snakemake.input
chosen = F.grid_examples(clean_path, grid["example"])
log.info("grid digits (class -> test index): %s", chosen)
cells = F.read_grid_cells([clean_path, *corrupt_paths], chosen.values())
names = [Path(p).stem for p in corrupt_paths]
out_dir = Path(snakemake.output.per_class)
out_dir.mkdir(parents=True, exist_ok=True)
for cls, test_index in chosen.items():
    fig = F.plot_sample_grid(
        cells, names, test_index, title=f"class {cls}, test image {test_index}"
    )
    save_figure(fig, out_dir / f"class{cls}.png")
    if cls == grid["main_class"]:
        save_figure(fig, snakemake.output.fig)
        save_figure(fig, snakemake.output.pdf)
