"""reliquant.core.configpaths: every config value that becomes a path is confined to where it
belongs and refused when the config is read, naming the key (issue 40: with
``pmnist: {preset: calibrated, calibrated_schedule: config.yaml}`` a run deleted and rewrote
the repository's config.yaml)."""

from __future__ import annotations

import copy
import functools
import random
import re
from pathlib import Path

import pytest
import yaml
from snakemake.io import PeriodicityDetector

from reliquant.core.config import ConfigError, load_config, main, merge, validate_config
from reliquant.core.configpaths import (
    MAX_NAME_LENGTH,
    PATH_ROLES,
    path_keys,
    path_problem,
    periodic_substring,
    schema_keys,
)

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

#: config.yaml, the custom cases of tests/custom.yaml and this overlay set every path key.
EVERY_PATH_KEY = """
mlm:
  model: {source: file, path: weights/cnn.pt, sha256: "%s"}
  perturbed: {corruptions: [brightness]}
compare:
  mnist: {corruptions: [brightness]}
""" % ("0" * 64)
#: Files of the repository (tracked): no config value may make the workflow write one.
TRACKED = [
    "config.yaml",
    "Snakefile",
    "pyproject.toml",
    "data/raw/checksums.tsv",
    "envs/core.yaml",
    "tests/smoke.yaml",
    "workflow/schemas/pmnist.schema.yaml",
    "src/reliquant/__init__.py",
]
#: String keys that never become a path, and why (every other string key is marked x-path).
NOT_A_PATH = {
    "mlm.device": "a torch device (pattern cpu|cuda:N)",
    "mlm.model.sha256": "a hex digest (pattern)",
    "custom.*.sha256": "a hex digest (pattern)",
    "custom.*.target": "a column name of the case's tables",
    "custom.*.columns.*": "column names of the samples table",
    "custom.*.categories.*.*": "values of a column",
    "compare.certified.comparator": "a score name (checked against the compare tables' scores)",
    "compare.certified.datasets.*.comparator": "a score name, per data set",
}


@functools.cache
def _base_config() -> dict:
    overlay = yaml.safe_load(EVERY_PATH_KEY)
    return merge(load_config(REPO / "config.yaml", [REPO / "tests" / "custom.yaml"]), overlay)


def _base(_tmp_path=None) -> dict:
    """A fresh copy of the configuration that sets every path key."""
    return copy.deepcopy(_base_config())


def _set(config: dict, pattern: str, value: str) -> str:
    """Set the key ``pattern`` (``*``: the first list entry that has the next key, or a
    list's first item) to ``value``; return the dotted key an error names (a custom case
    by its name: ``custom['nbc_csv'].train``)."""
    node, path = config, []
    parts = pattern.split(".")
    for i, part in enumerate(parts):
        if part == "*":
            following = parts[i + 1] if i + 1 < len(parts) else None
            part = next(j for j, e in enumerate(node) if following is None or following in e)
        else:
            assert isinstance(node, dict) and part in node, f"the base sets no {pattern}"
        path.append(part)
        if i == len(parts) - 1:
            node[part] = value
        else:
            node = node[part]
    shown, node = [], config
    for part in path:
        entry = node[part]
        name = entry.get("name") if isinstance(part, int) and isinstance(entry, dict) else None
        if name is not None:
            shown[-1] += f"[{name!r}]"
        else:
            shown.append(str(part))
        node = entry
    return ".".join(shown)


KEYS = schema_keys(SCHEMA)


def _node(pattern: str) -> dict:
    return next(node for key, node in KEYS if key == pattern and "x-path" in node)


def _attacks(pattern: str, default: str) -> list[str]:
    suffix = Path(default).suffix
    return [
        f"../outside{suffix}",
        f"/tmp/outside{suffix}",
        f"results/../outside{suffix}",
        *TRACKED,
    ]


def _refused(config: dict) -> str | None:
    try:
        validate_config(config, SCHEMA, root=REPO)
    except ConfigError as err:
        return str(err)
    return None


def test_the_base_sets_every_path_key_and_passes(tmp_path):
    assert all((REPO / name).is_file() for name in TRACKED)
    base = _base(tmp_path)
    config = copy.deepcopy(base)
    for pattern, _ in path_keys(SCHEMA):
        _set(config, pattern, _get(base, pattern))  # every key is there
    validate_config(base, SCHEMA)


def _get(config, pattern):
    node = config
    parts = pattern.split(".")
    for i, part in enumerate(parts):
        if part == "*":
            following = parts[i + 1] if i + 1 < len(parts) else None
            node = next(e for e in node if following is None or following in e)
        else:
            node = node[part]
    return node


