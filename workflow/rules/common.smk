# Shared helpers of every topic: conda envs, the report() wrapper, the library-code digest.
# Topic files (workflow/rules/<topic>.smk) hold no functions (snakemake --lint): each defines its
# constants and its final outputs as <TOPIC>_TARGETS; all_targets() joins them in TOPICS order.

import importlib.util
import os
import sys
from pathlib import Path

import pandas as pd

from reliquant.core.codedigest import library_digest, script_digest
from reliquant.core.io import remove_damaged_outputs

ENV_CORE = "../../envs/core.yaml"
ENV_TORCH = "../../envs/torch.yaml"
ENV_BENCH = "../../envs/bench.yaml"
#: Topics in report order; each defines <TOPIC>_TARGETS in workflow/rules/<topic>.smk.
TOPICS = ["data", "nbc", "trees", "pmnist", "mlm", "compare", "custom", "report"]
#: Topics whose <topic>_paper job sets their paper's numbers beside ours.
PAPER_TOPICS = ["nbc", "trees", "mlm"]


def rebuild_damaged_outputs():
    """Delete the damaged outputs of this run's jobs that are not planned to run; plan again.

    A file the workflow wrote that its reader would refuse (a parquet file truncated, or with a
    footer or digest record that does not parse or match; a model whose seal does not match
    its bytes: reliquant.core.io) is rebuilt instead of read. Called when a real run starts
    (the onstart handler below: never in a dry run, --summary or --report; skipped by
    --touch), on the outputs of the jobs of this run's DAG that are not planned to run (the
    others rewrite theirs anyway); footers and seals only (about 0.2 ms a parquet file, 1 ms
    a MB of model). A damaged one is deleted and the DAG is planned again, so its job and the
    jobs after it run. Nothing else is checked or removed: a file under results/ that no job
    of this run writes (a user's table, a custom case's input) is never touched. A damaged
    output that no job of this run reads or writes stays until one does (reading it raises
    an error naming it); snakemake --forcerun <file> rebuilds it at once.
    Returns {deleted path: why}.
    """
    if workflow.touch:
        return {}
    dag = workflow.dag
    kept = [job for job in dag.jobs if not dag.needrun(job)]
    removed = remove_damaged_outputs(sorted({str(f) for job in kept for f in job.output}))
    for path, why in removed.items():
        print(f"reliquant: removed {path} ({why}); its job runs again", file=sys.stderr)
    if removed:
        replanned = dag.postprocess()
        if hasattr(replanned, "__await__"):  # a coroutine since Snakemake 8.x
            workflow.async_run(replanned)
        print(
            f"reliquant: {sum(1 for _ in dag.needrun_jobs())} jobs to run after the rebuild",
            file=sys.stderr,
        )
    return removed


onstart:
    rebuild_damaged_outputs()


def library_root():
    """The reliquant sources the jobs run: the checkout's src/ if present, else the install."""
    local = Path(workflow.basedir) / "src" / "reliquant"
    if local.is_dir():
        return local
    spec = importlib.util.find_spec("reliquant")
    return Path(next(iter(spec.submodule_search_locations)))


def code_digest(*packages):
    """Digest of the code of reliquant.core and the given packages (16 hex characters).

    Every job of a topic receives it as the parameter `code`, so editing the topic's package
    (or core) reruns that topic's jobs and nothing else (Snakemake's params rerun trigger).
    Comments, docstrings and formatting do not count (reliquant.core.codedigest).
    """
    return library_digest(library_root(), ("core", *packages))


def script_code_digest(script):
    """Digest of the library code a rule's script runs (16 hex characters).

    ``script`` is the path from the project root (``scripts/compare/x.py``). The digest
    follows the script's reliquant imports transitively (reliquant.core.codedigest.
    script_digest), so a job that runs for hours reruns when code it runs changes, not on
    every edit of its topic's package.
    """
    return script_digest(Path(workflow.basedir) / script, library_root())


#: Every report entry's name, so that no two entries share one (the report lists entries by
#: their labels, and two with equal labels would show as one).
REPORT_NAMES = set()


def topic_report(category):
    """A report() wrapper for one topic: category set once, caption named by its .rst stem.

    Every entry is labelled: `name` is what the report lists instead of the file's path
    (e.g. "Table 2 (002): MNIST 5x5 runtimes per method"), unique in the report.
    Markdown tables enter the report as their HTML page (write_markdown writes both).
    """

    def wrap(path, caption, subcategory=None, *, name):
        if not name or name in REPORT_NAMES:
            raise ValueError(f"report entry {path}: name {name!r} is empty or already used")
        if path.endswith(".md"):
            raise ValueError(f"report entry {path}: put its .html page in the report, not the .md")
        REPORT_NAMES.add(name)
        return report(
            path,
            caption=f"../report/{caption}.rst",
            category=category,
            subcategory=subcategory,
            labels={"name": name},
        )

    return wrap


# --- data ----------------------------------------------------------------------------------
def data_manifest(path):
    """The raw-file manifest (data/raw/checksums.tsv) as a frame with a `dataset` column."""
    manifest = pd.read_csv(path, sep="\t", comment="#", dtype=str)
    manifest["dataset"] = manifest["path"].str.split("/").str[0]
    return manifest


def present_raw_files(manifest_path, dataset):
    """The data set's raw files that exist: inputs of data_verify, so editing one reruns it.

    Missing files are not inputs (no rule owns data/raw); data_verify fetches them from the
    mirrors when data.allow_download is set, or stops naming them.
    """
    manifest = data_manifest(manifest_path)
    raw_dir = os.path.dirname(manifest_path)
    rows = manifest[manifest["dataset"] == dataset]
    paths = [os.path.join(raw_dir, path) for path in rows["path"]]
    return [path for path in paths if os.path.exists(path)]


def manifest_rows(manifest_path, dataset):
    """The manifest's rows of one data set (a params entry: a digest edit reruns only it)."""
    manifest = data_manifest(manifest_path)
    return manifest[manifest["dataset"] == dataset].to_dict("records")


def benchmark_table_digest(name):
    """What a benchmark table (of data_benchmark) is made of, namely the SHA-256 of its
    vendored file (data/raw/checksums.tsv, verified by data_verify) and the digest of the
    code that reads it. A long job takes its table as ancient() input and this as a parameter: it
    reruns when the data or that code changes, not when an edit elsewhere in core reruns the
    data rules and rewrites the same table with a newer time.

    Known limit (Snakemake 9): in an invocation that reruns the data rules, a job downstream of
    them is not checked for its own parameter changes (Snakemake masks it, expecting the data
    rerun to trigger it, and ancient() stops that); the next invocation sees the change.
    """
    rows = manifest_rows(config["data"]["manifest"], "benchmarks")
    (row,) = [r for r in rows if r["path"] == f"benchmarks/{name}.csv.gz"]
    return {
        "sha256": row["sha256"],
        "code": script_code_digest("scripts/data/data_benchmark.py"),
    }


def all_targets():
    """Every final output of the workflow, in topic order."""
    return [path for topic in TOPICS for path in globals()[f"{topic.upper()}_TARGETS"]]
