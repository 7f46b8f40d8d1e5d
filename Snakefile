# reliquant: reproduce three papers on per-prediction reliability.
# This file is a table of contents; rules live in workflow/rules/, one file per topic.

from snakemake.utils import min_version, validate

min_version("8.20")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/nbc.smk"
include: "workflow/rules/trees.smk"
include: "workflow/rules/pmnist.smk"
include: "workflow/rules/mlm.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(),
