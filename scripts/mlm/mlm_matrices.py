"""Distance and likelihood matrices: whole set, per level, per corruption, mean/std.

Rule mlm_matrices; paper 004, Sections 3.3 b-d and 3.4 (eqs. 4-10).
"""

import numpy as np

from reliquant.core.io import read_frame, read_table, write_frame
from reliquant.core.runlog import start_job
from reliquant.mlm.matrices import MATRICES_SCHEMA, cell_distance_matrices, matrices_long
from reliquant.mlm.reproduction.centroid_tables import centroid_array
from reliquant.mlm.softmax import P_COLUMNS

log = start_job(snakemake.log[0], "mlm")
cfg = snakemake.params.perturbed
mu = centroid_array(read_frame(snakemake.input.centroids), cfg["centroids"])
log.info("distances to the %s centroids", cfg["centroids"])

cells = {}
for path in snakemake.input.softmax:
    t = read_table(path, columns=["label", "corruption", "level", *P_COLUMNS])
    s = np.column_stack([t.column(c).to_numpy() for c in P_COLUMNS])
    part = cell_distance_matrices(
        s,
        t.column("label").to_numpy(),
        t.column("corruption").to_numpy(zero_copy_only=False),
        t.column("level").to_numpy(),
        mu,
    )
    cells.update(part)
    log.info("%s: %d rows, cells %s", path, t.num_rows, sorted(part))

long = matrices_long(
    cells, clean=cfg["clean_partition"], overall_includes_clean=cfg["overall_includes_clean"]
)
write_frame(long, snakemake.output[0], MATRICES_SCHEMA)
log.info("wrote %d matrix entries over scopes %s", len(long), sorted(long["scope"].unique()))
