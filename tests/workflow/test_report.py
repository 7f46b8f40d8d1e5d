"""The HTML report: markdown tables as HTML pages (fast unit tests), `snakemake --report` on
missing results, and the report of a smoke run rendered in a real headless Chromium.

The browser tests are marked ``browser`` (``pytest -m browser`` runs just them). They need
Chromium (``.ci/browser install`` installs Debian's as root) and skip, with the script's
reason, where ``.ci/browser check`` says this machine cannot run it; with the environment
variable ``RELIQUANT_BROWSER_TESTS=require`` they fail instead (CI). They run the smoke
configuration once in a copy of the repository (a few minutes), build its report, and check
what the browser renders: every HTML table item has rows of cells (as many as its markdown),
every entry is listed by its name label (not its path), every entry shows its caption.
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils.core import publish_parts
from workflow_helpers import REPO, copy_repo, snakemake

from reliquant.core import report as R
from reliquant.core.io import write_markdown

sys.path.insert(0, str(REPO / "workflow"))
import report_guard as G  # noqa: E402 (workflow code, not part of the library)

SMOKE = ["--configfile", "tests/smoke.yaml"]
BROWSER = REPO / ".ci" / "browser"
#: Exit status of `.ci/browser check` when this machine cannot run Chromium.
CANNOT_RUN = 3


# ------------------------------------------------------------------------------ helpers
class Tables(HTMLParser):
    """Every <table> of a document: its rows, each a list of (tag, text) cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[tuple[str, str]]]] = []
        self._cell: list[str] | None = None
        self._tag = ""
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell, self._tag = [], tag

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append((self._tag, "".join(self._cell).strip()))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def tables_of(page: str) -> Tables:
    parser = Tables()
    parser.feed(page)
    parser.close()
    return parser


def body_rows(table: list[list[tuple[str, str]]]) -> list[list[str]]:
    """The rows of a table made of <td> cells (the header row has <th>)."""
    return [[text for _, text in row] for row in table if row and row[0][0] == "td"]


