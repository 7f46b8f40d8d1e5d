"""Rule trees_kernels: every numba kernel of the trees package compiled (or loaded from numba's
disk cache) once per machine, before the jobs that run them, which then load them from the
cache; results/trees/kernels.tsv lists the kernels, their signatures and seconds."""

from reliquant.core.io import write_text
from reliquant.core.runlog import start_job

start_job(snakemake.log[0], "trees")
# Importing reliquant.trees compiles the kernels robustness() draws with (warm_up): this job's
# work, not its start-up, so the import comes after the log's first line.
from reliquant.trees.kernel_cache import compile_kernels  # noqa: E402

table = compile_kernels()
# compile seconds differ between runs: a text table, not a parquet result
write_text(table.to_csv(sep="\t", index=False), snakemake.output[0])
