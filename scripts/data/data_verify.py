"""Verify one data set's vendored raw files against the manifest's digests (rule data_verify)."""

from reliquant.core.datasets import verify_manifest
from reliquant.core.io import write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "data")
dataset = snakemake.wildcards.dataset
verified = verify_manifest(snakemake.params.manifest, snakemake.params.allow_download, dataset)
for row in verified.itertuples(index=False):
    log.info("ok %s sha256=%s (%d bytes)", row.file, row.sha256, row.bytes)
write_text(verified.to_csv(sep="\t", index=False), snakemake.output[0])