def markdown_table_rows(text: str) -> list[int]:
    """Body rows of each pipe table of a markdown text (the line after a delimiter row on)."""
    counts, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if i and re.fullmatch(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?", line.strip()):
            n = 0
            for row in lines[i + 1 :]:
                if not row.strip() or "|" not in row:
                    break
                n += 1
            counts.append(n)
    return counts


# ------------------------------------------------------------------ markdown_to_html (unit)
TABLE = """\
# Results <v2>

Some *text* & a `code|span`.

| name | value | note |
|:-----|------:|:----:|
| a \\| b | 1.5 | <script>alert("x")</script> |
| c | 2 | `x \\| y` & "q" |
| d | 3 |
"""


def test_pipe_table_becomes_a_table_with_its_rows_and_cells():
    page = R.markdown_to_html(TABLE)
    parsed = tables_of(page)
    assert len(parsed.tables) == 1
    (table,) = parsed.tables
    assert [tag for tag, _ in table[0]] == ["th", "th", "th"]
    assert [text for _, text in table[0]] == ["name", "value", "note"]
    rows = body_rows(table)
    assert len(rows) == 3
    assert all(len(row) == 3 for row in rows), rows  # a short row is padded to the header
    assert rows[2] == ["d", "3", ""]
    assert '<td class="r">1.5</td>' in page
    assert '<th class="c">note</th>' in page


def test_escaped_pipes_stay_in_their_cell():
    rows = body_rows(tables_of(R.markdown_to_html(TABLE)).tables[0])
    assert rows[0][0] == "a | b"
    assert rows[1][2] == 'x | y & "q"'
    assert R.split_row(r"| a \| b | c |") == ["a | b", "c"]
    assert R.split_row(r"a | b \|") == ["a", "b |"]


def test_html_special_characters_are_escaped():
    page = R.markdown_to_html(TABLE)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "<title>Results &lt;v2&gt;</title>" in page
    assert "<h1>Results &lt;v2&gt;</h1>" in page
    assert "<em>text</em> &amp; a <code>code|span</code>" in page
    rows = body_rows(tables_of(page).tables[0])
    assert rows[0][2] == '<script>alert("x")</script>'  # shown as text, never run


def test_page_is_self_contained():
    page = R.markdown_to_html(TABLE)
    assert page.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in page and "<style>" in page
    for external in ("<script", "<link", "src=", "@import", "http"):
        assert external not in page, external


def test_headings_paragraphs_lists_and_code():
    text = (
        "## Claims\n\nline one\nline two\n\n- **holds**: a\n  continued\n- b\n\n"
        "1. first\n2. second\n\n<!-- paper nbc -->\n```\nx < y\n```\n"
    )
    body = R.markdown_body(text)
    assert "<h2>Claims</h2>" in body
    assert "<p>line one line two</p>" in body
    assert "<ul>\n<li><strong>holds</strong>: a continued</li>\n<li>b</li>\n</ul>" in body
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in body
    assert "<pre><code>x &lt; y</code></pre>" in body
    assert "paper nbc" not in body


def test_inline_markup_is_limited_and_safe():
    body = R.markdown_body("[ok](https://x.org/?a=1&b=2) [bad](javascript:alert(1)) 3 * 4 \\*a\\*")
    assert '<a href="https://x.org/?a=1&amp;b=2">ok</a>' in body
    assert 'href="javascript' not in body and "[bad](javascript:alert(1))" in body
    assert "3 * 4 *a*" in body


def test_text_without_table_and_title():
    page = R.markdown_to_html("just text", title="T & U")
    assert "<title>T &amp; U</title>" in page and "<p>just text</p>" in page
    assert "<title>reliquant table</title>" in R.markdown_to_html("| a |\n|---|\n| 1 |\n")


def test_frame_to_markdown_tables_convert_row_for_row():
    """The markdown of the library's own table writers converts row for row."""
    import pandas as pd

    from reliquant.core.io import frame_to_markdown

    frame = pd.DataFrame({"a|b": ["x|y", "<z>"], "v": [1.5, float("nan")]})
    text = "# T\n\n" + frame_to_markdown(frame)
    (table,) = tables_of(R.markdown_to_html(text)).tables
    assert markdown_table_rows(text) == [2]
    assert len(body_rows(table)) == 2


def test_write_markdown_writes_both_files(tmp_path):
    md, page = tmp_path / "t.md", tmp_path / "sub" / "t.html"
    write_markdown(TABLE, md, page)
    assert md.read_text(encoding="utf-8") == TABLE
    assert page.read_text(encoding="utf-8") == R.markdown_to_html(TABLE)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sub", "t.html", "t.md"]


# ------------------------------------------------------- snakemake --report guard (unit)
class FakeJob:
    def __init__(self, rule: str, outputs: list[str]):
        self.rule = SimpleNamespace(name=rule)
        self.output = outputs


class FakeDag:
    def __init__(self, jobs, reasons=None):
        self._jobs, self._reasons = jobs, reasons or {}

    def needrun_jobs(self):
        return iter(self._jobs)

    def reason(self, job):
        return self._reasons.get(job, "Params have changed since last execution")


def test_message_names_missing_and_stale_results(tmp_path):
    present = tmp_path / "present.md"
    present.write_text("x")
    jobs = [
        FakeJob("all", []),
        FakeJob("nbc_auc", [str(tmp_path / "auc.md"), str(tmp_path / "auc.html")]),
        FakeJob("trees_table1", [str(present)]),
    ]
    message = G.missing_results_message(FakeDag(jobs))
    assert "2 jobs would still run (nbc_auc x1, trees_table1 x1)" in message
    assert f"nbc_auc: {tmp_path / 'auc.md'} and 1 more" in message
    assert f"trees_table1: {present}: Params have changed" in message
    assert "snakemake --cores all" in message
    assert G.missing_results_message(FakeDag([FakeJob("all", [])])) is None


def test_guard_wraps_auto_report_once_and_raises_before_it():
    from snakemake_interface_common.exceptions import WorkflowError

    calls = []

    async def auto_report(dag, *args):
        calls.append(args)
        return "built"

    module = SimpleNamespace(auto_report=auto_report)
    G.require_results_for_report(module)
    wrapped = module.auto_report
    G.require_results_for_report(module)
    assert module.auto_report is wrapped and wrapped.__wrapped__ is auto_report
    assert asyncio.run(wrapped(FakeDag([]), "plugin")) == "built"
    with pytest.raises(WorkflowError, match="missing or out of date"):
        asyncio.run(wrapped(FakeDag([FakeJob("x", ["/nonexistent/x.md"])]), "plugin"))
    assert calls == [("plugin",)]


def test_guard_is_installed_on_this_snakemake():
    """The hook this relies on: Snakemake imports auto_report from snakemake.report when it
    creates a report (an upgrade that moved it would leave the guard a no-op)."""
    import inspect

    import snakemake.api  # noqa: F401 (snakemake.workflow cannot be imported first)
    import snakemake.report
    import snakemake.workflow

    source = inspect.getsource(snakemake.workflow.Workflow.create_report)
    assert "from snakemake.report import auto_report" in source
    assert callable(snakemake.report.auto_report)


# ---------------------------------------------------------------- captions (reStructuredText)
@pytest.mark.parametrize("caption", sorted(p.name for p in G.CAPTIONS.glob("*.rst")))
def test_every_caption_renders_without_a_docutils_warning(caption):
    """Every workflow/report/*.rst as Snakemake renders it: no warning and no error (an
    undefined |substitution| would show as error markup in report.html)."""
    path = G.CAPTIONS / caption
    assert G.caption_problems(path) == []
    html_body = publish_parts(
        path.read_text(), writer="html", settings_overrides={"report_level": 5}
    )["body"]
    assert "system-message" not in html_body and "problematic" not in html_body


def test_every_caption_the_rules_name_is_checked():
    """The captions named in the rules (topic_report(path, "<stem>", ...)) all lie in the
    folder the guard checks."""
    named = set()
    for rules in (REPO / "workflow" / "rules").glob("*.smk"):
        named |= set(re.findall(r'_report\(\s*"[^"]*",\s*"(\w+)"', rules.read_text()))
    checked = {path.stem for path in G.report_captions()}
    assert named and named <= checked, named - checked
    assert "compare_hybrid" in named and "workflow" in checked


def test_a_caption_with_an_undefined_substitution_is_refused_naming_file_and_line(tmp_path):
    good = tmp_path / "good.rst"
    good.write_text("A ratio ``|a| / |b|`` written as a literal, and \\|c\\| escaped.\n")
    bad = tmp_path / "bad.rst"
    bad.write_text("First line of the caption,\nthen a ratio |w| / (|w| + |v|)\nand more.\n")
    assert G.caption_problems(good) == []
    problems = G.caption_problems(bad)
    assert problems == [
        f'{bad}:2: ERROR: Undefined substitution referenced: "w".',
        f'{bad}:2: ERROR: Undefined substitution referenced: "v".',
    ]
    with pytest.raises(ValueError, match=rf"(?s)do not render cleanly.*{re.escape(str(bad))}:2:"):
        G.check_captions([good, bad])
    short = tmp_path / "short.rst"
    short.write_text("A title\n=====\n\ntext\n")  # underline shorter than its title: a warning
    assert G.caption_problems(short) == [f"{short}:2: WARNING: Title underline too short."]
    G.check_captions([good])


def test_the_report_guard_refuses_a_bad_caption_before_building(tmp_path):
    """A caption named by a report() output of the DAG is checked when the report is built:
    the guard raises (file and line named) before Snakemake's auto_report runs."""
    from snakemake_interface_common.exceptions import WorkflowError

    bad = tmp_path / "mine.rst"
    bad.write_text("Robustness |R| of each sample.\n")
    calls = []

    async def auto_report(dag, *args):
        calls.append(args)

    module = SimpleNamespace(auto_report=auto_report)
    G.require_results_for_report(module)
    output = SimpleNamespace(flags={"report": SimpleNamespace(caption=str(bad))})
    dag = FakeDag([])
    dag.jobs = [SimpleNamespace(rule=SimpleNamespace(name="x"), output=[output])]
    with pytest.raises(WorkflowError, match=rf'{re.escape(str(bad))}:1: ERROR: .*"R"'):
        asyncio.run(module.auto_report(dag, "plugin"))
    assert calls == []
    dag.jobs = []
    asyncio.run(module.auto_report(dag, "plugin"))
    assert calls == [("plugin",)]


@pytest.mark.slow
def test_report_with_a_broken_caption_fails_naming_it(tmp_path):
    """`snakemake --report` with a caption that docutils reports: the error names the
    caption's file and line, and no report is written."""
    work = copy_repo(tmp_path / "caption")
    caption = work / "workflow" / "report" / "nbc_auc.rst"
    caption.write_text(caption.read_text() + "\nThe ratio |eps| of each cell.\n")
    line = len(caption.read_text().splitlines())
    proc = snakemake(work, "--report", "report.html", *SMOKE, check=False, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert f"nbc_auc.rst:{line}: ERROR: Undefined substitution" in out, out[-3000:]
    assert not (work / "report.html").exists()


@pytest.mark.slow
def test_report_without_results_fails_plainly(tmp_path):
    """`snakemake --report` in a copy with no results: one plain error, no report file and
    none of Snakemake's per-file "Missing metadata" warnings."""
    work = copy_repo(tmp_path / "empty")
    proc = snakemake(work, "--report", "report.html", *SMOKE, check=False, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "results are missing or out of date" in out, out[-3000:]
    assert "Missing outputs" in out and "data_mnist" in out
    assert "Missing metadata" not in out, out[-3000:]
    assert not (work / "report.html").exists()


# ------------------------------------------------------------------------ browser tests
@pytest.fixture(scope="module")
def chromium() -> str:
    """The Chromium binary, once `.ci/browser check` says it runs here; else skip (or fail
    under RELIQUANT_BROWSER_TESTS=require)."""
    required = os.environ.get("RELIQUANT_BROWSER_TESTS", "") == "require"
    check = subprocess.run(["bash", BROWSER, "check"], capture_output=True, text=True)
    reason = (check.stdout + check.stderr).strip()
    if check.returncode == CANNOT_RUN:
        if required:
            pytest.fail(f"RELIQUANT_BROWSER_TESTS=require but {reason}")
        pytest.skip(reason)
    assert check.returncode == 0, reason
    path = subprocess.run(["bash", BROWSER, "path"], capture_output=True, text=True, check=True)
    return path.stdout.strip()


@pytest.fixture(scope="module")
def smoke_report(chromium, tmp_path_factory) -> Path:
    """A smoke run in a fresh copy and its report.html (the Chromium check comes first, so
    that a machine without Chromium skips at once)."""
    work = copy_repo(tmp_path_factory.mktemp("report_smoke"))
    snakemake(work, "--cores", "2", *SMOKE, timeout=3000)
    snakemake(work, "--report", "report.html", *SMOKE, timeout=600)
    return work


def dump_dom(chromium: str, url: str, budget_ms: int = 0, timeout: float = 180) -> str:
    """The DOM Chromium renders for ``url`` (``budget_ms`` of virtual time for scripts)."""
    profile = tempfile.mkdtemp(prefix="reliquant-chromium-")
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    args.append(f"--user-data-dir={profile}")
    if budget_ms:
        args.append(f"--virtual-time-budget={budget_ms}")
    try:
        proc = subprocess.run(
            [*args, "--dump-dom", url], capture_output=True, text=True, timeout=timeout
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def embedded(report: str, name: str):
    """A `var <name> = {...};` data block of the Snakemake report."""
    match = re.search(
        rf'<script id="{name}">\s*var {name} = (.*?);\s*</script>', report, flags=re.S
    )
    assert match, f"no {name} data in report.html (Snakemake changed its report format?)"
    return json.loads(match.group(1))


def decoded(data_uri: str) -> bytes:
    head, _, data = data_uri.partition(",")
    assert head.endswith(";base64"), head[:80]
    return base64.b64decode(data)


def squashed(text: str) -> str:
    """Text without tags and whitespace (the browser lays captions out its own way)."""
    return re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", text)))


#: Walks the report app (Snakemake's React app; global `app`, `categories`, `results`) through
#: every subcategory list and every result's info panel, and appends what the navigation pane
#: shows as JSON in <pre id="reliquant-dump"> for --dump-dom.
DRIVER = """
<script id="reliquant-driver">
(function () {
  const dump = {subcategories: [], results: {}, errors: []};
  const steps = [];
  const navText = () => document.querySelector("nav").innerText;
  for (const cat of Object.keys(categories)) {
    for (const sub of Object.keys(categories[cat])) {
      // through the menu, as a reader clicks (the list is computed when it is first shown)
      steps.push(() => app.setView({navbarMode: "menu"}));
      steps.push(() => app.setView({navbarMode: "subcategory", category: cat, subcategory: sub}));
      steps.push(() => dump.subcategories.push(
        {category: cat, subcategory: sub, paths: categories[cat][sub], text: navText()}));
    }
  }
  for (const path of Object.keys(results)) {
    steps.push(() => app.showResultInfo(path));
    steps.push(() => { dump.results[path] = navText(); });
  }
  let i = 0, waited = 0;
  function start() {  // once the app has rendered its navigation pane
    if (document.querySelector("nav") || waited > 100) { next(); } else { waited++; setTimeout(start, 50); }
  }
  function next() {
    if (i < steps.length) {
      try { steps[i++](); } catch (err) { dump.errors.push(String(err)); }
      setTimeout(next, 20);
    } else {
      const pre = document.createElement("pre");
      pre.id = "reliquant-dump";
      pre.textContent = JSON.stringify(dump);
      document.body.appendChild(pre);
    }
  }
  window.addEventListener("load", () => setTimeout(start, 50));
})();
</script>
"""


@pytest.mark.browser
def test_every_table_renders_rows_in_the_browser(smoke_report, chromium, tmp_path):
    """Each HTML item the report embeds, opened in Chromium: tables with rows of cells, as
    many as its markdown has; no report item is a raw .md file."""
    report = (smoke_report / "report.html").read_text(encoding="utf-8")
    results = embedded(report, "results")
    assert not [p for p in results if p.endswith(".md")], "markdown items left in the report"
    pages = {p: r for p, r in results.items() if r["mime_type"] == "text/html"}
    expected = {
        str(p.relative_to(smoke_report))
        for p in (smoke_report / "results").rglob("*.html")
        if (p.with_suffix(".md")).exists()
    }
    assert set(pages) == expected, "every markdown table's HTML page is in the report"
    assert len(pages) >= 12
    for path, result in sorted(pages.items()):
        page = tmp_path / path.replace("/", "_")
        page.write_bytes(decoded(result["data_uri"]))
        dom = tables_of(dump_dom(chromium, page.as_uri()))
        assert dom.tables, f"{path}: no <table> in the rendered page"
        rows = [body_rows(table) for table in dom.tables]
        for i, table_rows in enumerate(rows):
            assert table_rows, f"{path}: table {i + 1} has no rows with cells"
            assert all(any(cell for cell in row) for row in table_rows), path
        markdown = (smoke_report / path).with_suffix(".md").read_text(encoding="utf-8")
        assert [len(r) for r in rows] == markdown_table_rows(markdown), path


@pytest.mark.browser
def test_every_entry_is_listed_by_its_label_with_its_caption(smoke_report, chromium, tmp_path):
    """The report app in Chromium, driven through every subcategory and every result: each
    entry is listed by its name label (not its path) and shows its caption."""
    report = (smoke_report / "report.html").read_text(encoding="utf-8")
    results = embedded(report, "results")
    driven = tmp_path / "report_driven.html"
    head, body_end, tail = report.rpartition("</body>")
    driven.write_text(head + DRIVER + body_end + tail, encoding="utf-8")
    dom = dump_dom(chromium, driven.as_uri(), budget_ms=120_000, timeout=300)
    match = re.search(r'<pre id="reliquant-dump">(.*?)</pre>', dom, flags=re.S)
    assert match, "the driver did not finish (report app not rendered?)"
    dump = json.loads(html.unescape(match.group(1)))
    assert dump["errors"] == []
    listed = {path for sub in dump["subcategories"] for path in sub["paths"]}
    assert listed == set(results)
    names = [result["labels"]["name"] for result in results.values() if result["labels"]]
    assert len(names) == len(results), "an entry without a name label"
    assert len(set(names)) == len(names), "two entries share a name"
    for sub in dump["subcategories"]:
        for path in sub["paths"]:
            name = results[path]["labels"]["name"]
            assert name in sub["text"], f"{path}: label {name!r} not listed in {sub['subcategory']}"
            assert path not in sub["text"], f"{path}: listed by its path"
    figures = [p for p, r in results.items() if r["mime_type"].startswith("image/")]
    assert len(figures) >= 15
    for path, result in results.items():
        shown = dump["results"][path]
        assert result["labels"]["name"] in shown, f"{path}: label not shown in its info"
        caption = squashed(result["caption"])
        assert len(caption) > 40, f"{path}: no caption"
        assert caption[:80] in squashed(shown), f"{path}: caption not shown: {caption[:80]!r}"


@pytest.mark.browser
def test_report_of_another_configuration_fails(smoke_report):
    """Smoke results, default configuration: Snakemake alone builds a report of the smoke
    results with "Missing metadata" warnings; the guard stops it, naming the missing jobs."""
    proc = snakemake(smoke_report, "--report", "other.html", check=False, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "results are missing or out of date" in out, out[-3000:]
    assert "Missing metadata" not in out
    assert not (smoke_report / "other.html").exists()
