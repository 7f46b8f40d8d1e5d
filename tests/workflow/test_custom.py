"""Your own cases (config ``custom:``): the checks before any job, the safe model loaders, each
kind's library function against the library called directly, and one workflow run end to end
(with its report of the cases alone)."""

from __future__ import annotations

import json
import logging
import re
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

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
from reliquant.core.io import file_sha256, read_table_file, table_file_columns, table_file_rows
from reliquant.mlm import misclassification_likelihood
from reliquant.nbc import fit_table
from reliquant.nbc import robustness as nbc_robustness
from reliquant.nbc.custom import run_case as run_nbc
from reliquant.trees import Gaussian, extract_ensemble, robustness_batch
from reliquant.trees.custom import run_case as run_trees
from reliquant.trees.readers.model_files import MODEL_SUFFIXES, load_model, trusted_skops_types

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


@pytest.mark.parametrize(
    ("key", "file"),
    [("samples", "my/samples.csv"), ("softmax", "my/softmax.csv"), ("train", "my/train.csv"),
     ("test", "my/test.parquet")],
)  # fmt: skip
def test_a_table_with_a_header_only_is_refused_naming_the_file(tmp_path, key, file):
    """A header-only samples table failed in the job with "columns [...] are not numeric"
    (an empty CSV column reads as text); every table of a case needs a data row."""
    cases = write_cases(tmp_path)
    path = tmp_path / file
    table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    if path.suffix == ".parquet":
        table.iloc[:0].to_parquet(path)
    else:
        path.write_text(",".join(table.columns) + "\n")
    case = next(c for c in cases if key in c)
    assert (
        f"custom case {case['name']!r}, key {key!r}: {file} has no data rows (a header only)"
        in problems(cases, tmp_path)
    )


def test_test_table_without_a_training_column_is_named(tmp_path):
    cases = write_cases(tmp_path)
    _, test = nbc_tables()
    test.drop(columns="size").to_parquet(tmp_path / "my/test.parquet")
    assert "key 'test': my/test.parquet lacks the training columns ['size']" in problems(
        cases, tmp_path
    )


def test_model_sha256_is_checked_naming_case_key_path_and_both_digests(tmp_path):
    cases = write_cases(tmp_path)
    actual = file_sha256(tmp_path / "my/forest.skops")
    cases[1]["sha256"] = actual.upper()  # either case
    assert check_cases(cases, tmp_path)[1]["sha256"] == actual.upper()
    wrong = "0" * 64
    cases[1]["sha256"] = wrong
    message = problems(cases, tmp_path)
    assert (
        f"custom case 'my_forest', key 'sha256': my/forest.skops (key 'model') has SHA-256 "
        f"{actual}, not the configured {wrong}"
    ) in message
    cases[1]["sha256"] = "abc"
    assert "custom case 'my_forest', key 'sha256': expected 64 hex digits" in problems(
        cases, tmp_path
    )
    cases[2]["sha256"] = actual  # only a trees case has a model file
    assert "unknown key(s) ['sha256'] for kind 'mlm'" in problems(cases, tmp_path)


def test_files_outside_the_repository_are_logged_with_their_digest(tmp_path, caplog):
    repo = tmp_path / "repo"
    cases = write_cases(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "my/forest.skops").rename(elsewhere / "forest.skops")
    (repo / "my/softmax.csv").rename(elsewhere / "softmax.csv")
    cases[1]["model"] = str(elsewhere / "forest.skops")  # absolute
    cases[2]["softmax"] = "../elsewhere/softmax.csv"  # relative, leaving the repository
    with caplog.at_level(logging.WARNING, logger="reliquant.custom"):
        check_cases(cases, repo)
    lines = [r.getMessage() for r in caplog.records if r.name == "reliquant.custom"]
    assert len(lines) == 2, lines  # the files inside the repository are not logged
    forest_digest = file_sha256(elsewhere / "forest.skops")
    assert lines[0] == (
        f"custom case 'my_forest', key 'model': {elsewhere / 'forest.skops'} is outside the "
        f"repository ({repo.resolve()}); read with sha256 {forest_digest}"
    )
    assert lines[1].startswith("custom case 'my_mlm', key 'softmax': ../elsewhere/softmax.csv")
    assert file_sha256(elsewhere / "softmax.csv") in lines[1]


