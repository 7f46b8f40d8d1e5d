"""Reading the workflow's configuration outside Snakemake (benchmarks, notebooks).

Snakemake merges ``config.yaml`` with every ``--configfile`` given after it; :func:`load_config`
does the same (a recursive merge of mappings, later files win), so a benchmark run standalone
sees the same numbers as one run by its rule. :func:`read_config_file` names the file and line
of a YAML error (a key written twice in one mapping is one: YAML would keep the last silently)
and refuses a file too large to be a configuration, or one whose aliases expand to too many
nodes, before anything walks it (:mod:`reliquant.core.configyaml`);
:func:`validate_config` checks a configuration before any job is planned and reports each
problem in one line naming the dotted key and its value:

* every number is finite (:func:`nonfinite_values`): a NaN compares false with every bound, so
  the schema's ``minimum`` would let ``nbc.paper.z: .nan`` through to a claim "beyond nan
  standard errors";
* the workflow's JSON schema (types, bounds, ``enum`` for the names of a static set,
  ``uniqueItems`` for lists of names); an ``integer`` is a whole number written without a
  decimal point (:func:`is_strict_integer`): JSON schema counts ``1000.0`` as an integer,
  and a seed read as ``1000.0`` would pass the schema and fail in every job that derives a
  random stream from it;
* every value that becomes a path (a key the schema marks ``x-path: <role>``) where its role
  allows (:mod:`reliquant.core.configpaths`): an output under ``results/``, a vendored input
  under ``data/`` and present, a name that makes a valid file name and wildcard value;
* the constraints between keys the schema files declare under ``x-checks``
  (:func:`cross_key_problems`): a name that must be one of another key's names, or must not
  be; list entries unique by a field (a list the workflow turns into a mapping); ordered
  ends of a range. They live in the schemas, beside the keys they relate, and are checked
  here so that no rule file has to import a topic's package to check its settings.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, validators
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from reliquant.core.configpaths import path_keyword
from reliquant.core.configyaml import load_config_yaml
from reliquant.core.errors import ConfigError

__all__ = [
    "ConfigError",
    "NONFINITE_ALLOWED",
    "SCHEMA_LOADER",
    "config_section",
    "cross_key_problems",
    "is_strict_integer",
    "load_config",
    "main",
    "merge",
    "nonfinite_values",
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


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """The mapping in one YAML config file; a ConfigError names the file (and line) when the
    file is missing, too large, empty, not valid YAML, not a mapping of sections, writes one
    key twice in a mapping, or stands for too many nodes once its aliases are expanded
    (:func:`reliquant.core.configyaml.load_config_yaml`)."""
    file = Path(path)
    data = load_config_yaml(file)
    if data is None:
        raise ConfigError(f"config file {file} is empty: it must map section names to settings")
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"config file {file}: the top level must be a mapping of sections, "
            f"got {type(data).__name__}"
        )
    return dict(data)


def is_strict_integer(_checker: Any, instance: Any) -> bool:
    """The schema type ``integer`` of the workflow: a Python ``int``, not a ``bool`` and not
    a float with no fractional part (which JSON schema would accept: ``1000.0``).

    A YAML ``1000.0`` is a float; a seed or a count that stayed a float reaches code that
    refuses it (``reliquant.core.seeding``: "seed key parts must be int or str") or silently
    builds a different key, so the configuration refuses it before any job.
    """
    return isinstance(instance, int) and not isinstance(instance, bool)


def _validator(root: str | os.PathLike | None) -> type:
    """Draft 2020-12 with :func:`is_strict_integer` as its ``integer`` type and the keyword
    ``x-path`` (:func:`reliquant.core.configpaths.path_keyword`; ``data`` files looked up in
    ``root``, when given)."""
    return validators.extend(
        Draft202012Validator,
        validators={"x-path": path_keyword(root)},
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", is_strict_integer),
    )


_DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: The loader of the workflow's own schema files: libyaml's safe loader where PyYAML has it
#: (20 times faster than the pure-Python one).
SCHEMA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _schema_resource(path: Path) -> Resource:
    """One schema file as a draft 2020-12 resource without its ``$schema`` key: jsonschema
    picks the validator of a ``$ref``'d file by that key, which would check its integers
    with the stock type (``1000.0`` an integer) instead of :func:`is_strict_integer`."""
    contents = yaml.load(path.read_text(encoding="utf-8"), Loader=SCHEMA_LOADER)  # noqa: S506
    if isinstance(contents, Mapping):
        contents = dict(contents)
        declared = contents.pop("$schema", _DRAFT)
        if declared != _DRAFT:
            raise ConfigError(f"schema file {path}: $schema must be {_DRAFT}; got {declared!r}")
    return DRAFT202012.create_resource(contents)


def _schema_registry(schema_dir: Path) -> Registry:
    """Every ``*.schema.yaml`` of ``schema_dir`` by file name, for ``$ref: <name>``."""
    files = sorted(schema_dir.glob("*.schema.yaml"))
    return _registry_of(tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


@functools.lru_cache(maxsize=8)
def _registry_of(files: tuple[tuple[str, int, int], ...]) -> Registry:
    """The registry of schema files, kept while no file changes (its path, time and size):
    reading the schemas takes most of a check's time."""
    return Registry().with_resources(
        [(Path(p).name, _schema_resource(Path(p))) for p, _, _ in files]
    )


