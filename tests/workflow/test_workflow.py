"""The workflow as a user meets it: dry runs, lint, formatting, config validation, and the
smoke configuration run end to end twice (bit-reproducibility, incremental reruns, report).
"""

from __future__ import annotations

import re
import subprocess

import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image
from workflow_helpers import (
    BIN,
    REPO,
    copy_repo,
    edited,
    planned_jobs,
    snakemake,
    touch_outputs,
)

SMOKE = ["--configfile", "tests/smoke.yaml"]

#: A figure script and the one rule that runs it (incremental-rerun test (b)).
FIGURE_SCRIPT = "scripts/nbc/nbc_figures.py"
FIGURE_RULES = {"nbc_figures"}
#: A parameter of one experiment and the rules allowed to rerun when it changes (test (c)).
CHANGED_PARAM = ("nbc", "seed")
CHANGED_PARAM_RULES = {
    "nbc_distributions",
    "nbc_cell",
    "nbc_auc",
    "nbc_figures",
    "nbc_paper",
}
#: Rules downstream of every experiment that may rerun with it (cross-paper summary, all).
SUMMARY_RULES = {"report_summary", "docs_blocks", "docs_check", "all"}
#: The compare topic's jobs that read the nbc topic's outputs (rerun after an nbc change).
COMPARE_AFTER_NBC = {
    "compare_nbc",
    "compare_evaluate",
    "compare_figures",
    "compare_paper",
    "compare_certified",
}
#: Paper packages whose code the compare topic imports (workflow/rules/compare.smk).
COMPARE_IMPORTS = {"mlm", "nbc", "trees"}


# --------------------------------------------------------------------------- static checks
@pytest.mark.parametrize("config", [[], SMOKE], ids=["default", "smoke"])
def test_full_dag_dry_run(config):
    proc = snakemake(REPO, "-n", "--forceall", *config)
    jobs = planned_jobs(proc.stdout + proc.stderr)
    assert jobs.get("all") == 1
    for topic in ("data_mnist", "nbc_cell", "mlm_train", "pmnist_generate"):
        assert topic in jobs, f"{topic} missing from the DAG: {sorted(jobs)}"
    # the log-ratio protocol is a named target only; the benchmark tables the compare topic
    # evaluates (compare.benchmarks) are in every run, each with its own job
    assert "compare_logratio_protocol" not in jobs, jobs
    # the dynamic-selection protocol: its small case in every run (its tables converted too),
    # the full one a named target
    assert jobs.get("compare_selection_default") == 1, jobs
    assert "compare_selection_split" not in jobs and "compare_selection_table" not in jobs, jobs
    compare = yaml.safe_load((REPO / "config.yaml").read_text())["compare"]
    default = compare["selection"]["default"]
    if config:
        default = yaml.safe_load((REPO / "tests/smoke.yaml").read_text())["compare"]["selection"][
            "default"
        ]
    n_sets = len(compare["benchmarks"])
    assert n_sets >= 4
    n_tables = len(set(compare["benchmarks"]) | set(default["datasets"]))
    assert jobs.get("compare_benchmark") == n_sets and jobs.get("data_benchmark") == n_tables, jobs


def test_compare_plans_one_job_per_configured_benchmark_set():
    """Each set of compare.benchmarks: its table (data_benchmark), one compare_benchmark job
    writing results/compare/predictions/bench_<name>.parquet, read by compare_evaluate."""
    sets = yaml.safe_load((REPO / "config.yaml").read_text())["compare"]["benchmarks"]
    targets = [f"results/compare/predictions/bench_{name}.parquet" for name in sets]
    proc = snakemake(REPO, "-n", "--forceall", "results/compare/auarc.parquet", *SMOKE)
    out = proc.stdout + proc.stderr
    jobs = planned_jobs(out)
    assert jobs.get("compare_benchmark") == len(sets) == 4, jobs
    assert jobs.get("data_benchmark") == len(sets) and jobs.get("compare_evaluate") == 1, jobs
    for target in targets:
        assert f"output: {target}" in out, target
    # a set that compare.benchmarks does not list has no rule
    proc = snakemake(REPO, "-n", "results/compare/predictions/bench_robot.parquet", check=False)
    assert proc.returncode != 0
    assert "MissingRuleException" in proc.stdout + proc.stderr