def test_nbc_categories_must_name_train_columns(tmp_path):
    cases = write_cases(tmp_path)
    cases[0]["categories"] = {"colour": ["red", "green", "blue", "purple"]}
    check_cases(cases, tmp_path)
    validate_config(_config_with(cases), SCHEMA)
    cases[0]["categories"] = {"shape": ["round"], "colour": ["red"]}
    assert (
        "custom case 'my_nbc', key 'categories': ['shape'] not columns of my/train.csv"
        in problems(cases, tmp_path)
    )
    cases[0]["categories"] = {"colour": []}
    with pytest.raises(ConfigError, match=r"custom\['my_nbc'\]\.categories"):
        validate_config(_config_with(cases), SCHEMA)


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


def test_config_yaml_commented_example_passes_the_schema():
    text = (REPO / "config.yaml").read_text(encoding="utf-8")
    commented = text.split("\ncustom: []\n", 1)[1].splitlines()
    block = commented[: next((i for i, line in enumerate(commented) if not line.startswith("#")),
                              len(commented))]  # fmt: skip
    example = "\n".join(line.removeprefix("# ") for line in block)
    cases = yaml.safe_load(example)["custom"]
    assert sorted(case["kind"] for case in cases) == ["mlm", "nbc", "trees"]
    validate_config(_config_with(cases), SCHEMA)


