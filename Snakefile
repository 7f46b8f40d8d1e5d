# reliquant: reproduce three papers on per-prediction reliability.
# This file is a table of contents; rules live in workflow/rules/, one file per topic.

import sys
from pathlib import Path

from snakemake.utils import min_version

from reliquant.core.config import read_config_file, validate_config

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))
from report_guard import require_results_for_report

min_version("8.20")

# A YAML error in config.yaml is reported with its file and line before Snakemake reads it; the
# merged configuration (config.yaml and every --configfile) is checked against the schema, one
# line per problem naming the key. Cross-key constraints are checked by each topic's rule file.
read_config_file(Path(workflow.basedir) / "config.yaml")


configfile: "config.yaml"


# Snakemake reads the --configfile overlays itself, keeping the last of a key written twice;
# reading each again with the project's reader refuses that, naming the file and both lines,
# and a file too large or whose aliases expand too far, before anything walks the merged config.
for overlay in workflow.overwrite_configfiles:
    read_config_file(overlay)

# Paths from the config are confined too (x-path in the schemas): outputs under results/,
# the vendored manifest under data/ and present (relative to the working directory).
validate_config(
    config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml", root=Path.cwd()
)
# `snakemake --report` stops, naming the jobs still to run, when this configuration's results
# are missing or out of date, instead of reporting whatever files exist.
require_results_for_report()


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/nbc.smk"
include: "workflow/rules/trees.smk"
include: "workflow/rules/pmnist.smk"
include: "workflow/rules/mlm.smk"
include: "workflow/rules/compare.smk"
# the compare topic by stage: per-prediction tables, evaluation, protocols
include: "workflow/rules/compare_predictions.smk"
include: "workflow/rules/compare_evaluation.smk"
include: "workflow/rules/compare_protocols.smk"
include: "workflow/rules/compare_certified.smk"
include: "workflow/rules/report.smk"
# Your own cases (config `custom:`), after the topics whose packages they use.
include: "workflow/rules/custom.smk"


rule all:
    default_target: True
    input:
        all_targets(),
