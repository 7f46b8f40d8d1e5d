"""Dynamic selection by robustness: for each prediction, one of two fitted models, chosen by how
robust each model's prediction is (RS-D and RS-I; Lassance & De Bock, "robustness
quantification for any discriminative classifier", arXiv 2603.23318, UAI 2026).

The rule, on fitted classifiers ``M_1, ..., M_m`` (``m >= 2``) that share their classes:

1. On a validation set, rank the models by accuracy; ``M1`` is the most accurate and ``M2``
   the second. Ties: ``convention="tie-consistent"`` (the default) gives them to the model
   listed first; ``convention="reference"`` to the model listed last, as the authors' code
   (``scores.argsort()[::-1]``: an ascending stable order, reversed).
2. Per prediction, the robustness ratio ``q(x) = s_2(x) / s_1(x)``, where ``s_j(x) >= 0`` is
   a reliability score of ``M_j``'s prediction for ``x`` (higher = more robust). The default
   score is the log-ratio ``r(x) = ln p_(1) - ln p_(2)`` of the model's two largest class
   probabilities, a ``p_(2)`` of exactly 0 replaced by ``floor = 0.001`` before the log, as in
   the authors' code (:func:`protocol_log_ratio`). Conventions: ``s_1 = 0 < s_2`` gives
   ``q = +inf`` (only ``M2`` is robust); ``s_1 = s_2 = 0`` gives ``q = 1`` (equally robust).
3. A cut ``c`` on ``q``: ``M2`` predicts where ``q(x) > c``, ``M1`` elsewhere. Two
   conventions choose it on the validation set.

   ``convention="tie-consistent"``, with ``v_1 < ... < v_k`` the distinct values of ``q``
   (ties in ``q`` are handled as the rule applies them: all predictions of one ratio go to
   the same model, so the cut does not depend on the order of the rows):

   - **RS-D** (best accuracy): ``c`` among ``v_1, ..., v_k`` maximising the validation
     accuracy of the combined prediction; the first maximum (the smallest such cut, i.e. the
     most use of ``M2``), and ``c = v_k`` (``M1`` everywhere) reported as ``+inf``. The
     predictions of the smallest ratio always stay with ``M1``.
   - **RS-I** (largest improvement): ``c`` among ``-inf, v_1, ..., v_{k-1}`` maximising
     ``acc(M2) - acc(M1)`` on the validation predictions above the cut (``q > c``); the first
     maximum; ``c = +inf`` (``M1`` everywhere) when that difference is never positive.

   ``convention="reference"``, the authors' ``dynsel.acc_dyn_sel`` index for index: the
   validation rows sorted by ``q`` (positions ``0..n-1``, ascending; ties kept in row order
   by a stable sort, where the authors' default ``argsort`` leaves their order to numpy's
   unstable quicksort), ``a_i``, ``b_i`` whether ``M1``, ``M2`` is right at position ``i``:

   - **RS-D**: ``i* = argmax_i (sum_{j <= i} a_j + sum_{j > i} b_j)`` (the first maximum;
     their ``M2_res`` shifted by one position, a 0 appended), ``c = q_(i*)``, and ``c = +inf``
     when ``q_(i*)`` equals the largest ratio.
   - **RS-I**: ``g_i = (sum_{j >= i} b_j - sum_{j >= i} a_j) / (n - i)``; when some
     ``g_i > 0``, ``i* = argmax_i g_i`` (the first maximum) and ``c = q_(i*)``: the gain is
     scored on the positions from ``i*`` on, but ``q > q_(i*)`` applies ``M2`` from the next
     distinct ratio on; ``c = +inf`` when no ``g_i`` is positive.

   Without ties in ``q`` the two RS-D cuts are equal; the RS-I cuts differ by one position.

Public API: :class:`RobustnessSelector`, :func:`protocol_log_ratio`,
:func:`robustness_ratio`, :func:`rs_d_cut`, :func:`rs_i_cut`, :func:`rank_models`,
:data:`SELECTION_RULES`, :data:`SELECTION_CONVENTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from reliquant.compare.probability_scores import DEFAULT_FLOOR, log_ratio
from reliquant.compare.rejection import check_score
from reliquant.core.labels import match_labels

__all__ = [
    "SELECTION_CONVENTIONS",
    "SELECTION_RULES",
    "RobustnessSelector",
    "protocol_log_ratio",
    "rank_models",
    "robustness_ratio",
    "rs_d_cut",
    "rs_i_cut",
]

#: The two selection rules of the log-ratio follow-up.
SELECTION_RULES = ("RS-D", "RS-I")
#: How ties and cuts are resolved (module docstring): ours, or the authors' code's.
SELECTION_CONVENTIONS = ("tie-consistent", "reference")


def _check_convention(convention: str) -> str:
    if convention not in SELECTION_CONVENTIONS:
        raise ValueError(f"convention must be one of {SELECTION_CONVENTIONS}; got {convention!r}")
    return convention


def rank_models(accuracies: ArrayLike, *, convention: str = "tie-consistent") -> np.ndarray:
    """Model indices from the most to the least accurate (module docstring, step 1): ties to
    the model listed first (``"tie-consistent"``) or last (``"reference"``, the authors'
    ``scores.argsort()[::-1]``)."""
    acc = np.asarray(accuracies, dtype=np.float64)
    if acc.ndim != 1 or acc.size < 2 or np.isnan(acc).any():
        raise ValueError(f"accuracies must be 1-D, at least two, no NaN; got {acc!r}")
    if _check_convention(convention) == "reference":
        return np.argsort(acc, kind="stable")[::-1].copy()
    return np.argsort(-acc, kind="stable")


def protocol_log_ratio(proba: ArrayLike, *, floor: float = DEFAULT_FLOOR) -> np.ndarray:
    """``r(x) = ln p_(1) - ln p_(2)`` per row, with a ``p_(2)`` of exactly 0 replaced by
    ``floor`` (the authors' code): :func:`reliquant.compare.log_ratio` with
    ``zero_only=True`` (its default clamps every ``p_(2)`` below ``floor``, which ties more
    predictions). ``(n,)``, ``>= 0``."""
    return log_ratio(proba, floor=floor, zero_only=True)


def _check_scores(s: ArrayLike, name: str) -> np.ndarray:
    v = check_score(s, name)  # 1-D, real, non-empty, no NaN
    bad = np.flatnonzero(~(np.isfinite(v) & (v >= 0)))
    if bad.size:
        raise ValueError(
            f"{name} must be finite and >= 0 (a robustness, higher = more robust); "
            f"{bad.size} value(s) are not, first at row {bad[0]}: {v[bad[0]]!r}"
        )
    return v


def robustness_ratio(s1: ArrayLike, s2: ArrayLike) -> np.ndarray:
    """``q = s2 / s1`` per prediction (module docstring, step 2): ``+inf`` where only ``s2`` is
    positive, 1 where both are 0. Both inputs finite and ``>= 0`` (``ValueError``)."""
    a, b = _check_scores(s1, "s1"), _check_scores(s2, "s2")
    if a.shape != b.shape:
        raise ValueError(f"s1 and s2 must have the same length; got {a.size} and {b.size}")
    q = np.ones_like(a)
    pos = a > 0
    q[pos] = b[pos] / a[pos]
    q[~pos & (b > 0)] = np.inf
    return q


def _groups(
    q: np.ndarray, correct1: ArrayLike, correct2: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ratios (ascending) with, per ratio, the count of predictions and of those
    ``M1`` and ``M2`` get right."""
    c1 = np.asarray(correct1, dtype=bool)
    c2 = np.asarray(correct2, dtype=bool)
    q = np.asarray(q, dtype=np.float64)
    if not (q.ndim == 1 and q.shape == c1.shape == c2.shape and q.size > 0):
        raise ValueError(
            f"q, correct1 and correct2 must be 1-D of one non-zero length; got shapes "
            f"{q.shape}, {c1.shape}, {c2.shape}"
        )
    if np.isnan(q).any():
        raise ValueError("q holds NaN")
    values, inverse = np.unique(q, return_inverse=True)
    n = np.bincount(inverse, minlength=values.size)
    k1 = np.bincount(inverse, weights=c1, minlength=values.size)
    k2 = np.bincount(inverse, weights=c2, minlength=values.size)
    return values, n, k1, k2


def _positions(
    q: ArrayLike, correct1: ArrayLike, correct2: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ratios sorted ascending (a stable sort: ties in row order) with ``M1``'s and
    ``M2``'s right answers in that order (``convention="reference"``)."""
    q = np.asarray(q, dtype=np.float64)
    _groups(q, correct1, correct2)  # the same checks
    order = np.argsort(q, kind="stable")
    a = np.asarray(correct1, dtype=np.int64)[order]
    b = np.asarray(correct2, dtype=np.int64)[order]
    return q[order], a, b


def rs_d_cut(
    q: ArrayLike, correct1: ArrayLike, correct2: ArrayLike, *, convention: str = "tie-consistent"
) -> float:
    """RS-D's cut (module docstring, step 3). ``"tie-consistent"``: among the distinct
    validation ratios, the first that maximises the count of right predictions with ``M1``
    where ``q <= c`` and ``M2`` where ``q > c``; ``+inf`` when that is the largest ratio
    (``M1`` everywhere). ``"reference"``: the same over sorted positions,
    ``argmax_i sum_{j <= i} a_j + sum_{j > i} b_j``."""
    if _check_convention(convention) == "reference":
        qs, a, b = _positions(q, correct1, correct2)
        right = np.cumsum(a) + (b.sum() - np.cumsum(b))
        cut = float(qs[int(np.argmax(right))])
        return float("inf") if cut == qs[-1] else cut
    values, _, k1, k2 = _groups(np.asarray(q, dtype=np.float64), correct1, correct2)
    right = np.cumsum(k1) + (k2.sum() - np.cumsum(k2))
    best = int(np.argmax(right))
    return float("inf") if best == values.size - 1 else float(values[best])


def rs_i_cut(
    q: ArrayLike, correct1: ArrayLike, correct2: ArrayLike, *, convention: str = "tie-consistent"
) -> float:
    """RS-I's cut (module docstring, step 3). ``"tie-consistent"``: the cut ``c`` in ``-inf,
    v_1, ..., v_{k-1}`` whose predictions above it (``q > c``) gain most from ``M2``
    (``acc(M2) - acc(M1)`` on them); the first maximum; ``+inf`` when no gain is positive.
    ``"reference"``: ``g_i`` over the sorted positions from ``i`` on, ``c = q_(i*)`` at the
    first maximum, ``+inf`` when no ``g_i`` is positive."""
    if _check_convention(convention) == "reference":
        qs, a, b = _positions(q, correct1, correct2)
        suffix = np.cumsum((b - a)[::-1])[::-1]
        gain = suffix / np.arange(qs.size, 0, -1)
        if not (gain > 0).any():
            return float("inf")
        return float(qs[int(np.argmax(gain))])
    values, n, k1, k2 = _groups(np.asarray(q, dtype=np.float64), correct1, correct2)
    # predictions with q >= v_j, j = 0..k-1: suffix sums
    above_n = np.cumsum(n[::-1])[::-1]
    gain = (np.cumsum((k2 - k1)[::-1])[::-1]) / above_n
    best = int(np.argmax(gain))
    if not gain[best] > 0:
        return float("inf")
    return float("-inf") if best == 0 else float(values[best - 1])


def _classes(model: Any, i: int) -> np.ndarray:
    classes = getattr(model, "classes_", None)
    if classes is None or not hasattr(model, "predict_proba"):
        raise TypeError(
            f"models[{i}] ({type(model).__name__}) is not a fitted classifier with classes_ and "
            "predict_proba: fit it first, or pass a scikit-learn-style classifier"
        )
    return np.asarray(classes)


class RobustnessSelector:
    """Per prediction, the best or the second-best of fitted ``models`` by robustness (RS-D
    or RS-I; module docstring), in scikit-learn's style: :meth:`fit` on a validation set,
    then :meth:`predict` / :meth:`predict_proba`.

    Parameters
    ----------
    models : sequence of classifiers
        At least two fitted classifiers with ``predict_proba`` and the same ``classes_``.
    rule : str
        ``"RS-D"`` (best validation accuracy) or ``"RS-I"`` (largest improvement).
    robustness : callable, optional
        Reliability of one model's predictions from its probabilities, ``(n, K) -> (n,)``,
        finite and ``>= 0``, higher = more robust; default :func:`protocol_log_ratio`.
    convention : str
        ``"tie-consistent"`` (default: ties of accuracy to the model listed first, ties of
        ratio to one model, the cut applied as scored; independent of the row order) or
        ``"reference"`` (the authors' code index for index; module docstring).

    Attributes
    ----------
    classes_ : numpy.ndarray
        The models' shared classes (set by :meth:`fit`, as every attribute below).
    validation_accuracies_ : numpy.ndarray
        Each model's validation accuracy, in the order given.
    first_, second_ : int
        Indices into ``models`` of ``M1`` and ``M2``.
    cut_ : float
        The cut on ``q = s_2 / s_1``: ``M2`` predicts where ``q > cut_``.
    validation_accuracy_ : float
        The selector's own accuracy on the validation set.
    second_share_ : float
        The share of validation predictions given to ``M2``.
    """

    def __init__(
        self,
        models: Sequence[Any],
        *,
        rule: str = "RS-D",
        robustness: Callable[[np.ndarray], np.ndarray] | None = None,
        convention: str = "tie-consistent",
    ) -> None:
        self.models = models
        self.rule = rule
        self.robustness = robustness
        self.convention = convention

    # ----------------------------------------------------------------- checks
    def _check_setup(self) -> np.ndarray:
        if self.rule not in SELECTION_RULES:
            raise ValueError(f"rule must be one of {SELECTION_RULES}; got {self.rule!r}")
        _check_convention(self.convention)
        if self.robustness is not None and not callable(self.robustness):
            raise TypeError(
                f"robustness must be callable (proba -> scores); got {self.robustness!r}"
            )
        models = list(self.models)
        if len(models) < 2:
            raise ValueError(
                f"models: need at least two fitted models to select; got {len(models)}"
            )
        classes = [_classes(m, i) for i, m in enumerate(models)]
        for i, c in enumerate(classes[1:], start=1):
            if c.shape != classes[0].shape or not np.array_equal(c, classes[0]):
                raise ValueError(
                    f"models disagree on their classes: models[0] has {classes[0].tolist()}, "
                    f"models[{i}] has {c.tolist()}; fit every model on the same labels"
                )
        return classes[0]

    def _classes_of(self, y: ArrayLike, n: int) -> np.ndarray:
        """``y`` in the spelling of the models' classes, matched by value
        (:func:`reliquant.core.labels.match_labels`: ``1.0`` and ``"1"`` are the class ``1``);
        a missing label, or one that is none of the classes, refused naming its row."""
        labels = np.asarray(y)
        if labels.ndim != 1 or labels.size != n:
            raise ValueError(
                f"y must be 1-D with one label per row of X ({n}); got shape {labels.shape}"
            )
        codes = match_labels(y if isinstance(y, list | tuple) else labels, self.classes_, what="y")
        return self.classes_[codes]

    def _check_labels(self, y: ArrayLike, n: int) -> np.ndarray:
        labels = self._classes_of(y, n)
        if np.unique(labels).size < 2:
            raise ValueError(
                f"y holds one class only ({labels[0]!r}): a validation set must hold at least two "
                "classes to rank the models and choose a cut"
            )
        return labels

    def _scores(self, proba: np.ndarray, which: str) -> np.ndarray:
        s = protocol_log_ratio(proba) if self.robustness is None else self.robustness(proba)
        return _check_scores(s, f"robustness of {which}")

    def _check_fitted(self) -> None:
        if not hasattr(self, "cut_"):
            raise RuntimeError(
                "this RobustnessSelector is not fitted: call fit(X_val, y_val) first"
            )

    # --------------------------------------------------------------- the rule
    def fit(self, X: Any, y: ArrayLike) -> RobustnessSelector:
        """Rank the models by accuracy on the validation set ``(X, y)`` and choose the cut
        (module docstring, steps 1-3). ``X`` is passed to the models as given."""
        self.classes_ = self._check_setup()
        predictions = [np.asarray(m.predict(X)) for m in self.models]
        y = self._check_labels(y, len(predictions[0]))
        self.validation_accuracies_ = np.array([float(np.mean(p == y)) for p in predictions])
        order = rank_models(self.validation_accuracies_, convention=self.convention)
        self.first_, self.second_ = int(order[0]), int(order[1])
        q = self._ratio(X)
        right1, right2 = predictions[self.first_] == y, predictions[self.second_] == y
        cut = rs_d_cut if self.rule == "RS-D" else rs_i_cut
        self.cut_ = cut(q, right1, right2, convention=self.convention)
        use_second = q > self.cut_
        self.second_share_ = float(use_second.mean())
        self.validation_accuracy_ = float(np.mean(np.where(use_second, right2, right1)))
        return self

    def _ratio(self, X: Any) -> np.ndarray:
        m1, m2 = self.models[self.first_], self.models[self.second_]
        return robustness_ratio(
            self._scores(m1.predict_proba(X), f"models[{self.first_}]"),
            self._scores(m2.predict_proba(X), f"models[{self.second_}]"),
        )

    def use_second(self, X: Any) -> np.ndarray:
        """Boolean ``(n,)``: where ``M2`` (``models[second_]``) predicts (``q > cut_``)."""
        self._check_fitted()
        return self._ratio(X) > self.cut_

    def predict(self, X: Any) -> np.ndarray:
        """Per row, the prediction of ``M2`` where :meth:`use_second`, else of ``M1``."""
        second = self.use_second(X)
        p1 = np.asarray(self.models[self.first_].predict(X))
        p2 = np.asarray(self.models[self.second_].predict(X))
        return np.where(second, p2, p1)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Per row, the class probabilities of the model chosen for it, ``(n, K)``."""
        second = self.use_second(X)
        p1 = np.asarray(self.models[self.first_].predict_proba(X), dtype=np.float64)
        p2 = np.asarray(self.models[self.second_].predict_proba(X), dtype=np.float64)
        return np.where(second[:, None], p2, p1)

    def score(self, X: Any, y: ArrayLike) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``."""
        predicted = self.predict(X)
        return float(np.mean(predicted == self._classes_of(y, len(predicted))))
