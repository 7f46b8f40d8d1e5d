"""Write scikit-learn's Iris as parquet (rule data_iris)."""

from reliquant.core.datasets import IRIS_SCHEMA, iris_table
from reliquant.core.io import write_table
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "data")
table = iris_table()
write_table(table, snakemake.output[0], IRIS_SCHEMA)
log.info("Iris: %d rows", table.num_rows)
