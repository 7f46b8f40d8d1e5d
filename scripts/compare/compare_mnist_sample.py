"""Rule compare_mnist_sample: the MNIST subsample (clean test images, each corruption at the
configured levels) shared by the CNN and the tree models."""

from reliquant.compare.reproduction.mnist import SAMPLE_SCHEMA, mnist_sample, sample_table
from reliquant.core.io import write_table
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
p = snakemake.params
partitions = dict(zip(p.corruptions, snakemake.input.partitions, strict=True))
meta, images = mnist_sample(
    snakemake.input.clean,
    partitions,
    levels=p.sample["levels"],
    n_clean=p.sample["n_clean"],
    n_per_corruption=p.sample["n_per_corruption"],
    seed=p.seed,
)
write_table(sample_table(meta, images), snakemake.output[0], SAMPLE_SCHEMA)
log.info("subsample: %s", meta.groupby("case", sort=False).size().to_dict())
