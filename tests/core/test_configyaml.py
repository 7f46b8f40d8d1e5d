"""reliquant.core.configyaml: config files bounded before anything walks them, and YAML merge
keys read as YAML defines them (issue 40)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reliquant.core.config import ConfigError, load_config, read_config_file, validate_config
from reliquant.core.configyaml import (
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    MAX_CONFIG_NODES,
    expanded_nodes,
)

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _laughs(depth: int, width: int = 10) -> str:
    """A "billion laughs" overlay: list ``a0`` of ``width`` strings, each ``a<i>`` a list of
    ``width`` aliases of ``a<i-1>``: ``width ** (depth + 1)`` leaves in a few hundred bytes."""
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
    lines += [
        f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]" for i in range(1, depth + 1)
    ]
    return "nbc:\n  paper:\n    bomb:\n" + "".join(f"      {line}\n" for line in lines)


def _expanded(depth: int, width: int = 10) -> int:
    """The closed form of the nodes of :func:`_laughs`, aliases expanded: list ``a_i`` has
    ``s_i = 1 + width s_{i-1}`` nodes (``s_0 = 1 + width``); each mapping counts 1, each of
    its keys 1."""
    sizes = [1 + width]
    for _ in range(depth):
        sizes.append(1 + width * sizes[-1])
    bomb = 1 + sum(1 + s for s in sizes)  # the mapping a0..a<depth>: each key + its list
    paper = 1 + 1 + bomb  # {bomb: ...}
    nbc = 1 + 1 + paper  # {paper: ...}
    return 1 + 1 + nbc  # the document {nbc: ...}


def test_a_billion_laughs_overlay_is_refused_before_it_is_walked(tmp_path):
    """556 bytes, 10^9 leaves: snakemake -n walked them for hours (about 7 s per 10^6)."""
    path = tmp_path / "laughs.yaml"
    path.write_text(_laughs(8))
    assert len(path.read_bytes()) < 600
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    message = str(err.value)
    assert str(path) in message
    assert f"more than {MAX_CONFIG_NODES:,} YAML nodes once its aliases are expanded" in message
    # the count is exact and made without expanding: 1.1 * 10^9 nodes, counted at once
    node = yaml.compose(path.read_text())
    assert expanded_nodes(node) == _expanded(8) > 10**9
    # a small nest of aliases is fine, and read as YAML defines it
    path.write_text(_laughs(2))
    assert expanded_nodes(yaml.compose(path.read_text())) == _expanded(2)
    assert read_config_file(path)["nbc"]["paper"]["bomb"]["a2"][9][9][9] == "lol"


@pytest.mark.parametrize("text", ["a: &a [1, *a]\n", "a: &a {x: [*a]}\n"])
def test_an_alias_inside_its_own_node_is_refused(tmp_path, text):
    path = tmp_path / "loop.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="refers to that node itself: a walk of it would never"):
        read_config_file(path)


def test_a_config_file_larger_than_the_limit_is_refused_from_its_size(tmp_path):
    """A 50 MB overlay ran past 900 s at 8.7 GB; the limit is read from the file's size."""
    path = tmp_path / "big.yaml"
    path.write_text("nbc:\n  seed: 1\n" + "# padding\n" * (MAX_CONFIG_BYTES // 10))
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert f"{path.stat().st_size:,} bytes, more than the {MAX_CONFIG_BYTES:,}" in str(err.value)
    assert (REPO / "config.yaml").stat().st_size < MAX_CONFIG_BYTES / 10
    assert expanded_nodes(yaml.compose((REPO / "config.yaml").read_text())) < MAX_CONFIG_NODES / 10


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 200_000 + "]" * 200_000 + "\n",  # PyYAML's scanner: seconds per 2,000
        "a:\n  " + "- " * 100_000 + "1\n",
        "a:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(100)) + " " * 101 + "v\n",
    ],
)
def test_deep_nesting_is_refused_while_the_file_is_scanned(tmp_path, text):
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_config_file(path)
    assert f"collections nested more than {MAX_CONFIG_DEPTH} deep" in str(err.value)
    assert str(path) in str(err.value)


# ------------------------------------------------------------------------------ merge keys
CASES = """\
custom:
  - &forest
    name: loans
    kind: trees
    model: custom_inputs/forest.skops
    samples: custom_inputs/samples.csv
    noise: {variance: 0.1}
    time_budget: 1.0
    seed: 1
  - <<: *forest
    name: loans_seed2
    seed: 2
"""


def test_a_merge_key_with_an_override_is_read_as_yaml_defines_it(tmp_path):
    """Standard YAML merge: the mapping's own keys override the merged ones. It was refused
    as "key 'seed' written twice"."""
    path = tmp_path / "cases.yaml"
    path.write_text(CASES)
    first, second = read_config_file(path)["custom"]
    assert second == {**first, "name": "loans_seed2", "seed": 2}
    assert first["seed"] == 1 and first["name"] == "loans"
    assert second == yaml.safe_load(CASES)["custom"][1]  # PyYAML's own merge agrees
    validate_config(load_config(REPO / "config.yaml", [path]), SCHEMA)


def test_of_several_merged_mappings_the_first_wins_and_own_keys_win_over_all(tmp_path):
    text = "a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n  y: 3\n"
    path = tmp_path / "m.yaml"
    path.write_text(text)
    assert read_config_file(path)["c"] == {"x": 1, "y": 3, "z": 2} == yaml.safe_load(text)["c"]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\na: 2\n", "key 'a' written twice (first at line 1)"),
        # a key written twice beside a merge key is still written twice
        ("b: &b {s: 1}\nc:\n  <<: *b\n  s: 2\n  s: 3\n", "key 's' written twice (first at line 4)"),
        # inside the merged mapping itself too
        ("b: &b {s: 1, s: 2}\nc:\n  <<: *b\n", "key 's' written twice (first at line 1)"),
    ],
)
def test_a_key_written_twice_is_still_refused_beside_merge_keys(tmp_path, text, line):
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="written twice") as err:
        read_config_file(path)
    assert line in str(err.value)
