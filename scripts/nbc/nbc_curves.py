"""Rule nbc_curves: accuracy-acceptance curves of one cell (paper 000, Section 7.4)."""

import pyarrow as pa

from reliquant.core.io import read_frame, write_frame
from reliquant.core.runlog import setup_logging
from reliquant.nbc.experiment import METRICS, cell_curves

log = setup_logging(snakemake.log[0], "nbc")
curves = cell_curves(read_frame(snakemake.input[0]))
schema = pa.schema(
    [
        ("n_train", pa.int32()),
        ("gamma", pa.float64()),
        ("train_set", pa.int32()),
        ("n_accepted", pa.int32()),
        ("rate", pa.float64()),
    ]
    + [(m, pa.float64()) for m in METRICS]
)
write_frame(curves, snakemake.output[0], schema)
log.info("%d curve points per metric", len(curves))
