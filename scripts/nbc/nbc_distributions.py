"""Rule nbc_distributions: P_fix, P_rand, P_test, the P_shift and D_test (paper 000, 7.1-7.2)."""

import numpy as np

from reliquant.core.io import write_frame
from reliquant.core.runlog import start_job
from reliquant.nbc.reproduction.distributions import (
    d_test_schema,
    distribution_tables,
    distributions_schema,
)

log = start_job(snakemake.log[0], "nbc")
design = snakemake.params.design
tables, test = distribution_tables(design, snakemake.params.seed)
n_features = len(design["n_values"])
write_frame(tables, snakemake.output.dists, distributions_schema(n_features))
write_frame(test, snakemake.output.test, d_test_schema(n_features))
log.info(
    "P_test: %d cells; D_test: %d instances, class counts %s; %d P_shift",
    int((tables["distribution"] == "test").sum()),
    len(test),
    np.bincount(test["label"]).tolist(),
    int(tables.loc[tables["distribution"] == "shift", "member"].nunique()),
)
