"""Shared fixtures: repository paths and the vendored raw data."""

from __future__ import annotations

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
