"""Workflow code (not library): make ``snakemake --report`` refuse missing or stale results,
and captions that do not render.

:func:`require_results_for_report` makes ``snakemake --report`` stop, naming what is missing,
when the results of the selected configuration are missing or out of date, instead of
building a report from whatever files happen to exist; and naming the file and line, when a
caption (``workflow/report/*.rst``, reStructuredText) draws a warning or an error from
docutils (:func:`caption_problems`: an undefined substitution such as ``|w|``, a title
underline too short), which Snakemake would otherwise print and render as error markup. Only the targets asked for are checked
(``snakemake --report report.html custom``: your cases alone, under "Your cases", without the
papers' results). The Snakefile imports it (this folder
is put on ``sys.path`` there); the library ``reliquant`` stays free of Snakemake imports.
"""

from __future__ import annotations

import inspect
import io
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: How many jobs of each kind (missing, out of date) the message names before it only counts.
_LISTED_JOBS = 5
#: Longest reason quoted for an out-of-date job.
_REASON_CHARS = 160
#: The rules of the workflow's own cases (config ``custom:``) and their target rule.
_CUSTOM_RULES = ("custom", "custom_nbc", "custom_trees", "custom_mlm")
#: The folder of the report's captions (CONTRIBUTING.md: workflow/report/<name>.rst).
CAPTIONS = Path(__file__).resolve().parent / "report"
#: docutils' report level for captions: 2 (warnings and worse are problems).
_CAPTION_LEVEL = 2


def caption_problems(path: str | os.PathLike) -> list[str]:
    """Every warning or error docutils reports on the reStructuredText file ``path``, each as
    ``"<path>:<line>: <LEVEL>: <message>"``; empty when it renders cleanly.

    Parsed as Snakemake parses a caption (docutils, with its transforms: substitutions,
    references), at report level 2. An undefined substitution is reported by docutils at its paragraph's
    first line; the line of its first ``|name|`` is given instead.
    """
    from docutils.core import publish_doctree

    text = Path(path).read_text(encoding="utf-8")
    stream = io.StringIO()
    publish_doctree(
        text,
        source_path=str(path),
        settings_overrides={
            "report_level": _CAPTION_LEVEL,
            "halt_level": 5,  # never stop: collect every message
            "warning_stream": stream,
        },
    )
    lines = text.splitlines()
    header = re.compile(rf"^{re.escape(str(path))}:(\d+): \((\w+)/\d\) (.*)$")
    problems = []
    for message in stream.getvalue().splitlines():
        match = header.match(message)
        if match is None:
            continue  # a continuation line (the quoted source of the message above)
        line, level, what = int(match.group(1)), match.group(2), match.group(3)
        name = re.match(r'Undefined substitution referenced: "(.*)"\.$', what)
        if name is not None:
            at = [i for i, t in enumerate(lines, 1) if f"|{name.group(1)}|" in t and i >= line]
            line = at[0] if at else line
        problem = f"{path}:{line}: {level}: {what}"
        if problem not in problems:
            problems.append(problem)
    return problems


def check_captions(paths: Iterable[str | os.PathLike]) -> None:
    """Raise ValueError listing every problem of every caption (:func:`caption_problems`),
    each naming its file and line, with what to do; nothing when all render cleanly."""
    files = sorted({str(path) for path in paths})
    problems = [problem for path in files for problem in caption_problems(path)]
    if problems:
        raise ValueError(
            "report captions do not render cleanly (reStructuredText; write a literal | as "
            "\\| or inside ``double backquotes``):\n  " + "\n  ".join(problems)
        )


def _source_path(source: Any) -> str:
    """The local path of a Snakemake source file (a caption), or ``source`` as a string."""
    getter = getattr(source, "get_path_or_uri", None)
    if getter is None:
        return str(source)
    try:
        return str(getter(secret_free=True))
    except TypeError:  # a Snakemake whose method takes no argument
        return str(getter())


def report_captions(dag: Any = None) -> list[Path]:
    """Every caption of the report: each ``.rst`` file of :data:`CAPTIONS`, with those that
    the outputs of ``dag``'s jobs name (``report(..., caption=...)``) and the workflow's
    description (``report:`` in the Snakefile) where ``dag`` is given."""
    paths = set(CAPTIONS.glob("*.rst"))
    named = [getattr(getattr(dag, "workflow", None), "report_text", None)]
    for job in getattr(dag, "jobs", []) if dag is not None else []:
        for output in job.output:
            report_object = getattr(output, "flags", {}).get("report")
            named.append(getattr(report_object, "caption", None))
    for caption in named:
        if caption is None:
            continue
        where = _source_path(caption)
        if os.path.isfile(where):
            paths.add(Path(where).resolve())
    return sorted(paths)


