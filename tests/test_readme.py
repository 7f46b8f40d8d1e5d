"""The README tells the truth: its commands match CI and its library example runs."""

from __future__ import annotations

import contextlib
import io
import re

from workflow_helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_exactly_two_setup_commands_and_ci_runs_the_second_verbatim():
    setup = README.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", setup, flags=re.S)
    assert len(commands) == 2
    install_and_run, install_and_test = commands
    assert "snakemake --cores all" in install_and_run
    assert "pytest" in install_and_test
    assert install_and_test in (REPO / ".ci" / "run").read_text()


def test_library_example_runs_and_prints_what_it_promises():
    (example,) = _blocks("python")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "README.md", "exec"), {})
    printed = out.getvalue()
    promised = re.search(r"print\(result.lower, result.upper\)\s+# ([\d.]+) ([\d.]+)", example)
    assert promised, "the example's comment no longer states the bounds"
    lower, upper = (float(v) for v in printed.splitlines()[2].split())
    assert abs(lower - float(promised.group(1))) < 1e-9
    assert abs(upper - float(promised.group(2))) < 1e-9
    assert "MonteCarloResult" in printed
