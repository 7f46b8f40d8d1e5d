"""Shared fixtures: repository paths, the vendored raw data, and closing every test's figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RAW = REPO / "data" / "raw"


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root."""
    return REPO


@pytest.fixture(scope="session")
def raw_dir() -> Path:
    """The vendored raw data folder (data/raw)."""
    return RAW


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test leaves open (matplotlib keeps pyplot figures until closed)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
