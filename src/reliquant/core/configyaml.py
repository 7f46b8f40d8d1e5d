"""One YAML config file read strictly and within bounds (:func:`load_config_yaml`).

A configuration is a few hundred settings (``config.yaml``: 40 kB, about 1,300 YAML nodes),
but every step after the read walks it: the non-finite-number check, the schema, the
constraints between keys, Snakemake's own merges. Two kinds of file would make that walk
unbounded, and are refused before anything is built from them, with a message that says why:

* a file larger than :data:`MAX_CONFIG_BYTES` (refused from its size, before it is read);
* a document whose nodes, counted with every alias expanded (:func:`expanded_nodes`), are
  more than :data:`MAX_CONFIG_NODES`. YAML aliases share nodes, so a 556-byte file of nested
  aliases ("billion laughs") parses at once into a few dozen nodes and then stands for 10^9
  leaves: every walk of it would take hours. The count is computed on the shared node
  graph (each node once, a memo of its expanded size), never by expanding it; an alias that
  refers to a mapping or list containing itself is refused too (a walk would never end).

Deeper nests than :data:`MAX_CONFIG_DEPTH` are refused while the file is scanned.

Strict: a key written twice in one mapping is refused with both lines (YAML would keep the
last silently). Keys a merge key (``<<: *base``) brings in are no duplicates: YAML's merge
lets the mapping's own keys override them (``<<: *base`` then ``seed: 2`` gives ``seed: 2``),
and of several merged mappings (``<<: [*a, *b]``) the first one's keys win.

Public API: :data:`MAX_CONFIG_BYTES`, :data:`MAX_CONFIG_DEPTH`, :data:`MAX_CONFIG_NODES`,
:func:`expanded_nodes`,
:func:`load_config_yaml`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from reliquant.core.errors import ConfigError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "MAX_CONFIG_NODES",
    "expanded_nodes",
    "load_config_yaml",
]

#: Largest config file read (bytes): 25 times ``config.yaml``.
MAX_CONFIG_BYTES = 1 << 20
#: Most YAML nodes one config file may stand for, aliases expanded: 75 times ``config.yaml``.
MAX_CONFIG_NODES = 100_000
#: Deepest nesting of collections (``config.yaml``: 8). PyYAML's scanner slows down with the
#: depth of ``[``/``{`` nests (seconds for 2,000 levels, growing faster than the file).
MAX_CONFIG_DEPTH = 64

_MERGE_TAG = "tag:yaml.org,2002:merge"


def expanded_nodes(root: yaml.Node, limit: int | None = None) -> int:
    """The number of nodes of the document ``root`` with every alias expanded: a scalar
    counts 1, a sequence ``1 + sum(items)``, a mapping ``1 + sum(keys + values)``.

    Computed on the shared graph (each distinct node visited once, its expanded size kept),
    so the cost is linear in the size of the file whatever the expanded size is. Stops as
    soon as the count exceeds ``limit`` (returns that partial count, above ``limit``). A
    ValueError when an alias refers to a node that contains it (an endless document).
    """
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in size:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            if limit is not None and size[key] > limit:
                return size[key]
            continue
        if key in open_nodes:
            raise ValueError(f"an alias at line {node.start_mark.line + 1} refers to itself")
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise ValueError(
                    f"an alias inside the node at line {node.start_mark.line + 1} refers to "
                    "that node itself"
                )
            if id(child) not in size:
                stack.append((child, False))
    return size[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


class _Unbounded(Exception):
    """A document too large once its aliases are expanded (the message says why)."""


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key written twice in one mapping (PyYAML keeps the
    last one silently: two ``brightness:`` sections would lose the first) and a document
    larger than :data:`MAX_CONFIG_NODES` once its aliases are expanded."""

    def _check_depth(self) -> None:
        if self.flow_level + len(self.indents) > MAX_CONFIG_DEPTH:
            raise yaml.scanner.ScannerError(
                None,
                None,
                f"collections nested more than {MAX_CONFIG_DEPTH} deep (config.yaml: 8)",
                self.get_mark(),
            )

    def fetch_flow_collection_start(self, token_class):  # noqa: D102 (PyYAML's hook)
        super().fetch_flow_collection_start(token_class)
        self._check_depth()

    def add_indent(self, column):  # noqa: D102 (PyYAML's hook)
        added = super().add_indent(column)
        self._check_depth()
        return added

    def construct_document(self, node):  # noqa: D102 (PyYAML's hook)
        try:
            count = expanded_nodes(node, limit=MAX_CONFIG_NODES)
        except ValueError as err:
            raise _Unbounded(f"{err}: a walk of it would never end") from err
        if count > MAX_CONFIG_NODES:
            raise _Unbounded(
                f"it stands for more than {MAX_CONFIG_NODES:,} YAML nodes once its aliases "
                "are expanded (config.yaml: about 1,300); nested aliases would make every "
                "check of it take hours, so it is not read"
            )
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):  # noqa: D102 (PyYAML's hook)
        if isinstance(node, yaml.MappingNode):
            # the keys written in this mapping; those a merge key (<<) brings in may be
            # overridden here, as YAML's merge defines (PyYAML keeps the written one)
            first: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    seen = first.setdefault(key, key_node)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                if seen is not key_node:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"key {key!r} written twice (first at line {seen.start_mark.line + 1}); "
                        "YAML would keep only the last",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


def load_config_yaml(path: str | os.PathLike) -> Any:
    """The YAML document of the config file ``path`` (None when it is empty), read with
    :class:`_StrictLoader`; a ConfigError names the file (and line) when it cannot be read,
    is larger than :data:`MAX_CONFIG_BYTES`, is not valid YAML, writes one key twice in a
    mapping, or stands for more than :data:`MAX_CONFIG_NODES` nodes."""
    file = Path(path)
    try:
        size = file.stat().st_size
    except OSError as err:
        raise ConfigError(f"config file {file}: cannot be read ({err})") from err
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"config file {file}: {size:,} bytes, more than the {MAX_CONFIG_BYTES:,} a config "
            "file may have (config.yaml has about 40,000); a configuration holds settings, "
            "not data: put tables in files and name them"
        )
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"config file {file}: cannot be read ({err})") from err
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a safe loader)
    except _Unbounded as err:
        raise ConfigError(f"config file {file}: {err}") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise ConfigError(f"config file {file}: YAML error at {where}: {err.problem}") from err
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {file}: not valid YAML ({err})") from err
    except RecursionError as err:
        raise ConfigError(f"config file {file}: nested too deeply to be a configuration") from err
