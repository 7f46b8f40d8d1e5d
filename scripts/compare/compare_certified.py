"""Rule compare_certified: every score certified on each split's clean validation part, its
coverage and violations on the clean and shifted test parts; the summary over splits, the
paper score against its comparator, the table page and the figure."""

from reliquant.compare.reproduction.certified import (
    CERTIFIED_CLAIMS_SCHEMA,
    CERTIFIED_SCHEMA,
    CERTIFIED_SUMMARY_SCHEMA,
    certified_claims,
    certified_figure,
    certified_markdown,
    certified_summary,
    certified_table,
)
from reliquant.compare.reproduction.evaluation import pick_noise
from reliquant.core.io import read_frame, save_figure, write_frame, write_markdown
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
inp, p, out = snakemake.input, snakemake.params, snakemake.output
delta = p.certified["delta"]
# grid scores at the noise scale compare_evaluate picked on the validation parts
tables = pick_noise([read_frame(path) for path in inp.tables], read_frame(inp.noise))
table = certified_table(tables, p.certified, p.comparisons)
summary = certified_summary(table, delta=delta, confidence=p.confidence)
claims = certified_claims(table, confidence=p.confidence)
write_frame(table, out.table, CERTIFIED_SCHEMA)
write_frame(summary, out.summary, CERTIFIED_SUMMARY_SCHEMA)
write_frame(claims, out.claims, CERTIFIED_CLAIMS_SCHEMA)
write_markdown(
    "# Certified thresholds under shift\n\n" + certified_markdown(summary, claims, delta=delta),
    out.md,
    out.html,
)
fig = certified_figure(summary, delta=delta)
save_figure(fig, out.png)
save_figure(fig, out.pdf)
log.info(
    "certified claims: %s",
    dict(
        zip(
            claims["dataset"] + "@" + claims["target_risk"].astype(str),
            claims["verdict"],
            strict=True,
        )
    ),  # fmt: skip
)