@pytest.mark.parametrize(("pattern", "role"), path_keys(SCHEMA))
def test_every_path_key_is_confined_where_its_role_says(tmp_path, pattern, role):
    """Every key the schemas mark x-path, set to a path outside the repository, leaving its
    folder with '..', or naming a file of the repository."""
    base = _base(tmp_path)
    default = _get(base, pattern)
    pattern_re = _node(pattern).get("pattern")
    for value in _attacks(pattern, default):
        config = copy.deepcopy(base)
        key = _set(config, pattern, value)
        message = _refused(config)
        if role in ("output", "result", "name"):
            refuse = True  # under results/ only; a name is one file name
        elif role == "data":
            refuse = not value.startswith("data/")  # data/raw/checksums.tsv: the default
        else:  # input: a file of the user, anywhere (docs/library.md); its suffix is checked
            refuse = pattern_re is not None and not re.search(pattern_re, value)
        if refuse:
            assert message is not None, f"{key} = {value!r} was accepted"
            assert f"{key} = {value!r}" in message, message
        else:
            assert message is None, message
    # Snakemake's wildcards and empty paths are refused in every role
    for value in ("", "results/{x}/a.csv", "a\nb.csv"):
        config = copy.deepcopy(base)
        key = _set(config, pattern, value)
        assert f"{key} = {value!r}" in (_refused(config) or ""), value


def test_no_string_key_that_could_be_a_path_goes_unmarked():
    """A string key a new rule uses as a path must be marked x-path, or listed above as not a
    path with the reason."""
    unmarked = set()
    for key, node in KEYS:
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if "string" in types and not {"x-path", "enum", "const"} & set(node):
            unmarked.add(key)
    assert unmarked == set(NOT_A_PATH)
    assert {role for _, role in path_keys(SCHEMA)} == set(PATH_ROLES)


def test_the_issue_reproducer_is_refused_by_the_checker(tmp_path, capsys, monkeypatch):
    """The overlay of issue 40, as a user checks it (snakemake -n stops with the same line)."""
    monkeypatch.chdir(REPO)
    overlay = tmp_path / "mine.yaml"
    overlay.write_text("pmnist:\n  preset: calibrated\n  calibrated_schedule: config.yaml\n")
    assert main([str(overlay)]) == 1
    assert "pmnist.calibrated_schedule = 'config.yaml': outside results/" in capsys.readouterr().out
    overlay.write_text("pmnist:\n  calibrated_schedule: results/pmnist/mine.yaml\n")
    assert main([str(overlay)]) == 0


def test_a_missing_manifest_is_refused_naming_the_key_and_the_file(tmp_path):
    """It gave a raw FileNotFoundError without the key."""
    config = load_config(REPO / "config.yaml")
    config["data"]["manifest"] = "data/raw/nowhere.tsv"
    validate_config(config, SCHEMA)  # no working directory given: not looked up
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA, root=REPO)
    assert (
        f"data.manifest = 'data/raw/nowhere.tsv': no such file ({REPO}/data/raw/nowhere.tsv)"
        in str(err.value)
    )


# ------------------------------------------------------------------------ names of files
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("a" * 20, "ends in 'a' repeated 20 or more times"),  # PeriodicWildcardError
        ("x" + "ab" * 20, "ends in 'ab' repeated 20 or more times"),
        ("n" * 300, "300 characters; a name has at most 64"),  # OSError: File name too long
    ],
)
def test_a_custom_case_name_snakemake_would_choke_on_is_refused_naming_the_key(name, why):
    config = load_config(REPO / "config.yaml", [REPO / "tests" / "custom.yaml"])
    config["custom"][0]["name"] = name
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    assert f"custom[{name!r}].name = {name!r}: {why}" in str(err.value)
    config["custom"][0]["name"] = "".join(str(i % 10) for i in range(MAX_NAME_LENGTH))
    validate_config(config, SCHEMA)


def test_periodic_substring_is_snakemakes_rule():
    """Against Snakemake's own PeriodicityDetector on random names made of few letters (many
    periodic) and on the corner cases."""
    detector = PeriodicityDetector()
    rng = random.Random(40)
    values = ["", "a" * 19, "a" * 20, "a" * 2000, "ab" * 20 + "a", "abc" * 19 + "ab", "_" * 30]
    for _ in range(3000):
        unit = "".join(rng.choice("ab_") for _ in range(rng.randint(1, 3)))
        values.append(
            "".join(rng.choice("ab") for _ in range(rng.randint(0, 5))) + unit * rng.randint(1, 25)
        )
    for value in values:
        assert periodic_substring(value) == detector.is_periodic(value), value


def test_every_role_is_documented_and_an_unknown_one_is_an_error():
    assert set(PATH_ROLES) == {"output", "result", "data", "input", "name"}
    with pytest.raises(ValueError, match="x-path role 'outptu'"):
        path_problem("results/x", "outptu")
    assert path_problem("results/pmnist/a.yaml", "output") is None
    assert "write 'results/a.yaml'" in path_problem("results//a.yaml", "output")
    assert "a folder" in path_problem("results/a/", "output")
    # the schema files' annotations are roles the checker knows
    for path in sorted((REPO / "workflow" / "schemas").glob("*.schema.yaml")):
        assert set(re.findall(r"x-path: (\w+)", path.read_text())) <= set(PATH_ROLES), path
    assert yaml.safe_load("x-path: output") == {"x-path": "output"}
