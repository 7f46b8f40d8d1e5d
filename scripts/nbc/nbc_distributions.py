"""Rule nbc_distributions: P_fix, P_rand, P_test, the P_shift and D_test (paper 000, 7.1-7.2)."""

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.io import write_frame
from reliquant.core.runlog import setup_logging
from reliquant.nbc.experiment import make_distributions, table_to_frame

log = setup_logging(snakemake.log[0], "nbc")
design = snakemake.params.design
d = make_distributions(design, snakemake.params.seed)
n_feat = len(design["n_values"])
xcols = [f"x{i}" for i in range(n_feat)]

frame = table_to_frame(
    {"fix": d["fix"][None], "rand": d["rand"][None], "test": d["test"][None], "shift": d["shift"]}
)
schema = pa.schema(
    [("distribution", pa.string()), ("member", pa.int16()), ("cls", pa.int16())]
    + [(c, pa.int16()) for c in xcols]
    + [("prob", pa.float64())]
)
write_frame(frame, snakemake.output.dists, schema)

test = pd.DataFrame(
    {
        "index": np.arange(len(d["y_test"])),
        "label": d["y_test"],
        **dict(zip(xcols, d["X_test"].T, strict=True)),
    }
)
test_schema = pa.schema(
    [("index", pa.int32()), ("label", pa.int16())] + [(c, pa.int16()) for c in xcols]
)
write_frame(test, snakemake.output.test, test_schema)
log.info(
    "P_test: %d cells; D_test: %d instances, class counts %s; %d P_shift",
    d["test"].size,
    len(d["y_test"]),
    np.bincount(d["y_test"]).tolist(),
    d["shift"].shape[0],
)
