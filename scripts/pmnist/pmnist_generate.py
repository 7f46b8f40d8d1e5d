"""One corruption at levels 1..10 as one partition, one row group per level (rule pmnist_generate)."""

import time

import yaml
from tqdm.auto import tqdm

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_table
from reliquant.core.runlog import progress_enabled, setup_logging
from reliquant.pmnist import partitions as P
from reliquant.pmnist.corruptions import N_LEVELS, validate_schedule

log = setup_logging(snakemake.log[0], "pmnist")
name = snakemake.wildcards.corruption
params = dict(snakemake.params.corruption)
preset = params.pop("preset")
calibrated = None
if preset == "calibrated":
    with open(snakemake.input.schedule[0], encoding="utf-8") as fh:
        calibrated = yaml.safe_load(fh)["corruptions"][name]
params = P.resolve_schedule(preset, params, calibrated)
validate_schedule({name: params})
seed = snakemake.params.seed

images, labels = load_mnist_split(snakemake.input.test)
idx = P.select_subset(labels, snakemake.params.images_per_class)
images, labels = images[idx], labels[idx]
log.info("%s (%s preset): %d images x %d levels, seed %d", name, preset, idx.size, N_LEVELS, seed)

stats = []


def blocks():
    for level in tqdm(range(1, N_LEVELS + 1), desc=name, disable=not progress_enabled()):
        t0 = time.perf_counter()
        out = P.generate_block(
            images, idx, name, level, params, seed, chunk_size=snakemake.params.chunk_size
        )
        stats.append(P.summarize_block(out, name, level))
        log.info(
            "%s level %d: %.2f s, mean intensity %.2f",
            name,
            level,
            time.perf_counter() - t0,
            stats[-1]["mean_intensity"],
        )
        yield P.level_table(out, labels, idx, name, level)


P.write_partition(snakemake.output.images, blocks())
write_table(P.summary_table(stats), snakemake.output.stats, P.SUMMARY_SCHEMA)
