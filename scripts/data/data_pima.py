"""Convert the verified Pima Indians Diabetes CSV to parquet (rule data_pima)."""

from reliquant.core.datasets import PIMA_SCHEMA, pima_table, verified_files
from reliquant.core.io import write_table
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "data")
table = pima_table(verified_files(snakemake.input.verified)["pima/diabetes.csv"])
write_table(table, snakemake.output[0], PIMA_SCHEMA)
log.info("Pima: %d rows", table.num_rows)
