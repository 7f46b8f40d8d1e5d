"""Uncertainty metrics of paper 000, Section 4 (eqs. 3-7), for any generative classifier.

All metrics take conditional class probabilities ``p(c | f)``; :func:`conditional` turns a
joint ``log p(c, f)`` into them. Entropies are in bits (log base 2) with ``0 log 0 = 0``.

The epistemic uncertainty is ``u_e = u_t - u_a`` (the mutual information between the class and
the ensemble member, >= 0 by Jensen). The paper's eq. 7 writes ``u_a - u_t``, which is never
positive; that sign is a slip (see ``/work/shared/papers/README.md``). Ordering by increasing
``u_t - u_a`` is what "increasing epistemic uncertainty" means.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from reliquant.core.progress import progress_bar
from reliquant.nbc.classifier import fit_nbc, log_joint

__all__ = [
    "bootstrap_conditionals",
    "conditional",
    "ensemble_uncertainty",
    "entropy_bits",
    "u_entropy",
    "u_max_prob",
]


def conditional(log_joint: np.ndarray) -> np.ndarray:
    """``p(c | f) = p(c, f) / sum_c' p(c', f)`` from ``log p(c, f)`` along the last axis.

    Computed as a softmax (shifted by the row maximum). Where ``p(f) = 0`` (every entry
    ``-inf``), the conditional is undefined; we return the uniform distribution there, which
    gives the maximal uncertainty.
    """
    lj = np.asarray(log_joint, dtype=np.float64)
    if lj.ndim < 1 or lj.shape[-1] < 1:
        raise ValueError(f"log joint must have a class axis last; got shape {lj.shape}")
    m = lj.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(m)
    shifted = np.where(dead, 0.0, lj - np.where(dead, 0.0, m))
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def _check_probs(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if p.ndim < 1:
        raise ValueError("probabilities need a class axis")
    if np.any(p < -1e-12) or not np.allclose(p.sum(axis=-1), 1.0, atol=1e-9):
        raise ValueError("conditional probabilities must be >= 0 and sum to 1 along the last axis")
    return p


def entropy_bits(p: np.ndarray) -> np.ndarray:
    """Shannon entropy ``-sum_c p_c log2 p_c`` along the last axis, with ``0 log 0 = 0``."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=-1)


def u_max_prob(cond: np.ndarray) -> np.ndarray:
    """Maximum-probability uncertainty, eq. 3: ``u_m(f) = 1 - max_c p(c | f)``; shape (n,)."""
    return 1.0 - _check_probs(cond).max(axis=-1)


def u_entropy(cond: np.ndarray) -> np.ndarray:
    """Entropy uncertainty, eq. 4: ``u_H(f) = -sum_c p(c | f) log2 p(c | f)``; shape (n,)."""
    return entropy_bits(_check_probs(cond))


def ensemble_uncertainty(cond_ensemble: np.ndarray) -> dict[str, np.ndarray]:
    """Bootstrap-ensemble uncertainties, eqs. 5-7, from ``p_i(c | f)`` of shape (M, n, K).

    * aleatoric, eq. 5: ``u_a(f) = (1/M) sum_i H(p_i(. | f))``
    * total, eq. 6: ``u_t(f) = H(p_av(. | f))`` with ``p_av = (1/M) sum_i p_i``
    * epistemic: ``u_e(f) = u_t(f) - u_a(f) >= 0`` (eq. 7 with the sign slip corrected).

    Returns a dict with keys ``u_a``, ``u_t``, ``u_e``. ``u_e`` is clipped at 0 against
    round-off (it is a mutual information).
    """
    p = _check_probs(cond_ensemble)
    if p.ndim != 3:
        raise ValueError(f"ensemble probabilities must have shape (M, n, K); got {p.shape}")
    u_a = entropy_bits(p).mean(axis=0)
    u_t = entropy_bits(p.mean(axis=0))
    return {"u_a": u_a, "u_t": u_t, "u_e": np.maximum(u_t - u_a, 0.0)}


def bootstrap_conditionals(
    X_train: np.ndarray,
    y_train: np.ndarray,
    n_classes: int,
    n_values: Sequence[int],
    alpha: float,
    X: np.ndarray,
    n_bootstrap: int,
    rng: np.random.Generator,
    progress: bool | None = False,
) -> np.ndarray:
    """``p_i(c | f)`` of every row of ``X`` under ``n_bootstrap`` NBCs (shape (M, n, K)), the
    i-th fitted by eq. 18 with ``alpha`` on the i-th ``rng.integers(0, n, size=n)`` resample
    of the training codes (Section 7.3). A resample that cannot be fitted raises a
    ``ValueError`` naming its index. ``progress``: a bar over the models
    (:func:`reliquant.core.progress.show_progress`)."""
    n = len(y_train)
    members = []
    for i in progress_bar(range(int(n_bootstrap)), desc="bootstrap", unit="model",
                          progress=progress):  # fmt: skip
        b = rng.integers(0, n, size=n)
        try:
            member = fit_nbc(X_train[b], y_train[b], n_classes, n_values, alpha)
        except ValueError as err:
            raise ValueError(f"bootstrap model {i}: {err}") from err
        members.append(conditional(log_joint(member, X)))
    return np.stack(members)
