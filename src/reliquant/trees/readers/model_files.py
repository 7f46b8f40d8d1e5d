"""A user's tree-ensemble classifier read from a model file, never by unpickling.

:func:`load_model` dispatches on the file's suffix:

* ``.json`` / ``.ubj``: an XGBoost model saved with ``save_model`` (JSON or Universal Binary
  JSON), read into an ``xgboost.XGBClassifier``;
* ``.txt``: a LightGBM model saved with ``Booster.save_model``, read into a
  ``lightgbm.Booster``;
* ``.skops``: a scikit-learn tree, forest or gradient boosting classifier saved with
  ``skops.io.dump``. ``skops.io.load`` only builds the types it is told to trust; the types
  the file holds beyond skops' defaults (``skops.io.get_untrusted_types``) are trusted only
  when each is a scikit-learn estimator class or one of scikit-learn's tree structures
  (:data:`SKLEARN_TREE_TYPES`). Anything else (a class of your own, a function, another
  library's object) is refused with a ValueError naming the types, before anything is built.

Every model :func:`reliquant.trees.extract_ensemble` reads can be stored this way. Its trees
are checked before the model is returned (:mod:`reliquant.trees.tree_checks`; a LightGBM
text before LightGBM parses it, :mod:`reliquant.trees.readers.lightgbm_text`): a cycle, a
child out of range, a feature the model lacks or a non-finite threshold is refused naming
the file, the tree and the node, never handed to a library whose ``predict`` would loop or
crash on it.

Public API: :func:`load_model`, :func:`trusted_skops_types`, :data:`MODEL_SUFFIXES`.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reliquant.core.io import file_sha256

__all__ = ["MODEL_SUFFIXES", "SKLEARN_TREE_TYPES", "load_model", "trusted_skops_types"]

log = logging.getLogger("reliquant.trees.readers.model_files")

#: Suffix -> the library that reads it.
MODEL_SUFFIXES = {".json": "xgboost", ".ubj": "xgboost", ".txt": "lightgbm", ".skops": "skops"}
#: scikit-learn's tree structures (not estimators) that a fitted tree model holds.
SKLEARN_TREE_TYPES = frozenset(
    {
        "sklearn.tree._tree.Tree",
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    }
)


def _is_sklearn_class(name: str) -> bool:
    """``name`` (module.Class) is a scikit-learn estimator class or a tree structure.

    Only modules inside ``sklearn`` are imported to look the class up (installed code, never
    the file's)."""
    if name in SKLEARN_TREE_TYPES:
        return True
    module, _, attr = name.rpartition(".")
    if module != "sklearn" and not module.startswith("sklearn."):
        return False
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return False
    from sklearn.base import BaseEstimator

    return isinstance(obj, type) and issubclass(obj, BaseEstimator)


def trusted_skops_types(untrusted: Sequence[str], path: str | os.PathLike = "") -> list[str]:
    """The ``trusted=`` list of ``skops.io.load`` for a file holding the types ``untrusted``
    (``skops.io.get_untrusted_types``): all of them when each is a scikit-learn estimator
    class or tree structure, else a ValueError naming the others."""
    refused = sorted(name for name in untrusted if not _is_sklearn_class(name))
    if refused:
        raise ValueError(
            f"{path}: refusing to load: the skops file holds types that are not scikit-learn "
            f"estimator or tree classes: {refused}. Only those are trusted; save XGBoost and "
            "LightGBM models with their own save_model (.json/.ubj, .txt) instead"
        )
    return sorted(untrusted)


def _load_skops(path: Path) -> Any:
    import skops.io as sio

    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as err:
        raise ValueError(f"{path}: not a readable skops file ({err})") from err
    return sio.load(path, trusted=trusted_skops_types(untrusted, path))


def _load_xgboost(path: Path) -> Any:
    import xgboost as xgb

    model = xgb.XGBClassifier()
    try:
        model.load_model(path)
    except (xgb.core.XGBoostError, ValueError, TypeError) as err:
        raise ValueError(f"{path}: not an XGBoost classifier model file ({err})") from err
    return model


def _load_lightgbm(path: Path) -> Any:
    import lightgbm as lgb

    from reliquant.trees.readers.lightgbm_text import check_model_text

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not a LightGBM model file (not text: {err})") from err
    check_model_text(text, str(path))  # LightGBM's parser trusts it: a bad tree kills the process
    try:
        return lgb.Booster(model_str=text)
    except lgb.basic.LightGBMError as err:
        raise ValueError(f"{path}: not a LightGBM model file ({err})") from err


def load_model(path: str | os.PathLike) -> Any:
    """The classifier stored in ``path``, by suffix (module docstring): an XGBClassifier
    (``.json``/``.ubj``), a LightGBM Booster (``.txt``) or a scikit-learn estimator
    (``.skops``, trusted types checked). A missing file or another suffix is a ValueError
    naming the path."""
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in MODEL_SUFFIXES:
        raise ValueError(
            f"{file}: expected a model file ending in {', '.join(MODEL_SUFFIXES)}; got "
            f"{suffix or 'no suffix'!r} (pickle files are never loaded)"
        )
    if not file.is_file():
        raise ValueError(f"{file}: no such model file")
    reader = {"xgboost": _load_xgboost, "lightgbm": _load_lightgbm, "skops": _load_skops}
    model = reader[MODEL_SUFFIXES[suffix]](file)
    _check_structure(model, file)
    log.info("read %s: %s (sha256 %s)", file, type(model).__name__, file_sha256(file))
    return model


def _check_structure(model: Any, file: Path) -> None:
    """The model's trees checked before anyone walks them (its library's ``predict`` would
    loop or crash on a malformed one): read by :func:`reliquant.trees.extract_ensemble`,
    whose :class:`~reliquant.trees.TreeEnsemble` checks every tree before the library is
    asked for anything. A malformed tree is refused naming the file; a model the readers do
    not support is left for them to refuse when it is used."""
    from reliquant.trees.readers.dispatch import extract_ensemble
    from reliquant.trees.tree_checks import MalformedTreeError

    try:
        extract_ensemble(model)
    except MalformedTreeError as err:
        raise MalformedTreeError(f"{file}: {err}") from err
    except Exception:  # unsupported or unreadable: the readers say why when it is used
        pass
