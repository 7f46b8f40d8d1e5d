"""reliquant.core.config: the same merge as Snakemake's --configfile."""

import pytest

from reliquant.core.config import config_section, load_config, merge


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
    with pytest.raises(ValueError, match="bad.yaml"):
        load_config(tmp_path / "bad.yaml")
