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
    # the first block of "Using the library"; the others: test_readme_examples.py
    (example,) = [b for b in _blocks("python") if "print(result.lower" in b]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
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
