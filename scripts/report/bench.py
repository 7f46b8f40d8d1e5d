"""Rule bench: every topic's benchmark report in one markdown file, and the generated
blocks of the README (headline rows of every topic; the workflow report's short form) and of
each docs page (its report)."""

from pathlib import Path

from reliquant.core.benchmarks import (
    collect_benchmarks,
    headline_table,
    report_body,
    report_summary,
)
from reliquant.core.io import write_text
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "report")
sections = {Path(p).stem: Path(p).read_text(encoding="utf-8") for p in snakemake.input}
out = snakemake.output
write_text(collect_benchmarks(sections), out.summary)
write_text(headline_table(sections), out.readme)
for topic, path in zip(sections, out.topics, strict=True):
    if not Path(path).name == f"bench_{topic}_timings.md":
        raise ValueError(f"output {path} does not belong to benchmark report {topic}")
    # the workflow's report (four runs' per-rule tables) goes to the README: its short form
    short = topic == "workflow"
    write_text((report_summary if short else report_body)(sections[topic]), path)
log.info("collected %d benchmark reports: %s", len(sections), ", ".join(snakemake.input))