def test_bad_case_stops_the_dry_run_before_any_job(tmp_path):
    overlay = tmp_path / "bad.yaml"
    missing = tmp_path / "nowhere" / "train.csv"
    case = {"name": "mine", "kind": "nbc", "train": str(missing), "test": str(missing),
            "target": "y"}  # fmt: skip
    trees = write_cases(tmp_path)[1]  # a model file whose digest is not the configured one
    model = tmp_path / trees["model"]
    trees.update(model=str(model), samples=str(tmp_path / trees["samples"]), sha256="a" * 64)
    overlay.write_text(yaml.safe_dump({"custom": [case, trees]}))
    proc = snakemake(REPO, "-n", "--configfile", str(overlay), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"custom case 'mine', key 'train': {missing}: no such file" in out, out[-3000:]
    assert (
        f"custom case 'my_forest', key 'sha256': {model} (key 'model') has SHA-256 "
        f"{file_sha256(model)}, not the configured {'a' * 64}"
    ) in out, out[-3000:]
    assert "Job stats" not in out


def test_cases_add_one_job_each_and_no_case_adds_none(tmp_path):
    overlay = tmp_path / "cases.yaml"
    cases = write_cases(tmp_path)
    for case in cases:  # absolute paths: the dry run runs in the repository
        for key in case_inputs(case):
            case[key] = str(tmp_path / case[key])
    overlay.write_text(yaml.safe_dump({"custom": cases}))
    proc = snakemake(REPO, "-n", "--forceall", "custom", "--configfile", str(overlay))
    out = proc.stdout + proc.stderr
    jobs = planned_jobs(out)
    assert jobs == {
        "custom_nbc": 1,
        "custom_trees": 1,
        "custom_mlm": 1,
        "custom": 1,
        "trees_kernels": 1,  # the trees kernels, compiled once before custom_trees
    }, jobs
    model = cases[1]["model"]  # outside the repository: logged with its digest
    assert (
        f"custom case 'my_forest', key 'model': {model} is outside the repository ({REPO}); "
        f"read with sha256 {file_sha256(model)}"
    ) in out, out[-3000:]
    default = planned_jobs(snakemake(REPO, "-n", "--forceall").stdout)
    assert default.get("all") == 1 and not any(rule.startswith("custom") for rule in default)


def test_runtime_follows_samples_and_time_budget(tmp_path):
    cases = write_cases(tmp_path)
    assert case_runtime(cases[0], tmp_path) == 10
    assert case_runtime(cases[1], tmp_path) == 5  # 5 x 0.2 s: the 5-minute floor
    pd.DataFrame({"a": np.zeros(100), "b": 0.0, "c": 0.0}).to_parquet(tmp_path / "my/big.parquet")
    big = dict(cases[1], samples="my/big.parquet", time_budget=2.0)
    assert case_runtime(big, tmp_path) == 13  # 3 (100 x 2 s + 60 s) = 780 s


def _bad_model_cases(root) -> list[dict]:
    """Two trees cases whose model files exist but cannot serve their samples: a model of 4
    features for 3 columns, and a scikit-learn model that is not a tree ensemble."""
    from sklearn.linear_model import LogisticRegression

    cases = write_cases(root)
    rng = np.random.default_rng(0)
    X4, y4 = rng.normal(size=(40, 4)), np.arange(40) % 2
    sio.dump(RandomForestClassifier(n_estimators=2, random_state=0).fit(X4, y4),
             root / "my/four.skops")  # fmt: skip
    sio.dump(LogisticRegression().fit(X4[:, :3], y4), root / "my/linear.skops")
    return [
        cases[0],
        dict(cases[1], name="four_features", model="my/four.skops"),
        dict(cases[1], name="linear", model="my/linear.skops"),
    ]


def test_a_model_that_cannot_serve_its_samples_is_named(tmp_path):
    from reliquant.trees.custom import check_model, check_models

    cases = _bad_model_cases(tmp_path)
    assert check_model(write_cases(tmp_path)[1], tmp_path) == []  # the good forest
    (count,) = check_model(cases[1], tmp_path)
    assert count.startswith("custom case 'four_features', key 'columns': 3 feature columns")
    assert "the model my/four.skops has 4 features" in count
    no_columns = {k: v for k, v in cases[1].items() if k != "columns"}
    assert (
        "key 'samples': 4 feature columns in my/samples.csv"
        in check_model(dict(no_columns, model="my/forest.skops"), tmp_path)[0]
    )
    (linear,) = check_model(cases[2], tmp_path)
    assert linear.startswith("custom case 'linear', key 'model': my/linear.skops: unsupported")
    assert "LogisticRegression" in linear
    (tmp_path / "my/junk.json").write_text("{}")
    (junk,) = check_model(dict(cases[1], name="junk", model="my/junk.json"), tmp_path)
    assert junk.startswith("custom case 'junk', key 'model':") and "junk.json" in junk
    X, y = _xy()
    sio.dump(HomeMadeForest(n_estimators=2, random_state=0).fit(X, y), tmp_path / "my/own.skops")
    (own,) = check_model(dict(cases[1], name="own", model="my/own.skops"), tmp_path)
    assert "custom case 'own', key 'model':" in own and "refusing to load" in own
    with pytest.raises(CaseError) as info:
        check_models(cases, tmp_path)
    assert len(str(info.value).splitlines()) == 3  # the heading and one line per bad model


def test_bad_model_stops_the_dry_run_before_any_job(tmp_path):
    cases = _bad_model_cases(tmp_path)
    for case in cases:  # absolute paths: the dry run runs in the repository
        for key in case_inputs(case):
            case[key] = str(tmp_path / case[key])
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"custom": cases}))
    proc = snakemake(REPO, "-n", "custom", "--configfile", str(overlay), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "custom case 'four_features', key 'columns': 3 feature columns" in out, out[-3000:]
    assert f"custom case 'linear', key 'model': {tmp_path}/my/linear.skops: unsupported" in out
    assert "Job stats" not in out


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


def test_nbc_case_scores_a_declared_value_unseen_in_training(tmp_path):
    case = write_cases(tmp_path)[0]
    train, test = nbc_tables()
    test.loc[3, "colour"] = "purple"  # possible, but absent from training
    with pytest.raises(ValueError, match=r"custom case 'my_nbc', test table my/test.parquet"):
        run_nbc(train, test, case=case)
    declared = {"colour": ["red", "green", "blue", "purple"]}
    result = run_nbc(train, test, case=dict(case, categories=declared))
    direct = nbc_robustness(
        fit_table(train, "y", cv_folds=3, seed=7, categories=declared), test[["colour", "size"]]
    )
    assert list(result.table["prediction"]) == list(direct["prediction"])
    np.testing.assert_array_equal(result.table["eps_loc"], direct["eps_loc"])
    assert np.isfinite(result.table["eps_loc"][3])
    assert "Declared categories" in result.markdown and "['colour']" in result.markdown
    with pytest.raises(ValueError, match=r"custom case 'my_nbc', train table my/train.csv"):
        run_nbc(train, test, case=dict(case, categories={"colour": ["red", "green"]}))


def by_position(model, frame: pd.DataFrame) -> np.ndarray:
    """``model``'s labels for ``frame``'s values read by position, as a numpy array would be
    (scikit-learn's warning that the array has no feature names silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return model.predict(frame.to_numpy())


def named_forest() -> RandomForestClassifier:
    """The forest of forest(), fitted on the DataFrame: it knows its feature names a, b, c."""
    X, y = tree_data()
    return RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)


REPRODUCIBLE = {"time_budget": 1.0, "max_boxes": 50, "max_draws": 5000, "seed": 5}


def test_trees_case_matches_a_shuffled_samples_table_by_name(tmp_path):
    """A forest fitted on a DataFrame, saved with skops, and a samples table whose columns are
    shuffled: the labels and R of the correct order (read by position, the labels differ)."""
    X, _ = tree_data(seed=9)
    X = X.iloc[:6].reset_index(drop=True)
    shuffled = X[["c", "a", "b"]]
    sio.dump(named_forest(), tmp_path / "forest.skops")
    model = load_model(tmp_path / "forest.skops")
    assert (by_position(model, shuffled) != model.predict(X)).any()  # by position: wrong
    case = {"name": "shuffled", "kind": "trees", "model": "forest.skops", "samples": "s.csv",
            "noise": {"variance": [0.2, 0.1, 0.05]}, **REPRODUCIBLE}  # fmt: skip
    got = run_trees(model, shuffled, case=case).table
    direct = robustness_batch(
        model, X, Gaussian(np.array([0.1, 0.05, 0.2])), seed=5, max_boxes=50, max_draws=5000
    )
    assert list(got["label"]) == list(model.predict(X))
    for col in ("label", "lower", "upper", "estimate", "ci_low", "ci_high", "n_draws", "exact"):
        np.testing.assert_array_equal(got[col], direct[col], err_msg=col)
    # the same through the checks before any job: the shuffled table passes them
    shuffled.to_csv(tmp_path / "s.csv", index=False)
    assert check_cases([case], tmp_path) == [case]
    from reliquant.trees.custom import check_model

    assert check_model(case, tmp_path) == []


def test_trees_case_refuses_missing_and_extra_names_with_both_lists(tmp_path):
    from reliquant.trees.custom import check_model, check_models

    X, _ = tree_data(seed=9)
    sio.dump(named_forest(), tmp_path / "forest.skops")
    X.iloc[:4].rename(columns={"c": "d"}).to_csv(tmp_path / "s.csv", index=False)
    case = {"name": "renamed", "kind": "trees", "model": "forest.skops", "samples": "s.csv",
            "noise": {"variance": 0.1}, **REPRODUCIBLE}  # fmt: skip
    check_cases([case], tmp_path)
    (line,) = check_model(case, tmp_path)
    assert line.startswith("custom case 'renamed', key 'samples':"), line
    assert "['a', 'b', 'd']" in line and "['a', 'b', 'c']" in line, line
    with pytest.raises(CaseError, match=r"custom case 'renamed'"):
        check_models([case], tmp_path)
    model = load_model(tmp_path / "forest.skops")
    with pytest.raises(ValueError, match=r"custom case 'renamed'.*\['a', 'b', 'd'\]"):
        run_trees(model, X.iloc[:4].rename(columns={"c": "d"}), case=case)


@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_trees_case_runs_xgboost_fitted_on_a_dataframe(tmp_path, suffix):
    """XGBoost trained on a DataFrame and saved as .json/.ubj: the case runs (not "data did
    not contain feature names") and equals the library on the model in memory."""
    import xgboost as xgb

    X, y = tree_data()
    model = xgb.XGBClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    model.save_model(tmp_path / f"m{suffix}")
    samples = X.iloc[:4][["b", "c", "a"]]
    samples.to_csv(tmp_path / "s.csv", index=False)
    case = {"name": "xgb_named", "kind": "trees", "model": f"m{suffix}", "samples": "s.csv",
            "noise": {"variance": 0.1}, **REPRODUCIBLE}  # fmt: skip
    from reliquant.trees.custom import check_model

    assert check_model(case, tmp_path) == []
    got = run_trees(load_model(tmp_path / f"m{suffix}"), samples, case=case).table
    direct = robustness_batch(model, X.iloc[:4], Gaussian(0.1), seed=5, max_boxes=50,
                              max_draws=5000)  # fmt: skip
    assert list(got["label"]) == list(model.predict(X.iloc[:4]))
    for col in ("label", "lower", "upper", "estimate", "ci_low", "ci_high", "n_draws"):
        np.testing.assert_array_equal(got[col], direct[col], err_msg=col)


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


# ------------------------------------------------------------------- report of the cases alone
def _report_guard():
    sys.path.insert(0, str(REPO / "workflow"))
    try:
        import report_guard
    finally:
        sys.path.remove(str(REPO / "workflow"))
    return report_guard


class _Dag:
    """The two methods of Snakemake's DAG the guard reads, and ``jobs``."""

    def __init__(self, jobs, pending):
        self.jobs, self._pending = jobs, pending

    def needrun_jobs(self):
        return iter(self._pending)

    def reason(self, job):
        return "Missing output files"


class _Job:
    def __init__(self, rule, *outputs):
        self.rule, self.output = SimpleNamespace(name=rule), list(outputs)


def test_report_refusal_says_how_to_report_the_cases_alone(tmp_path):
    guard = _report_guard()
    mine = _Job("custom_nbc", str(tmp_path / "results/custom/mine.parquet"))
    paper = _Job("nbc_auc", str(tmp_path / "results/nbc/auc.parquet"))
    hint = "`snakemake --report report.html custom`"
    # the papers' results missing, the case's done: the message says how to report it alone
    assert hint in guard.missing_results_message(_Dag([mine, paper], [paper]))
    # without custom cases, or when only the cases are pending, no such line
    assert hint not in guard.missing_results_message(_Dag([paper], [paper]))
    assert hint not in guard.missing_results_message(_Dag([mine], [mine]))
    assert guard.missing_results_message(_Dag([mine], [])) is None  # target custom, all done


# ------------------------------------------------------------------------------ end to end
CUSTOM_YAML = REPO / "tests" / "custom.yaml"
NBC_CATEGORIES = {"colour": ["red", "green", "blue", "purple"]}


def custom_models() -> dict:
    """The models of tests/custom.yaml, fitted in memory on tree_data() (3 features)."""
    import lightgbm as lgb
    import xgboost as xgb

    X, y = tree_data()
    return {
        # fitted on the DataFrame: it knows its feature names a, b, c
        "xgb": xgb.XGBClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y),
        "lightgbm": lgb.LGBMClassifier(
            n_estimators=4, num_leaves=4, min_child_samples=5, verbose=-1
        ).fit(X.to_numpy(), y),
        "forest": forest(),
        "forest_named": named_forest(),
    }


def nbc_custom_test(test: pd.DataFrame) -> pd.DataFrame:
    """nbc_csv's test table: one row's colour declared in its categories, unseen in training."""
    test = test.copy()
    test.loc[2, "colour"] = "purple"
    return test


def write_custom_inputs(root) -> dict:
    """Every file tests/custom.yaml names, under ``root/custom_inputs``; returns the models."""
    out = root / "custom_inputs"
    out.mkdir(parents=True, exist_ok=True)
    train, test = nbc_tables(80, seed=4)
    train.to_csv(out / "nbc_train.csv", index=False)
    nbc_custom_test(test).to_csv(out / "nbc_test.csv", index=False)
    train.to_parquet(out / "nbc_train.parquet")
    test.drop(columns="y").to_parquet(out / "nbc_test.parquet")
    X, _ = tree_data(seed=9)
    samples = X.iloc[:6].reset_index(drop=True)
    samples.to_parquet(out / "samples.parquet")
    samples[["c", "a", "b"]].to_csv(out / "samples_shuffled.csv", index=False)
    samples.insert(0, "id", [f"s{i}" for i in range(len(samples))])
    samples.to_csv(out / "samples.csv", index=False)
    models = custom_models()
    models["xgb"].save_model(out / "xgb.json")
    models["xgb"].save_model(out / "xgb.ubj")
    models["lightgbm"].booster_.save_model(out / "lightgbm.txt")
    sio.dump(models["forest"], out / "forest.skops")
    sio.dump(models["forest_named"], out / "forest_named.skops")
    softmax_table(60, k=4).to_csv(out / "softmax.csv", index=False)
    softmax_table(45, k=3, seed=1).to_parquet(out / "softmax.parquet")
    softmax_table(90, k=3, seed=2).to_csv(out / "reference.csv", index=False)
    return models


def custom_yaml_cases() -> dict[str, dict]:
    return {case["name"]: case for case in yaml.safe_load(CUSTOM_YAML.read_text())["custom"]}


def test_custom_yaml_covers_every_kind_and_format(tmp_path):
    cases = custom_yaml_cases()
    write_custom_inputs(tmp_path)
    checked = check_cases(list(cases.values()), tmp_path)  # the files match the overlay
    validate_config(_config_with(checked), SCHEMA)
    files = {Path(path).suffix for case in checked for path in case_inputs(case).values()}
    assert files == {".csv", ".parquet", ".json", ".ubj", ".txt", ".skops"}
    assert sorted({case["kind"] for case in checked}) == ["mlm", "nbc", "trees"]
    from reliquant.trees.custom import check_models

    check_models(checked, tmp_path)  # every model serves its samples (by name where named)


def _image_is_a_figure(path) -> None:
    from PIL import Image

    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        rgb = np.asarray(image.convert("RGB"), dtype=np.int64)
    assert min(rgb.shape[:2]) >= 200, f"{path}: {rgb.shape}"
    inked = (rgb.sum(axis=2) < 600).mean()  # pixels clearly darker than white
    colours = len(np.unique(rgb.reshape(-1, 3), axis=0))
    assert inked > 0.02 and colours > 30, f"{path}: {inked:.3f} inked, {colours} colours"


@pytest.mark.workflow
def test_custom_yaml_end_to_end_against_the_library(tmp_path, monkeypatch):
    """tests/custom.yaml over tests/smoke.yaml: every case's table equals the library called
    directly on the same data (the models in memory, not the files), its figure is drawn, the
    report of the cases alone holds them and nothing else (the papers' results absent), and
    editing one case reruns its job only."""
    work = copy_repo(tmp_path / "w")
    monkeypatch.setenv("PYTHONPATH", str(work / "src"))
    models = write_custom_inputs(work)
    overlay = yaml.safe_load(CUSTOM_YAML.read_text())
    shuffled = next(case for case in overlay["custom"] if case["name"] == "trees_shuffled")
    shuffled["sha256"] = file_sha256(work / shuffled["model"])  # checked before the job
    (work / "tests" / "custom.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    overlays = ("--configfile", "tests/smoke.yaml", "tests/custom.yaml")
    snakemake(work, "--cores", "2", "custom", *overlays)
    cases = custom_yaml_cases()
    out = work / "results" / "custom"

    def table(name):
        return pq.read_table(out / f"{name}.parquet").to_pandas()

    # nbc: fit_table + robustness on the same tables (purple: declared, unseen in training)
    train, test = nbc_tables(80, seed=4)
    got, declared = table("nbc_csv"), nbc_custom_test(test)
    direct = nbc_robustness(
        fit_table(train, "y", cv_folds=3, seed=7, categories=NBC_CATEGORIES),
        declared[["colour", "size"]],
    )
    assert list(got["prediction"]) == list(direct["prediction"])
    assert list(got["correct"]) == list(direct["prediction"] == declared["y"])
    assert np.isfinite(got["eps_loc"][2])  # the purple row is scored
    for col in ("eps_glob", "eps_loc"):
        np.testing.assert_array_equal(got[col], direct[col], err_msg=col)
    got = table("nbc_parquet")
    direct = nbc_robustness(
        fit_table(train, "y", alpha=0.5), test[["colour", "size"]], bootstrap=5, seed=2
    )
    assert "correct" not in got and list(got["prediction"]) == list(direct["prediction"])
    for col in ("eps_glob", "eps_loc", "u_m", "u_H", "u_a", "u_t", "u_e"):
        np.testing.assert_array_equal(got[col], direct[col], err_msg=col)
    assert got["u_e"].max() > 0

    # trees: robustness_batch on the models in memory, same noise and seed; the named models
    # get the samples as a DataFrame in the model's order (trees_shuffled's table is c, a, b)
    named, _ = tree_data(seed=9)
    named = named.iloc[:6].reset_index(drop=True)
    X = named.to_numpy()
    variances = {"trees_shuffled": [0.1, 0.05, 0.2]}  # its [0.2, 0.1, 0.05] in a, b, c order
    for name, model, data in (("trees_xgb_json", "xgb", named), ("trees_xgb_ubj", "xgb", named),
                              ("trees_lightgbm", "lightgbm", X),
                              ("trees_shuffled", "forest_named", named)):  # fmt: skip
        case, got = cases[name], table(name)
        variance = variances.get(name, case["noise"]["variance"])
        noise = Gaussian(np.asarray(variance) if isinstance(variance, list) else variance)
        direct = robustness_batch(models[model], data, noise, seed=case["seed"],
                                  max_boxes=50, max_draws=5000)  # fmt: skip
        assert list(got["label"]) == list(direct["label"]), name
        for col in ("lower", "upper", "estimate", "ci_low", "ci_high", "n_draws", "exact"):
            np.testing.assert_array_equal(got[col], direct[col], err_msg=f"{name} {col}")
        assert ((got["lower"] <= got["estimate"]) & (got["estimate"] <= got["upper"])).all()
    labels = models["forest_named"].predict(named)  # read by position, c, a, b would differ
    assert list(table("trees_shuffled")["label"]) == list(labels)
    assert (by_position(models["forest_named"], named[["c", "a", "b"]]) != labels).any()
    got = table("trees_sklearn")  # anytime: exact samples agree exactly, the rest overlap
    direct = robustness_batch(models["forest"], X, Gaussian(0.1), seed=4, time_budget=0.5)
    assert list(got["label"]) == list(direct["label"])
    both = got["exact"].to_numpy() & direct["exact"].to_numpy()
    assert both.any()
    for col in ("lower", "upper", "estimate"):
        np.testing.assert_array_equal(got[col][both], direct[col][both], err_msg=col)
    assert (got["ci_low"] <= direct["ci_high"]).all() and (direct["ci_low"] <= got["ci_high"]).all()

    # mlm: misclassification_likelihood on the same arrays
    frame = softmax_table(60, k=4)
    direct = misclassification_likelihood(frame[["p0", "p1", "p2", "p3"]].to_numpy(),
                                           frame["label"].to_numpy())  # fmt: skip
    pd.testing.assert_frame_equal(table("mlm_softmax"), direct.to_frame())
    frame, ref = softmax_table(45, k=3, seed=1), softmax_table(90, k=3, seed=2)
    cols = ["p0", "p1", "p2"]
    direct = misclassification_likelihood(
        frame[cols].to_numpy(), frame["label"].to_numpy(), refine=False, seed=3,
        reference_softmax=ref[cols].to_numpy(), reference_labels=ref["label"].to_numpy(),
    )  # fmt: skip
    pd.testing.assert_frame_equal(table("mlm_reference"), direct.to_frame())

    # figures, pages and the report's entries
    for name in cases:
        _image_is_a_figure(work / "results" / "figures" / "custom" / f"{name}.png")
        assert (out / f"{name}.html").read_text().count("<table") >= 1
        assert (out / f"{name}.md").read_text().startswith(f"# Your case {name}:")

    # the report of the cases alone: built without the papers' results, holding only them
    snakemake(work, "--report", "report.html", "custom", *overlays)
    html = (work / "report.html").read_text(errors="replace")
    found = re.search(r"var categories = (\{.*?\});\n", html)
    assert found, "no categories in the report"
    categories = json.loads(found.group(1))
    assert list(categories) == ["Your cases"], list(categories)
    entries = [path for sub in categories["Your cases"].values() for path in sub]
    assert sorted(entries) == sorted(
        [f"results/figures/custom/{name}.png" for name in cases]
        + [f"results/custom/{name}.html" for name in cases]
    )
    # the whole report still refuses, naming the missing papers' jobs and the way above
    proc = snakemake(work, "--report", "all.html", *overlays, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and not (work / "all.html").exists()
    assert "results are missing or out of date" in out, out[-3000:]
    assert "`snakemake --report report.html custom`" in out, out[-3000:]

    # editing one case reruns its job only
    edited = yaml.safe_load((work / "tests" / "custom.yaml").read_text())
    edited["custom"][0]["seed"] = 8
    (work / "tests" / "custom.yaml").write_text(yaml.safe_dump(edited, sort_keys=False))
    proc = snakemake(work, "-n", "custom", *overlays)
    assert planned_jobs(proc.stdout + proc.stderr) == {"custom_nbc": 1, "custom": 1}