def _dotted(keys: Sequence[Any], config: Any) -> str:
    """The dotted path of ``keys`` in ``config``; a list entry with a ``name`` (a custom
    case) is written ``custom['name']`` instead of ``custom.0``."""
    parts: list[str] = []
    node = config
    for key in keys:
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


def _key_path(error, config: Any) -> str:
    """The dotted key path of a schema violation (see :func:`_dotted`)."""
    return _dotted(list(error.absolute_path), config)


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
    if error.validator == "not" and set(error.validator_value) == {"required"}:
        # keys a `not: {required: [...]}` forbids here (with the schema's `x-why`, if any)
        keys = ", ".join(map(repr, error.validator_value["required"]))
        why = error.schema.get("x-why") if isinstance(error.schema, Mapping) else None
        return f"{key}: {keys} must not be set here" + (f" ({why})" if why else "")
    if (
        error.validator == "type"
        and isinstance(error.instance, float)
        and error.instance.is_integer()
        and "integer" in _as_list(error.validator_value)
    ):
        return (
            f"{key} = {error.instance!r}: not an integer (write {int(error.instance)}, "
            "without a decimal point)"
        )
    return f"{key} = {error.instance!r}: {error.message}"


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


#: Dotted keys allowed to hold NaN or an infinity (each with its reason). None is: every
#: number of the configuration is a seed, a count, a size, a probability, a tolerance, a
#: threshold or a number a paper reports, and a missing value is written ``null`` where a
#: key allows it. A key added here is skipped by :func:`nonfinite_values`.
NONFINITE_ALLOWED: frozenset[str] = frozenset()


