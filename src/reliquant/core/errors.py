"""The error a configuration the workflow cannot run with raises (shared by
:mod:`reliquant.core.config` and :mod:`reliquant.core.custom`, so that neither imports the
other for it).

Public API: :class:`ConfigError`.
"""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A configuration file or value the workflow cannot run with; the message names it."""
