"""The distributions of paper 000, Sections 7.1-7.2, and sampling from them.

* ``P_fix`` (Section 7.1): an NBC joint with class probabilities ``class_probs`` where, for each
  class c and feature i, value ``favoured[c][i]`` gets ``p_favoured`` and the other values of
  ``F_i`` share the rest uniformly.
* ``P_rand``: a uniform random number per (c, f), normalised (drawn once, then fixed).
* ``P_test = (1 - beta) P_fix + beta P_rand``; ``D_test``: ``n_test`` draws from it.
* Section 7.2: ``P_train = (1 - gamma) P_test + gamma P_shift`` with ``P_shift`` drawn like
  ``P_rand``.

Joint tables have shape ``(K, |F_1|, ..., |F_N|)``. Randomness enters only through
:func:`reliquant.core.seeding.block_rng` keys built here from the config seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from reliquant.core.seeding import block_rng

__all__ = [
    "d_test_schema",
    "distribution_tables",
    "distributions_from_tables",
    "distributions_schema",
    "make_distributions",
    "mix",
    "p_fix",
    "random_joint",
    "sample_joint",
    "table_from_frame",
    "table_to_frame",
]


def p_fix(
    class_probs: Sequence[float],
    n_values: Sequence[int],
    favoured: Sequence[Sequence[int]],
    p_favoured: float,
) -> np.ndarray:
    """``P_fix`` of Section 7.1 as a joint table (K, |F_1|, ..., |F_N|) satisfying eq. 17.

    ``p(f_i | c) = p_favoured`` if ``f_i = favoured[c][i]`` else ``(1 - p_favoured) / (|F_i| - 1)``.
    """
    prior = np.asarray(class_probs, dtype=np.float64)
    k = prior.size
    if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError(f"class_probs must be >= 0 and sum to 1; got {list(class_probs)}")
    fav = np.asarray(favoured)
    if fav.shape != (k, len(n_values)):
        raise ValueError(
            f"favoured must be a {k} x {len(n_values)} list (one value per class and feature); "
            f"got shape {fav.shape}"
        )
    if not 0 <= p_favoured <= 1:
        raise ValueError(f"p_favoured must lie in [0, 1]; got {p_favoured}")
    table = prior.reshape((k,) + (1,) * len(n_values))
    for i, v in enumerate(n_values):
        if v < 2:
            raise ValueError(f"feature {i} needs at least 2 values; got {v}")
        if np.any(fav[:, i] < 0) or np.any(fav[:, i] >= v):
            raise ValueError(
                f"favoured values of feature {i} must lie in 0..{v - 1}; got {fav[:, i]}"
            )
        cond = np.full((k, v), (1.0 - p_favoured) / (v - 1))
        cond[np.arange(k), fav[:, i]] = p_favoured
        shape = [1] * (len(n_values) + 1)
        shape[0], shape[i + 1] = k, v
        table = table * cond.reshape(shape)
    return table


def random_joint(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    """A uniform(0, 1) number per cell, normalised to sum 1 (``P_rand``, ``P_shift``)."""
    u = rng.random(tuple(shape))
    return u / u.sum()


def mix(p: np.ndarray, q: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - weight) p + weight q`` (``P_test`` with beta, ``P_train`` with gamma)."""
    if not 0 <= weight <= 1:
        raise ValueError(f"mixture weight must lie in [0, 1]; got {weight}")
    return (1.0 - weight) * p + weight * q


