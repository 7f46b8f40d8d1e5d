"""The shape of the library, read from its source with ``ast`` (nothing is imported):

* no import cycle among the modules of ``src/reliquant`` (imports inside functions count);
* the paper packages (nbc, trees, pmnist, mlm) import ``core`` and never each other; ``core``
  imports none of them; the cross-paper package ``compare`` may import the paper packages,
  which never import it;
* no module uses another module's private name (``from x import _y``, ``import x._y``, or
  ``x._y`` on an imported module); nor do the workflow's scripts and the benchmarks;
* every module defines ``__all__``, a static list of public names it defines;
* every module has at most :data:`MAX_LINES` lines (issue 42), but the few named in
  :data:`LONG_MODULES` with their reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
ROOT = "reliquant"
#: One package per paper; each imports only itself and ``core``.
PAPERS = frozenset({"nbc", "trees", "pmnist", "mlm"})
#: Top-level package -> the top-level packages it may import (``None``: reliquant/__init__.py).
ALLOWED = {
    None: frozenset({"core"}),
    "core": frozenset({"core"}),
    **{paper: frozenset({paper, "core"}) for paper in PAPERS},
    "compare": PAPERS | {"core", "compare"},
}
#: Code outside the library that must use only its public names.
CLIENTS = ("scripts", "bench")
#: The most lines a library module may have (issue 42): one concept, readable in one sitting.
MAX_LINES = 500
#: Modules allowed over MAX_LINES, each with its reason. An exception that falls under the
#: limit (or no longer exists) fails test_long_module_exceptions_are_current: remove it then.
LONG_MODULES = {
    # Every @njit function and every constant they read stays in one file: numba's disk
    # cache (cache=True) keys a compiled function by its own file's bytes and follows no call
    # into another file, so a kernel calling a helper of another file would, once that helper
    # was edited, load machine code compiled from the old helper (numba 0.68: a silent wrong
    # answer). Their Python callers live in the sibling modules.
    "reliquant.trees.kernel.compiled": "numba: compiled code in one file",
    "reliquant.pmnist.fused.compiled": "numba: compiled code in one file",
}


@dataclass(frozen=True)
class Use:
    """One import (or attribute access) of a library module, where it is written."""

    source: str  # the module (or client file) that imports
    target: str  # the library module it reaches
    name: str | None  # the name taken from it (None: the module itself)
    where: str  # file:line

    def __str__(self) -> str:
        taken = f" {self.name}" if self.name else ""
        return f"{self.where}: {self.source} -> {self.target}{taken}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of src/reliquant: dotted name -> file."""
    return {_module_name(p): p for p in sorted((SRC / ROOT).rglob("*.py"))}


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _top(module: str) -> str | None:
    """The top-level package of a library module (None for reliquant/__init__.py)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _package_of(module: str, path: Path) -> str:
    """The package a relative import in ``module`` starts from."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve_relative(node: ast.ImportFrom, module: str, path: Path) -> str:
    base = _package_of(module, path).split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _nearest_module(dotted: str) -> str | None:
    """The longest prefix of ``dotted`` that is a library module."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in modules():
            return candidate
    return None


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None when the base is not a plain name."""
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(chain)]


def uses(path: Path, source: str, module: str | None = None) -> Iterator[Use]:
    """Every library module (and name) ``path`` imports, and every attribute it reads from
    an imported library module. ``module``: the file's own dotted name (library files)."""
    tree = parsed(path)
    rel = path.relative_to(REPO)
    bound: dict[str, str] = {}  # a local name bound to a library module (or a package prefix)
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != ROOT:
                    continue
                target = _nearest_module(alias.name)
                if target is None:
                    continue
                missing = alias.name[len(target) + 1 :]
                yield Use(source, target, missing or None, where)
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[ROOT] = ROOT
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if module is None:
                    continue
                base = _resolve_relative(node, module, path)
            else:
                base = node.module or ""
            if base.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules():
                    yield Use(source, submodule, None, where)
                    bound[alias.asname or alias.name] = submodule
                else:
                    target = _nearest_module(base)
                    if target is not None:
                        yield Use(source, target, alias.name, where)
    # attribute reads on an imported library module: module._private
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = _attribute_chain(node)
        if chain is None or chain[0] not in bound:
            continue
        dotted = bound[chain[0]]
        for part in chain[1:]:
            if dotted in modules() and f"{dotted}.{part}" not in modules():
                if _is_private(part):
                    yield Use(source, dotted, part, f"{rel}:{node.lineno}")
                break
            dotted = f"{dotted}.{part}"


@cache
def library_uses() -> tuple[Use, ...]:
    return tuple(
        use for module, path in modules().items() for use in uses(path, module, module=module)
    )


