"""The API reference (docs/api/) lists every public name: each package's ``__all__`` against
the reference's pages, and, once the site is built, against its inventory (objects.inv)."""

from __future__ import annotations

import importlib
import re
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "nbc", "trees", "pmnist", "mlm", "compare")
#: Where `sphinx-build -b html docs docs/_build/html` (docs/development.md) writes the site.
SITE = REPO / "docs" / "_build" / "html"


def _listed(package: str) -> list[str]:
    """The names the autosummary of docs/api/<package>.rst lists."""
    text = (REPO / "docs" / "api" / f"{package}.rst").read_text(encoding="utf-8")
    body = text.split(".. autosummary::", 1)[1]
    return re.findall(r"^   ([A-Za-z_]\w*)$", body, flags=re.M)


@pytest.mark.parametrize("package", PACKAGES)
def test_reference_page_lists_exactly_the_packages_all(package):
    public = importlib.import_module(f"reliquant.{package}").__all__
    listed = _listed(package)
    assert sorted(set(public) - set(listed)) == [], f"missing from docs/api/{package}.rst"
    assert sorted(set(listed) - set(public)) == [], f"not in reliquant.{package}.__all__"
    assert len(listed) == len(set(listed))


def test_reference_index_links_every_package_page():
    index = (REPO / "docs" / "api" / "index.md").read_text(encoding="utf-8")
    toctree = index.split("```{toctree}", 1)[1].split("```", 1)[0]
    assert set(re.findall(r"^(\w+)$", toctree, flags=re.M)) == set(PACKAGES)


def read_inventory(path: Path) -> dict[str, str]:
    """``name -> role`` of a Sphinx objects.inv (version 2: four header lines, then zlib'd
    lines ``name domain:role priority uri dispname``)."""
    raw = path.read_bytes()
    lines = raw.split(b"\n", 4)
    assert lines[0] == b"# Sphinx inventory version 2", f"{path}: not a version-2 inventory"
    entries = {}
    for line in zlib.decompress(lines[4]).decode("utf-8").splitlines():
        match = re.match(r"(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+(\S+)\s+(.*)$", line)
        if match:
            entries[match.group(1)] = match.group(2)
    return entries


@pytest.mark.docs
@pytest.mark.parametrize("package", PACKAGES)
def test_built_site_documents_every_public_name(package):
    """After the build (CI stage `docs`): every name of ``reliquant.<package>.__all__`` is an
    object of the site's inventory, with a page of its own."""
    inventory = SITE / "objects.inv"
    assert inventory.exists(), f"build the site first: no {inventory.relative_to(REPO)}"
    entries = read_inventory(inventory)
    public = importlib.import_module(f"reliquant.{package}").__all__
    missing = [n for n in public if f"reliquant.{package}.{n}" not in entries]
    assert missing == [], f"not in the built API reference: {missing}"
    for name in public:
        assert (SITE / "api" / "generated" / f"reliquant.{package}.{name}.html").exists(), name
