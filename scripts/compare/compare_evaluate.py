"""Rule compare_evaluate: AU-ARC of every score per data set, case and split; paper 000's
rule; every declared comparison; the headline against a comparator picked on validation
parts; the paper's score against the best of each comparator family; the hybrid over
splits; the curves for the figure."""

from reliquant.compare.reproduction.evaluation import (
    CONTRAST_SCHEMA,
    CURVE_SCHEMA,
    DECLARED_SCHEMA,
    HEADLINE_SCHEMA,
    HYBRID_SCHEMA,
    NOISE_SCHEMA,
    SPLIT_AUARC_SCHEMA,
    curve_table,
    declared_table,
    family_contrast,
    headline_table,
    hybrid_table,
    noise_table,
    pick_noise,
    split_auarc,
)
from reliquant.compare.reproduction.family_verdicts import (
    FAMILY_VERDICT_SCHEMA,
    family_markdown,
    family_table,
)
from reliquant.compare.reproduction.highlights import auarc_markdown, hybrid_markdown
from reliquant.core.io import read_frame, write_frame, write_markdown
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "compare")
ev, p, out = snakemake.params.evaluation, snakemake.params, snakemake.output
tables = [read_frame(path) for path in snakemake.input]
log.info("headline metric (compare.evaluation.metric, declared): %s", ev["metric"])
noise = noise_table(
    split_auarc(tables, metrics=False)
)  # noise scales picked on the validation parts
tables = pick_noise(tables, noise)
split = split_auarc(tables)
contrast = family_contrast(split, z=p.z)
declared = declared_table(tables, split, p.comparisons, confidence=ev["confidence"])
headline = headline_table(tables, split, p.comparisons, confidence=ev["confidence"])
families = family_table(tables, split, p.comparisons, confidence=ev["confidence"])
hybrid = hybrid_table(tables, headline, C=ev["hybrid_C"], confidence=ev["confidence"])
write_frame(split, out.auarc, SPLIT_AUARC_SCHEMA)
write_frame(contrast, out.contrast, CONTRAST_SCHEMA)
write_frame(declared, out.declared, DECLARED_SCHEMA)
write_frame(headline, out.headline, HEADLINE_SCHEMA)
write_frame(hybrid, out.hybrid, HYBRID_SCHEMA)
write_frame(families, out.families, FAMILY_VERDICT_SCHEMA)
write_markdown(
    "# The paper's score against the best of each comparator family\n\n"
    + family_markdown(families),
    out.families_md,
    out.families_html,
)
write_frame(noise, out.noise, NOISE_SCHEMA)
write_frame(curve_table(tables, points=ev["curve_points"]), out.curves, CURVE_SCHEMA)
write_markdown(auarc_markdown(split, headline, declared, contrast), out.auarc_md, out.auarc_html)
write_markdown(
    "# Hybrid of robustness and uncertainty over splits\n\n" + hybrid_markdown(hybrid),
    out.hybrid_md,
    out.hybrid_html,
)
log.info(
    "noise scales chosen: %s",
    noise.loc[noise["chosen"], ["dataset", "score", "scale"]].drop_duplicates().to_dict("records"),
)
log.info(
    "headline verdicts: %s",
    dict(zip(headline["dataset"] + "/" + headline["condition"], headline["verdict"], strict=True)),
)
log.info(
    "against each family: %s",
    dict(
        zip(
            families["dataset"] + "/" + families["condition"] + "/" + families["family"],
            families["verdict"],
            strict=True,
        )
    ),
)
log.info(
    "paper 000's rule: %s",
    dict(zip(contrast["dataset"] + "/" + contrast["case"], contrast["verdict"], strict=True)),
)
