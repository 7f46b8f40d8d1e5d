"""reliquant.core.config: the same merge as Snakemake's --configfile, and every value a user
can get wrong refused before any job, naming the key (issue 22)."""

from pathlib import Path

import numpy as np
import pytest
from workflow_helpers import copy_repo, snakemake

from reliquant.core.config import (
    ConfigError,
    config_section,
    cross_key_problems,
    load_config,
    main,
    merge,
    nonfinite_values,
    read_config_file,
    validate_config,
)

REPO = Path(__file__).resolve().parents[2]


def test_merge_is_recursive_and_later_wins():
    base = {"a": {"x": 1, "y": {"p": 1, "q": 2}}, "b": [1, 2]}
    out = merge(base, {"a": {"y": {"q": 3}}, "b": [9]})
    assert out == {"a": {"x": 1, "y": {"p": 1, "q": 3}}, "b": [9]}
    assert base["a"]["y"]["q"] == 2  # the base is not modified


def test_load_config_with_overlay(tmp_path):
    (tmp_path / "c.yaml").write_text("nbc:\n  seed: 1\n  fit: {folds: 5, n: 2}\n")
    (tmp_path / "o.yaml").write_text("nbc:\n  fit: {n: 7}\n")
    cfg = load_config(tmp_path / "c.yaml", [tmp_path / "o.yaml"])
    assert cfg == {"nbc": {"seed": 1, "fit": {"folds": 5, "n": 7}}}
    assert config_section("nbc", tmp_path / "c.yaml")["fit"]["n"] == 2


def test_missing_section_and_bad_top_level_are_named(tmp_path):
    (tmp_path / "c.yaml").write_text("nbc: {}\n")
    with pytest.raises(KeyError, match="no section 'trees'"):
        config_section("trees", tmp_path / "c.yaml")
    (tmp_path / "bad.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        load_config(tmp_path / "bad.yaml")


# ------------------------------------------------------------- file errors and schema errors
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("nbc:\n  seed: [1\n  fit: 2\n", "YAML error at line 3"),
        ("- 1\n- 2\n", "must be a mapping of sections, got list"),
    ],
)
def test_bad_config_files_name_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        read_config_file(path)
    assert str(path) in str(err.value)


def test_valid_config_passes_the_schema():
    validate_config(load_config(REPO / "config.yaml", [REPO / "tests" / "smoke.yaml"]), SCHEMA)


def test_unknown_top_level_key_is_one_line_naming_the_allowed_keys():
    config = dict(load_config(REPO / "config.yaml"), nbcc={"seed": 1})
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    lines = str(err.value).splitlines()
    assert len(lines) == 2, lines
    assert (
        "unknown key 'nbcc' at the top level; allowed: compare, custom, data, mlm, nbc, pmnist, trees"
        in lines[1]
    )


def test_schema_errors_name_the_dotted_key():
    config = load_config(REPO / "config.yaml")
    config["nbc"]["grid"]["n_train"] = [25, 0]
    config["mlm"]["train"]["epochs"] = "ten"
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    text = str(err.value)
    assert "nbc.grid.n_train.1 = 0" in text
    assert "mlm.train.epochs = 'ten'" in text


