"""Your own cases (config ``custom:``): the checks before any job, the safe model loaders, each
kind's library function against the library called directly, and one workflow run end to end."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import skops.io as sio
import yaml
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from workflow_helpers import REPO, copy_repo, planned_jobs, snakemake

from reliquant.core.config import ConfigError, load_config, validate_config
from reliquant.core.custom import (
    CaseError,
    case_inputs,
    case_name_pattern,
    case_runtime,
    check_cases,
    label_values,
    softmax_columns,
)
from reliquant.core.io import read_table_file, table_file_columns, table_file_rows
from reliquant.mlm import misclassification_likelihood
from reliquant.nbc import fit_table
from reliquant.nbc import robustness as nbc_robustness
from reliquant.nbc.custom import run_case as run_nbc
from reliquant.trees import Gaussian, extract_ensemble, robustness_batch
from reliquant.trees.custom import run_case as run_trees
from reliquant.trees.model_files import MODEL_SUFFIXES, load_model, trusted_skops_types

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# ----------------------------------------------------------------------------- tiny data
def nbc_tables(n: int = 60, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A train table of ``n`` rows (two categorical features, target ``y``) and a test table."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.choice([1, 2, 3], n)
    y = np.where((colour == "red") ^ (rng.random(n) < 0.2), "yes", "no")
    train = pd.DataFrame({"colour": colour, "size": size, "y": y})
    return train, train.iloc[:20].reset_index(drop=True)


def tree_data(n: int = 60, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, (X["a"] + 0.5 * X["b"] > 0).astype(int).to_numpy()


def forest(n: int = 60) -> RandomForestClassifier:
    X, y = tree_data(n)
    return RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X.to_numpy(), y)


def softmax_table(n: int = 60, k: int = 3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % k
    logits = 2.5 * np.eye(k)[labels] + rng.normal(size=(n, k))
    s = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    frame = pd.DataFrame(s, columns=[f"p{c}" for c in range(k)])
    frame["label"] = labels
    return frame


def write_cases(root) -> list[dict]:
    """One valid case of each kind with its files written under ``root`` (relative paths)."""
    (root / "my").mkdir(parents=True, exist_ok=True)
    train, test = nbc_tables()
    train.to_csv(root / "my/train.csv", index=False)
    test.to_parquet(root / "my/test.parquet")
    X, _ = tree_data()
    samples = X.iloc[:5].copy()
    samples.insert(0, "id", [f"s{i}" for i in range(5)])
    samples.to_csv(root / "my/samples.csv", index=False)
    sio.dump(forest(), root / "my/forest.skops")
    softmax_table().to_csv(root / "my/softmax.csv", index=False)
    return [
        {"name": "my_nbc", "kind": "nbc", "train": "my/train.csv", "test": "my/test.parquet",
         "target": "y", "cv_folds": 3, "seed": 7},
        {"name": "my_forest", "kind": "trees", "model": "my/forest.skops",
         "samples": "my/samples.csv", "columns": ["a", "b", "c"], "noise": {"variance": 0.1},
         "time_budget": 0.2, "seed": 3},
        {"name": "my_mlm", "kind": "mlm", "softmax": "my/softmax.csv"},
    ]  # fmt: skip


def problems(cases, root) -> str:
    with pytest.raises(CaseError) as info:
        check_cases(cases, root)
    return str(info.value)


# ------------------------------------------------------------------- checks before any job
def test_valid_cases_pass_and_name_their_inputs(tmp_path):
    cases = write_cases(tmp_path)
    checked = check_cases(cases, tmp_path)
    assert checked == cases and checked[0] is not cases[0]
    assert check_cases([], tmp_path) == [] and check_cases(None, tmp_path) == []
    assert case_inputs(checked[1]) == {"model": "my/forest.skops", "samples": "my/samples.csv"}
    assert case_name_pattern(checked, "trees") == "my_forest"
    assert case_name_pattern([], "nbc") == "(?!)"


@pytest.mark.parametrize(
    ("kind", "change", "expected"),
    [
        ("nbc", {"train": "my/absent.csv"}, "custom case 'my_nbc', key 'train': my/absent.csv: no such file"),
        ("nbc", {"test": "my/test.xlsx"}, "custom case 'my_nbc', key 'test': my/test.xlsx: expected a file ending in .csv, .parquet"),
        ("nbc", {"target": "label"}, "custom case 'my_nbc', key 'target': column 'label' is not in my/train.csv"),
        ("trees", {"model": "my/forest.pkl"}, "custom case 'my_forest', key 'model': my/forest.pkl: expected a file ending in .json, .ubj, .txt, .skops"),
        ("trees", {"samples": "my/none.parquet"}, "custom case 'my_forest', key 'samples': my/none.parquet: no such file"),
        ("trees", {"columns": ["a", "zz"]}, "custom case 'my_forest', key 'columns': ['zz'] not in my/samples.csv"),
        ("trees", {"noise": {"variance": [0.1, 0.2]}}, "custom case 'my_forest', key 'noise.variance': 2 values for 3 features"),
        ("trees", {"max_boxes": 10}, "custom case 'my_forest', keys 'max_boxes' and 'max_draws': give both"),
        ("mlm", {"softmax": "my/train.csv"}, "custom case 'my_mlm', key 'softmax': my/train.csv: softmax columns p0 .. p{K-1}"),
        ("mlm", {"bogus": 1}, "custom case 'my_mlm': unknown key(s) ['bogus'] for kind 'mlm'"),
        ("nbc", {"name": "My Case"}, "key 'name': 'My Case' must match [a-z0-9_]+"),
        ("nbc", {"kind": "svm"}, "custom case 'my_nbc', key 'kind': 'svm' must be one of"),
    ],
)  # fmt: skip
def test_a_bad_case_is_named_with_its_key_and_path(tmp_path, kind, change, expected):
    cases = write_cases(tmp_path)
    case = next(c for c in cases if c["kind"] == kind)
    case.update(change)
    assert expected in problems(cases, tmp_path)


def test_every_problem_is_reported_at_once(tmp_path):
    cases = write_cases(tmp_path)
    del cases[0]["target"]
    cases[1]["name"] = "my_mlm"  # the mlm case's name, used twice
    (tmp_path / "my/softmax.csv").write_text("p0,p2,label\n0.5,0.5,0\n")
    message = problems(cases, tmp_path)
    assert "custom case 'my_nbc': kind 'nbc' needs the key(s) ['target']" in message
    assert "key 'name': 'my_mlm' is used by entries 1 and 2" in message
    assert "got ['p0', 'p2']" in message
    assert len(message.splitlines()) == 4  # the heading and one line per problem


def test_test_table_without_a_training_column_is_named(tmp_path):
    cases = write_cases(tmp_path)
    _, test = nbc_tables()
    test.drop(columns="size").to_parquet(tmp_path / "my/test.parquet")
    assert "key 'test': my/test.parquet lacks the training columns ['size']" in problems(
        cases, tmp_path
    )


def _config_with(cases) -> dict:
    return dict(load_config(REPO / "config.yaml"), custom=cases)


def test_schema_accepts_the_default_and_names_case_and_key(tmp_path):
    validate_config(load_config(REPO / "config.yaml"), SCHEMA)  # custom: [] by default
    cases = write_cases(tmp_path)
    validate_config(_config_with(cases), SCHEMA)
    cases[0]["alpha"] = -1
    cases[1]["model"] = "my/forest.pkl"
    cases[2]["target"] = "y"  # a key of another kind
    with pytest.raises(ConfigError) as info:
        validate_config(_config_with(cases), SCHEMA)
    lines = str(info.value).splitlines()[1:]
    assert any(line.strip().startswith("custom['my_nbc'].alpha = -1") for line in lines)
    assert any("custom['my_forest'].model = 'my/forest.pkl'" in line for line in lines)
    assert any(
        "unknown key 'target' in custom['my_mlm']; allowed: kind, name" in line for line in lines
    )
    assert len(lines) == 3, lines  # each problem once


def test_readme_example_passes_the_schema():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Your own model and data", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```yaml\n(.*?)```", section, flags=re.S)
    cases = yaml.safe_load(example)["custom"]
    assert sorted(case["kind"] for case in cases) == ["mlm", "nbc", "trees"]
    validate_config(_config_with(cases), SCHEMA)


def test_config_yaml_commented_example_passes_the_schema():
    text = (REPO / "config.yaml").read_text(encoding="utf-8")
    commented = text.split("\ncustom: []\n", 1)[1]
    example = "\n".join(line.removeprefix("# ") for line in commented.splitlines())
    cases = yaml.safe_load(example)["custom"]
    assert sorted(case["kind"] for case in cases) == ["mlm", "nbc", "trees"]
    validate_config(_config_with(cases), SCHEMA)


def test_bad_case_stops_the_dry_run_before_any_job(tmp_path):
    overlay = tmp_path / "bad.yaml"
    missing = tmp_path / "nowhere" / "train.csv"
    case = {"name": "mine", "kind": "nbc", "train": str(missing), "test": str(missing),
            "target": "y"}  # fmt: skip
    overlay.write_text(yaml.safe_dump({"custom": [case]}))
    proc = snakemake(REPO, "-n", "--configfile", str(overlay), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"custom case 'mine', key 'train': {missing}: no such file" in out, out[-3000:]
    assert "Job stats" not in out


def test_cases_add_one_job_each_and_no_case_adds_none(tmp_path):
    overlay = tmp_path / "cases.yaml"
    cases = write_cases(tmp_path)
    for case in cases:  # absolute paths: the dry run runs in the repository
        for key in case_inputs(case):
            case[key] = str(tmp_path / case[key])
    overlay.write_text(yaml.safe_dump({"custom": cases}))
    proc = snakemake(REPO, "-n", "--forceall", "custom", "--configfile", str(overlay))
    jobs = planned_jobs(proc.stdout + proc.stderr)
    assert jobs == {"custom_nbc": 1, "custom_trees": 1, "custom_mlm": 1, "custom": 1}, jobs
    default = planned_jobs(snakemake(REPO, "-n", "--forceall").stdout)
    assert default.get("all") == 1 and not any(rule.startswith("custom") for rule in default)


def test_runtime_follows_samples_and_time_budget(tmp_path):
    cases = write_cases(tmp_path)
    assert case_runtime(cases[0], tmp_path) == 10
    assert case_runtime(cases[1], tmp_path) == 5  # 5 x 0.2 s: the 5-minute floor
    pd.DataFrame({"a": np.zeros(100), "b": 0.0, "c": 0.0}).to_parquet(tmp_path / "my/big.parquet")
    big = dict(cases[1], samples="my/big.parquet", time_budget=2.0)
    assert case_runtime(big, tmp_path) == 13  # 3 (100 x 2 s + 60 s) = 780 s


# ------------------------------------------------------------------------- tables, labels
def test_table_files_read_csv_and_parquet_alike(tmp_path):
    frame = pd.DataFrame({"x": [1, 2, 3], "s": ["a", "b", "c"]})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    for name in ("t.csv", "t.parquet"):
        assert table_file_columns(tmp_path / name) == ["x", "s"]
        assert table_file_rows(tmp_path / name) == 3
        pd.testing.assert_frame_equal(read_table_file(tmp_path / name), frame)
        assert list(read_table_file(tmp_path / name, ["s", "x"]).columns) == ["s", "x"]
    with pytest.raises(
        ValueError, match=r"t.xlsx: expected a table file ending in .csv or .parquet"
    ):
        read_table_file(tmp_path / "t.xlsx")


def test_labels_keep_integers_and_write_others_as_text():
    assert label_values(np.array([0, 2, 1])) == ([0, 2, 1], pa.int64())
    assert label_values(["yes", "no"]) == (["yes", "no"], pa.string())
    assert label_values([True, False]) == (["True", "False"], pa.string())
    assert softmax_columns(["label", "p1", "p0"]) == ["p0", "p1"]
    with pytest.raises(ValueError, match="'label' column"):
        softmax_columns(["p0", "p1"])


# --------------------------------------------------------------------------- model files
class HomeMadeForest(RandomForestClassifier):
    """A class of our own: skops must not build it from a file."""


def _xy():
    X, y = tree_data()
    return X.to_numpy(), y


def test_skops_loads_a_forest_and_refuses_a_class_of_its_own(tmp_path, monkeypatch):
    X, y = _xy()
    model = forest()
    sio.dump(model, tmp_path / "forest.skops")
    loaded = load_model(tmp_path / "forest.skops")
    assert type(loaded) is RandomForestClassifier
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))

    sio.dump(HomeMadeForest(n_estimators=2, random_state=0).fit(X, y), tmp_path / "own.skops")

    def never(*args, **kwargs):
        raise AssertionError("skops.io.load called on an untrusted file")

    monkeypatch.setattr(sio, "load", never)
    with pytest.raises(ValueError, match=r"refusing to load.*HomeMadeForest"):
        load_model(tmp_path / "own.skops")


def test_only_sklearn_estimators_and_trees_are_trusted():
    hist = HistGradientBoostingClassifier(max_iter=3).fit(*_xy())
    data = sio.dumps(hist)
    untrusted = sio.get_untrusted_types(data=data)
    assert trusted_skops_types(untrusted) == sorted(untrusted)
    for name in ("builtins.eval", "xgboost.sklearn.XGBClassifier", "sklearn.utils.nonexistent",
                 "sklearn.utils._bunch.Bunch", "numpy.load"):  # fmt: skip
        with pytest.raises(ValueError, match="refusing to load"):
            trusted_skops_types(["sklearn.tree._tree.Tree", name])


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_xgboost_model_file_round_trips(tmp_path, suffix):
    import xgboost as xgb

    X, y = _xy()
    model = xgb.XGBClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    model.save_model(tmp_path / f"m{suffix}")
    loaded = load_model(tmp_path / f"m{suffix}")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(extract_ensemble(loaded).predict(X), model.predict(X))


def test_lightgbm_model_file_round_trips(tmp_path):
    import lightgbm as lgb

    X, y = _xy()
    model = lgb.LGBMClassifier(n_estimators=4, num_leaves=4, min_child_samples=5, verbose=-1)
    model.fit(X, y)
    model.booster_.save_model(tmp_path / "m.txt")
    loaded = load_model(tmp_path / "m.txt")
    np.testing.assert_array_equal(loaded.predict(X), model.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(extract_ensemble(loaded).predict(X), model.predict(X))


def test_model_file_errors_name_the_path(tmp_path):
    assert tuple(MODEL_SUFFIXES) == (".json", ".ubj", ".txt", ".skops")
    with pytest.raises(ValueError, match=r"m.pkl: expected a model file.*never loaded"):
        load_model(tmp_path / "m.pkl")
    with pytest.raises(ValueError, match=r"absent.json: no such model file"):
        load_model(tmp_path / "absent.json")
    (tmp_path / "junk.txt").write_text("not a model\n")
    with pytest.raises(ValueError, match=r"junk.txt: not a LightGBM model file"):
        load_model(tmp_path / "junk.txt")


# ------------------------------------------------------ each kind against the library direct
def test_nbc_case_equals_fit_table_and_robustness(tmp_path):
    case = write_cases(tmp_path)[0]
    train, test = nbc_tables()
    result = run_nbc(train, test, case=case)
    fitted = fit_table(train, "y", cv_folds=3, seed=7)
    direct = nbc_robustness(fitted, test[["colour", "size"]])
    table = result.table
    assert list(table["prediction"]) == list(direct["prediction"])
    np.testing.assert_array_equal(table["eps_glob"], direct["eps_glob"])
    np.testing.assert_array_equal(table["eps_loc"], direct["eps_loc"])
    assert list(table["correct"]) == list(direct["prediction"] == test["y"])
    assert f"alpha = {fitted.alpha:g} (chosen by 3-fold" in result.markdown
    pa.Table.from_pandas(table, schema=result.schema, preserve_index=False)  # fits its schema


def test_trees_case_equals_robustness_batch(tmp_path):
    X, _ = tree_data()
    model = forest()
    case = {"name": "t", "kind": "trees", "model": "m.skops", "samples": "s.csv",
            "noise": {"variance": [0.1, 0.05, 0.2]}, "time_budget": 1.0, "seed": 5,
            "max_boxes": 4, "max_draws": 20000}  # fmt: skip
    result = run_trees(model, X.iloc[:4], case=case)
    direct = robustness_batch(
        model, X.iloc[:4].to_numpy(), Gaussian(np.array([0.1, 0.05, 0.2])), seed=5,
        max_boxes=4, max_draws=20000,
    )  # fmt: skip
    table = result.table
    for col in ("lower", "upper", "estimate", "ci_low", "ci_high", "n_draws", "exact", "stop"):
        np.testing.assert_array_equal(table[col], direct[col], err_msg=col)
    assert list(table["label"]) == list(direct["label"]) and list(table["row"]) == [0, 1, 2, 3]
    assert (table["n_draws"] > 0).any()  # max_boxes 4 leaves some samples to the sampler
    with pytest.raises(ValueError, match="2 feature columns"):
        run_trees(model, X.iloc[:2], case=dict(case, columns=["a", "b"]))


def test_mlm_case_equals_misclassification_likelihood(tmp_path):
    frame = softmax_table()
    reference = softmax_table(seed=1)
    case = {"name": "m", "kind": "mlm", "softmax": "s.csv", "reference": "r.csv", "seed": 2}
    result = run_mlm_case(frame, case, reference)
    direct = misclassification_likelihood(
        frame[["p0", "p1", "p2"]].to_numpy(),
        frame["label"].to_numpy(),
        seed=2,
        reference_softmax=reference[["p0", "p1", "p2"]].to_numpy(),
        reference_labels=reference["label"].to_numpy(),
    )
    pd.testing.assert_frame_equal(result.table, direct.to_frame())
    assert len(result.table) == 6


def run_mlm_case(frame, case, reference=None):
    from reliquant.mlm.custom import run_case

    return run_case(frame, case=case, reference=reference)


# ------------------------------------------------------------------------------ end to end
@pytest.mark.workflow
def test_one_case_of_each_kind_end_to_end(tmp_path, monkeypatch):
    work = copy_repo(tmp_path / "w")
    monkeypatch.setenv("PYTHONPATH", str(work / "src"))
    cases = write_cases(work)
    (work / "cases.yaml").write_text(yaml.safe_dump({"custom": cases}))
    snakemake(work, "--cores", "1", "custom", "--configfile", "cases.yaml")
    out = work / "results" / "custom"
    for name in ("my_nbc", "my_forest", "my_mlm"):
        assert (out / f"{name}.html").read_text().count("<table") >= 1
        assert (out / f"{name}.md").read_text().startswith(f"# Your case {name}:")

    # nbc: the library called directly on the same tables
    train, test = nbc_tables()
    got = pq.read_table(out / "my_nbc.parquet").to_pandas()
    direct = nbc_robustness(fit_table(train, "y", cv_folds=3, seed=7), test[["colour", "size"]])
    assert list(got["prediction"]) == list(direct["prediction"])
    np.testing.assert_array_equal(got["eps_glob"], direct["eps_glob"])
    np.testing.assert_array_equal(got["eps_loc"], direct["eps_loc"])

    # trees: the forest in memory (not the skops file) with the same noise, seed and budget
    X, _ = tree_data()
    got = pq.read_table(out / "my_forest.parquet").to_pandas()
    direct = robustness_batch(forest(), X.iloc[:5].to_numpy(), Gaussian(0.1), seed=3,
                              time_budget=0.2)  # fmt: skip
    assert list(got["label"]) == list(direct["label"])
    both = got["exact"].to_numpy() & direct["exact"].to_numpy()
    assert both.any(), "this 5-tree forest is certified exactly within the budget"
    for col in ("lower", "upper", "estimate"):
        np.testing.assert_array_equal(got[col][both], direct[col][both], err_msg=col)
    assert (got["ci_low"] <= direct["ci_high"]).all() and (direct["ci_low"] <= got["ci_high"]).all()

    # mlm
    frame = softmax_table()
    got = pq.read_table(out / "my_mlm.parquet").to_pandas()
    direct = misclassification_likelihood(frame[["p0", "p1", "p2"]].to_numpy(), frame["label"])
    pd.testing.assert_frame_equal(got, direct.to_frame())

    # editing one case reruns its job only
    cases[0]["seed"] = 8
    (work / "cases.yaml").write_text(yaml.safe_dump({"custom": cases}))
    proc = snakemake(work, "-n", "custom", "--configfile", "cases.yaml")
    assert planned_jobs(proc.stdout + proc.stderr) == {"custom_nbc": 1, "custom": 1}
