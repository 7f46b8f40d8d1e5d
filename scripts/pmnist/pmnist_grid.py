"""Sample grids: rows corruptions, columns levels 0..10, one digit per figure (rule pmnist_grid)."""

import shutil
from pathlib import Path

from reliquant.core.io import atomic_path, save_figure
from reliquant.core.runlog import start_job
from reliquant.pmnist.reproduction import figures as F

log = start_job(snakemake.log[0], "pmnist")
grid = snakemake.params.grid
clean_path, *corrupt_paths = snakemake.input
chosen = F.grid_examples(clean_path, grid["example"])
log.info("grid digits (class -> test index): %s", chosen)
cells = F.read_grid_cells([clean_path, *corrupt_paths], chosen.values())
names = [Path(p).stem for p in corrupt_paths]
out_dir = Path(snakemake.output.per_class)
out_dir.mkdir(parents=True, exist_ok=True)
classes = {test_index: cls for cls, test_index in chosen.items()}
# one figure, redrawn per digit (building its 132 axes is most of the cost)
grids = [(t, f"class {cls}, test image {t}") for cls, t in chosen.items()]
for test_index, fig in F.iter_sample_grids(cells, names, grids):
    cls = classes[test_index]
    save_figure(fig, out_dir / f"class{cls}.png")
    if cls == grid["main_class"]:
        # the same PNG as the class's own (byte for byte): copied, not drawn again
        with atomic_path(snakemake.output.fig) as tmp:
            shutil.copyfile(out_dir / f"class{cls}.png", tmp)
        log.info("copied %s to %s", out_dir / f"class{cls}.png", snakemake.output.fig)
        save_figure(fig, snakemake.output.pdf)