@cache
def client_uses() -> tuple[Use, ...]:
    files = [p for folder in CLIENTS for p in sorted((REPO / folder).rglob("*.py"))]
    return tuple(use for p in files for use in uses(p, str(p.relative_to(REPO))))


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {module: set() for module in modules()}
    for use in library_uses():
        if use.target != use.source:
            edges[use.source].add(use.target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


# ----------------------------------------------------------------- the checker itself
def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_sees_every_import_form(tmp_path, monkeypatch):
    """A made-up library: each import form resolves to the module it reaches."""
    monkeypatch.setattr(f"{__name__}.SRC", tmp_path)
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    modules.cache_clear()
    library_uses.cache_clear()
    try:
        _write(
            tmp_path / ROOT,
            {
                "__init__.py": "",
                "core/__init__.py": "from .io import write\n",
                "core/io.py": "def write(): ...\ndef _log(): ...\n",
                "trees/__init__.py": "from . import engine\n",
                "trees/engine.py": (
                    "import reliquant.core.io\n"
                    "from ..core import io as cio\n"
                    "from reliquant.core.io import _log\n"
                    "def f():\n"
                    "    from reliquant.trees import kernel\n"
                    "    return reliquant.core.io._log, cio._log, kernel.public\n"
                ),
                "trees/kernel.py": "from .engine import f\npublic = 1\n",
                "nbc/__init__.py": "import reliquant.trees.engine as E\nx = E._root\n",
            },
        )
        found = {
            (u.source, u.target, u.name) for m, p in modules().items() for u in uses(p, m, module=m)
        }
        assert found == {
            ("reliquant.core", "reliquant.core.io", "write"),
            ("reliquant.trees", "reliquant.trees.engine", None),
            ("reliquant.trees.engine", "reliquant.core.io", None),
            ("reliquant.trees.engine", "reliquant.core.io", "_log"),
            ("reliquant.trees.engine", "reliquant.trees.kernel", None),
            ("reliquant.trees.kernel", "reliquant.trees.engine", "f"),
            ("reliquant.nbc", "reliquant.trees.engine", None),
            ("reliquant.nbc", "reliquant.trees.engine", "_root"),
        }
        assert cycles(graph()) == [["reliquant.trees.engine", "reliquant.trees.kernel"]]
    finally:
        modules.cache_clear()
        library_uses.cache_clear()


# ------------------------------------------------------------------- the real library
def test_no_import_cycle():
    found = cycles(graph())
    details = []
    for component in found:
        members = set(component)
        details += [str(u) for u in library_uses() if u.source in members and u.target in members]
    assert found == [], "import cycles:\n" + "\n".join(map(str, found)) + "\n" + "\n".join(details)


def test_paper_packages_never_import_each_other():
    bad = []
    for use in library_uses():
        source, target = _top(use.source), _top(use.target)
        if source not in ALLOWED:
            bad.append(f"{use}  (new top-level package {source!r}: add it to ALLOWED here)")
        elif target not in ALLOWED[source]:
            bad.append(str(use))
    assert bad == [], "imports across packages:\n" + "\n".join(sorted(bad))


def test_no_module_uses_another_modules_private_name():
    bad = [
        str(use)
        for use in library_uses()
        if use.source != use.target and use.name and _is_private(use.name.split(".")[0])
    ]
    assert bad == [], "private names used across modules:\n" + "\n".join(sorted(bad))


def test_no_private_library_module():
    """Public and private are marked one way: ``__all__``, not ``_module.py`` files."""
    private = [m for m in modules() if any(_is_private(part) for part in m.split("."))]
    assert private == []


@pytest.mark.parametrize("folder", CLIENTS)
def test_scripts_and_benchmarks_use_only_public_names(folder):
    bad = [
        str(use)
        for use in client_uses()
        if use.source.startswith(f"{folder}/") and use.name and _is_private(use.name)
    ]
    assert bad == [], f"private library names used in {folder}/:\n" + "\n".join(sorted(bad))


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds at top level (also inside top-level if/try blocks)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.If | ast.Try | ast.With):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                visit(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    if "__getattr__" in names:  # PEP 562 lazy names: the string keys of a top-level dict
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                names.update(
                    k.value
                    for k in node.value.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                )
    return names


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list | tuple), "__all__ is a static list of names"
            return list(value)
    return None


def test_every_module_declares_its_public_names():
    missing, wrong = [], []
    for module, path in modules().items():
        rel = path.relative_to(REPO)
        tree = parsed(path)
        declared = _declared_all(tree)
        if declared is None:
            missing.append(str(rel))
            continue
        bound = _top_level_names(tree)
        submodules = {m.rpartition(".")[2] for m in modules() if m.rpartition(".")[0] == module}
        for name in declared:
            if _is_private(name):
                wrong.append(f"{rel}: __all__ lists the private name {name}")
            elif name not in bound | submodules:
                wrong.append(f"{rel}: __all__ lists {name}, which it does not define")
        if len(set(declared)) != len(declared):
            wrong.append(f"{rel}: __all__ lists a name twice")
    assert missing == [], "modules without __all__:\n" + "\n".join(missing)
    assert wrong == [], "\n".join(wrong)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_every_module_fits_the_line_limit():
    """Issue 42: no library module over MAX_LINES lines, but the named exceptions."""
    long = {m: _lines(p) for m, p in modules().items() if _lines(p) > MAX_LINES}
    unexcused = {m: n for m, n in long.items() if m not in LONG_MODULES}
    assert unexcused == {}, (
        f"modules over {MAX_LINES} lines (split them by concept, issue 42): {unexcused}"
    )


def test_long_module_exceptions_are_current():
    """Every exception names an existing module that is still over the limit."""
    stale = {
        m: (_lines(modules()[m]) if m in modules() else "no such module")
        for m in LONG_MODULES
        if m not in modules() or _lines(modules()[m]) <= MAX_LINES
    }
    assert stale == {}, f"remove these from LONG_MODULES: {stale}"
