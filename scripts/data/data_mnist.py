"""Convert the verified MNIST IDX files to parquet (rule data_mnist)."""

from reliquant.core.datasets import mnist_table, read_idx, verified_files
from reliquant.core.io import write_table
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "data")
files = verified_files(snakemake.input.verified)
for split, prefix in (("train", "train"), ("test", "t10k")):
    images = read_idx(files[f"mnist/{prefix}-images-idx3-ubyte.gz"])
    labels = read_idx(files[f"mnist/{prefix}-labels-idx1-ubyte.gz"])
    table = mnist_table(images, labels)
    write_table(table, snakemake.output[split], table.schema)
    log.info("MNIST %s: %d images of %s", split, len(labels), images.shape[1:])
