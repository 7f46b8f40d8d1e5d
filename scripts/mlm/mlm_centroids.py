"""Class centroids, K-Means refinement, Table 1, misclustered images (rule mlm_centroids).

Paper 004, Sections 3.3 a, 4.2 and 4.3.
"""

import numpy as np

from reliquant.core.io import read_frame, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.mlm.reproduction.centroid_tables import (
    CENTROIDS_SCHEMA,
    MISCLUSTERED_SCHEMA,
    TABLE1_SCHEMA,
    centroid_tables,
)

log = start_job(snakemake.log[0], "mlm")
train = read_frame(snakemake.input[0])
out = centroid_tables(
    train, snakemake.params.kmeans, snakemake.params.seed, snakemake.params.paper_shift
)
write_frame(out.centroids, snakemake.output.centroids, CENTROIDS_SCHEMA)
write_frame(out.table1, snakemake.output.table1, TABLE1_SCHEMA)
write_markdown(out.table1_markdown, snakemake.output.table1_md, snakemake.output.table1_html)
write_frame(out.misclustered, snakemake.output.misclustered, MISCLUSTERED_SCHEMA)
log.info("%d of %d training images correctly classified", out.n_correct, len(train))
log.info(
    "K-Means: %d iterations; shifts %s",
    out.n_iter,
    np.array2string(out.table1["distance"].to_numpy(), precision=3),
)
log.info(
    "%d misclustered images: %s", len(out.misclustered), out.misclustered["index"].tolist()[:20]
)