def _walk(node: Any, keys: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every leaf of a nest of mappings and lists with its key path."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _walk(value, (*keys, key))
    elif isinstance(node, list | tuple):
        for i, value in enumerate(node):
            yield from _walk(value, (*keys, i))
    else:
        yield keys, node


def nonfinite_values(config: Mapping[str, Any]) -> list[tuple[str, float]]:
    """``(dotted key, value)`` of every NaN or infinite number of ``config`` (at any depth,
    list entries included), except the keys of :data:`NONFINITE_ALLOWED`.

    YAML reads ``.nan`` and ``.inf`` as floats, which pass a schema's bounds (a NaN compares
    false with every ``minimum``) and then run to the end with a meaningless answer.
    """
    found = []
    for keys, value in _walk(config):
        if isinstance(value, float) and not math.isfinite(value):
            key = _dotted(keys, config)
            if key not in NONFINITE_ALLOWED:
                found.append((key, value))
    return found


_MISSING = object()


def _lookup(config: Any, dotted: str) -> Any:
    """The value at a dotted key of ``config`` (``_MISSING`` when a part is absent)."""
    node = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _names(value: Any) -> list[Any]:
    """The names a key holds: a mapping's keys, a list's items, or the one value."""
    if isinstance(value, Mapping):
        return list(value)
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def _listing(names: Sequence[Any]) -> str:
    return ", ".join(str(n) for n in names) if names else "none"


def _check_in(check: Mapping[str, Any], config: Any, member: bool) -> list[str]:
    """``in`` (``member``) / ``not_in`` checks: the value of ``key`` (each item of a list)
    must (not) be one of the names of the key ``of`` (keys of a mapping, items of a list) or
    of the literal list ``values``."""
    key = check["key"]
    value = _lookup(config, key)
    if value is _MISSING or value is None:
        return []
    if "of" in check:
        source = _lookup(config, check["of"])
        if source is _MISSING or source is None:
            return []
        allowed, where = _names(source), check["of"]
    else:
        allowed, where = list(check["values"]), None
    items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
    problems = []
    for i, item in items:
        name = key if i is None else f"{key}.{i}"
        if (item in allowed) == member:
            continue
        why = f" ({check['why']})" if "why" in check else ""
        if member:
            among = f"the names of {where}: " if where else ""
            problems.append(f"{name} = {item!r} is not one of {among}{_listing(allowed)}{why}")
        else:
            among = f"a name of {where}" if where else f"one of {_listing(allowed)}"
            problems.append(f"{name} = {item!r} must not be {among}{why}")
    return problems


def _check_unique_by(check: Mapping[str, Any], config: Any) -> list[str]:
    """``unique_by``: no two entries of the list at ``key`` have equal ``field``."""
    entries = _lookup(config, check["key"])
    if not isinstance(entries, list):
        return []
    field, first, problems = check["field"], {}, []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or field not in entry:
            continue
        j = first.setdefault(entry[field], i)
        if j != i:
            why = f" ({check['why']})" if "why" in check else ""
            problems.append(
                f"{check['key']}.{j} and {check['key']}.{i} both have {field} = "
                f"{entry[field]!r}: entries must differ in {field}{why}"
            )
    return problems


def _check_ordered(check: Mapping[str, Any], config: Any) -> list[str]:
    """``ordered``: the value of ``low`` is at most (``strict``: below) that of ``high``;
    skipped when either is absent or null."""
    low, high = _lookup(config, check["low"]), _lookup(config, check["high"])
    if any(v is _MISSING or v is None for v in (low, high)):
        return []
    strict = bool(check.get("strict", False))
    if low < high or (low == high and not strict):
        return []
    relation = "below" if strict else "at most"
    why = f" ({check['why']})" if "why" in check else ""
    return [f"{check['low']} = {low!r} must be {relation} {check['high']} = {high!r}{why}"]


_CHECKS = {
    "in": lambda c, cfg: _check_in(c, cfg, member=True),
    "not_in": lambda c, cfg: _check_in(c, cfg, member=False),
    "unique_by": _check_unique_by,
    "ordered": _check_ordered,
}


def cross_key_problems(config: Mapping[str, Any], checks: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per violated constraint between keys of ``config``.

    Each check is a mapping with one kind (``in``, ``not_in``, ``unique_by``, ``ordered``)
    holding its arguments, dotted keys from the configuration's top level; an optional
    ``why`` is appended to its message:

    * ``in: {key, of | values}``: the value of ``key`` (each item of a list) is one of the
      names of the key ``of`` (a mapping's keys or a list's items) or of ``values``;
    * ``not_in: {key, of | values}``: it is none of them;
    * ``unique_by: {key, field}``: no two entries of the list at ``key`` share ``field``;
    * ``ordered: {low, high, strict}``: ``low <= high`` (``strict``: ``low < high``).

    A check whose keys are absent or null is skipped (the schema says which keys must be set).
    """
    problems: list[str] = []
    for check in checks:
        kinds = [k for k in check if k in _CHECKS]
        if len(kinds) != 1:
            raise ConfigError(f"x-checks entry {dict(check)!r}: needs one of {sorted(_CHECKS)}")
        args = dict(check[kinds[0]])
        if "why" in check:
            args["why"] = check["why"]
        problems.extend(_CHECKS[kinds[0]](args, config))
    return problems


def validate_config(
    config: Mapping[str, Any],
    schema: str | os.PathLike,
    root: str | os.PathLike | None = None,
) -> None:
    """Check ``config`` before any job: finite numbers (:func:`nonfinite_values`), the JSON
    schema file ``schema`` (``$ref`` to sibling schema files resolved; every value of a key
    marked ``x-path`` confined to where its role allows, :mod:`reliquant.core.configpaths`,
    ``data`` files looked up in the working directory ``root`` when given), then the
    constraints between keys every schema file of that folder declares under ``x-checks``
    (:func:`cross_key_problems`). Raise a :class:`ConfigError` with one line per problem (at
    most ten), each naming the dotted key and its value, instead of the schema itself."""
    path = Path(schema)
    registry = _schema_registry(path.parent)
    validator = _validator(root)(registry[path.name].contents, registry=registry)
    nonfinite = nonfinite_values(config)
    lines = [
        f"{key} = {value!r}: not a finite number (NaN and infinities are refused)"
        for key, value in nonfinite
    ]
    bad = {key for key, _ in nonfinite}
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
        if (
            e.validator != "additionalProperties"
            or not isinstance(e.instance, Mapping)
            or not all(
                (tuple(e.absolute_path), k) in named
                for k in set(e.instance) - set(e.schema.get("properties", {}))
            )
        )
        and _key_path(e, config) not in bad  # a NaN is reported once, as not finite
    ]
    lines += [_describe(e, config) for e in errors]
    if not lines:  # the relations between keys are compared on a configuration of valid keys
        checks = [
            check
            for uri in sorted(registry)
            if isinstance(registry[uri].contents, Mapping)
            for check in registry[uri].contents.get("x-checks", [])
        ]
        lines = cross_key_problems(config, checks)
    if lines:
        more = f"\n(and {len(lines) - 10} more)" if len(lines) > 10 else ""
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines[:10]) + more)


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
    command finds it. The ``custom:`` cases are checked as the workflow checks them when it
    loads (:func:`reliquant.core.custom.check_cases`: files exist, suffixes, columns, digests;
    paths relative to the working directory, the repository root). Exit status 0 when
    valid, 1 with the problem printed otherwise.
    """
    import argparse

    from reliquant.core.custom import check_cases  # it imports this module

    parser = argparse.ArgumentParser(prog="python -m reliquant.core.config")
    parser.add_argument("overlays", nargs="*", type=Path, help="--configfile overlays, in order")
    parser.add_argument("--base", type=Path, default=Path("config.yaml"))
    parser.add_argument("--schema", type=Path, default=Path("workflow/schemas/config.schema.yaml"))
    args = parser.parse_args(argv)
    try:
        config = load_config(args.base, args.overlays)
        validate_config(config, args.schema, root=Path.cwd())
        check_cases(config.get("custom"), Path.cwd())
    except ConfigError as err:
        print(f"error: {err}")
        return 1
    names = ", ".join(str(p) for p in (args.base, *args.overlays))
    cases = len(config.get("custom") or [])
    checked = f"; {cases} custom case(s) and their files checked" if cases else ""
    print(f"ok: {names} merged and valid against {args.schema}{checked}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
