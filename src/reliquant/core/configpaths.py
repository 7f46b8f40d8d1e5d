"""Config values that become paths: confined to where they belong, checked when the config is
read.

A schema marks every such key with ``x-path: <role>`` (``workflow/schemas/*.schema.yaml``);
:func:`reliquant.core.config.validate_config` checks each value against its role (through
:func:`path_keyword`, a JSON-schema keyword, so a ``$ref``'d definition carries its role to
every key that uses it) and :func:`path_keys` lists the marked keys for the tests and the
docs. The roles (:data:`PATH_ROLES`):

* ``output``: a file this workflow writes, a relative path under ``results/``. A value
  outside it would make a rule write (and first delete) any file: ``config.yaml``,
  ``Snakefile``, a file outside the repository.
* ``result``: a file another rule writes, read here: under ``results/`` for the same reason.
* ``data``: a vendored input of the repository, under ``data/`` and present before any job
  (no rule writes it; a missing file would stop the first job that reads it); missing raw
  files are downloaded into its folder, so that folder must be the repository's.
* ``input``: a file of the user, read only: anywhere (relative to the working directory, or
  absolute; the custom cases' files outside the repository are logged with their SHA-256).
* ``name``: a name that becomes one component of output paths and a Snakemake wildcard
  value (``results/custom/<name>.parquet``): at most :data:`MAX_NAME_LENGTH` characters (a
  file name has at most 255 bytes) and no substring repeated 20 times at its end
  (:func:`periodic_substring`: Snakemake takes such a wildcard value for an endless
  recursion and stops with a PeriodicWildcardError that names no key).

Every path role refuses ``{`` and ``}`` (Snakemake reads them as wildcards) and control
characters. The characters of a ``name`` are its schema ``pattern``'s business.

Public API: :data:`MAX_NAME_LENGTH`, :data:`PATH_ROLES`, :func:`path_keys`,
:func:`path_keyword`, :func:`path_problem`, :func:`periodic_substring`, :func:`schema_keys`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from jsonschema.exceptions import ValidationError

__all__ = [
    "MAX_NAME_LENGTH",
    "PATH_ROLES",
    "path_keys",
    "path_keyword",
    "path_problem",
    "periodic_substring",
    "schema_keys",
]

#: Longest ``name``: it becomes a file name beside a suffix (255 bytes at most on Linux).
MAX_NAME_LENGTH = 64
#: The roles of ``x-path`` and what each means (module docstring).
PATH_ROLES: dict[str, str] = {
    "output": "a file this workflow writes: a relative path under results/",
    "result": "a file another rule writes: a relative path under results/",
    "data": "a vendored input: a relative path under data/, present before any job",
    "input": "a file of yours, read only: relative to the working directory or absolute",
    "name": f"a name of output files: at most {MAX_NAME_LENGTH} characters, no periodic ending",
}
#: Folder each confined role lies under.
_UNDER = {"output": "results", "result": "results", "data": "data"}
#: Snakemake's PeriodicityDetector defaults (snakemake.io): a substring repeated 20 to 100
#: times at the end of a wildcard value.
_MIN_REPEAT, _MAX_REPEAT = 20, 100
_PERIODIC = re.compile(
    rf"((?P<value>.+)(?P=value){{{_MIN_REPEAT - 1},{_MAX_REPEAT - 1}}})$", re.DOTALL
)
#: libyaml's safe loader where PyYAML has it (the schema files are the workflow's own).
_SCHEMA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: Why a confined path must stay in its folder.
_WHY_UNDER = {
    "results": "the workflow writes only under results/ (a value elsewhere would replace "
    "the file it names: config.yaml, Snakefile, a file outside the repository)",
    "data": "vendored inputs lie under data/ (missing raw files are downloaded into the "
    "manifest's folder)",
}


def periodic_substring(value: str) -> str | None:
    """The substring that ends ``value`` repeated at least 20 (and at most 100) times, or
    None: the rule of Snakemake's ``PeriodicityDetector.is_periodic`` (snakemake.io, its
    defaults), which stops a run with a PeriodicWildcardError when a job's wildcard value has
    one (``"a" * 20``, ``"ab" * 20``, ``"x" + "ab" * 20``)."""
    if len(value) < _MIN_REPEAT:
        return None
    match = _PERIODIC.search(value)
    return match.group("value") if match else None


def _confined_problem(value: str, under: str) -> str | None:
    """What keeps ``value`` from being a plain relative path below ``under/``."""
    if os.path.isabs(value) or value.startswith("~"):
        return f"an absolute path; {_WHY_UNDER[under]}"
    parts = value.split("/")
    if ".." in parts:
        return f"'..' leaves the folder it names; {_WHY_UNDER[under]}"
    normal = posixpath.normpath(value)
    if normal != value:
        return f"not a plain relative path (write {normal!r}); {_WHY_UNDER[under]}"
    if parts[0] != under or len(parts) < 2:
        return f"outside {under}/; {_WHY_UNDER[under]}"
    return None


def path_problem(value: str, role: str, root: str | os.PathLike | None = None) -> str | None:
    """What is wrong with the config value ``value`` of ``x-path`` role ``role``
    (:data:`PATH_ROLES`), or None. ``root``: the working directory a ``data`` file must exist
    in (None: not looked up)."""
    if role not in PATH_ROLES:
        raise ValueError(f"x-path role {role!r}: expected one of {', '.join(PATH_ROLES)}")
    if role == "name":
        if len(value) > MAX_NAME_LENGTH:
            return (
                f"{len(value)} characters; a name has at most {MAX_NAME_LENGTH} (it names "
                "output files, and a file name has at most 255 bytes)"
            )
        repeated = periodic_substring(value)
        if repeated is not None:
            return (
                f"ends in {repeated!r} repeated {_MIN_REPEAT} or more times, which Snakemake "
                "refuses in a wildcard value (PeriodicWildcardError); choose another name"
            )
        return None
    if not value:
        return "an empty path"
    if _CONTROL.search(value):
        return "a path with a control character"
    if "{" in value or "}" in value:
        return "a path with '{' or '}', which Snakemake reads as a wildcard"
    if value.endswith("/"):
        return "a folder; a file path is expected"
    if role in _UNDER:
        problem = _confined_problem(value, _UNDER[role])
        if problem is not None:
            return problem
    if role == "data" and root is not None and not (Path(root) / value).is_file():
        return f"no such file ({Path(root) / value})"
    return None


def path_keyword(
    root: str | os.PathLike | None = None,
) -> Callable[[Any, str, Any, Mapping[str, Any]], Iterator[ValidationError]]:
    """The JSON-schema keyword ``x-path`` (for ``jsonschema.validators.extend``): a string
    value that :func:`path_problem` refuses is a validation error at its key."""

    def x_path(
        _validator: Any, role: str, instance: Any, _schema: Any
    ) -> Iterator[ValidationError]:
        if isinstance(instance, str):
            problem = path_problem(instance, role, root)
            if problem is not None:
                yield ValidationError(problem)

    return x_path


def schema_keys(schema: str | os.PathLike) -> list[tuple[str, dict[str, Any]]]:
    """Every key the schema file ``schema`` describes (the schema files it ``$ref``s
    followed), as ``(dotted key, its schema node with its $ref resolved)``; list items and
    mapping values are written ``*`` (``custom.*.train``), and a key the schema describes in
    several places (``allOf``, ``then``) comes once per place. In schema order."""
    folder = Path(schema).parent
    files: dict[str, Any] = {}

    def document(name: str) -> Any:
        if name not in files:
            text = (folder / name).read_text(encoding="utf-8")
            files[name] = yaml.load(text, Loader=_SCHEMA_LOADER)  # noqa: S506 (a safe loader)
        return files[name]

    def resolved(node: Mapping[str, Any], name: str, chain: frozenset[str]):
        """``node`` with its ``$ref`` (and theirs) merged in, the file of the last one."""
        merged = dict(node)
        while "$ref" in merged:
            ref_file, _, pointer = str(merged.pop("$ref")).partition("#")
            name = ref_file or name
            if f"{name}#{pointer}" in chain:
                break
            chain = chain | {f"{name}#{pointer}"}
            target: Any = document(name)
            for part in filter(None, pointer.split("/")):
                target = target[part]
            merged = {**target, **merged}
        return merged, name, chain

    found: list[tuple[str, dict[str, Any]]] = []

    def walk(node: Any, name: str, keys: tuple[str, ...], chain: frozenset[str]) -> None:
        if not isinstance(node, Mapping):
            return
        node, name, chain = resolved(node, name, chain)
        if keys:
            found.append((".".join(keys), node))
        for key, sub in (node.get("properties") or {}).items():
            walk(sub, name, (*keys, str(key)), chain)
        for key in ("items", "additionalProperties"):
            walk(node.get(key), name, (*keys, "*"), chain)
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(key) or []:
                walk(sub, name, keys, chain)
        for key in ("then", "else"):
            walk(node.get(key), name, keys, chain)

    walk(document(Path(schema).name), Path(schema).name, (), frozenset())
    return found


def path_keys(schema: str | os.PathLike) -> list[tuple[str, str]]:
    """Every ``(dotted key, role)`` that the schema file ``schema`` and the schema files it
    ``$ref``s mark with ``x-path`` (:func:`schema_keys`), sorted."""
    return sorted(
        {(key, str(node["x-path"])) for key, node in schema_keys(schema) if "x-path" in node}
    )