def missing_results_message(dag: Any) -> str | None:
    """Why a report of ``dag`` would not show this configuration's results, or None.

    ``dag`` is the Snakemake DAG that ``--report`` builds (the same targets, configuration and
    rerun triggers as a run): every job it would still run means a result that is missing or
    older than its inputs, code or parameters. Jobs without outputs (``rule all``) are left
    out of the message. When the DAG holds custom cases (config ``custom:``) besides jobs of
    other rules still to run, the message says how to report the cases alone (target
    ``custom``).
    """
    pending = [job for job in dag.needrun_jobs() if len(job.output)]
    if not pending:
        return None
    pending.sort(key=lambda job: (job.rule.name, [str(path) for path in job.output]))
    missing = {job: [str(p) for p in job.output if not os.path.exists(p)] for job in pending}
    by_rule = Counter(job.rule.name for job in pending)
    lines = [
        f"this configuration's results are missing or out of date, so a report would not show "
        f"them: {len(pending)} jobs would still run ("
        + ", ".join(f"{rule} x{n}" for rule, n in sorted(by_rule.items()))
        + ")."
    ]
    absent = [job for job in pending if missing[job]]
    # jobs out of date for a reason of their own (code, params, ...) before their followers
    stale = sorted(
        (job for job in pending if not missing[job]),
        key=lambda job: str(dag.reason(job)).startswith("Input files updated by another job"),
    )
    if absent:
        lines.append(f"Missing outputs ({len(absent)} jobs):")
        for job in absent[:_LISTED_JOBS]:
            more = len(missing[job]) - 1
            extra = f" and {more} more" if more else ""
            lines.append(f"  {job.rule.name}: {missing[job][0]}{extra}")
        if len(absent) > _LISTED_JOBS:
            lines.append(f"  ... and {len(absent) - _LISTED_JOBS} more jobs")
    if stale:
        lines.append(f"Out of date ({len(stale)} jobs):")
        for job in stale[:_LISTED_JOBS]:
            reason = " ".join(str(dag.reason(job)).split())
            if len(reason) > _REASON_CHARS:
                reason = reason[: _REASON_CHARS - 3] + "..."
            lines.append(f"  {job.rule.name}: {job.output[0]}: {reason}")
        if len(stale) > _LISTED_JOBS:
            lines.append(f"  ... and {len(stale) - _LISTED_JOBS} more jobs")
    lines.append(
        "Run the workflow with the same options first (`snakemake --cores all` plus the same "
        "--configfile/--config options; `snakemake -n` lists the jobs), then build the report."
    )
    jobs = list(getattr(dag, "jobs", pending))
    if any(job.rule.name in _CUSTOM_RULES for job in jobs) and any(
        job.rule.name not in _CUSTOM_RULES for job in pending
    ):
        lines.append(
            "Your cases (config `custom:`) alone, without the papers' results: `snakemake "
            "--cores all custom` then `snakemake --report report.html custom`, with the same "
            "--configfile/--config options."
        )
    return "\n".join(lines)


def require_results_for_report(report_module: Any | None = None) -> None:
    """Make ``snakemake --report`` fail when this configuration's results are missing or stale.

    Snakemake builds a report from whatever files exist: with no results it prints a
    "Missing metadata" warning per file before failing on the first missing report item, and
    with results of another configuration (or older code) it builds a report that silently
    shows them. Called from the Snakefile, this wraps ``snakemake.report.auto_report`` (which
    Snakemake imports when, and only when, it creates a report) so that the report first
    checks the DAG it was given and raises a WorkflowError naming the pending jobs.
    It checks every caption first (:func:`check_captions` over :func:`report_captions`):
    a caption docutils warns about stops the report, naming the file and line.
    Idempotent; a no-op on a Snakemake without that function (the tests then fail).
    """
    if report_module is None:
        import snakemake.report as report_module
    original = getattr(report_module, "auto_report", None)
    if original is None or getattr(original, "_reliquant_guard", False):
        return

    def check(dag: Any) -> None:
        from snakemake_interface_common.exceptions import WorkflowError

        try:
            check_captions(report_captions(dag))
        except ValueError as err:
            raise WorkflowError(f"snakemake --report: {err}") from None
        message = missing_results_message(dag)
        if message is not None:
            raise WorkflowError(f"snakemake --report: {message}")

    if inspect.iscoroutinefunction(original):

        async def auto_report(dag: Any, *args: Any, **kwargs: Any) -> Any:
            check(dag)
            return await original(dag, *args, **kwargs)

    else:

        def auto_report(dag: Any, *args: Any, **kwargs: Any) -> Any:
            check(dag)
            return original(dag, *args, **kwargs)

    auto_report._reliquant_guard = True  # type: ignore[attr-defined]
    auto_report.__wrapped__ = original  # type: ignore[attr-defined]
    report_module.auto_report = auto_report
