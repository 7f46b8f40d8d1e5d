"""A package's public names imported on first use (PEP 562).

A package whose ``__init__`` imports every module of its ``__all__`` makes each job that
imports one of its submodules pay for all of them: ``reliquant.trees`` loaded numba and
scipy (and compiled or loaded its sampling kernels) for jobs that only read tables
(1.4-1.8 s each). :func:`lazy_attributes` gives such a package a module ``__getattr__`` and
``__dir__`` that import a name from the module that defines it when it is first used, and
keep it in the package's namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public names live in submodules.

    Parameters
    ----------
    package
        The package's dotted name (``__name__`` in its ``__init__``).
    homes
        Each public name and the submodule (relative to ``package``) that defines it.
    namespace
        The package's ``globals()``: a name, once imported, is stored there, so the next use
        does not call ``__getattr__`` again.

    Returns
    -------
    tuple
        ``__getattr__(name)``, which imports ``package.<homes[name]>`` and returns its
        ``name`` (an ``AttributeError`` naming ``name`` for a name not in ``homes``), and
        ``__dir__()``, the package's names and every name of ``homes``.
    """

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{homes[name]}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__
