"""Read the user's CNN weights instead of training (rule mlm_model_file; config mlm.model)."""

from reliquant.core.io import write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.mlm.cnn import (
    EXTERNAL_TRAINING_LOG_SCHEMA,
    external_model_markdown,
    external_training_log,
    load_model_file,
    save_model,
)

log = start_job(snakemake.log[0], "mlm")
path, sha256 = snakemake.input.weights, snakemake.params.model["sha256"]
model = load_model_file(path, sha256)
log.info("read the CNN weights of %s (SHA-256 %s): not trained here", path, sha256)
save_model(model, snakemake.output.model)
write_frame(external_training_log(), snakemake.output.log, EXTERNAL_TRAINING_LOG_SCHEMA)
write_markdown(
    external_model_markdown(path, sha256.lower()), snakemake.output.md, snakemake.output.html
)
