"""The library-code digest (reliquant.core.codedigest): comments, docstrings and formatting do
not change it, any change to what runs does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reliquant.core.codedigest import (
    DIGEST_LENGTH,
    import_closure,
    library_digest,
    normalized_source,
    script_digest,
    source_digest,
)

ORIGINAL = '''"""A module docstring."""

import math

# a comment
SCALE = 2.0
UNIT = "cm"


class Box:
    """A class docstring."""

    def area(self, side: float) -> float:
        """A method docstring."""
        return side * side * SCALE


async def fetch(x):
    "An async docstring."
    return x


def radius(area: float) -> float:
    """A function docstring."""
    return math.sqrt(area / math.pi)  # a trailing comment
'''

#: Edits that change nothing that runs.
SAME = {
    "comment edited": ORIGINAL.replace("# a comment", "# another comment, longer"),
    "comment added": ORIGINAL.replace("SCALE = 2.0", "# new\nSCALE = 2.0  # two"),
    "module docstring": ORIGINAL.replace("A module docstring.", "Reworded, with\nnew lines."),
    "class docstring removed": ORIGINAL.replace('    """A class docstring."""\n', ""),
    "method docstring": ORIGINAL.replace("A method docstring.", "Other words."),
    "async docstring": ORIGINAL.replace('"An async docstring."', "'''Another.'''"),
    "async docstring removed": ORIGINAL.replace('    "An async docstring."\n', ""),
    "blank lines": ORIGINAL.replace("\n\n\n", "\n\n\n\n\n"),
    "line breaks and parentheses": ORIGINAL.replace(
        "return side * side * SCALE",
        "return (\n            side * side\n            * SCALE\n        )",
    ),
    "quotes": ORIGINAL.replace('UNIT = "cm"', "UNIT = 'cm'"),
    "implicit concatenation": ORIGINAL.replace('UNIT = "cm"', 'UNIT = "c" "m"'),
    "spacing": ORIGINAL.replace("side * side", "side*side").replace(
        "area / math.pi", "area/math.pi"
    ),
}

#: Edits that change what runs.
DIFFERENT = {
    "constant": ORIGINAL.replace("SCALE = 2.0", "SCALE = 3.0"),
    "operator": ORIGINAL.replace("area / math.pi", "area * math.pi"),
    "name": ORIGINAL.replace("def radius", "def radius_of"),
    "annotation": ORIGINAL.replace("side: float", "side: int"),
    "string value": ORIGINAL.replace('UNIT = "cm"', 'UNIT = "mm"'),
    "statement added": ORIGINAL.replace("return x", "x += 1\n    return x"),
    "docstring turned into code": ORIGINAL.replace(
        '"""A method docstring."""', 'print("A method docstring.")'
    ),
}


@pytest.mark.parametrize("name", sorted(SAME))
def test_comments_docstrings_and_formatting_do_not_count(name):
    edited = SAME[name]
    assert edited != ORIGINAL
    assert normalized_source(edited) == normalized_source(ORIGINAL)


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_a_code_change_counts(name):
    edited = DIFFERENT[name]
    assert edited != ORIGINAL
    assert normalized_source(edited) != normalized_source(ORIGINAL)


def test_a_string_statement_after_the_first_is_code():
    """Only the first statement is a docstring; a later bare string is kept (it is code)."""
    one = 'def f():\n    """doc"""\n    "not a docstring"\n    return 1\n'
    other = 'def f():\n    """doc"""\n    "something else"\n    return 1\n'
    assert normalized_source(one) != normalized_source(other)


def test_a_source_that_does_not_parse_names_its_file():
    with pytest.raises(SyntaxError) as info:
        normalized_source("def f(:\n", filename="broken.py")
    assert info.value.filename == "broken.py"


def _tree(root: Path, files: dict[str, str | bytes]) -> list[Path]:
    paths = []
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        paths.append(path)
    return paths


def test_source_digest_follows_code_paths_and_bytes(tmp_path):
    a = _tree(tmp_path / "a", {"pkg/m.py": ORIGINAL, "pkg/data.json": b'{"k": 1}'})
    b = _tree(tmp_path / "b", {"pkg/m.py": SAME["comment edited"], "pkg/data.json": b'{"k": 1}'})
    c = _tree(tmp_path / "c", {"pkg/m.py": DIFFERENT["constant"], "pkg/data.json": b'{"k": 1}'})
    d = _tree(tmp_path / "d", {"pkg/m.py": ORIGINAL, "pkg/data.json": b'{"k":1}'})
    e = _tree(tmp_path / "e", {"pkg/n.py": ORIGINAL, "pkg/data.json": b'{"k": 1}'})
    digest = source_digest(a, tmp_path / "a")
    assert len(digest) == DIGEST_LENGTH
    assert int(digest, 16) >= 0
    assert source_digest(reversed(a), tmp_path / "a") == digest  # order given does not matter
    assert source_digest(b, tmp_path / "b") == digest  # a comment
    assert source_digest(c, tmp_path / "c") != digest  # code
    assert source_digest(d, tmp_path / "d") != digest  # a non-Python file counts by its bytes
    assert source_digest(e, tmp_path / "e") != digest  # a renamed module
    assert len(source_digest(a, tmp_path / "a", length=64)) == 64


def test_library_digest_covers_only_the_named_packages(tmp_path):
    _tree(
        tmp_path,
        {"core/io.py": ORIGINAL, "core/sub/x.py": "X = 1\n", "nbc/m.py": "Y = 1\n"},
    )
    base = library_digest(tmp_path, ["core"])
    with_nbc = library_digest(tmp_path, ["core", "nbc"])
    assert base != with_nbc
    (tmp_path / "nbc" / "m.py").write_text("Y = 2\n")
    assert library_digest(tmp_path, ["core"]) == base
    assert library_digest(tmp_path, ["core", "nbc"]) != with_nbc
    (tmp_path / "core" / "sub" / "x.py").write_text('"""Now documented."""\n\nX = 1  # one\n')
    assert library_digest(tmp_path, ["core"]) == base  # subpackages count, their docs do not
    (tmp_path / "core" / "sub" / "x.py").write_text("X = 2\n")
    assert library_digest(tmp_path, ["core"]) != base


def test_the_library_digest_ignores_a_comment_in_the_real_sources(tmp_path):
    """The installed library's own files parse, and a comment in one of them counts for nothing."""
    import shutil

    import reliquant

    root = Path(reliquant.__file__).parent
    copy = tmp_path / "reliquant"
    shutil.copytree(root / "core", copy / "core", ignore=shutil.ignore_patterns("__pycache__"))
    before = library_digest(copy, ["core"])
    io = copy / "core" / "io" / "atomic.py"
    io.write_text(io.read_text() + "\n# a comment at the end\n")
    assert library_digest(copy, ["core"]) == before
    io.write_text(io.read_text() + "\nEXTRA = 1\n")
    assert library_digest(copy, ["core"]) != before