def test_deep_ensemble_members_are_planned_in_the_full_preset_only():
    """compare.mnist.ensemble_members: 0 in the default run (no member trained), 5 in the
    compare_full preset (rule compare_ensemble_member, each an input of compare_cnn)."""
    # --forceall: the whole plan, whatever results the checkout already holds
    default = planned_jobs(snakemake(REPO, "-n", "--forceall", "compare").stdout)
    proc = snakemake(REPO, "-n", "--forceall", "compare",
                     "--configfile", "workflow/presets/compare_full.yaml")  # fmt: skip
    full = planned_jobs(proc.stdout)
    for m in range(5):
        assert f"output: results/compare/ensemble/cnn_member{m}.pt" in proc.stdout, m
    assert "cnn_member5.pt" not in proc.stdout
    assert "compare_ensemble_member" not in default
    assert full["compare_ensemble_member"] == 5
    assert full["compare_cnn"] == default["compare_cnn"] == 1
    assert full["mlm_train"] == default["mlm_train"] == 1  # the mlm CNN is trained once
    # the target compare makes every table of the topic, the certified thresholds included
    assert full["compare_certified"] == default["compare_certified"] == 1


def test_protocol_target_plans_the_protocol_on_each_configured_table():
    proc = snakemake(REPO, "-n", "--forceall", "compare_protocol")
    jobs = planned_jobs(proc.stdout + proc.stderr)
    assert jobs.get("compare_logratio_protocol") == 2, jobs
    assert jobs.get("data_benchmark") == 2 and jobs.get("compare_logratio_protocol_table") == 1


def test_selection_target_plans_one_job_per_data_set_setting_and_split():
    selection = yaml.safe_load((REPO / "config.yaml").read_text())["compare"]["selection"]
    proc = snakemake(REPO, "-n", "--forceall", "compare_selection")
    jobs = planned_jobs(proc.stdout + proc.stderr)
    n = len(selection["datasets"]) * len(selection["settings"]) * selection["n_splits"]
    assert jobs.get("compare_selection_split") == n == 14 * 2 * 15, jobs
    assert jobs.get("data_benchmark") == 14 and jobs.get("compare_selection_table") == 1, jobs


def test_named_targets_keep_their_job_records_apart_from_the_default_runs():
    """The README's job times and bench_compare's 3-minute budget read ``benchmarks/<topic>/``
    as the last run left it: the named targets (not in the default run) write their records
    to ``benchmarks/named/<topic>/`` so that running one never counts in the default run's
    figures, and no job of the default run writes there."""
    from reliquant.core.runtimes import parse_snakemake_log

    named = ("compare_protocol", "compare_resolution", "compare_selection",
             "compare_which_score_stability")  # fmt: skip
    proc = snakemake(REPO, "-n", "--forceall", *named)
    jobs = parse_snakemake_log(proc.stdout + proc.stderr)
    own_rules = {
        "compare_logratio_protocol",
        "compare_logratio_protocol_table",
        "compare_resolution",
        "compare_selection_split",
        "compare_selection_table",
        "compare_which_score_stability",
    }
    records = {job.benchmark: job.rule for job in jobs if job.benchmark}  # targets have none
    assert own_rules <= set(records.values()), records
    for path, rule in records.items():
        # their own jobs write under named/; the default run's jobs they read (the CNN, the
        # benchmark tables) keep their usual records
        assert path.startswith("benchmarks/named/compare/") == (rule in own_rules), (rule, path)
    default = snakemake(REPO, "-n", "--forceall")
    assert "benchmarks/named/" not in default.stdout + default.stderr


def test_slurm_profile_dry_run():
    proc = snakemake(REPO, "-n", "--forceall", "--profile", "workflow/profiles/slurm")
    assert planned_jobs(proc.stdout + proc.stderr).get("mlm_train") == 1


def test_bench_target_collects_every_topic():
    proc = snakemake(REPO, "-n", "--forceall", "bench")
    jobs = planned_jobs(proc.stdout + proc.stderr)
    assert {
        "bench_nbc",
        "bench_trees",
        "bench_pmnist",
        "bench_mlm",
        "bench_compare",
        "bench_workflow",
        "bench",
    } <= set(jobs), jobs


def _rule_blocks() -> dict[str, str]:
    """Every rule of workflow/rules/*.smk that runs a script: name -> its text."""
    blocks = {}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule )", smk.read_text()):
            match = re.match(r"rule (\w+):", block)
            if match and "    script:" in block:
                blocks[match.group(1)] = block
    return blocks