def sample_joint(
    rng: np.random.Generator, joint: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` i.i.d. draws (class, features) from a joint table: ``X`` (n, N) and ``y`` (n,)."""
    flat = joint.reshape(-1)
    cells = rng.choice(flat.size, size=n, p=flat / flat.sum())
    idx = np.unravel_index(cells, joint.shape)
    return np.stack(idx[1:], axis=1).astype(np.int64), idx[0].astype(np.int64)


def make_distributions(design: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """All fixed distributions and ``D_test`` of Sections 7.1-7.2 from the config ``design``.

    Returns ``{"fix", "rand", "test": tables, "shift": (S, K, ...) array, "X_test", "y_test"}``.
    Keys: ``block_rng(seed, "p_rand")``, ``(seed, "p_shift", s)``, ``(seed, "d_test")``.
    """
    fix = p_fix(design["class_probs"], design["n_values"], design["favoured"], design["p_favoured"])
    rand = random_joint(block_rng(seed, "p_rand"), fix.shape)
    test = mix(fix, rand, design["beta"])
    shift = np.stack(
        [random_joint(block_rng(seed, "p_shift", s), fix.shape) for s in range(design["n_shift"])]
    )
    X_test, y_test = sample_joint(block_rng(seed, "d_test"), test, design["n_test"])
    return {
        "fix": fix,
        "rand": rand,
        "test": test,
        "shift": shift,
        "X_test": X_test,
        "y_test": y_test,
    }


def table_to_frame(tables: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Long frame of joint tables: ``distribution, member, cls, x0..x{N-1}, prob``.

    Every value has shape (S, K, |F_1|, ..., |F_N|): members 0..S-1 of that distribution.
    """
    parts = []
    for name, stack in tables.items():
        for m, t in enumerate(np.asarray(stack)):
            idx = np.indices(t.shape).reshape(t.ndim, -1)
            d = {"distribution": name, "member": m, "cls": idx[0]}
            d.update({f"x{i}": idx[i + 1] for i in range(t.ndim - 1)})
            d["prob"] = t.reshape(-1)
            parts.append(pd.DataFrame(d))
    return pd.concat(parts, ignore_index=True)


def table_from_frame(frame: pd.DataFrame, name: str) -> np.ndarray:
    """Inverse of :func:`table_to_frame` for one distribution: (members, K, |F_1|, ...)."""
    sub = frame[frame["distribution"] == name]
    if sub.empty:
        raise ValueError(
            f"distribution {name!r} not found; have {sorted(frame['distribution'].unique())}"
        )
    xcols = _feature_columns(frame)
    dims = ["member", "cls", *xcols]
    shape = tuple(int(sub[c].max()) + 1 for c in dims)
    out = np.full(shape, np.nan)
    out[tuple(sub[c].to_numpy() for c in dims)] = sub["prob"].to_numpy()
    if np.isnan(out).any():
        raise ValueError(f"distribution {name!r} is missing cells")
    return out


def _feature_columns(frame: pd.DataFrame) -> list[str]:
    """The feature columns ``x0, x1, ...`` of a frame, in feature order."""
    return sorted((c for c in frame.columns if c.startswith("x")), key=lambda c: int(c[1:]))


def distributions_schema(n_features: int) -> pa.Schema:
    """Schema of :func:`distribution_tables`' joint tables (``results/nbc/distributions``)."""
    return pa.schema(
        [("distribution", pa.string()), ("member", pa.int16()), ("cls", pa.int16())]
        + [(f"x{i}", pa.int16()) for i in range(n_features)]
        + [("prob", pa.float64())]
    )


def d_test_schema(n_features: int) -> pa.Schema:
    """Schema of :func:`distribution_tables`' ``D_test`` (``results/nbc/test_set``)."""
    return pa.schema(
        [("index", pa.int32()), ("label", pa.int16())]
        + [(f"x{i}", pa.int16()) for i in range(n_features)]
    )


def distribution_tables(design: Mapping[str, Any], seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`make_distributions` as two tables: the joint tables and ``D_test``.

    The joint tables of ``fix``, ``rand``, ``test`` (one member each) and the ``shift`` members
    in the long format of :func:`table_to_frame` (:func:`distributions_schema`); ``D_test`` as
    ``index, label, x0..x{N-1}`` (:func:`d_test_schema`).
    """
    d = make_distributions(design, seed)
    n_feat = len(design["n_values"])
    tables = table_to_frame(
        {
            "fix": d["fix"][None],
            "rand": d["rand"][None],
            "test": d["test"][None],
            "shift": d["shift"],
        }
    )
    test = pd.DataFrame(
        {
            "index": np.arange(len(d["y_test"])),
            "label": d["y_test"],
            **{f"x{i}": d["X_test"][:, i] for i in range(n_feat)},
        }
    )
    return tables, test


def distributions_from_tables(tables: pd.DataFrame, test: pd.DataFrame) -> dict[str, Any]:
    """Inverse of :func:`distribution_tables` for what one cell needs: ``test`` (a joint),
    ``shift`` (S joints), ``X_test`` and ``y_test`` (rows in ``index`` order)."""
    test = test.sort_values("index")
    return {
        "test": table_from_frame(tables, "test")[0],
        "shift": table_from_frame(tables, "shift"),
        "X_test": test[_feature_columns(test)].to_numpy().astype("int64"),
        "y_test": test["label"].to_numpy().astype("int64"),
    }
