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

A job that runs for hours (the benchmark protocols of the compare topic) takes a narrower
digest, :func:`script_digest`: the code its script imports from the library, followed through
every import (:func:`import_closure`), so that an edit to a module it never imports does not
rerun it.

A workflow computes the digest of ``core`` with every topic's, so each file's normalised code
is kept per process, keyed by its path and the SHA-256 of its bytes (:func:`_file_content`):
a file is parsed once per Snakefile parse, and an edited file is parsed again.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = [
    "DIGEST_LENGTH",
    "import_closure",
    "library_digest",
    "normalized_source",
    "script_digest",
    "source_digest",
]

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


def _module_file(root: Path, parts: Sequence[str]) -> Path | None:
    """The file of module ``reliquant.<parts>`` under ``root``: a ``.py`` or a package's
    ``__init__.py``; ``None`` when there is none."""
    base = root.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _imported_modules(path: Path, root: Path, package: str) -> set[tuple[str, ...]]:
    """Every ``package`` module that ``path`` imports (anywhere in it, functions included), as
    name parts below ``package``; ``from a import b`` counts ``a.b`` where that is a module,
    else ``a``.
    Relative imports are resolved against the file's place under ``root``."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    try:
        here = path.relative_to(root).with_suffix("").parts
    except ValueError:  # a file outside the library (a workflow script): absolute imports only
        here = None
    if here is not None and here[-1] == "__init__":
        here = here[:-1] + ("",)  # the package itself: level 1 means its own folder
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(tree):
        names: list[tuple[str, ...]] = []
        if isinstance(node, ast.Import):
            names = [tuple(alias.name.split(".")) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if here is None or node.level > len(here):
                    continue
                base = (package, *here[: len(here) - node.level])
            else:
                base = ()
            module = (*base, *(node.module.split(".") if node.module else ()))
            # `from a import b`: the module a.b where b is one, else a (b is a name in it)
            for alias in node.names:
                inner = (*module, alias.name)
                is_module = len(inner) > 1 and _module_file(root, inner[1:]) is not None
                names.append(inner if is_module else module)
        for name in names:
            if len(name) >= 1 and name[0] == package:
                found.add(tuple(part for part in name[1:] if part))
    return found


def import_closure(
    entries: Iterable[str | os.PathLike], root: str | os.PathLike, package: str = "reliquant"
) -> list[Path]:
    """The library files that ``entries`` (Python files) run, following imports transitively.

    A module imported by name (``import reliquant.a.b``, ``from reliquant.a.b import f``,
    relative imports too, at any depth of the file, functions included) adds its file and
    everything it imports in turn. A package imported as such (``from reliquant.a import f``)
    counts whole, every file below it, since its ``__init__`` may load any of its modules on
    first use (:mod:`reliquant.core.lazy`). The ``__init__.py`` of the packages that enclose an
    imported module runs on import too, but it only gathers names (their imports and
    ``__all__``): it is not counted, so that exporting a new name from ``reliquant.compare``
    does not rerun a job that imports ``reliquant.compare.rejection``.
    Modules loaded by a name computed at run time (``importlib.import_module(name)``) are not
    seen: the entries of a narrow digest must not rely on them.

    Parameters
    ----------
    entries
        Python files to start from (a workflow script, or library modules).
    root
        The ``package`` folder (``src/reliquant`` in a checkout).
    package
        The top-level package name whose imports are followed.

    Returns
    -------
    list of Path
        The library files reached, sorted, without the entries outside ``root``.
    """
    root = Path(root)
    seen: set[Path] = set()
    todo = [Path(entry) for entry in entries]
    reached: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.is_relative_to(root):
            reached.add(path)
        for parts in _imported_modules(path, root, package):
            target = _module_file(root, parts)
            if target is None:
                continue  # a name imported from a module, not a module
            if target.name == "__init__.py":
                todo.extend(target.parent.rglob("*.py"))
            else:
                todo.append(target)
    return sorted(reached)


def script_digest(
    script: str | os.PathLike, root: str | os.PathLike, length: int = DIGEST_LENGTH
) -> str:
    """:func:`source_digest` of the library code a script runs (:func:`import_closure`).

    The workflow gives long jobs this digest as their ``code`` parameter (``common.smk``,
    ``script_code_digest()``): an edit to a library module the script does not reach does not
    rerun them. The script's own text is not in it (Snakemake's ``code`` trigger covers that).

    Parameters
    ----------
    script
        The Python file a rule runs.
    root
        The ``reliquant`` package folder.
    length
        How many hex characters of the SHA-256 to return.

    Returns
    -------
    str
        The digest.
    """
    return source_digest(import_closure([script], root), root, length)