def test_overlay_checker_names_the_broken_overlay(tmp_path, capsys, monkeypatch):
    """Snakemake's own message for a broken --configfile names no file; the checker does."""
    monkeypatch.chdir(REPO)
    good = tmp_path / "good.yaml"
    good.write_text("nbc:\n  seed: 3\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("nbc:\n  seed: [1\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("nbc:\n  seed: -4\n")
    assert main([str(good)]) == 0
    assert main([str(good), str(broken)]) == 1
    out = capsys.readouterr().out
    assert f"config file {broken}: YAML error at line 3" in out
    assert main([str(empty)]) == 1
    assert f"config file {empty} is empty" in capsys.readouterr().out
    assert main([str(wrong)]) == 1
    assert "nbc.seed" in capsys.readouterr().out


def test_a_key_written_twice_is_refused_with_both_lines(tmp_path):
    """PyYAML keeps the last of two equal keys silently: a second corruption section would
    replace the first."""
    path = tmp_path / "twice.yaml"
    path.write_text("pmnist:\n  corruptions:\n    fog: {f: 1}\n    fog: {f: 2}\n")
    with pytest.raises(ConfigError, match="line 4") as err:
        read_config_file(path)
    assert "key 'fog' written twice (first at line 3)" in str(err.value)
    assert str(path) in str(err.value)


# --------------------------------------------------- values refused before any job (issue 22)
def _overlay(tmp_path, text: str) -> dict:
    """config.yaml merged with an overlay of ``text``, as ``--configfile`` would."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return load_config(REPO / "config.yaml", [path])


def _refused(tmp_path, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        validate_config(_overlay(tmp_path, text), SCHEMA)
    return str(err.value)


@pytest.mark.parametrize("base", [[], ["smoke.yaml"], ["smoke.yaml", "custom.yaml"]])
def test_the_shipped_configurations_pass(base):
    config = load_config(REPO / "config.yaml", [REPO / "tests" / name for name in base])
    validate_config(config, SCHEMA)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # ran to the end and printed "beyond nan standard errors"
        ("nbc:\n  paper:\n    z: .nan\n", "nbc.paper.z = nan: not a finite number"),
        ("trees:\n  pima:\n    snr: .inf\n", "trees.pima.snr = inf: not a finite number"),
        ("nbc:\n  grid:\n    gamma: [0.0, .nan]\n", "nbc.grid.gamma.1 = nan: not a finite number"),
        (
            "custom:\n  - {name: c, kind: mlm, softmax: s.csv, sum_tol: -.inf}\n",
            "custom['c'].sum_tol = -inf: not a finite number",
        ),
    ],
)
def test_nan_and_infinities_are_refused_naming_the_key(tmp_path, text, line):
    message = _refused(tmp_path, text)
    assert line in message
    key = line.split(" = ")[0]
    assert message.count(key) == 1, message  # once, not again as a schema violation


def _seed_keys(node, keys=()):
    """Every key path of ``node`` whose last key is ``seed`` (list entries included)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "seed" and isinstance(value, int):
                yield (*keys, key)
            yield from _seed_keys(value, (*keys, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _seed_keys(value, (*keys, i))


def test_every_seed_written_as_a_float_is_refused_naming_it():
    """JSON schema counts 1000.0 as an integer; the jobs' seeding refuses it ("seed key parts
    must be int or str; got float"), so every seed of every section (custom cases included)
    must be refused before any job (issue 35)."""
    from jsonschema import Draft202012Validator

    assert Draft202012Validator({"type": "integer"}).is_valid(1000.0)  # why the check exists
    config = load_config(REPO / "config.yaml", [REPO / "tests" / "custom.yaml"])
    paths = list(_seed_keys(config))
    assert len(paths) >= 10, paths  # 5 topics, 2 benchmarks, the custom cases
    for path in paths:
        changed = load_config(REPO / "config.yaml", [REPO / "tests" / "custom.yaml"])
        node = changed
        for key in path[:-1]:
            node = node[key]
        value = node["seed"]
        node["seed"] = float(value)
        with pytest.raises(ConfigError) as err:
            validate_config(changed, SCHEMA)
        if path[0] == "custom":  # a custom case is named by its name
            key = f"custom[{config['custom'][path[1]]['name']!r}].seed"
        else:
            key = ".".join(map(str, path))
        assert str(err.value).splitlines()[1:] == [
            f"  {key} = {float(value)!r}: not an integer (write {value}, without a decimal point)"
        ]


def test_integers_stay_integers_and_booleans_are_no_integers(tmp_path):
    validate_config(_overlay(tmp_path, "compare:\n  seed: 1000\n"), SCHEMA)
    assert "compare.seed = True" in _refused(tmp_path, "compare:\n  seed: true\n")
    assert "compare.mnist.n_clean = 240.0: not an integer" in _refused(
        tmp_path, "compare:\n  mnist:\n    n_clean: 240.0\n"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # the amplitude reading's variance (std / snr)^2 overflowed to inf inside the job
        ("trees:\n  pima:\n    snr: 1.0e-300\n", "trees.pima.snr = 1e-300: 1e-300 is less than"),
        ("trees:\n  pima:\n    snr: 1.0e+300\n", "trees.pima.snr = 1e+300: 1e+300 is greater than"),
    ],
)
def test_a_signal_to_noise_ratio_out_of_floating_point_is_refused(tmp_path, text, line):
    from reliquant.trees.reproduction.data import snr_noise_std

    snr = float(text.split("snr: ")[1])
    with np.errstate(over="ignore", under="ignore"):
        variance = snr_noise_std(np.array([30.0]), snr, "amplitude") ** 2
    assert not 0 < variance[0] < np.inf  # what a job would have met
    assert line in _refused(tmp_path, text)


def test_nonfinite_values_walks_every_depth():
    config = {"a": {"b": [1.0, float("nan")], "c": {"d": float("-inf")}}, "e": 2, "f": "nan"}
    assert [k for k, _ in nonfinite_values(config)] == ["a.b.1", "a.c.d"]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # counted brightness twice: n = 400 per level, NaN rows in the matrices, exit 0
        (
            "mlm:\n  perturbed:\n    clean_partition: brightness\n",
            "mlm.perturbed.clean_partition = 'brightness' must not be a name of pmnist.corruptions",
        ),
        (
            "mlm:\n  perturbed:\n    clean_partition: test\n",
            "mlm.perturbed.clean_partition = 'test' must not be one of train, test",
        ),
        # ignored on a workspace with results
        (
            "mlm:\n  figures:\n    pixelation_corruption: nosuch\n",
            "mlm.figures.pixelation_corruption = 'nosuch' is not one of the names of "
            "pmnist.corruptions: brightness, contrast,",
        ),
        (
            "mlm:\n  perturbed:\n    corruptions: [brightness, fgo]\n",
            "mlm.perturbed.corruptions.1 = 'fgo' is not one of the names of pmnist.corruptions",
        ),
        (
            "trees:\n  pima:\n    default: {reading: amplitude, rounds: 30}\n",
            "trees.pima.default.rounds = 30 is not one of the names of trees.pima.rounds: "
            "10, 20, 50, 100",
        ),
        (
            "trees:\n  pima:\n    readings: [variance]\n",
            "trees.pima.default.reading = 'amplitude' is not one of the names of "
            "trees.pima.readings: variance",
        ),
        (
            "trees:\n  iris_mixed:\n    marginals:\n      - {family: normal, scale: 0.3, shape: 2}\n"
            "      - {family: exponential, scale: 0.2}\n      - {family: chi-square, scale: 0.1}\n"
            "      - {family: lognormal, scale: 0.1, shape: 0.5}\n",
            "trees.iris_mixed.marginals.0: 'shape' must not be set here",
        ),
        (
            "trees:\n  iris_mixed:\n    marginals:\n      - {family: normal, scale: 0.3}\n"
            "      - {family: exponential, scale: 0.2}\n      - {family: chi-square, scale: 0.1}\n"
            "      - {family: lognormal, scale: 0.1, shape: 0.5}\n",
            "trees.iris_mixed.marginals.2: 'shape' is a required property",
        ),
    ],
)
def test_names_outside_their_known_set_are_refused(tmp_path, text, line):
    assert line in _refused(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # two entries of one size: a mapping by size kept only the last
        (
            "trees:\n  table3:\n    sizes:\n      - {size: 3, depths: [4]}\n"
            "      - {size: 5, depths: [5]}\n      - {size: 3, depths: [6]}\n",
            "trees.table3.sizes.0 and trees.table3.sizes.2 both have size = 3",
        ),
        (
            "mlm:\n  figures:\n    misclustered_examples: [8688, 8688]\n",
            "mlm.figures.misclustered_examples = [8688, 8688]: [8688, 8688] has non-unique",
        ),
        ("nbc:\n  fit:\n    alphas: [0.1, 0.1]\n", "nbc.fit.alphas = [0.1, 0.1]"),
        ("compare:\n  table:\n    alphas: [1.0, 1]\n", "compare.table.alphas = [1.0, 1]"),
        (
            "custom:\n  - {name: c, kind: nbc, train: t.csv, test: s.csv, target: y, "
            "alphas: [0.1, 0.1]}\n",
            "custom['c'].alphas = [0.1, 0.1]: [0.1, 0.1] has non-unique elements",
        ),
        ("mlm:\n  bench:\n    batch_sizes: [512, 512]\n", "mlm.bench.batch_sizes = [512, 512]"),
    ],
)
def test_entries_that_must_be_unique_are_refused(tmp_path, text, line):
    assert line in _refused(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "trees:\n  iris_mixed:\n    corr_low: 0.3\n    corr_high: 0.1\n",
            "trees.iris_mixed.corr_low = 0.3 must be at most trees.iris_mixed.corr_high = 0.1",
        ),
        (
            "trees:\n  paper:\n    pima_min: 0.9\n    pima_max: 0.5\n",
            "trees.paper.pima_min = 0.9 must be at most trees.paper.pima_max = 0.5",
        ),
        (
            "trees:\n  paper:\n    pima_n_above: 80\n",
            "trees.paper.pima_n_above = 80 must be at most trees.paper.pima_n_test = 73",
        ),
        (
            "trees:\n  bench:\n    n_grid: 11\n",
            "trees.bench.n_grid = 11 must be at most trees.bench.n_table2 = 10",
        ),
        (
            "mlm:\n  paper:\n    perturbed_min_accuracy: 0.99\n",
            "mlm.paper.perturbed_min_accuracy = 0.99 must be at most "
            "mlm.paper.perturbed_max_accuracy = 0.9852",
        ),
        (
            "pmnist:\n  images_per_class: 20\n  grid: {main_class: 5, example: 20}\n",
            "pmnist.grid.example = 20 must be below pmnist.images_per_class = 20",
        ),
        # class 5 has 892 MNIST test images
        ("pmnist:\n  grid: {main_class: 5, example: 892}\n", "pmnist.grid.example = 892"),
    ],
)
def test_ranges_whose_ends_must_be_ordered_are_refused(tmp_path, text, line):
    assert line in _refused(tmp_path, text)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # 149 of 150 Iris rows to test: 1 training row cannot hold the 3 classes
        ("trees:\n  table1:\n    test_fraction: 0.99\n", "trees.table1.test_fraction = 0.99"),
        (
            "trees:\n  iris_mixed:\n    test_fraction: 0.985\n",
            "trees.iris_mixed.test_fraction = 0.985",
        ),
        ("trees:\n  pima:\n    test_fraction: 0.998\n", "trees.pima.test_fraction = 0.998"),
    ],
)
def test_a_test_fraction_that_surely_empties_a_class_is_refused(tmp_path, text, line):
    assert line in _refused(tmp_path, text)