def test_every_job_rule_declares_threads_memory_and_time():
    """What a SLURM job asks for comes from the rule: threads, mem_mb and runtime (minutes),
    measured values with headroom (CONTRIBUTING.md, Resources), and a benchmark to re-measure."""
    blocks = _rule_blocks()
    assert len(blocks) >= 30, sorted(blocks)
    for rule, text in blocks.items():
        assert re.search(r"\n    threads: ", text), f"rule {rule} declares no threads"
        mem = re.search(r"mem_mb=(\d+)", text)
        # a custom trees case's runtime follows its samples and time budget: per case, at
        # least 5 minutes (reliquant.core.custom.case_runtime, tests/workflow/test_custom.py)
        runtime = re.search(r"runtime=(\d+|lambda wc: CUSTOM_RUNTIME\[wc\.case\])", text)
        assert mem and int(mem.group(1)) >= 1000, f"rule {rule}: mem_mb missing or < 1000"
        assert runtime, f"rule {rule}: runtime missing"
        assert not runtime.group(1).isdigit() or int(runtime.group(1)) >= 5, f"rule {rule}: < 5"
        assert "    benchmark:" in text, f"rule {rule} has no benchmark: to measure them"


def test_snakemake_lint_is_clean():
    proc = snakemake(REPO, "--lint", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "Lints for" not in out, out[-4000:]


def test_ruff_is_clean():
    for args in (["check", "."], ["format", "--check", "."]):
        proc = subprocess.run([str(BIN / "ruff"), *args], cwd=REPO, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_is_clean():
    proc = subprocess.run(
        [str(BIN / "snakefmt"), "--check", "Snakefile", "workflow"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ---------------------------------------------------------------------- config validation
def _bad_config(tmp_path, dotted: str, value) -> str:
    """config.yaml with the key at ``dotted`` (e.g. "nbc.design.n_test") set to ``value``."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    *parents, key = dotted.split(".")
    node = config
    for part in parents:
        node = node[part]
    if key not in node and key != "unknown_key":
        pytest.fail(f"config.yaml has no key {dotted}; update this test")
    node[key] = value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return str(path)


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("data.unknown_key", 1),
        ("data.allow_download", "yes"),
        ("nbc.design.n_test", -5),
        ("nbc.design.n_test", "many"),
        ("nbc.grid.unknown_key", [1]),
        ("mlm.train.epochs", 0),
        ("pmnist.seed", "abc"),
        ("trees.seed", -1),
        ("data.benchmarks", ["Robot"]),
        ("compare.logratio_protocol.n_splits", 1),
        ("compare.selection.n_splits", 1),
        ("compare.selection.unknown_key", 1),
        ("compare.benchmarks.authent.n_splits", 1),
    ],
)
def test_bad_config_fails_before_any_job_naming_the_key(tmp_path, dotted, value):
    expected = dotted.rsplit(".", 1)[1]
    proc = snakemake(REPO, "-n", "--configfile", _bad_config(tmp_path, dotted, value), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "invalid configuration" in out
    assert expected in out
    assert "Job stats" not in out
    assert "properties:" not in out, "the error printed the schema instead of one line"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"grid": {"n_train": [5]}, "fit": {"cv_folds": 10}}, "nbc.fit.cv_folds = 10"),
        ({"design": {"class_probs": [0.5, 0.5, 0.2]}}, "sums to 1.2"),
        ({"design": {"favoured": [[0, 0, 0, 0], [1, 1, 1, 1]]}}, "nbc.design.favoured has 2 rows"),
        ({"grid": {"gamma": [0.2, 0.2000001]}}, "name the same cell file"),
    ],
)
def test_inconsistent_keys_fail_before_any_job(tmp_path, changes, message):
    """Constraints between keys are checked when the workflow loads, naming the keys."""
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"nbc": changes}))
    proc = snakemake(REPO, "-n", "--configfile", str(overlay), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert message in out, out[-2000:]
    assert "Job stats" not in out


@pytest.mark.parametrize(
    ("overlay", "message"),
    [
        (
            {"compare": {"logratio_protocol": {"datasets": ["robot", "wine"]}}},
            "compare.logratio_protocol.datasets: ['wine'] are not in data.benchmarks",
        ),
        (
            {"compare": {"selection": {"datasets": ["robot", "wine"]}}},
            "compare.selection.datasets: ['wine'] are not in data.benchmarks",
        ),
        (
            {"data": {"benchmarks": ["robot", "students", "iris"]}},
            "data.benchmarks: ['benchmarks/iris.csv.gz'] not in the manifest",
        ),
    ],
)
def test_benchmark_names_are_checked_before_any_job(tmp_path, overlay, message):
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay))
    proc = snakemake(REPO, "-n", "--configfile", str(path), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert message in out, out[-2000:]
    assert "Job stats" not in out


def test_corrupted_raw_file_stops_at_the_data_step(tmp_path):
    work = copy_repo(tmp_path / "w")
    target = work / "data/raw/mnist/train-labels-idx1-ubyte.gz"
    data = bytearray(target.read_bytes())
    data[50] ^= 0x01
    target.write_bytes(bytes(data))
    proc = snakemake(work, "--cores", "1", "results/data/mnist_train.parquet", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "train-labels-idx1-ubyte.gz is corrupt" in out
    assert not (work / "results/data/mnist_train.parquet").exists()
    assert not (work / "results/data/verified_mnist.tsv").exists()


# --------------------------------------------------------------- the smoke run end to end
@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """Two complete smoke runs in two fresh copies of the repository, on 2 cores and on 1:
    Snakemake gives a job at most the cores it has, so a table that followed a job's
    thread count (scikit-learn's K-Means, XGBoost's training) would differ between them."""
    runs = []
    for name, cores in (("a", "2"), ("b", "1")):
        work = copy_repo(tmp_path_factory.mktemp(f"smoke_{name}"))
        snakemake(work, "--cores", cores, *SMOKE)
        runs.append(work)
    return runs


@pytest.mark.workflow
def test_smoke_runs_are_bit_reproducible(smoke_runs):
    a, b = smoke_runs
    files_a = sorted(p.relative_to(a) for p in (a / "results").rglob("*.parquet"))
    files_b = sorted(p.relative_to(b) for p in (b / "results").rglob("*.parquet"))
    assert files_a == files_b
    assert len(files_a) >= 20
    differing = [
        str(rel) for rel in files_a if not pq.read_table(a / rel).equals(pq.read_table(b / rel))
    ]
    assert differing == []


@pytest.mark.workflow
def test_every_job_logs_what_it_wrote_with_a_digest(smoke_runs):
    """No empty logs: each job's log names every output it wrote, with rows/bytes and sha256."""
    logs = sorted((smoke_runs[0] / "logs").rglob("*.log"))
    assert len(logs) >= 30, logs
    for log in logs:
        text = log.read_text()
        assert re.search(r"wrote \S+.*sha256 [0-9a-f]{64}", text), f"{log} names no output"


@pytest.mark.workflow
def test_every_figure_is_a_valid_image(smoke_runs):
    figures = sorted((smoke_runs[0] / "results" / "figures").rglob("*.png"))
    assert len(figures) >= 15
    for path in figures:
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert min(image.size) >= 100, f"{path} is only {image.size}"


@pytest.mark.workflow
def test_report_builds_with_every_figure(smoke_runs):
    work = smoke_runs[0]
    snakemake(work, "--report", "report.html", *SMOKE)
    html = (work / "report.html").read_text(errors="replace")
    assert len(html) > 10_000
    for topic in ("nbc", "trees", "pmnist", "mlm"):
        assert f"results/figures/{topic}" in html, f"no {topic} figure in the report"


@pytest.mark.workflow
def test_second_run_does_nothing(smoke_runs):
    proc = snakemake(smoke_runs[0], "-n", *SMOKE)
    assert planned_jobs(proc.stdout + proc.stderr) == {}


@pytest.mark.workflow
def test_editing_a_figure_script_reruns_only_that_figure(smoke_runs):
    work = smoke_runs[1]
    script = work / FIGURE_SCRIPT
    with edited(script, script.read_text() + "\n# an edit\n"):
        proc = snakemake(work, "-n", *SMOKE)
        jobs = planned_jobs(proc.stdout + proc.stderr)
        assert set(jobs) - {"all"} == FIGURE_RULES, jobs


@pytest.mark.workflow
def test_changing_one_experiment_parameter_reruns_only_that_experiment(smoke_runs, tmp_path):
    work = smoke_runs[1]
    section, key = CHANGED_PARAM
    smoke = yaml.safe_load((work / "tests/smoke.yaml").read_text())
    config = yaml.safe_load((work / "config.yaml").read_text())
    smoke.setdefault(section, {})[key] = config[section][key] + 1
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(smoke, sort_keys=False))  # key order is part of params
    proc = snakemake(work, "-n", "--configfile", str(changed))
    jobs = set(planned_jobs(proc.stdout + proc.stderr))
    assert jobs & CHANGED_PARAM_RULES, jobs
    assert jobs <= CHANGED_PARAM_RULES | SUMMARY_RULES | COMPARE_AFTER_NBC, jobs


@pytest.mark.workflow
def test_editing_one_data_set_reruns_only_its_jobs(smoke_runs, tmp_path):
    """A new Pima digest reruns the Pima jobs only: not MNIST parsing, the CNN or pmnist."""
    work = smoke_runs[1]
    manifest = work / "data/raw/checksums.tsv"
    original = manifest.read_text()
    changed = original.replace("\t-\t-", "\t-\thttps://example.invalid/")
    assert changed != original
    with edited(manifest, changed):
        jobs = set(planned_jobs(snakemake(work, "-n", *SMOKE).stdout))
        assert "data_verify" in jobs and "data_pima" in jobs, jobs
        assert not {"data_mnist", "mlm_train", "pmnist_generate", "trees_table2"} & jobs, jobs


@pytest.mark.workflow
def test_speed_only_settings_rerun_nothing(smoke_runs, tmp_path):
    """Inference batch size, chunking and thread counts do not change outputs: no rerun."""
    work = smoke_runs[0]
    smoke = yaml.safe_load((work / "tests/smoke.yaml").read_text())
    smoke.setdefault("mlm", {})["infer"] = {"batch_size": 97, "chunk_rows": 333}
    smoke["mlm"]["threads"] = 2
    changed = tmp_path / "speed.yaml"
    changed.write_text(yaml.safe_dump(smoke, sort_keys=False))
    proc = snakemake(work, "-n", "--configfile", str(changed))
    assert planned_jobs(proc.stdout + proc.stderr) == {}


# ------------------------------------------- library-code reruns (dry runs, no job runs)
#: A change to what the library runs (appended to a package's __init__.py).
CODE_EDIT = "\nRERUN_PROBE = 1\n"


@pytest.fixture(scope="module")
def touched(tmp_path_factory):
    """A copy of the repository whose smoke outputs are all marked done (``--touch``), and the
    jobs a forced dry run plans there: reruns are tested by dry runs, without running a job."""
    work = copy_repo(tmp_path_factory.mktemp("touched"))
    touch_outputs(work, *SMOKE)
    assert planned_jobs(snakemake(work, "-n", *SMOKE).stdout) == {}
    every = planned_jobs(snakemake(work, "-n", "--forceall", *SMOKE).stdout)
    return work, every


def _topic_jobs(jobs: dict[str, int], topic: str) -> dict[str, int]:
    return {rule: n for rule, n in jobs.items() if rule.startswith(f"{topic}_")}


@pytest.mark.workflow
def test_comments_docstrings_and_formatting_in_the_library_rerun_nothing(touched):
    """Reruns follow code, not comments (reliquant.core.codedigest): a comment, a docstring and
    a reformatted line in core (every topic's digest) and in a topic's package plan no job."""
    work, _ = touched
    core = work / "src" / "reliquant" / "core" / "__init__.py"
    text = core.read_text()
    assert text.startswith('"""')
    reworded = text.replace('"""', '"""Reworded. ', 1) + "\n# a comment\n"
    with edited(core, reworded):
        assert planned_jobs(snakemake(work, "-n", *SMOKE).stdout) == {}
    topic = work / "src" / "reliquant" / "nbc" / "__init__.py"
    with edited(topic, "# a comment\n\n\n" + topic.read_text().replace("\n\n", "\n\n\n")):
        assert planned_jobs(snakemake(work, "-n", *SMOKE).stdout) == {}


@pytest.mark.workflow
@pytest.mark.parametrize("topic", ["nbc", "trees"])
def test_editing_a_library_package_reruns_exactly_its_topic(touched, topic):
    """A code change in src/reliquant/<topic>/ reruns every job of that topic (and the
    summary, which reads them), no other."""
    work, every = touched
    module = work / "src" / "reliquant" / topic / "__init__.py"
    with edited(module, module.read_text() + CODE_EDIT):
        jobs = planned_jobs(snakemake(work, "-n", *SMOKE).stdout)
    assert _topic_jobs(jobs, topic) == _topic_jobs(every, topic), jobs
    others = SUMMARY_RULES
    if topic in COMPARE_IMPORTS:  # the compare topic imports this package: all its jobs rerun
        assert _topic_jobs(jobs, "compare") == _topic_jobs(every, "compare"), jobs
        others = others | set(_topic_jobs(every, "compare"))
    assert {j for j in jobs if not j.startswith(f"{topic}_")} <= others, jobs


@pytest.mark.workflow
def test_editing_core_code_reruns_every_topic(touched):
    work, every = touched
    module = work / "src" / "reliquant" / "core" / "__init__.py"
    with edited(module, module.read_text() + CODE_EDIT):
        jobs = planned_jobs(snakemake(work, "-n", *SMOKE).stdout)
    for topic in ("data", "nbc", "trees", "pmnist", "mlm", "compare"):
        assert _topic_jobs(jobs, topic) == _topic_jobs(every, topic), (topic, jobs)
