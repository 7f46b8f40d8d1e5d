"""Shared infrastructure every paper package may use (and nothing paper-specific).

Modules
-------
io           (package) atomic writers, verified parquet reads and their content digest,
             sealed zip files, the damaged-output check, the uint8 image column codec
temporaries  the writers' temporary files named after their writer; stale ones told from live ones
seeding      per-block random generators derived from one config seed
runlog       logging set-up and the progress-bar switch of workflow jobs
progress     progress bars of long library calls (``progress=``; on in a terminal only)
plotting     the shared figure style and palette
datasets     (package) checksum verification, IDX (MNIST) parsing and loading, Pima and Iris
             tables, the tabular benchmark sets
errors       ConfigError, shared by config and custom
config       reading config.yaml (+ overlays) outside Snakemake, merged as Snakemake does
configyaml   one config file read strictly and bounded (size, aliases expanded), merge keys
configpaths  config values that become paths confined by their schema role (``x-path``)
paper        the one mechanism that sets a paper's numbers beside ours and checks its claims
docs         generated blocks of the README and docs: find, fill, check (``python -m``)
custom       the workflow's ``custom:`` cases checked (names, files, suffixes, columns) first
report       markdown tables as standalone HTML pages (the workflow report's table entries)
environment  the run's platform, threads and package versions; the lock file compared with them
benchmarks   timing and memory-peak helpers of ``bench/``, and their reports' markdown
codedigest   the library-code digest that reruns jobs: code counts, comments and docstrings do not
runtimes     a finished run's job times: per rule, start-up vs work, the critical path
binomial     the exact (Clopper-Pearson) interval of a binomial proportion (trees, compare)
rejection    accuracy-rejection curves and AU-ARC, ties averaged in closed form (nbc, compare)
labels       a user's class labels matched to a model's classes by value (1, 1.0 and "1" alike)
lazy         a package's public names imported on first use (PEP 562: trees, pmnist)
"""

from reliquant.core.io import read_frame, write_frame, write_table, write_text
from reliquant.core.seeding import block_int_seed, block_rng

__all__ = ["block_int_seed", "block_rng", "read_frame", "write_frame", "write_table", "write_text"]
