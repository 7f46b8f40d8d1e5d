"""reliquant.core.config: the same merge as Snakemake's --configfile."""

from pathlib import Path

import pytest

from reliquant.core.config import (
    ConfigError,
    config_section,
    load_config,
    main,
    merge,
    read_config_file,
    validate_config,
)
from reliquant.nbc.reproduction.settings import check_settings

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
        "unknown key 'nbcc' at the top level; allowed: custom, data, mlm, nbc, pmnist, trees"
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


# ------------------------------------------------------------------ nbc cross-key settings
def _nbc(**changes):
    nbc = load_config(REPO / "config.yaml")["nbc"]
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        nbc[section][key] = value
    return nbc


def test_default_nbc_settings_are_consistent():
    check_settings(_nbc())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"design__class_probs": [0.4, 0.4, 0.4]}, r"class_probs \[0.4, 0.4, 0.4\] sums to 1.2"),
        ({"design__favoured": [[0, 0, 0, 0]] * 2}, "favoured has 2 rows; it needs one per class"),
        ({"design__favoured": [[0, 0, 0]] * 3}, r"favoured\[0\] has 3 values"),
        ({"design__favoured": [[2, 0, 0, 0]] * 3}, r"favoured\[0\]\[0\] = 2 is not a value"),
        ({"grid__n_train": [5, 50], "fit__cv_folds": 10}, "cv_folds = 10 needs at least"),
        ({"grid__gamma": [0.2, 0.2000001]}, "0.2 and 0.2000001 name the same cell file"),
        ({"grid__n_train": [25, 25]}, "n_train lists 25 twice"),
    ],
)
def test_inconsistent_nbc_settings_are_named(changes, message):
    with pytest.raises(ValueError, match=message):
        check_settings(_nbc(**changes))


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
