"""Rule compare_evaluate: AU-ARC of every score per data set and case, the best robustness
against the best uncertainty score, the hybrid, and the curves for the figure."""

from reliquant.compare.reproduction.evaluation import (
    AUARC_SCHEMA,
    CONTRAST_SCHEMA,
    CURVE_SCHEMA,
    HYBRID_SCHEMA,
    auarc_table,
    curve_table,
    family_contrast,
    hybrid_table,
)
from reliquant.compare.reproduction.highlights import auarc_markdown, hybrid_markdown
from reliquant.core.io import read_frame, write_frame, write_markdown
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
ev, seed, out = snakemake.params.evaluation, snakemake.params.seed, snakemake.output
tables = [read_frame(path) for path in snakemake.input]
boot = {"n_boot": ev["n_boot"], "confidence": ev["confidence"], "seed": seed}
auarc = auarc_table(tables, **boot)
contrast = family_contrast(tables, **boot, min_difference=snakemake.params.claim["min_difference"])
hybrid = hybrid_table(
    tables, validation_fraction=ev["validation_fraction"], C=ev["hybrid_C"], seed=seed
)
write_frame(auarc, out.auarc, AUARC_SCHEMA)
write_frame(contrast, out.contrast, CONTRAST_SCHEMA)
write_frame(hybrid, out.hybrid, HYBRID_SCHEMA)
write_frame(curve_table(tables, points=ev["curve_points"]), out.curves, CURVE_SCHEMA)
write_markdown(auarc_markdown(auarc, contrast), out.auarc_md, out.auarc_html)
write_markdown(
    "# Hybrid of robustness and uncertainty\n\n" + hybrid_markdown(hybrid),
    out.hybrid_md,
    out.hybrid_html,
)
log.info(
    "verdicts: %s",
    dict(zip(contrast["dataset"] + "/" + contrast["condition"], contrast["verdict"], strict=True)),
)
