"""Rule nbc_auc: area under every curve, mean/std per cell and metric, and the claims check."""

import pandas as pd

from reliquant.core.io import frame_to_markdown, read_frame, write_frame, write_markdown
from reliquant.core.runlog import start_job
from reliquant.nbc.reproduction.curves import AUC_PER_SET_SCHEMA, AUC_SCHEMA
from reliquant.nbc.reproduction.paper import CELL_CLAIMS_SCHEMA, auc_report

log = start_job(snakemake.log[0], "nbc")
curves = pd.concat([read_frame(p) for p in snakemake.input], ignore_index=True)
report = auc_report(curves, snakemake.params.paper)
write_frame(report.summary, snakemake.output.table, AUC_SCHEMA)
write_frame(report.per_set, snakemake.output.per_set, AUC_PER_SET_SCHEMA)
write_frame(report.claims, snakemake.output.claims, CELL_CLAIMS_SCHEMA)
write_markdown(report.markdown, snakemake.output.md, snakemake.output.html)
log.info("claims check:\n%s", frame_to_markdown(report.claims))
