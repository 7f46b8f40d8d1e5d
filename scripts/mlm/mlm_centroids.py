"""Class centroids, K-Means refinement, Table 1, misclustered images (rule mlm_centroids).

Paper 004, Sections 3.3 a, 4.2 and 4.3.
"""

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown, read_frame, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.core.seeding import block_int_seed
from reliquant.mlm.matrices import (
    D_COLUMNS,
    N_CLASSES,
    P_COLUMNS,
    centroid_shift,
    class_centroids,
    distances_to_centroids,
    misclustered,
    refine_centroids,
)

log = setup_logging(snakemake.log[0], "mlm")
km_cfg = snakemake.params.kmeans
train = read_frame(snakemake.input[0])
s = train[P_COLUMNS].to_numpy(np.float64)
y = train["label"].to_numpy(np.int64)
correct = s.argmax(1) == y
log.info("%d of %d training images correctly classified", correct.sum(), len(y))

initial = class_centroids(s, y)
km = refine_centroids(
    s[correct],
    initial,
    seed=block_int_seed(snakemake.params.seed, "mlm", "kmeans"),
    max_iter=km_cfg["max_iter"],
    tol=km_cfg["tol"],
)
shift = centroid_shift(initial, km.centroids)
log.info("K-Means: %d iterations; shifts %s", km.n_iter, np.array2string(shift, precision=3))

cent = pd.DataFrame(np.vstack([initial, km.centroids]), columns=P_COLUMNS)
cent.insert(0, "kind", ["mean"] * N_CLASSES + ["kmeans"] * N_CLASSES)
cent.insert(1, "class", np.tile(np.arange(N_CLASSES, dtype=np.uint8), 2))
cent_schema = pa.schema(
    [pa.field("kind", pa.string()), pa.field("class", pa.uint8())]
    + [pa.field(c, pa.float64()) for c in P_COLUMNS]
)
write_frame(cent, snakemake.output.centroids, cent_schema)

counts = np.bincount(y[correct], minlength=N_CLASSES)
moved = np.bincount(y[correct][misclustered(y[correct], km.assignments)], minlength=N_CLASSES)
table1 = pd.DataFrame(
    {
        "class": np.arange(N_CLASSES, dtype=np.uint8),
        "n_correct": counts.astype(np.int64),
        "n_misclustered": moved.astype(np.int64),
        "distance": shift,
        "paper_distance": np.asarray(snakemake.params.paper_shift, dtype=np.float64),
    }
)
table1_schema = pa.schema(
    [
        pa.field("class", pa.uint8()),
        pa.field("n_correct", pa.int64()),
        pa.field("n_misclustered", pa.int64()),
        pa.field("distance", pa.float64()),
        pa.field("paper_distance", pa.float64()),
    ]
)
write_frame(table1, snakemake.output.table1, table1_schema)
write_text(
    "# Table 1: Euclidean distance between class mean softmax and K-Means centroid\n\n"
    f"K-Means (scikit-learn, n_init=1) on the softmax of the {int(correct.sum())} correctly "
    f"classified training images converged in {km.n_iter} iteration(s).\n"
    "`n_misclustered`: correctly classified images of the class assigned to another cluster.\n\n"
    + frame_to_markdown(
        table1.astype({"class": str, "n_correct": str, "n_misclustered": str}), floatfmt=".4e"
    ),
    snakemake.output.table1_md,
)

pos = misclustered(y[correct], km.assignments)
rows = np.flatnonzero(correct)[pos]
mis = train.iloc[rows][["index", "label", *P_COLUMNS]].reset_index(drop=True)
mis.insert(2, "cluster", km.assignments[pos].astype(np.uint8))
dist = distances_to_centroids(s[rows], km.centroids)
for c in range(N_CLASSES):
    mis[D_COLUMNS[c]] = dist[:, c]
mis_schema = pa.schema(
    [pa.field("index", pa.int32()), pa.field("label", pa.uint8()), pa.field("cluster", pa.uint8())]
    + [pa.field(c, pa.float32()) for c in P_COLUMNS]
    + [pa.field(c, pa.float64()) for c in D_COLUMNS]
)
write_frame(mis, snakemake.output.misclustered, mis_schema)
log.info("%d misclustered images: %s", len(mis), mis["index"].tolist()[:20])
