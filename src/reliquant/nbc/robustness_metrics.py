"""Robustness metrics of paper 000: eps_glob (Theorem 5.2, eq. 13) and eps_loc (Theorem 6.1).

Both work in log space. ``eps_glob`` needs only the joint ``log p(c, f)`` of any generative
classifier; ``eps_loc`` needs the local factors of a product-form model such as the NBC
(``log p(c)`` and ``log p(f_i | c)``, see :func:`reliquant.nbc.classifier.log_factors`).

The predicted class defaults to ``argmax_c p(c, f)`` with ties going to the lowest index
(eq. 2). A prediction that is not the unique maximiser is not robust even at eps = 0, so both
metrics are 0 for it (this includes ``p(c_hat, f) = 0``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["eps_glob", "eps_loc", "eps_loc_scalar", "log_eps_glob", "n_bisection_steps"]


def _check_log_joint(log_joint: np.ndarray) -> np.ndarray:
    lj = np.asarray(log_joint, dtype=np.float64)
    if lj.ndim != 2 or lj.shape[1] < 2:
        raise ValueError(f"log joint must have shape (n, K) with K >= 2 classes; got {lj.shape}")
    if np.any(np.isnan(lj)) or np.any(lj > 1e-12):
        raise ValueError("log joint must hold log-probabilities (<= 0, no NaN)")
    with np.errstate(divide="ignore"):
        row_mass = np.logaddexp.reduce(lj, axis=1)
    if np.any(row_mass > 1e-9):
        i = int(np.argmax(row_mass))
        raise ValueError(
            f"log joint row {i} sums to p = {np.exp(row_mass[i]):.6g} > 1 over the classes: "
            "not a joint log p(c, f) (pass log p(c, f), e.g. reliquant.nbc.log_joint, not "
            "unnormalised scores)"
        )
    return lj


def _resolve_c_hat(lj: np.ndarray, c_hat: np.ndarray | None) -> np.ndarray:
    """The predicted class per row: ``argmax_c log p(c, f)`` unless given (then checked)."""
    if c_hat is None:
        return np.argmax(lj, axis=1)
    c_hat = np.asarray(c_hat)
    if c_hat.shape != (lj.shape[0],):
        raise ValueError(f"c_hat must have shape ({lj.shape[0]},); got {c_hat.shape}")
    if c_hat.size and not np.issubdtype(c_hat.dtype, np.integer):
        raise ValueError(f"c_hat must hold integer class indices; got dtype {c_hat.dtype}")
    k = lj.shape[1]
    out = (c_hat < 0) | (c_hat >= k)
    if np.any(out):
        raise ValueError(f"c_hat holds class {int(c_hat[out][0])}; classes are 0..{k - 1}")
    return c_hat


def _top_two(lj: np.ndarray, c_hat: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``log p(c_hat, f)`` and ``max_{c != c_hat} log p(c, f)`` for every row."""
    n = lj.shape[0]
    rows = np.arange(n)
    c_hat = _resolve_c_hat(lj, c_hat)
    top = lj[rows, c_hat]
    rest = lj.copy()
    rest[rows, c_hat] = -np.inf
    return top, rest.max(axis=1)


def log_eps_glob(log_joint: np.ndarray, c_hat: np.ndarray | None = None) -> np.ndarray:
    """``log eps_glob`` (eq. 13), stable for joints far below the float range.

    With ``d = p(c_hat, f) - max_{c != c_hat} p(c, f)``, ``eps_glob = d / (1 + d)`` and
    ``log d = log p(c_hat, f) + log(1 - exp(l2 - l1))``. ``-inf`` where ``d <= 0``.
    """
    lj = _check_log_joint(log_joint)
    l1, l2 = _top_two(lj, c_hat)
    out = np.full(lj.shape[0], -np.inf)
    pos = (l1 > l2) & np.isfinite(l1)
    with np.errstate(divide="ignore"):
        log_d = l1[pos] + np.log(-np.expm1(l2[pos] - l1[pos]))
    out[pos] = log_d - np.log1p(np.exp(log_d))
    return out


def eps_glob(log_joint: np.ndarray, c_hat: np.ndarray | None = None) -> np.ndarray:
    """Global robustness metric, paper 000, Theorem 5.2, eq. 13, for any generative classifier.

    ``eps_glob(f) = (p(c_hat, f) - max_{c != c_hat} p(c, f)) / (1 + p(c_hat, f) - max_{c != c_hat} p(c, f))``

    ``log_joint`` is ``log p(c, f)`` of shape (n, K) (a normalised joint over C x F). Values lie
    in [0, 1/2]; 0 when c_hat is not the unique maximiser.
    """
    return np.exp(log_eps_glob(log_joint, c_hat))


