"""Rule nbc_auc: area under every curve, mean/std per cell and metric, and the claims check."""

import pandas as pd
import pyarrow as pa

from reliquant.core.io import frame_to_markdown, read_frame, write_frame, write_text
from reliquant.core.runlog import setup_logging
from reliquant.nbc.experiment import auc_table, claims_check, claims_markdown

log = setup_logging(snakemake.log[0], "nbc")
curves = pd.concat([read_frame(p) for p in snakemake.input], ignore_index=True)
per_set, summary = auc_table(curves)
claims = claims_check(per_set, z=snakemake.params.report["z"])

write_frame(
    summary,
    snakemake.output.table,
    pa.schema(
        [
            ("n_train", pa.int32()),
            ("gamma", pa.float64()),
            ("metric", pa.string()),
            ("family", pa.string()),
            ("auc_mean", pa.float64()),
            ("auc_std", pa.float64()),
            ("n_sets", pa.int32()),
        ]
    ),
)
write_frame(
    per_set,
    snakemake.output.per_set,
    pa.schema(
        [
            ("n_train", pa.int32()),
            ("gamma", pa.float64()),
            ("train_set", pa.int32()),
            ("metric", pa.string()),
            ("auc", pa.float64()),
        ]
    ),
)
write_frame(
    claims,
    snakemake.output.claims,
    pa.schema(
        [
            ("n_train", pa.int32()),
            ("gamma", pa.float64()),
            ("hard", pa.bool_()),
            ("best_robustness", pa.string()),
            ("auc_robustness", pa.float64()),
            ("best_uncertainty", pa.string()),
            ("auc_uncertainty", pa.float64()),
            ("diff_mean", pa.float64()),
            ("diff_se", pa.float64()),
            ("verdict", pa.string()),
            ("claim_holds", pa.bool_()),
        ]
    ),
)
write_text(claims_markdown(summary, claims, snakemake.params.report["z"]), snakemake.output.md)
log.info("claims check:\n%s", frame_to_markdown(claims))
