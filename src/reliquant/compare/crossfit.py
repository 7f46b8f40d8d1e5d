"""Cross-fitting the choice of the two compared scores: every group is judged exactly once, by
the scores picked without it (the verdict of :func:`reliquant.compare.which_score`).

**Units and folds.** With ``groups`` (one label per fitted model, e.g. the split) the units
are the groups, identified by their label values: sorted, never numbered by position or first
appearance. By default every group is its own fold (leave one group out: nothing is drawn);
``n_folds = K`` deals the sorted groups into ``K`` folds in an order drawn with
``block_rng(seed, "which_score", "folds")``. Without groups the units are ``K`` folds of the
predictions: the predictions are put in :func:`canonical_order` (a sort on their contents:
group, every score, correctness) and dealt into the folds, :data:`DEFAULT_DEALS` times in
orders drawn with ``block_rng(seed, "which_score", "folds", r)``; every deal is judged and
the test averages them (:func:`repeated_t`), so that the verdict does not rest on the luck
of one deal. Either way the
folds are a function of the rows' contents and ``seed``, never of the order the user's table
happens to have; two identical rows are interchangeable, so which of them lands in which fold
changes nothing.

**Cross-fitting.** ``A[s, u]`` is the AU-ARC of score ``s`` on unit ``u``'s predictions. For
fold ``k`` each family's pick is the score with the largest mean ``A[s, u]`` over the units
*outside* ``k`` (the first listed on a tie; the log-ratio only when no other robustness score
is given, :data:`reliquant.compare.families.PROBABILITY_ROBUSTNESS`):

    r_k = argmax_{s robustness} mean_{u not in k} A[s, u],
    q_k = argmax_{s uncertainty} mean_{u not in k} A[s, u],
    d_u = A[r_{k(u)}, u] - A[q_{k(u)}, u]                      (k(u): the fold of unit u).

Every unit is judged exactly once, by two scores picked on data it is not part of, so the
lucky pick of a best-of-several is not rewarded by the data that judges it; and every unit is
judged, so no fitted model is spent on the pick alone.

**The test: a paired t-test over the U units**, ``mean d -/+ t_{(1 + confidence)/2, U - 1}
sd(d) / sqrt(U)`` with ``U - 1`` degrees of freedom (:func:`reliquant.compare.paired_t`).
Why t: with groups, each ``d_u`` comes from its own training set and test rows, so the
spread of the ``d_u`` carries the variation over training sets; it is the workflow's test
(docs/compare.md), and with few groups the t quantile (not the normal one) keeps the level.
When every fold picks the same two scores, ``d_u`` is the paired difference of two fixed
scores and the test is exactly the workflow's; when the picks differ between folds the
``d_u`` of different folds depend on each other through the picks (each pick reads ``U - |k|``
of the units), a dependence that shrinks as the picks settle, and ``judged`` shows which
fold picked what. Without groups the ``d_u`` are the folds' differences for one fitted model
(the interval carries the variation of the test predictions only), over several deals:
:func:`repeated_t` averages the deals' means and their variances, ``U - 1`` degrees of
freedom.

**Fewest units.** :data:`MIN_UNITS` = 3 (2 degrees of freedom; with 2 units, ``t_{0.975, 1}
= 12.7`` and one difference estimates the spread) is refused below; fewer than
:data:`FEW_UNITS` = 5 warns: ``t_{0.975, 3} = 3.18`` makes the interval 1.6 times the normal
one's and the spread rests on four values. A group needs at least 2 predictions (a single
prediction's AU-ARC is its correctness, whatever the score: every score would tie).

Public API: :data:`MIN_UNITS`, :data:`FEW_UNITS`, :data:`DEFAULT_FOLDS`,
:data:`DEFAULT_DEALS`, :data:`JUDGED_COLUMNS`, :func:`group_labels`, :func:`canonical_order`,
:func:`deal_folds`, :class:`Units`, :func:`prediction_units`, :func:`group_units`,
:func:`unit_auarc`, :func:`family_candidates`, :class:`CrossFit`, :func:`cross_fit`,
:func:`repeated_t`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from reliquant.compare.families import FAMILIES, PROBABILITY_ROBUSTNESS
from reliquant.compare.paired_stats import identical_ranking, paired_t
from reliquant.compare.rejection import auarc_rows
from reliquant.core.arguments import check_int
from reliquant.core.labels import factorize_labels
from reliquant.core.seeding import block_rng

__all__ = [
    "DEFAULT_DEALS",
    "DEFAULT_FOLDS",
    "FEW_UNITS",
    "JUDGED_COLUMNS",
    "MIN_UNITS",
    "CrossFit",
    "Units",
    "canonical_order",
    "cross_fit",
    "deal_folds",
    "family_candidates",
    "group_labels",
    "group_units",
    "prediction_units",
    "repeated_t",
    "unit_auarc",
]

#: Fewest units (groups, or folds without groups) of the t-test: refused below (docstring).
MIN_UNITS = 3
#: Fewer units than this warn (docstring).
FEW_UNITS = 5
#: Folds of the predictions without groups.
DEFAULT_FOLDS = 10
#: Deals of the predictions into folds without groups (each judged; module docstring).
DEFAULT_DEALS = 10

#: The columns of :attr:`reliquant.compare.ScoreVerdict.judged`: one row per unit.
JUDGED_COLUMNS = (
    "unit",  # the group label (with groups) or the fold number (without)
    "deal",  # int: the deal of the predictions into folds (0 with groups)
    "fold",  # int: the fold whose picks judge it
    "n",  # int: its predictions
    "robustness",  # str: the robustness pick of its fold (picked without this fold)
    "uncertainty",  # str: the uncertainty pick of its fold
    "auarc_robustness",  # float: A[r_k, u]
    "auarc_uncertainty",  # float: A[q_k, u]
    "diff",  # float: d_u
)


def group_labels(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, labels)``: the distinct labels of ``groups``, compared by value (``1``,
    ``1.0`` and ``"1"`` are one group; a missing label refused naming its row:
    :func:`reliquant.core.labels.factorize_labels`), sorted by value (mixed types by type
    name, then text), and each prediction's index into them, so that a group's number depends
    on its label only, never on where its rows are."""
    first, uniques = factorize_labels(groups, what="groups")
    labels = uniques.tolist()
    try:
        ordered = sorted(range(len(labels)), key=lambda j: labels[j])
    except TypeError:
        ordered = sorted(
            range(len(labels)), key=lambda j: (type(labels[j]).__name__, str(labels[j]))
        )
    rank = np.empty(len(labels), dtype=np.int64)
    rank[ordered] = np.arange(len(labels), dtype=np.int64)
    return rank[first], uniques[ordered]


