"""Rule docs_blocks: the README's and docs' generated blocks from this run's tables."""

from pathlib import Path

from reliquant.compare.reproduction.certified import certified_blocks
from reliquant.compare.reproduction.family_verdicts import family_blocks
from reliquant.compare.reproduction.highlights import highlight_blocks as compare_blocks
from reliquant.core.docs import merge_blocks
from reliquant.core.io import read_frame, write_text
from reliquant.core.paper import read_notes
from reliquant.core.runlog import start_job
from reliquant.mlm.reproduction.highlights import highlight_blocks as mlm_blocks
from reliquant.nbc.reproduction.highlights import highlight_blocks as nbc_blocks
from reliquant.pmnist.reproduction.highlights import highlight_blocks as pmnist_blocks
from reliquant.trees.reproduction.highlights import highlight_blocks as trees_blocks

log = start_job(snakemake.log[0], "report")
inp = snakemake.input
comparisons, claims = read_frame(inp.comparisons), read_frame(inp.claims)
blocks = merge_blocks(
    nbc_blocks(read_frame(inp.nbc_claims), read_frame(inp.nbc_auc)),
    trees_blocks(
        comparisons,
        claims,
        read_notes(Path(inp.trees_notes).read_text(encoding="utf-8")),
        read_frame(inp.pima_sensitivity),
    ),
    mlm_blocks(
        comparisons,
        claims,
        read_frame(inp.mlm_accuracy),
        read_frame(inp.mlm_matrices),
        read_frame(inp.mlm_misclustered),
        read_frame(inp.mlm_confusion),
    ),
    pmnist_blocks(read_frame(inp.pmnist_stats)),
    {"pmnist_pixel_means": Path(inp.pmnist_summary).read_text(encoding="utf-8")},
    compare_blocks(
        read_frame(inp.compare_auarc),
        read_frame(inp.compare_headline),
        read_frame(inp.compare_declared),
        read_frame(inp.compare_contrast),
        read_frame(inp.compare_hybrid),
        read_frame(inp.compare_noise),
    ),
    certified_blocks(
        read_frame(inp.compare_certified_summary), read_frame(inp.compare_certified_claims)
    ),
    family_blocks(read_frame(inp.compare_families), read_frame(inp.compare_headline)),
)
expected = {Path(p).stem: p for p in snakemake.output}
if set(blocks) != set(expected):
    raise ValueError(
        f"generated blocks {sorted(blocks)} differ from the rule's outputs {sorted(expected)}"
    )
for name, path in expected.items():
    write_text(blocks[name], path)
log.info("read %s; wrote %d blocks", ", ".join(inp), len(blocks))
