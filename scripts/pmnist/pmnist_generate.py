"""One corruption at levels 1..10 as one partition, one row group per level (rule pmnist_generate)."""

import yaml

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_table
from reliquant.core.runlog import start_job
from reliquant.pmnist.registry import N_LEVELS
from reliquant.pmnist.reproduction import partitions as P

log = start_job(snakemake.log[0], "pmnist")
name = snakemake.wildcards.corruption
params = dict(snakemake.params.corruption)
preset = params.pop("preset")
calibrated = None
if preset == "calibrated":
    with open(snakemake.input.schedule[0], encoding="utf-8") as fh:
        calibrated = yaml.safe_load(fh)["corruptions"][name]
params = P.resolve_schedule(preset, params, calibrated)
seed = snakemake.params.seed
# speed only (the bytes do not depend on it), so read from the config, not a rerun trigger
chunk_size = snakemake.config["pmnist"]["chunk_size"]

images, labels = load_mnist_split(snakemake.input.test)
idx = P.select_subset(labels, snakemake.params.images_per_class)
log.info("%s (%s preset): %d images x %d levels, seed %d", name, preset, idx.size, N_LEVELS, seed)
stats = P.write_corruption_partition(
    snakemake.output.images, images[idx], labels[idx], idx, name, params, seed, chunk_size
)
write_table(stats, snakemake.output.stats, P.SUMMARY_SCHEMA)
