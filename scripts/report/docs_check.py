"""Rule docs_check: which generated blocks of the README and docs differ from this run."""

from pathlib import Path

from reliquant.core.docs import check_markdown
from reliquant.core.io import write_markdown
from reliquant.core.runlog import start_job

log = start_job(snakemake.log[0], "report")
contents = {Path(p).stem: Path(p).read_text(encoding="utf-8") for p in snakemake.input.blocks}
text = check_markdown(snakemake.input.pages, contents)
write_markdown(text, snakemake.output.md, snakemake.output.html)
log.info("read %s; %s", ", ".join(snakemake.input.pages), text.strip().splitlines()[-1])