def test_an_edit_between_two_digests_of_one_process_counts(tmp_path):
    """The per-process cache of normalised sources follows the bytes, not the file's name or
    timestamps: an edit of the same size within the same second still changes the digest,
    and reverting it gives the first digest back."""
    module = tmp_path / "pkg" / "mod.py"
    module.parent.mkdir()
    module.write_text("x = 1\n", encoding="utf-8")
    first = library_digest(tmp_path, ["pkg"])
    stat = module.stat()
    module.write_text("x = 2\n", encoding="utf-8")
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime
    second = library_digest(tmp_path, ["pkg"])
    assert second != first
    module.write_text("x = 1  # a comment\n", encoding="utf-8")
    assert library_digest(tmp_path, ["pkg"]) == first


def test_import_closure_follows_what_a_script_imports(tmp_path):
    """A script's digest covers the modules it reaches, at any depth, relative imports and
    imports inside functions included, and no module it never imports."""
    lib = tmp_path / "reliquant"
    _tree(
        lib,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            "core/io.py": "from . import paths\n",
            "core/paths.py": "P = 1\n",
            "core/unused.py": "U = 1\n",
            "topic/__init__.py": "from reliquant.topic.heavy import H\n",
            "topic/heavy.py": "H = 1\n",
            "topic/light.py": "def f():\n    from reliquant.core.io import paths\n    return paths\n",
            "other/__init__.py": "",
            "other/m.py": "M = 1\n",
        },
    )
    script = tmp_path / "script.py"
    script.write_text("from reliquant.topic.light import f\n")
    reached = {p.relative_to(lib).as_posix() for p in import_closure([script], lib)}
    assert reached == {"core/io.py", "core/paths.py", "topic/light.py"}
    digest = script_digest(script, lib)
    # the enclosing packages' __init__ files only gather names: not counted
    for untouched in ("core/unused.py", "topic/heavy.py", "other/m.py", "topic/__init__.py"):
        (lib / untouched).write_text("CHANGED = 2\n")
        assert script_digest(script, lib) == digest, untouched
    (lib / "core/paths.py").write_text("P = 2\n")  # reached through a relative import
    assert script_digest(script, lib) != digest
    # a package imported as such counts whole: its __init__ may load any of its modules
    script.write_text("from reliquant.topic import H\n")
    package = script_digest(script, lib)
    (lib / "topic/heavy.py").write_text("H = 3\n")
    assert script_digest(script, lib) != package


def test_the_protocol_script_reaches_only_what_it_runs():
    """The real log-ratio protocol script: the trees and nbc packages and the compare topic's
    evaluation are outside its closure; the selection and rejection modules it runs are in."""
    import reliquant

    root = Path(reliquant.__file__).parent
    script = Path(__file__).parents[2] / "scripts" / "compare" / "compare_logratio_protocol.py"
    reached = {p.relative_to(root).as_posix() for p in import_closure([script], root)}
    assert {"compare/selection.py", "compare/rejection.py"} <= reached
    assert "compare/reproduction/logratio_protocol.py" in reached
    assert not any(p.startswith(("trees/", "nbc/")) for p in reached)
    assert "compare/reproduction/evaluation.py" not in reached