def test_the_largest_test_fractions_that_keep_every_class_pass(tmp_path):
    """0.98 of 150 Iris rows tests 147 and trains on 3 (one per class at best); 0.997 of the
    724 Pima subjects tests 722 and trains on 2."""
    text = (
        "trees:\n  table1: {test_fraction: 0.98}\n  iris_mixed: {test_fraction: 0.98}\n"
        "  pima: {test_fraction: 0.997}\n"
    )
    validate_config(_overlay(tmp_path, text), SCHEMA)


def test_cross_key_checks_each_kind():
    config = {"a": {"names": {"x": 1, "y": 2}, "pick": "z", "list": ["x", "w"], "lo": 3, "hi": 2}}
    checks = [
        {"in": {"key": "a.pick", "of": "a.names"}, "why": "a reason"},
        {"in": {"key": "a.list", "of": "a.names"}},
        {"not_in": {"key": "a.pick", "values": ["z"]}},
        {"ordered": {"low": "a.lo", "high": "a.hi"}},
        {"ordered": {"low": "a.hi", "high": "a.hi", "strict": True}},
        {"unique_by": {"key": "a.rows", "field": "k"}},  # absent: skipped
        {"in": {"key": "a.missing", "of": "a.names"}},  # absent: skipped
    ]
    assert cross_key_problems(config, checks) == [
        "a.pick = 'z' is not one of the names of a.names: x, y (a reason)",
        "a.list.1 = 'w' is not one of the names of a.names: x, y",
        "a.pick = 'z' must not be one of z",
        "a.lo = 3 must be at most a.hi = 2",
        "a.hi = 2 must be below a.hi = 2",
    ]
    rows = {"a": {"rows": [{"k": 1}, {"k": 2}, {"k": 1}]}}
    assert cross_key_problems(rows, [{"unique_by": {"key": "a.rows", "field": "k"}}]) == [
        "a.rows.0 and a.rows.2 both have k = 1: entries must differ in k"
    ]
    with pytest.raises(ConfigError, match="needs one of"):
        cross_key_problems(config, [{"bigger": {}}])


