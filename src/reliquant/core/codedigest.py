"""A digest of the library's code that follows what the code does, not how it is written.

The workflow passes every job a digest of its topic's package and ``core`` as the parameter
``code`` (``workflow/rules/common.smk``, ``code_digest()``), so that Snakemake's ``params``
rerun trigger reruns a topic's jobs when its library code changes. Hashing the file bytes
made every comment, docstring or formatting edit rerun those jobs (an edited comment in
``core`` reran every smoke job); this digest hashes the syntax tree instead:

* Python files are parsed with :mod:`ast`; docstrings (a string constant as the first
  statement of a module, class or function) are dropped, and the tree is dumped without
  line numbers or column offsets (``ast.dump(..., include_attributes=False)``). Comments,
  blank lines, line breaks, quotes and parentheses are not in the tree, so they do not count.
* Any other file is hashed as bytes.
* Each file's path relative to the root is hashed with its content, so renaming or moving a
  module changes the digest.

The dump is that of the interpreter running the workflow: a Python version whose syntax tree
has other fields gives other digests (and reruns once), which is what a new interpreter
deserves anyway.

A workflow computes the digest of ``core`` with every topic's, so each file's normalised code
is kept per process, keyed by its path and the SHA-256 of its bytes (:func:`_file_content`):
a file is parsed once per Snakefile parse, and an edited file is parsed again.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["DIGEST_LENGTH", "library_digest", "normalized_source", "source_digest"]

#: Hex characters kept from the SHA-256 (what the jobs' ``code`` parameter shows).
DIGEST_LENGTH = 16

_DEFINITIONS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def normalized_source(text: str, filename: str = "<source>") -> str:
    """The code of a Python source as text that ignores comments, docstrings and formatting.

    Parameters
    ----------
    text
        The Python source.
    filename
        Named by the ``SyntaxError`` a source that does not parse raises.

    Returns
    -------
    str
        ``ast.dump`` of the module without its docstrings (the first statement of a module,
        class or function when it is a string constant) and without line and column numbers.
        Two sources that differ only in comments, docstrings, blank lines, line breaks,
        quoting or redundant parentheses give equal text; any change to what runs does not.
    """
    tree = ast.parse(text, filename=filename)
    for node in ast.walk(tree):
        if isinstance(node, _DEFINITIONS) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:]
    return ast.dump(tree, annotate_fields=True, include_attributes=False)


#: Normalised code per (SHA-256 of a source's bytes, its file name); see :func:`_file_content`.
_NORMALIZED: dict[tuple[str, str], bytes] = {}


def _file_content(path: Path) -> bytes:
    """What :func:`source_digest` hashes of ``path``: normalised code or the file's bytes."""
    raw = path.read_bytes()
    if path.suffix != ".py":
        return raw
    key = (hashlib.sha256(raw).hexdigest(), str(path))
    if key not in _NORMALIZED:
        _NORMALIZED[key] = normalized_source(raw.decode("utf-8"), str(path)).encode()
    return _NORMALIZED[key]


def source_digest(
    paths: Iterable[str | os.PathLike], root: str | os.PathLike, length: int = DIGEST_LENGTH
) -> str:
    """SHA-256 (first ``length`` hex characters) over the code of ``paths``.

    Parameters
    ----------
    paths
        Files under ``root``; hashed in sorted order of their paths relative to ``root``, so
        the order given does not matter. ``.py`` files count by :func:`normalized_source`,
        other files by their bytes.
    root
        The folder the hashed relative paths start from.
    length
        How many hex characters of the SHA-256 to return.

    Returns
    -------
    str
        The digest; equal for sources that differ only in comments, docstrings or formatting.
    """
    root = Path(root)
    files = sorted((Path(p) for p in paths), key=lambda p: p.relative_to(root).as_posix())
    digest = hashlib.sha256()
    for path in files:
        relative = path.relative_to(root).as_posix()
        content = _file_content(path)
        # length-prefixed, so that no two different file lists hash the same bytes
        for part in (relative.encode(), content):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.hexdigest()[:length]


def library_digest(
    root: str | os.PathLike, packages: Iterable[str], length: int = DIGEST_LENGTH
) -> str:
    """:func:`source_digest` of every ``*.py`` file of the given subpackages of ``root``.

    Parameters
    ----------
    root
        The ``reliquant`` package folder (``src/reliquant`` in a checkout).
    packages
        Subpackage names (``"core"``, ``"trees"``, ...); each is searched recursively.
    length
        How many hex characters of the SHA-256 to return.

    Returns
    -------
    str
        The digest the workflow gives a topic's jobs as their ``code`` parameter.
    """
    root = Path(root)
    files = [path for package in packages for path in (root / package).rglob("*.py")]
    return source_digest(files, root, length)
