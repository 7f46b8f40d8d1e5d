"""Reading the workflow's configuration outside Snakemake (benchmarks, notebooks).

Snakemake merges ``config.yaml`` with every ``--configfile`` given after it; :func:`load_config`
does the same (a recursive merge of mappings, later files win), so a benchmark run standalone
sees the same numbers as one run by its rule. :func:`read_config_file` names the file and line
of a YAML error; :func:`validate_config` checks a configuration against the workflow's JSON
schema and reports each problem in one line naming the key (the workflow calls both before any
job is planned).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

__all__ = [
    "ConfigError",
    "config_section",
    "load_config",
    "main",
    "merge",
    "read_config_file",
    "validate_config",
]


def merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated recursively by ``overlay`` (mappings merge, everything else replaces)."""
    out = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def load_config(
    path: str | os.PathLike = "config.yaml", overlays: Sequence[str | os.PathLike] = ()
) -> dict[str, Any]:
    """The configuration of ``path`` merged with each file of ``overlays`` in turn."""
    config: dict[str, Any] = {}
    for file in (path, *overlays):
        config = merge(config, read_config_file(file))
    return config


class ConfigError(ValueError):
    """A configuration file or value the workflow cannot run with; the message names it."""


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """The mapping in one YAML config file; a ConfigError names the file (and line) when the
    file is missing, empty, not valid YAML, or not a mapping of sections."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {file}: cannot be read ({err})") from err
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise ConfigError(f"config file {file}: YAML error at {where}: {err.problem}") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {file}: not valid YAML ({err})") from err
    if data is None:
        raise ConfigError(f"config file {file} is empty: it must map section names to settings")
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"config file {file}: the top level must be a mapping of sections, "
            f"got {type(data).__name__}"
        )
    return dict(data)


def _schema_registry(schema_dir: Path) -> Registry:
    """Every ``*.schema.yaml`` of ``schema_dir`` by file name, for ``$ref: <name>``."""
    resources = [
        (p.name, Resource.from_contents(yaml.safe_load(p.read_text(encoding="utf-8"))))
        for p in sorted(schema_dir.glob("*.schema.yaml"))
    ]
    return Registry().with_resources(resources)


def _key_path(error, config: Any) -> str:
    """The dotted key path of a violation; a list entry with a ``name`` (a custom case) is
    written ``custom['name']`` instead of ``custom.0``."""
    parts: list[str] = []
    node = config
    for key in error.absolute_path:
        item = node[key] if isinstance(key, int) and isinstance(node, list) else None
        name = item.get("name") if isinstance(item, Mapping) else None
        if isinstance(name, str) and parts:
            parts[-1] += f"[{name!r}]"
        else:
            parts.append(str(key))
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(parts) or "(top level)"


def _describe(error, config: Any = None) -> str:
    """One line for one schema violation, naming the dotted key path."""
    key = _key_path(error, config)
    if "propertyNames" in error.relative_schema_path:
        allowed = sorted(error.schema.get("enum", []))
        return f"unknown key {error.instance!r} in {key}; allowed: {', '.join(allowed)}"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        where = "at the top level" if key == "(top level)" else f"in {key}"
        return f"unknown key {', '.join(map(repr, unknown))} {where}; allowed: {', '.join(allowed)}"
    if error.validator == "required":
        return f"{key}: {error.message}"
    return f"{key} = {error.instance!r}: {error.message}"


def validate_config(config: Mapping[str, Any], schema: str | os.PathLike) -> None:
    """Check ``config`` against the JSON schema file ``schema`` (``$ref`` to sibling schema
    files resolved); raise a :class:`ConfigError` with one line per problem (at most ten), each
    naming the key, instead of the schema itself."""
    path = Path(schema)
    registry = _schema_registry(path.parent)
    root = registry[path.name].contents
    validator = Draft202012Validator(root, registry=registry)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(k) for k in e.path])
    # a key a narrower rule (a custom case's kind) also names is reported once, by that rule
    named = {
        (tuple(e.absolute_path), e.instance)
        for e in errors
        if "propertyNames" in e.relative_schema_path
    }
    errors = [
        e
        for e in errors
        if e.validator != "additionalProperties"
        or not isinstance(e.instance, Mapping)
        or not all(
            (tuple(e.absolute_path), k) in named
            for k in set(e.instance) - set(e.schema.get("properties", {}))
        )
    ]
    if errors:
        lines = [_describe(e, config) for e in errors[:10]]
        more = f"\n(and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines) + more)


def config_section(
    topic: str,
    path: str | os.PathLike = "config.yaml",
    overlays: Sequence[str | os.PathLike] = (),
) -> dict[str, Any]:
    """One topic's section of :func:`load_config`, or a KeyError naming the topic and file."""
    config = load_config(path, overlays)
    if topic not in config:
        raise KeyError(f"{path} has no section {topic!r} (sections: {', '.join(config)})")
    return config[topic]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reliquant.core.config [--base config.yaml] OVERLAY...``: read each file
    (a YAML error names the file, line and column; an empty file or a non-mapping says so),
    merge them as Snakemake does and check the result against the workflow's schema.

    Snakemake parses ``--configfile`` overlays itself before any workflow code runs, and its
    message for a broken one ("Config file is not valid JSON or YAML") names no file: this
    command finds it. Exit status 0 when valid, 1 with the problem printed otherwise.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m reliquant.core.config")
    parser.add_argument("overlays", nargs="*", type=Path, help="--configfile overlays, in order")
    parser.add_argument("--base", type=Path, default=Path("config.yaml"))
    parser.add_argument("--schema", type=Path, default=Path("workflow/schemas/config.schema.yaml"))
    args = parser.parse_args(argv)
    try:
        config = load_config(args.base, args.overlays)
        validate_config(config, args.schema)
    except ConfigError as err:
        print(f"error: {err}")
        return 1
    names = ", ".join(str(p) for p in (args.base, *args.overlays))
    print(f"ok: {names} merged and valid against {args.schema}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
