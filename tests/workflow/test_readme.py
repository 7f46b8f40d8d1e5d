"""The README tells the truth: its commands match CI, its example runs and says what it prints,
it stays a front page, and every link in it and in docs/ resolves."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest
from workflow_helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
LIBRARY = (REPO / "docs" / "library.md").read_text(encoding="utf-8")
#: The README is a front page: what it is, set-up, headline numbers, topics, links.
MAX_README_LINES = 250


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def _run(code: str, source: str) -> tuple[list[str], dict]:
    out = io.StringIO()
    namespace: dict = {"__name__": "readme_example"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, source, "exec"), namespace)  # noqa: S102 - our own docs
    return out.getvalue().splitlines(), namespace


def test_exactly_two_setup_commands_and_ci_runs_the_second_verbatim():
    setup = README.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", setup, flags=re.S)
    assert len(commands) == 2
    install_and_run, install_and_test = commands
    assert "snakemake --cores all" in install_and_run
    assert "pytest" in install_and_test
    assert install_and_test in (REPO / ".ci" / "run").read_text()


def test_the_readme_says_which_command_runs_the_rest_and_ci_runs_it():
    """The default `pytest` deselects the slow and end-to-end tests; the README names the
    command that runs them, and CI runs that command too, so nothing goes untested."""
    import tomllib

    addopts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    deselected = re.search(r"-m '([^']+)'", addopts["addopts"]).group(1)
    assert {"slow", "workflow"} <= set(re.findall(r"not (\w+)", deselected))
    tests = README.split("## Tests: the fast suite and everything", 1)[1].split("\n## ", 1)[0]
    assert '.venv/bin/pytest -m "slow or workflow"' in tests
    ci = (REPO / ".ci" / "run").read_text()
    assert '.venv/bin/pytest -p no:cacheprovider -m "slow or workflow"' in ci


def test_readme_is_a_front_page():
    assert len(README.splitlines()) <= MAX_README_LINES
    # benchmark reports live in docs/benchmarks.md: no block's own `## ` headings leak here
    assert "readme_bench_timings" not in README and "bench_workflow_timings" not in README
    figures = re.findall(r"^!\[[^\]]*\]\(([^)]+)\)", README, flags=re.M)
    # the compare topic's forest plot, and the library's answer to "which score to trust"
    assert figures == ["docs/figures/compare_forest.png", "docs/figures/compare_which_score.png"]


def test_the_which_score_example_prints_what_the_readme_quotes_and_draws_its_figure(tmp_path):
    """The README's library example: the sentence it quotes is the one the code prints, and
    the committed figure is the one its ``answer.plot()`` draws now (same size, pixels within
    a rounding of antialiasing), so neither can drift from the code."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (example,) = [b for b in _blocks(README, "python") if "which_score(" in b]
    fresh = tmp_path / "which_score.png"
    # answer.plot() draws on the current axes with the current rcParams, as matplotlib does for
    # a user: a fresh figure under matplotlib's defaults, whatever an earlier test in this
    # worker left behind (the workflow's figures call reliquant.core.plotting.apply_style)
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # the backend stays Agg (rcdefaults keeps it)
        plt.close("all")
        printed, ns = _run(example, "README.md")
        plt.gcf().savefig(fresh, dpi=150)
        plt.close("all")
    quoted = re.search(r"It prints `(.*?)`;", README, flags=re.S).group(1)
    assert " ".join(quoted.split()) == printed[-1] == ns["answer"].recommendation
    committed = plt.imread(REPO / "docs" / "figures" / "compare_which_score.png")
    drawn = plt.imread(fresh)
    assert committed.shape == drawn.shape, "regenerate docs/figures/compare_which_score.png"
    assert np.abs(committed - drawn).mean() < 2e-3, (
        "regenerate docs/figures/compare_which_score.png"
    )


def test_readme_example_prints_what_it_promises_and_agrees_with_monte_carlo():
    """The README's one example: the bounds it prints equal the ones its comment states, and
    an independent Monte Carlo estimate of R = P(f(x') = f(x)) from the forest's own
    ``predict`` lies within them (up to 5 standard errors)."""
    (example,) = [b for b in _blocks(README, "python") if "print(result.lower" in b]
    printed, ns = _run(example, "README.md")
    promised = re.search(
        r"print\(result.lower, result.upper, result.exact\)\s+# ([\d.]+) ([\d.]+) True", example
    )
    assert promised, "the example's comment no longer states the bounds"
    lower, upper, exact = printed[-1].split()
    assert abs(float(lower) - float(promised.group(1))) < 1e-9
    assert abs(float(upper) - float(promised.group(2))) < 1e-9
    assert exact == "True"
    forest, x = ns["forest"], ns["iris"].data[70]
    rng = np.random.default_rng(0)
    n = 40_000
    label = forest.predict(x[None, :])[0]
    mc = float(np.mean(forest.predict(x + np.sqrt(0.1) * rng.standard_normal((n, 4))) == label))
    slack = 5 * np.sqrt(mc * (1 - mc) / n)
    assert float(lower) - slack <= mc <= float(upper) + slack


def test_library_example_runs_and_prints_what_it_promises():
    # the first block of docs/library.md; the others: test_readme_examples.py
    (example,) = [b for b in _blocks(LIBRARY, "python") if "print(result.lower" in b]
    printed, _ = _run(example, "docs/library.md")
    promised = re.search(
        r"print\(result.lower, result.upper, result.exact\)\s+# ([\d.]+) ([\d.]+) True", example
    )
    assert promised, "the example's comment no longer states the bounds"
    # the NBC table: a header and three rows with eps_glob <= 1/2 and eps_loc in [0, 1/2]
    assert printed[0].split() == ["prediction", "eps_glob", "eps_loc"]
    for line in printed[1:4]:
        _, pred, glob, loc = line.split()
        assert pred in {"yes", "no"} and 0 <= float(glob) <= 0.5 and 0 <= float(loc) <= 0.5
    lower, upper, exact = printed[4].split()
    assert abs(float(lower) - float(promised.group(1))) < 1e-9
    assert abs(float(upper) - float(promised.group(2))) < 1e-9
    assert exact == "True"
    assert abs(float(printed[5]) - float(lower)) < 1e-12  # the engine alone agrees


def test_every_example_of_the_readme_and_the_library_page_is_in_the_gallery():
    """The gallery (examples/, run by the site's build) holds each example verbatim, so the
    two cannot drift apart."""
    scripts = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "examples").glob("*.py")}
    for source, text in (("README.md", README), ("docs/library.md", LIBRARY)):
        for block in _blocks(text, "python"):
            homes = [name for name, script in scripts.items() if block in script]
            assert homes, f"{source}: no examples/*.py holds the block starting {block[:80]!r}"


# ------------------------------------------------------------------ links
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a markdown page (lower case, punctuation dropped, spaces
    to hyphens), which MyST reproduces (docs/conf.py: myst_heading_anchors)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    anchors = set()
    for title in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        anchors.add(slug)
    return anchors


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    """Each relative link of the README and of docs/*.md names a file that exists, and its
    `#anchor`, if any, a heading of that page (the site's build checks the same with -W)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for groups in _LINK.findall(text):
        target = groups[0] or groups[1]
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:: not checked (no network)
            continue
        path, _, anchor = target.partition("#")
        if path.startswith("auto_examples/") or path.startswith("api/"):
            continue  # generated by the site's build (checked there, -W)
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in _anchors(dest)):
            broken.append(target)
    assert broken == [], f"{page.relative_to(REPO)}: links to nothing: {broken}"
