"""Generated numbers in the README and docs (reliquant.core.docs and the topics' highlights):
markers parse strictly, sync rewrites only the blocks, check finds stale ones, every block of
the committed pages has a generator in the workflow, and the generators' numbers equal an
independent computation from the same tables."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from reliquant.core.docs import (
    RUN_TIMINGS,
    TIMING_SUFFIX,
    begin_marker,
    check_markdown,
    end_marker,
    fill_blocks,
    find_blocks,
    main,
    merge_blocks,
    run_timings,
    stale_blocks,
)
from reliquant.core.paper import Comparison, comparison_frame, picked_lines
from reliquant.mlm.reproduction.highlights import accuracy_block, matrix_block
from reliquant.nbc.reproduction.highlights import cells_table, readme_bullets, statements_table
from reliquant.trees.reproduction.highlights import sensitivity_sentence

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "docs/nbc.md",
    "docs/trees.md",
    "docs/pmnist.md",
    "docs/mlm.md",
    "docs/compare.md",
    "docs/benchmarks.md",
]


def _page(*blocks: tuple[str, str]) -> str:
    parts = ["# Title", "", "prose 1.23"]
    for name, body in blocks:
        parts += [begin_marker(name), body, end_marker(name), "after"]
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------ markers, sync, check
def test_fill_replaces_only_block_contents_and_is_idempotent():
    text = _page(("a", "old a"), ("b", "old b\nline 2"))
    filled = fill_blocks(text, {"a": "new a\n", "b": "new b"})
    assert "old" not in filled and "new a\n" in filled and "prose 1.23" in filled
    assert filled.count("after") == 2
    assert fill_blocks(filled, {"a": "new a", "b": "new b"}) == filled
    assert stale_blocks(filled, {"a": "new a", "b": "new b"}) == []
    assert stale_blocks(text, {"a": "new a", "b": "old b\nline 2"}) == ["a"]


@pytest.mark.parametrize(
    "text, message",
    [
        (begin_marker("a") + "\nx\n", "never closed"),
        (begin_marker("a") + "\n" + begin_marker("b") + "\n", "opens inside block 'a'"),
        (begin_marker("a") + "\n" + end_marker("b") + "\n", "does not close block 'a'"),
        (end_marker("a") + "\n", "does not close any open block"),
        ("<!-- generated: Bad Name -->\n", "malformed"),
        (_page(("a", "1"), ("a", "2")), "appears twice"),
    ],
)
def test_malformed_markers_name_the_page_and_line(text, message):
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        find_blocks(text, "docs/x.md")
    assert "docs/x.md:" in str(err.value)


def test_fill_names_a_block_without_content():
    with pytest.raises(KeyError, match="no generated content for block 'b'"):
        fill_blocks(_page(("a", "1"), ("b", "2")), {"a": "1"}, "README.md")


def test_merge_refuses_a_block_from_two_generators():
    with pytest.raises(ValueError, match="'x' comes from two generators"):
        merge_blocks({"x": "1"}, {"x": "2"})


def test_check_reports_stale_missing_and_timing_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        _page(("a", "1"), ("b", "2"), ("c_timings", "3"), ("d", "4"), ("e_timings", "5"))
    )
    text = check_markdown([page], {"a": "1", "b": "changed", "c_timings": "9"})
    assert re.search(r"\| e_timings \| timings of another run", text)
    assert fill_blocks(page.read_text(), {"a": "1", "b": "2", "c_timings": "3", "d": "4"}) == (
        page.read_text()
    )  # a timing block no run here generated keeps its text
    assert re.search(r"\| a \| current \|", text)
    assert re.search(r"\| b \| \*\*stale\*\* \|", text)
    assert re.search(r"\| c_timings \| other timings", text)
    assert re.search(r"\| d \| \*\*no generator\*\* \|", text)
    assert "2 block(s) differ from this run; 1 timing block(s)" in text


def test_command_line_sync_then_check(tmp_path, capsys):
    blocks = tmp_path / "blocks"
    blocks.mkdir()
    (blocks / "a.md").write_text("fresh 0.5\n")
    (blocks / "t_timings.md").write_text("12x\n")
    page = tmp_path / "page.md"
    page.write_text(_page(("a", "stale 0.4"), ("t_timings", "10x")))
    assert main(["check", str(page), "--blocks", str(blocks)]) == 1
    assert main(["sync", str(page), "--blocks", str(blocks)]) == 0
    assert "fresh 0.5" in page.read_text() and "12x" in page.read_text()
    assert main(["check", str(page), "--blocks", str(blocks)]) == 0
    (blocks / "t_timings.md").write_text("99x\n")  # other runtimes: reported, not stale
    assert main(["check", str(page), "--blocks", str(blocks)]) == 0
    assert main(["check", str(page), "--blocks", str(tmp_path / "none")]) == 2
    assert "no generated blocks" in capsys.readouterr().out


def test_every_block_of_the_committed_pages_has_a_generator_rule():
    """The pages' block names are exactly DOC_BLOCKS of workflow/rules/report.smk (rule
    docs_blocks), the benchmark blocks of rule bench and the blocks of the compare topic's named
    targets (compare_logratio_protocol_table, compare_resolution, compare_selection_table), and
    the pages are in DOC_PAGES, so
    rule docs_check sees every generated number."""
    smk = (REPO / "workflow/rules/report.smk").read_text()
    declared = set(
        re.findall(r'^    "([a-z0-9_]+)",$', smk.split("DOC_BLOCKS = [")[1].split("]")[0], re.M)
    )
    pages_decl = re.search(r"DOC_PAGES = \[(.*?)\]", smk, re.S).group(1)
    used = set()
    for page in PAGES:
        assert f'"{page}"' in pages_decl, page
        used |= {b.name for b in find_blocks((REPO / page).read_text(), page)}
    bench = set(re.search(r"BENCH_TOPICS = \[(.*?)\]", smk).group(1).replace('"', "").split(", "))
    from_bench = {"readme_bench_timings"} | {f"bench_{t}_timings" for t in bench}
    # blocks of named targets outside the default run: each ends in _timings, so that a page
    # sync and rule docs_check keep them when a run did not make them
    compare = "".join(p.read_text() for p in sorted((REPO / "workflow/rules").glob("compare*.smk")))
    from_targets = set(re.findall(r'"results/docs/([a-z0-9_]+)\.md"', compare))
    assert {
        "compare_protocol_timings",
        "compare_resolution_timings",
        "compare_selection_timings",
    } <= from_targets
    assert all(name.endswith(TIMING_SUFFIX) for name in from_targets)
    assert used == declared | from_bench | from_targets | {RUN_TIMINGS}
    assert len(used) >= 15


# ------------------------------------------------------------------ generators
def _nbc_tables(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    from reliquant.nbc.reproduction.experiment import METRICS

    rows, auc = [], []
    for n in (100, 50, 25):
        for g in (0.0, 0.2, 0.4):
            for m in METRICS:
                auc.append(
                    {
                        "n_train": n,
                        "gamma": g,
                        "metric": m,
                        "family": METRICS[m][1],
                        "auc_mean": rng.uniform(0.7, 0.95),
                        "auc_std": rng.uniform(0.001, 0.1),
                        "n_sets": 100,
                    }
                )
            d = rng.normal(0.01, 0.01)
            se = 0.003
            verdict = "better" if d > 2 * se else ("worse" if d < -2 * se else "tie")
            rows.append(
                {
                    "n_train": n,
                    "gamma": g,
                    "hard": bool(n < 100 or g > 0),
                    "best_robustness": "eps_loc",
                    "auc_robustness": rng.uniform(0.8, 0.9),
                    "best_uncertainty": "u_m",
                    "auc_uncertainty": rng.uniform(0.8, 0.9),
                    "diff_mean": d,
                    "diff_se": se,
                    "verdict": verdict,
                    "claim_holds": True,
                }
            )
    return pd.DataFrame(rows), pd.DataFrame(auc)


def test_nbc_cells_table_prints_every_cell_of_the_claims_check():
    claims, auc = _nbc_tables(np.random.default_rng(1))
    table = cells_table(claims, auc).strip().splitlines()[2:]
    assert len(table) == len(claims)
    for line, row in zip(table, claims.itertuples(), strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == str(row.n_train) and cells[5] == row.verdict
        assert cells[4] == f"{row.diff_mean:+.4f} ± {row.diff_se:.4f}"
        ue = auc[(auc.n_train == row.n_train) & (auc.gamma == row.gamma) & (auc.metric == "u_e")]
        assert float(cells[6]) == pytest.approx(float(ue.auc_mean.iloc[0]), abs=5e-4)


def test_nbc_readme_counts_hard_cells_where_robustness_wins():
    claims, auc = _nbc_tables(np.random.default_rng(2))
    hard = claims[claims.hard]
    n_better = int((hard.verdict == "better").sum())
    text = readme_bullets(claims, auc)
    assert f"**{n_better} of {len(hard)}**" in text
    assert f"{int((claims.verdict == 'worse').sum())} of {len(claims)}" in text


def test_nbc_statements_fail_when_the_data_contradict_them():
    claims, auc = _nbc_tables(np.random.default_rng(3))
    # the gap shrinks as N_train shrinks at gamma 0: the first statement must not hold
    for n, d in ((100, 0.03), (50, 0.02), (25, 0.01)):
        claims.loc[(claims.n_train == n) & (claims.gamma == 0.0), "diff_mean"] = d
    first = statements_table(claims, auc).splitlines()[2]
    assert first.endswith("| does not hold |"), first
    for n, d in ((100, 0.01), (50, 0.02), (25, 0.03)):
        claims.loc[(claims.n_train == n) & (claims.gamma == 0.0), "diff_mean"] = d
    assert statements_table(claims, auc).splitlines()[2].endswith("| holds |")


def test_mlm_accuracy_block_equals_the_pivot_of_the_table():
    rng = np.random.default_rng(4)
    rows = [{"corruption": "clean", "level": 0, "n": 100, "accuracy": 0.99}]
    rows += [
        {"corruption": c, "level": lv, "n": 100, "accuracy": float(rng.uniform(0.3, 1))}
        for c in ("fog", "snow")
        for lv in range(1, 11)
    ]
    frame = pd.DataFrame(rows)
    lines = accuracy_block(frame).splitlines()
    fog = [float(v) for v in lines[2].strip("|").split("|")[1:]]
    expected = frame[frame.corruption == "fog"].sort_values("level").accuracy * 100
    assert np.allclose(fog, expected, atol=0.05)
    mean = [float(v) for v in lines[4].strip("|").split("|")[1:]]
    both = frame[frame.corruption != "clean"].groupby("level").accuracy.mean() * 100
    assert np.allclose(mean, both, atol=0.05)
    assert "Clean test set: 99.00 %." in accuracy_block(frame)


def test_mlm_matrix_block_lists_the_largest_off_diagonal_likelihoods():
    rng = np.random.default_rng(5)
    rows = []
    for scope in ("overall", "mean"):
        like = rng.dirichlet(np.ones(3), size=3)
        for t in range(3):
            for p in range(3):
                rows.append(
                    {
                        "scope": scope,
                        "corruption": None,
                        "level": np.nan,
                        "true": t,
                        "predicted": p,
                        "distance": 1.0,
                        "likelihood": like[t, p],
                    }
                )
    frame = pd.DataFrame(rows)
    mis = pd.DataFrame({"index": [7], "label": [3], "cluster": [9]})
    text = matrix_block(frame, mis, n_top=2)
    off = frame[(frame.scope == "overall") & (frame.true != frame.predicted)]
    top = off.nlargest(1, "likelihood").iloc[0]
    assert f"(Figure 2): {top.true} -> {top.predicted} ({top.likelihood:.2f})" in text
    assert "cluster: 1 (#7: 3 -> cluster 9)." in text


def test_picked_rows_use_the_papers_digits_and_say_when_a_row_is_missing():
    comparisons = comparison_frame([Comparison("002", "R2", 0.9999, 0.999988)])
    lines = picked_lines(comparisons, [("R2", "R^2"), ("absent", "other")])
    assert lines[2] == "| R^2 | 0.9999 | 0.99999 |"
    assert lines[3] == "| other | – | not in this run |"


def test_sensitivity_sentence_ranges():
    frame = pd.DataFrame(
        {
            "reading": ["variance", "variance", "amplitude"],
            "rounds": [10, 20, 10],
            "n_test": [73] * 3,
            "n_above": [19, 26, 52],
        }
    )
    text = sensitivity_sentence(frame)
    assert "the variance reading 19 to 26 (rounds 10, 20)" in text
    assert "the amplitude reading 52 to 52 (rounds 10)" in text


def test_run_timings_sum_the_jobs_and_name_the_longest(tmp_path):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    bench, logs = tmp_path / "benchmarks", tmp_path / "logs"
    # (wall s, the benchmark file's sampled cpu_time, the log's exit-record CPU)
    jobs = {
        "trees/pima": (240.0, 20.0, 230.0),
        "mlm/train": (170.0, 90.0, 160.0),
        "data/iris": (3.0, 2.0, 4.0),
    }
    for name, (sec, sampled, cpu) in jobs.items():
        path = bench / f"{name}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + f"{sec}\t0\t1\t1\t1\t1\t0\t0\t50\t{sampled}\n")
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        (logs / f"{name}.log").write_text(
            "2026-12-03 06:13:22,446 INFO reliquant.x: work\n"
            f"2026-12-03 06:13:23,552 INFO reliquant.job: usage at exit: cpu {cpu:.3f} s "
            f"(user {cpu:.3f} s, system 0.000 s), peak rss 100.0 MB\n"
        )
    (bench / "report").mkdir()
    (bench / "report" / "bench.tsv").write_text(header + "999\t0\t1\t1\t1\t1\t0\t0\t50\t9\n")
    # a named target outside the default run, and a user's custom case: neither counts
    for other in ("named/compare/resolution.tsv", "custom/mine.tsv"):
        (bench / other).parent.mkdir(parents=True, exist_ok=True)
        (bench / other).write_text(header + "500\t0\t1\t1\t1\t1\t0\t0\t50\t9\n")
    text = run_timings(bench, n_longest=2)
    # CPU from the exit records (394 s), not the sampled cpu_time (112 s)
    assert text.startswith("3 jobs, 6.9 minutes of job time in all (6.6 CPU minutes)")
    assert text.rstrip().endswith("the longest: trees/pima 240 s, mlm/train 170 s.")
    # one log without its exit record: no partial sum
    (logs / "data" / "iris.log").write_text("2026-12-03 06:13:22,446 INFO reliquant.x: work\n")
    assert "(CPU time not recorded for 1 of them)" in run_timings(bench)
    assert run_timings(tmp_path / "none") is None


def test_pmnist_quirks_find_identical_levels_and_background_changes():
    from reliquant.pmnist.reproduction.highlights import quirks_block

    rows = [
        {
            "corruption": "clean",
            "level": 0,
            "sha256": "c",
            "frac_changed": 0.0,
            "frac_background_changed": 0.0,
            "background_mean": 0.0,
        }
    ]
    for level in range(1, 11):
        digest = {6: "x", 7: "x"}.get(level, f"p{level}")
        rows.append(
            {
                "corruption": "pixelation",
                "level": level,
                "sha256": digest,
                "frac_changed": 0.01 * level,
                "frac_background_changed": 0.02 * level,
                "background_mean": 3.0 * level,
            }
        )
        rows.append(
            {
                "corruption": "snow",
                "level": level,
                "sha256": f"s{level}",
                "frac_changed": 0.5,
                "frac_background_changed": 0.09 * level,
                "background_mean": 10.0 * level,
            }
        )
    lines = quirks_block(pd.DataFrame(rows)).splitlines()
    assert lines[2] == "| pixelation | 6 = 7 | 1.0 % | 2.0 % -> 20.0 % | 3.0 -> 30.0 |"
    assert lines[3] == "| snow | – | 50.0 % | 9.0 % -> 90.0 % | 10.0 -> 100.0 |"
    assert len(lines) == 4  # the clean partition is no corruption


def test_sync_copies_the_runs_figures_into_docs(tmp_path, monkeypatch, capsys):
    from reliquant.core.docs import DOC_FIGURES

    run, repo = tmp_path / "run", tmp_path / "repo"
    (run / "results" / "docs").mkdir(parents=True)
    (run / "results" / "docs" / "a.md").write_text("x\n")
    copy, source = next(iter(DOC_FIGURES.items()))
    (run / source).parent.mkdir(parents=True)
    (run / source).write_bytes(b"new figure")
    (repo / copy).parent.mkdir(parents=True)
    (repo / copy).write_bytes(b"old figure")
    (repo / "page.md").write_text(_page(("a", "x")))
    monkeypatch.chdir(repo)
    args = ["page.md", "--blocks", str(run / "results" / "docs"), "--benchmarks", "none"]
    assert main(["check", *args]) == 1
    assert f"docs figures stale: {copy}" in capsys.readouterr().out
    assert main(["sync", *args]) == 0
    assert (repo / copy).read_bytes() == b"new figure"
    assert main(["check", *args]) == 0


def _snakemake_commands(text: str) -> list[str]:
    """Every ``snakemake ...`` command line a page shows (in backticks or a code block), its
    trailing comment dropped."""
    found = re.findall(r"(?:^|`|\s)((?:\.venv/bin/)?snakemake [^`\n]*)", text, flags=re.M)
    return [cmd.split(" #")[0].strip() for cmd in found]


def test_documented_snakemake_commands_never_read_a_target_as_a_config_file():
    """``--configfile`` takes every word up to the next option: ``snakemake --configfile
    x.yaml compare`` reads ``compare`` as a second config file and stops with
    FileNotFoundError. Each command the pages and config comments show passes only YAML files
    to it (targets before ``--configfile``, or after ``--``)."""
    import shlex

    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    sources += [*sorted((REPO / "workflow" / "presets").glob("*.yaml")), REPO / "config.yaml"]
    sources += sorted((REPO / "tests").glob("*.yaml"))
    commands = [(p, c) for p in sources for c in _snakemake_commands(p.read_text("utf-8"))]
    assert len(commands) >= 20, commands  # the pages show many: the pattern still finds them
    for page, command in commands:
        words = shlex.split(command.replace("[", " ").replace("]", " "))
        for i, word in enumerate(words):
            if word != "--configfile":
                continue
            for arg in words[i + 1 :]:
                if arg.startswith("-"):
                    break
                assert arg.endswith((".yaml", ".yml")), (
                    f"{page.name}: `{command}` reads {arg!r} as a config file; put the target "
                    "before --configfile"
                )
