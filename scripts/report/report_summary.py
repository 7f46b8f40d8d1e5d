"""Rule report_summary: every topic's paper comparison and claims in one document."""

import pandas as pd

from reliquant.core.io import read_frame, write_frame, write_markdown
from reliquant.core.paper import CLAIM_SCHEMA, COMPARISON_SCHEMA, read_notes, render_summary
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "report")
inp = snakemake.input
comparisons = pd.concat([read_frame(p) for p in inp.comparisons], ignore_index=True)
claims = pd.concat([read_frame(p) for p in inp.claims], ignore_index=True)
extra: dict[str, list[str]] = {}
for path in inp.notes:
    with open(path, encoding="utf-8") as fh:
        for paper, lines in read_notes(fh.read()).items():
            extra.setdefault(paper, []).extend(lines)
write_frame(comparisons, snakemake.output.comparisons, COMPARISON_SCHEMA)
write_frame(claims, snakemake.output.claims, CLAIM_SCHEMA)
write_markdown(
    render_summary(comparisons, claims, extra=extra), snakemake.output.md, snakemake.output.html
)
log.info(
    "read %s; %d comparisons, %d claims (%d hold)",
    ", ".join([*inp.comparisons, *inp.claims, *inp.notes]),
    len(comparisons),
    len(claims),
    int(claims["holds"].sum()),
)
