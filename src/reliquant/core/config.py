"""Reading the workflow's configuration outside Snakemake (benchmarks, notebooks).

Snakemake merges ``config.yaml`` with every ``--configfile`` given after it; :func:`load_config`
does the same (a recursive merge of mappings, later files win), so a benchmark run standalone
sees the same numbers as one run by its rule.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml


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
        text = Path(file).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ValueError(f"{file}: the top level must be a mapping of sections, got {data!r}")
        config = merge(config, data)
    return config


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