def canonical_order(s: np.ndarray, c: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
    """The order of the predictions sorted on their contents: group code first (when given),
    then every score in turn, then correctness (``numpy.lexsort``). Two orders of the same
    rows give the same sequence of rows; rows it cannot tell apart are identical."""
    keys = [c.astype(np.int8), *s[::-1]]
    if codes is not None:
        keys.append(codes)
    return np.lexsort(keys)


def deal_folds(n_units: int, n_folds: int, seed: int) -> np.ndarray:
    """The fold of each of ``n_units`` units (in canonical order): one fold per unit when
    ``n_folds == n_units`` (no draw), else the units dealt round robin into ``n_folds``
    folds in an order drawn with ``block_rng(seed, "which_score", "folds")`` (sizes differ by
    at most one)."""
    if n_folds == n_units:
        return np.arange(n_units)
    fold = np.empty(n_units, dtype=np.int64)
    fold[block_rng(seed, "which_score", "folds").permutation(n_units)] = (
        np.arange(n_units) % n_folds
    )
    return fold


@dataclass(frozen=True)
class Units:
    """The units of one call (in canonical order): each one's prediction indices, label and
    fold, and the fold of each prediction."""

    method: str  # "groups" or "folds"
    members: list[np.ndarray]
    labels: np.ndarray
    unit_fold: np.ndarray
    prediction_fold: np.ndarray

    @property
    def n_folds(self) -> int:
        return int(self.unit_fold.max()) + 1


def _few_units(n: int, what: str) -> None:
    """Warn (``UserWarning``, at the caller of :func:`reliquant.compare.which_score`) when
    ``n`` units are fewer than :data:`FEW_UNITS`."""
    if n < FEW_UNITS:
        warnings.warn(
            f"{what}: {n} units give a t-interval with {n - 1} degrees of freedom, wide and "
            f"resting on {n} values; {FEW_UNITS} or more are better",
            UserWarning,
            stacklevel=4,
        )


def prediction_units(
    n: int, folds: int | None, seed: int, deals: int = DEFAULT_DEALS
) -> list[Units]:
    """Without groups: ``deals`` deals (:data:`DEFAULT_DEALS`) of the ``n`` predictions (in
    canonical order) into ``folds`` folds (default :data:`DEFAULT_FOLDS`, at least
    :data:`MIN_UNITS`), deal ``r`` drawn with ``block_rng(seed, "which_score", "folds", r)``;
    each fold a unit of the t-test. Refused when a fold would hold fewer than 2
    predictions."""
    k = DEFAULT_FOLDS if folds is None else check_int(folds, "folds", minimum=MIN_UNITS)
    if n < 2 * k:
        raise ValueError(
            f"{n} prediction(s) cannot fill {k} folds of at least 2: the verdict is tested "
            f"over folds of the predictions; pass at least {2 * k} predictions, a smaller "
            f"folds= (at least {MIN_UNITS}, so at least {2 * MIN_UNITS} predictions), or "
            "groups= (one label per fitted model)"
        )
    _few_units(k, f"folds={k}")
    out = []
    for r in range(deals):
        fold = np.empty(n, dtype=np.int64)
        fold[block_rng(seed, "which_score", "folds", r).permutation(n)] = np.arange(n) % k
        members = [np.flatnonzero(fold == j) for j in range(k)]
        out.append(Units("folds", members, np.arange(k), np.arange(k), fold))
    return out


def group_units(codes: np.ndarray, labels: np.ndarray, folds: int | None, seed: int) -> list[Units]:
    """With groups: one deal, every group a unit, its fold by :func:`deal_folds` (one per
    group by default). Refuses fewer than :data:`MIN_UNITS` groups and groups of one
    prediction."""
    n_groups = labels.size
    if n_groups < MIN_UNITS:
        raise ValueError(
            f"groups has {n_groups} distinct group(s); the cross-fitted t-test over groups "
            f"needs at least {MIN_UNITS} (each judged by the scores picked on the others, "
            f"{MIN_UNITS - 1} degrees of freedom): pass more groups, or groups=None for folds "
            "of the predictions"
        )
    members = [np.flatnonzero(codes == k) for k in range(n_groups)]
    single = [labels[k] for k, m in enumerate(members) if m.size < 2]
    if single:
        raise ValueError(
            f"groups has {len(single)} group(s) of a single prediction (e.g. {single[0]!r}): "
            "a group's AU-ARC needs at least 2 predictions (one prediction's AU-ARC is its "
            "correctness, the same for every score); groups names the fitted model of each "
            "prediction, not the prediction itself"
        )
    k = n_groups if folds is None else check_int(folds, "folds", minimum=2)
    if k > n_groups:
        raise ValueError(f"folds={k} is more than the {n_groups} groups: at most one per group")
    _few_units(n_groups, f"groups has {n_groups} distinct groups")
    unit_fold = deal_folds(n_groups, k, seed)
    return [Units("groups", members, labels, unit_fold, unit_fold[codes])]


def unit_auarc(s: np.ndarray, c: np.ndarray, members: list[np.ndarray]) -> np.ndarray:
    """``A[s, u]``: the AU-ARC of every score on every unit's predictions, ``(S, U)``."""
    return np.column_stack(
        [auarc_rows(s[:, m], np.broadcast_to(c[m], (s.shape[0], m.size))) for m in members]
    )


def family_candidates(names: list[str], fam: list[str]) -> dict[str, list[int]]:
    """The scores each family may pick (indices into ``names``): every score of the family,
    the log-ratio on the robustness side only when it is alone there."""
    out = {}
    for family in FAMILIES:
        members = [j for j, f in enumerate(fam) if f == family]
        perturbed = [j for j in members if names[j] not in PROBABILITY_ROBUSTNESS]
        if perturbed or members:
            out[family] = perturbed or members
    return out


def _pick(values: np.ndarray, candidates: list[int]) -> int:
    """The candidate with the largest value, the first listed on a tie."""
    return max(candidates, key=lambda j: values[j])


@dataclass(frozen=True)
class CrossFit:
    """The cross-fitted comparison of :func:`cross_fit` (module docstring).

    ``picks``: ``(K, 2)`` score indices of each fold's robustness and uncertainty pick;
    ``final``: the two picks on all units (the scores to use); ``unit_fold``: ``(U,)``;
    ``a``, ``b``: ``(U,)`` ``A[r_k(u), u]`` and ``A[q_k(u), u]``; ``diffs = a - b``;
    ``same``: whether in every unit the two picks of its fold rank its predictions
    identically, ties included."""

    picks: np.ndarray
    final: tuple[int, int]
    unit_fold: np.ndarray
    a: np.ndarray
    b: np.ndarray
    same: bool

    @property
    def diffs(self) -> np.ndarray:
        return self.a - self.b

    def times_picked(self, n_scores: int) -> np.ndarray:
        """How many folds picked each score (either family)."""
        return np.bincount(self.picks.ravel(), minlength=n_scores)


def cross_fit(
    per_unit: np.ndarray,
    unit_fold: np.ndarray,
    candidates: dict[str, list[int]],
    s: np.ndarray,
    members: list[np.ndarray],
) -> CrossFit:
    """Each fold's picks on the other folds' units, and every unit judged by its fold's
    picks (module docstring). ``per_unit``: ``A`` ``(S, U)``; ``unit_fold``: each unit's
    fold; ``candidates``: :func:`family_candidates` (both families present); ``s``, ``members``:
    the scores and each unit's prediction indices, for the identical-ranking check."""
    rob, unc = candidates["robustness"], candidates["uncertainty"]
    n_folds = int(unit_fold.max()) + 1
    picks = np.empty((n_folds, 2), dtype=np.int64)
    for k in range(n_folds):
        rest = per_unit[:, unit_fold != k].mean(axis=1)
        picks[k] = _pick(rest, rob), _pick(rest, unc)
    every = per_unit.mean(axis=1)
    units = np.arange(per_unit.shape[1])
    r, q = picks[unit_fold, 0], picks[unit_fold, 1]
    same = all(identical_ranking(s[r[u], members[u]], s[q[u], members[u]]) for u in units)
    return CrossFit(picks=picks, final=(_pick(every, rob), _pick(every, unc)),
                    unit_fold=unit_fold, a=per_unit[r, units], b=per_unit[q, units],
                    same=same)  # fmt: skip


def repeated_t(diffs: list[np.ndarray], confidence: float) -> dict[str, float]:
    """The t-test of the mean paired difference over ``R`` deals of ``U`` units each
    (``diffs[r]``: the ``U`` differences of deal ``r``; module docstring):

        mean = (1/R) sum_r mean(d_r),   se^2 = (1/R) sum_r var(d_r) / U   (var with ddof 1),
        interval: mean -/+ t_{(1 + confidence)/2, U - 1} se,   p: two-sided, U - 1 df.

    One deal: exactly :func:`reliquant.compare.paired_t`. Over several deals the mean of the
    deals' means varies less than one deal's mean (``Var(mean_r X_r) <= mean_r Var(X_r)``),
    so the averaged variance keeps the interval conservative while the deals' averages take
    the luck of one deal out of the verdict. Keys as :func:`reliquant.compare.paired_t`."""
    from scipy import stats

    if len(diffs) == 1:
        return paired_t(diffs[0], confidence)
    d = np.stack([np.asarray(x, dtype=np.float64) for x in diffs])
    mean, dof = float(d.mean()), d.shape[1] - 1
    se = float(np.sqrt(d.var(axis=1, ddof=1).mean() / d.shape[1]))
    half = float(stats.t.ppf((1 + confidence) / 2, dof)) * se
    p = float(2 * stats.t.sf(abs(mean) / se, dof)) if se > 0 else float(mean == 0)
    return {"diff_mean": mean, "diff_se": se, "ci_low": mean - half, "ci_high": mean + half,
            "p_value": p}  # fmt: skip
