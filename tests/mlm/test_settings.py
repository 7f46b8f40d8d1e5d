"""reliquant.mlm.reproduction.settings: the ``mlm.model`` weights file checked before any job."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reliquant.mlm.reproduction.settings import check_settings


def test_trained_here_checks_nothing(tmp_path: Path) -> None:
    check_settings({"model": {"source": "train"}}, tmp_path)


def test_file_must_exist_relative_to_the_root(tmp_path: Path) -> None:
    model = {"source": "file", "path": "mine/cnn.pt", "sha256": "a" * 64}
    with pytest.raises(
        ValueError, match="mlm.model.path: no CNN weights file at mine/cnn.pt"
    ) as err:
        check_settings({"model": model}, tmp_path)
    assert f"relative to {tmp_path}" in str(err.value)


def test_digest_must_match_either_case(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "cnn.pt").write_bytes(b"weights")
    digest = hashlib.sha256(b"weights").hexdigest()
    model = {"source": "file", "path": "mine/cnn.pt", "sha256": digest.upper()}
    check_settings({"model": model}, tmp_path)
    with pytest.raises(ValueError, match="mlm.model.sha256") as err:
        check_settings({"model": dict(model, sha256="0" * 64)}, tmp_path)
    assert "mlm.model.path mine/cnn.pt" in str(err.value) and digest in str(err.value)