def test_a_learning_rate_that_diverges_is_refused_naming_the_key(tmp_path):
    """mlm.train.lr: 1e9 passed the schema, trained to a NaN loss and failed writing its log
    table (issue 40); the schema bounds it (the training also stops naming the key)."""
    message = _refused(tmp_path, "mlm:\n  train:\n    lr: 1.0e+9\n")
    assert "mlm.train.lr = 1000000000.0: 1000000000.0 is greater than the maximum of 1" in message
    validate_config(_overlay(tmp_path, "mlm:\n  train:\n    lr: 0.5\n"), SCHEMA)


# ------------------------------------------------------ as a user hits it: snakemake -n
@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory):
    return copy_repo(tmp_path_factory.mktemp("repo"))


@pytest.mark.workflow
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("nbc:\n  paper:\n    z: .nan\n", "nbc.paper.z = nan: not a finite number"),
        (
            "mlm:\n  perturbed:\n    clean_partition: brightness\n",
            "mlm.perturbed.clean_partition = 'brightness' must not be a name of pmnist.corruptions",
        ),
        # Snakemake reads overlays itself and kept the last of the two silently (issue 35)
        (
            "compare:\n  seed: 5\n  seed: 6\n",
            "bad.yaml: YAML error at line 3, column 3: key 'seed' written twice (first at line 2)",
        ),
        # a run deleted and rewrote the repository's config.yaml (issue 40)
        (
            "pmnist:\n  preset: calibrated\n  calibrated_schedule: config.yaml\n",
            "pmnist.calibrated_schedule = 'config.yaml': outside results/",
        ),
        # 556 bytes of nested aliases kept snakemake -n busy for hours (issue 40)
        (
            "nbc:\n  paper:\n    bomb:\n"
            + "".join(
                f"      a{i}: &a{i} [" + ",".join([f"*a{i - 1}" if i else '"lol"'] * 10) + "]\n"
                for i in range(9)
            ),
            "once its aliases are expanded",
        ),
    ],
)
@pytest.mark.slow
def test_snakemake_dry_run_refuses_the_value_before_any_job(repo_copy, text, line):
    (repo_copy / "bad.yaml").write_text(text)
    proc = snakemake(repo_copy, "-n", "--configfile", "bad.yaml", check=False, timeout=300)
    assert proc.returncode != 0
    assert line in proc.stdout + proc.stderr
    assert "Job stats" not in proc.stdout


def test_the_checker_checks_custom_files(tmp_path, capsys, monkeypatch):
    """``python -m reliquant.core.config mine.yaml`` said "ok" for custom cases whose files do
    not exist (only Snakemake caught it later); it now checks them as the workflow does."""
    monkeypatch.chdir(REPO)
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "custom:\n  - name: loans\n    kind: mlm\n    softmax: mine/nowhere/softmax.csv\n"
    )
    assert main([str(mine)]) == 1
    out = capsys.readouterr().out
    assert "custom case 'loans'" in out and "key 'softmax'" in out and "no such file" in out
    table = tmp_path / "softmax.csv"
    table.write_text("p0,p1,label\n0.9,0.1,0\n0.2,0.8,1\n")
    mine.write_text(f"custom:\n  - name: loans\n    kind: mlm\n    softmax: {table}\n")
    assert main([str(mine)]) == 0
    assert "1 custom case(s) and their files checked" in capsys.readouterr().out