def n_bisection_steps(tol: float) -> int:
    """Bisection steps that shrink the bracket [0, 1/2] below ``tol``."""
    if not (0 < tol < 0.5):
        raise ValueError(f"tol must lie in (0, 0.5); got {tol}")
    return math.ceil(math.log2(0.5 / tol))


def _check_factors(log_factors: np.ndarray) -> np.ndarray:
    lf = np.asarray(log_factors, dtype=np.float64)
    if lf.ndim != 3 or lf.shape[1] < 2 or lf.shape[2] < 1:
        raise ValueError(
            "log factors must have shape (n, K, M): n instances, K >= 2 classes, M >= 1 local "
            f"probabilities per class (NBC: M = N + 1); got {lf.shape}"
        )
    if np.any(np.isnan(lf)) or np.any(lf > 1e-12):
        raise ValueError("log factors must be log-probabilities (<= 0, no NaN)")
    return lf


class _LogPhi:
    """``log phi`` of eq. 20 (without the max) for a batch of instances, in log space.

    ``sum_j log(p_cj + t)`` is evaluated as the log of products over chunks of factors; a chunk
    holds at most ``floor(700 / -min log p)`` factors, so no product can underflow (each factor
    is >= p_min) or overflow (each is <= 1 + t <= 2). Factors below exp(-700) switch to
    ``logaddexp`` per factor, which is exact for any magnitude.
    """

    def __init__(self, lf_other: np.ndarray) -> None:
        n, k1, m = lf_other.shape
        self.k1 = k1
        lmin = float(lf_other.min()) if lf_other.size else 0.0
        self.exact = lmin < -700.0
        if self.exact:
            self.lf = lf_other
            return
        self.chunk = m if lmin >= -700.0 / m else max(1, int(700.0 // -lmin))
        # (M, n, K-1): one contiguous (n, K-1) slab per factor
        self.p = np.ascontiguousarray(np.exp(lf_other).transpose(2, 0, 1))

    def __call__(self, t: np.ndarray, sel: np.ndarray | slice = slice(None)) -> np.ndarray:
        """``(n_sel, K-1)`` array of ``sum_j log(p_cj + t)`` for the instances ``sel``."""
        if self.exact:
            with np.errstate(divide="ignore"):
                log_t = np.log(t)
            return np.logaddexp(self.lf[sel], log_t[:, None, None]).sum(axis=2)
        p = self.p[:, sel]
        tt = t[:, None]
        out = None
        for a in range(0, p.shape[0], self.chunk):
            prod = p[a] + tt
            for j in range(a + 1, min(a + self.chunk, p.shape[0])):
                prod *= p[j] + tt
            out = np.log(prod) if out is None else out + np.log(prod)
        return out


def _t(eps: np.ndarray) -> np.ndarray:
    return eps / (1.0 - eps)


def _newton_lower_bound(p: np.ndarray, target: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """Lower bound on ``t* = min_c t_c`` where ``sum_j log(p[j, i, c] + t_c) = target[i]``.

    ``p``: (M, n, K-1) local probabilities (linear domain, all > 0). Each ``h_c`` is concave and
    increasing, so its tangent lies above it: a Newton step from a point below the root lands
    at or below the root, and the iterates increase monotonically to it (quadratically near
    it). Start: Jensen, ``h_c(t) <= M log(mean_j p_cj + t)``, so ``exp(T / M) - mean_j p_cj``
    is below the root. Stops after ``max_iter`` steps or when every step is <= ``tol``.
    """
    m = p.shape[0]
    T = target[:, None]
    t = np.maximum(np.exp(T / m) - p.mean(axis=0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(max_iter):
            pt = p + t
            step = np.fmax((T - np.log(pt).sum(axis=0)) / (1.0 / pt).sum(axis=0), 0.0)
            t = t + step
            if step.max() <= tol:
                break
    return t.min(axis=1)


def eps_loc(
    log_factors: np.ndarray, c_hat: np.ndarray | None = None, tol: float = 1e-12
) -> np.ndarray:
    """Local robustness metric of an NBC, paper 000, Theorem 6.1 (eq. 20), all instances at once.

    ``eps_loc(f)`` is the root of the strictly increasing
    ``phi(eps) = max_{c != c_hat} (p(c) + t) prod_i (p(f_i | c) + t)``, ``t = eps / (1 - eps)``,
    with ``phi(eps) = p(c_hat, f)``. We solve ``g(eps) = log phi(eps) - log p(c_hat, f) = 0``
    entirely in log space (sums of logs of chunked products, see :class:`_LogPhi`), so no product
    underflows however many features there are. ``g(0) < 0`` for a unique maximiser and
    ``g(1/2) >= 0`` (all factors >= 1 at t = 1), so the root lies in [0, 1/2].

    Solver, vectorised over instances and classes: with ``t = eps / (1 - eps)`` each class's
    ``h_c(t) = sum_j log(p_cj + t)`` is concave and increasing, and ``t* = min_c t_c`` with
    ``h_c(t_c) = log p(c_hat, f)``. Newton's method started below ``t_c`` (Jensen's bound
    ``exp(T / M) - mean_j p_cj``) climbs monotonically to it without overshooting
    (:func:`_newton_lower_bound`), so the iterates are certified lower bounds. A certificate
    then accepts the estimate x when ``g(x - tol/2) < 0 <= g(x + tol/2)``, which proves
    ``|x - eps_loc| <= tol/2``; instances without one (slow convergence or factors below
    exp(-700)) finish by bisection from their lower bound to ``tol``.

    ``log_factors`` has shape (n, K, M): ``log p(c)`` and the ``log p(f_i | c)`` at the
    instance's features (:func:`reliquant.nbc.classifier.log_factors`); any product-form model whose
    perturbation contaminates each local factor separately fits. Returns 0 where c_hat is not
    the unique maximiser of ``p(c, f)``.
    """
    lf = _check_factors(log_factors)
    n, k, m = lf.shape
    rows = np.arange(n)
    lj = lf.sum(axis=2)
    c_hat = _resolve_c_hat(lj, c_hat)
    n_bisection_steps(tol)  # validates tol
    target = lj[rows, c_hat]
    others = np.ones((n, k), dtype=bool)
    others[rows, c_hat] = False
    live = target > lj[others].reshape(n, k - 1).max(axis=1)  # unique maximiser, p > 0
    out = np.zeros(n)
    idx = np.flatnonzero(live)
    if idx.size == 0:
        return out
    lf_other = lf[idx][others[idx]].reshape(idx.size, k - 1, m)
    target = target[idx]
    log_phi = _LogPhi(lf_other)
    every = slice(None)

    def g(eps: np.ndarray, sel: np.ndarray | slice) -> np.ndarray:
        return log_phi(_t(eps), sel).max(axis=1) - target[sel]

    # phase 1: monotone Newton from below on every class's root (in t = eps / (1 - eps))
    if log_phi.exact:  # factors below exp(-700): no linear-domain Newton, bisection only
        x = np.zeros(idx.size)
    else:
        t_low = _newton_lower_bound(log_phi.p, target, max_iter=12, tol=0.25 * tol)
        x = t_low / (1.0 + t_low)
    lo = x.copy()
    hi = np.full(idx.size, 0.5)
    # phase 2: certificate g(x - tol/2) < 0 <= g(x + tol/2)
    a = np.maximum(x - 0.5 * tol, 0.0)
    b = np.minimum(x + 0.5 * tol, 0.5)
    ok = (g(b, every) >= 0) & ((a == 0) | (g(a, every) < 0))
    res = np.where(ok, x, np.nan)
    bad = np.flatnonzero(~ok)
    if bad.size:
        lo_b, hi_b = lo[bad], hi[bad]
        for _ in range(n_bisection_steps(tol)):
            mid = 0.5 * (lo_b + hi_b)
            up = g(mid, bad) >= 0
            hi_b = np.where(up, mid, hi_b)
            lo_b = np.where(up, lo_b, mid)
            if np.all(hi_b - lo_b <= tol):
                break
        res[bad] = 0.5 * (lo_b + hi_b)
    out[idx] = res
    return out


def eps_loc_scalar(
    log_prior: list[float] | np.ndarray,
    log_cond: list[list[float]] | np.ndarray,
    c_hat: int | None = None,
    tol: float = 1e-12,
) -> float:
    """Reference implementation of eps_loc for ONE instance: scalar bisection in pure Python.

    ``log_prior[c] = log p(c)``, ``log_cond[c][i] = log p(f_i | c)``. Same equation as
    :func:`eps_loc` (Theorem 6.1) evaluated in the linear domain, one instance at a time; used by
    the benchmark and the tests as the slow baseline. Being linear, it returns 0 when
    ``p(c_hat, f)`` underflows (many features); :func:`eps_loc` does not.
    """
    k = len(log_prior)
    prior = [math.exp(v) for v in log_prior]
    cond = [[math.exp(v) for v in log_cond[c]] for c in range(k)]
    joint = [prior[c] * math.prod(cond[c]) for c in range(k)]
    if c_hat is None:
        c_hat = max(range(k), key=lambda c: (joint[c], -c))
    target = joint[c_hat]
    if target <= 0 or any(joint[c] >= target for c in range(k) if c != c_hat):
        return 0.0
    lo, hi = 0.0, 0.5
    for _ in range(n_bisection_steps(tol)):
        mid = 0.5 * (lo + hi)
        t = mid / (1.0 - mid)
        phi = max(
            (prior[c] + t) * math.prod(p + t for p in cond[c]) for c in range(k) if c != c_hat
        )
        if phi >= target:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)
