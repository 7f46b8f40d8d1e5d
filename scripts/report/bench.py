"""Collect every topic's benchmark report into one markdown file (rule bench)."""

from pathlib import Path

from reliquant.core.benchmarks import collect_benchmarks
from reliquant.core.io import write_text
from reliquant.core.runlog import setup_logging

log = setup_logging(snakemake.log[0], "report")
sections = {Path(p).stem: Path(p).read_text(encoding="utf-8") for p in snakemake.input}
write_text(collect_benchmarks(sections), snakemake.output[0])
log.info("collected %d benchmark reports", len(sections))
