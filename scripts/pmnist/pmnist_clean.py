"""The clean test images as partition level 0 (rule pmnist_clean)."""

from reliquant.core.datasets import load_mnist_split
from reliquant.core.io import write_table
from reliquant.core.runlog import start_job
from reliquant.pmnist.reproduction import partitions as P

log = start_job(snakemake.log[0], "pmnist")
images, labels = load_mnist_split(snakemake.input[0])
idx = P.select_subset(labels, snakemake.params.images_per_class)
log.info("clean partition: %d of %d test images", idx.size, labels.size)
stats = P.write_clean_partition(snakemake.output.images, images[idx], labels[idx], idx)
write_table(stats, snakemake.output.stats, P.SUMMARY_SCHEMA)
