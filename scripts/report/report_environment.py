"""Rule report_environment: packages, CPU capability, thread counts and platform of this run."""

import json

from reliquant.core.environment import environment_record
from reliquant.core.io import write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "report")
record = environment_record(job_threads=snakemake.threads)
write_text(json.dumps(record, indent=2) + "\n", snakemake.output[0])
log.info(
    "recorded %d packages, CPU capability %s, %s usable CPUs, SLURM job %s; wrote %s",
    len(record["packages"]),
    record["cpu_capability"],
    record["threads"]["usable_cpus"],
    record["slurm"]["SLURM_JOB_ID"],
    snakemake.output[0],
)
