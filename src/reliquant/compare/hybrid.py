"""A hybrid of one robustness (RQ) and one uncertainty (UQ) score, fitted on a validation split.

Detavernier & De Bock (arXiv 2512.15492, 2603.22988) find robustness and uncertainty
complementary and a combination better than either, reporting the relative importance of
the two per data set. Their exact rule is not reproduced; ours:

1. **Rank normalisation** (fitted on the validation split). For a score with validation
   values ``v_1..v_N``, each distinct value ``u`` gets its mid-rank ECDF
   ``F(u) = (#{v_i < u} + #{v_i <= u}) / (2 N)`` (ties share the average rank); any value
   ``s`` (validation or held-out) maps to ``np.interp(s, u, F(u))``: piecewise linear
   between the distinct validation values, so it keeps the order of held-out values that
   fall between two of them, and clamped at ``F(min)`` / ``F(max)`` outside their range.
   Both scores end up on the same [0, 1] scale, whatever their units.
2. **Logistic regression** of correctness on the two normalised scores (scikit-learn
   ``LogisticRegression``, L2 penalty with inverse strength ``C``):
   ``P(correct | r, u) = sigmoid(w_rq r + w_uq u + b)``.
3. The **hybrid score** is that probability (higher = more reliable). The weights are
   comparable because both inputs are ranks in [0, 1]: the relative importance of
   robustness is ``|w_rq| / (|w_rq| + |w_uq|)`` (a negative weight means the score, given
   the other, points the wrong way on this data).
4. :func:`evaluate_hybrid` reports the AU-ARC (:func:`reliquant.compare.auarc`) of the
   hybrid and of each score alone on the held-out predictions.

Public API: :class:`RankTransform`, :class:`HybridScore`, :func:`fit_rank_transform`,
:func:`fit_hybrid`, :func:`evaluate_hybrid`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from reliquant.compare.rejection import auarc, check_correct, check_score
from reliquant.core.arguments import check_real

__all__ = [
    "HybridScore",
    "RankTransform",
    "evaluate_hybrid",
    "fit_hybrid",
    "fit_rank_transform",
]


@dataclass(frozen=True)
class RankTransform:
    """The mid-rank ECDF of a validation score (module docstring, step 1): ``values`` its
    distinct values (ascending), ``ranks`` their ``F``; calling it maps any scores."""

    values: np.ndarray
    ranks: np.ndarray

    def __call__(self, score: ArrayLike, name: str = "score") -> np.ndarray:
        return np.interp(check_score(score, name), self.values, self.ranks)


def fit_rank_transform(reference: ArrayLike, name: str = "reference") -> RankTransform:
    """The :class:`RankTransform` of the validation values ``reference`` (no NaN). Infinite
    validation values count in the ranks but are not abscissae: an infinite score maps like
    one beyond the finite range (clamped)."""
    v = np.sort(check_score(reference, name))
    u = np.unique(v)
    below = np.searchsorted(v, u, side="left")
    upto = np.searchsorted(v, u, side="right")
    ranks = (below + upto) / (2.0 * v.size)
    finite = np.isfinite(u)
    if not finite.all():  # np.interp needs finite abscissae: keep the finite ones
        if not finite.any():
            raise ValueError(f"{name} has no finite value to rank against")
        u, ranks = u[finite], ranks[finite]
    return RankTransform(u, ranks)


@dataclass(frozen=True)
class HybridScore:
    """The fitted hybrid (module docstring): rank transforms of the RQ and UQ scores, the
    logistic weights ``weight_rq``, ``weight_uq`` and ``intercept``. Calling it on
    ``(rq, uq)`` gives the hybrid score ``P(correct)``, higher = more reliable."""

    rq_transform: RankTransform
    uq_transform: RankTransform
    weight_rq: float
    weight_uq: float
    intercept: float

    @property
    def importance_rq(self) -> float:
        """Relative importance of robustness: ``|w_rq| / (|w_rq| + |w_uq|)`` (0.5 if both 0)."""
        total = abs(self.weight_rq) + abs(self.weight_uq)
        return 0.5 if total == 0 else abs(self.weight_rq) / total

    @property
    def importance_uq(self) -> float:
        """Relative importance of uncertainty: ``1 - importance_rq``."""
        return 1.0 - self.importance_rq

    def __call__(self, rq: ArrayLike, uq: ArrayLike) -> np.ndarray:
        r = self.rq_transform(rq, "rq")
        u = self.uq_transform(uq, "uq")
        if r.shape != u.shape:
            raise ValueError(f"rq and uq must have the same length; got {r.size} and {u.size}")
        z = self.weight_rq * r + self.weight_uq * u + self.intercept
        return 1.0 / (1.0 + np.exp(-z))


def fit_hybrid(
    rq_val: ArrayLike, uq_val: ArrayLike, correct_val: ArrayLike, *, C: float = 1.0
) -> HybridScore:
    """Fit the hybrid on a validation split: rank transforms of ``rq_val`` and ``uq_val``
    (both higher = more reliable), then ``LogisticRegression(C=C)`` of ``correct_val`` on the
    two ranks. ``correct_val`` must hold both right and wrong predictions (``ValueError``);
    ``C`` a finite number > 0 (``TypeError`` / ``ValueError`` naming it)."""
    # imported on use: scikit-learn takes a second to import, and every job importing
    # reliquant.compare would pay it
    from sklearn.linear_model import LogisticRegression

    check_real(C, "C", low=0.0, low_open=True)
    c = check_correct(correct_val, "correct_val")
    rq_t = fit_rank_transform(rq_val, "rq_val")
    uq_t = fit_rank_transform(uq_val, "uq_val")
    r, u = rq_t(rq_val, "rq_val"), uq_t(uq_val, "uq_val")
    if not r.size == u.size == c.size:
        raise ValueError(
            f"rq_val, uq_val and correct_val must have the same length; got {r.size}, "
            f"{u.size} and {c.size}"
        )
    if c.all() or not c.any():
        raise ValueError(
            "correct_val must hold both right and wrong predictions to fit the hybrid; got "
            + ("all right" if c.all() else "all wrong")
        )
    lr = LogisticRegression(C=C).fit(np.column_stack([r, u]), c)
    return HybridScore(rq_t, uq_t, float(lr.coef_[0, 0]), float(lr.coef_[0, 1]),
                       float(lr.intercept_[0]))  # fmt: skip


def evaluate_hybrid(
    rq_val: ArrayLike,
    uq_val: ArrayLike,
    correct_val: ArrayLike,
    rq_test: ArrayLike,
    uq_test: ArrayLike,
    correct_test: ArrayLike,
    *,
    C: float = 1.0,
) -> dict[str, float]:
    """Fit the hybrid on the validation split (:func:`fit_hybrid`) and evaluate it on the
    held-out one: ``{"weight_rq", "weight_uq", "intercept", "importance_rq",
    "auarc_hybrid", "auarc_rq", "auarc_uq"}`` (AU-ARCs on the held-out predictions)."""
    hybrid = fit_hybrid(rq_val, uq_val, correct_val, C=C)
    ct = check_correct(correct_test, "correct_test")
    rq = check_score(rq_test, "rq_test")
    uq = check_score(uq_test, "uq_test")
    if not rq.size == uq.size == ct.size:
        raise ValueError(
            f"rq_test, uq_test and correct_test must have the same length; got {rq.size}, "
            f"{uq.size} and {ct.size}"
        )
    return {
        "weight_rq": hybrid.weight_rq,
        "weight_uq": hybrid.weight_uq,
        "intercept": hybrid.intercept,
        "importance_rq": hybrid.importance_rq,
        "auarc_hybrid": auarc(hybrid(rq, uq), ct),
        "auarc_rq": auarc(rq, ct),
        "auarc_uq": auarc(uq, ct),
    }
