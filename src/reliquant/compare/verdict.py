"""Which score should I trust? The best robustness score against the best uncertainty score,
judged with an interval, as one answer: :func:`which_score` returns a :class:`ScoreVerdict`
(the ranked table, the verdict, a sentence to act on, and ``.plot()``).

**Families** (:mod:`reliquant.compare.families`): a score is a *robustness* score (the
prediction survives a perturbation) or an *uncertainty* score (read from the predicted
distribution); :data:`SCORE_FAMILY` names the library's scores, ``families=`` others.

**One data set, one answer.** The answer is a function of the rows, never of their order:
groups are identified by their label values (sorted), and every step that draws (the folds
without groups, the bootstraps) runs on the predictions sorted on their contents
(:func:`reliquant.compare.crossfit.canonical_order`). Any order of the same rows gives the same
verdict, numbers and plot.

**The verdict is cross-fitted** (:mod:`reliquant.compare.crossfit`): each family's best is
picked on all groups but one fold and judged on that fold, so every group is judged exactly
once, by the two scores picked without it. With ``groups`` every group is its own fold by
default (leave one group out: nothing is drawn, ``seed`` does not matter); without, the units
are :data:`reliquant.compare.crossfit.DEFAULT_FOLDS` folds of the predictions. The per-unit
paired differences ``d_u = AU-ARC_u(r_k(u)) - AU-ARC_u(q_k(u))`` are tested with a paired
t-test over the ``U`` units (:func:`paired_t`):

    mean d -/+ t_{(1 + confidence)/2, U - 1} sd(d) / sqrt(U),   U - 1 degrees of freedom;

better when ``p < 1 - confidence`` (:func:`family_verdict`). With groups the spread of the
``d_u`` carries the variation over **training sets** (the workflow's test, docs/compare.md);
without, over the **test predictions of one fitted model only**, and the sentence says so.
Fewer than 3 units are refused, fewer than 5 warn (:mod:`reliquant.compare.crossfit`).

**Two AU-ARCs, named apart.** The ranked table holds every score's AU-ARC on *all*
predictions (with groups: the mean of the per-group AU-ARCs, t-interval over groups; without:
a percentile bootstrap, :func:`reliquant.compare.compare_scores`), the difference to the best
with its paired interval, the share of tied predictions (:func:`tied_share`) and how many
folds picked the score. The sentence quotes the *held-out* (cross-fitted) AU-ARC of the
verdict: each unit's AU-ARC under the picks made without it, averaged over units. Interval
bounds are clipped to the range of what they bound (an AU-ARC to [0, 1], a difference to
[-1, 1]). Two picks that rank every judged unit identically (ties included,
:func:`identical_ranking`; e.g. maximum probability and log-ratio with two classes) give the
verdict ``"identical ranking"``, not a test.

Public API: :data:`SCORE_FAMILY`, :data:`FAMILIES`, :data:`SCORE_VERDICTS`,
:data:`VERDICT_COLUMNS`, :data:`CURVE_COLUMNS`, :data:`JUDGED_COLUMNS`, :func:`score_family`,
:func:`paired_t`, :func:`family_verdict`, :func:`identical_ranking`, :func:`tied_share`,
:class:`ScoreVerdict`, :func:`which_score`, :func:`plot_accuracy_rejection`, :func:`curve_at`
(defined in :mod:`reliquant.compare.families`, :mod:`reliquant.compare.paired_stats`,
:mod:`reliquant.compare.rejection_plot` and :mod:`reliquant.compare.crossfit`, importable
from here as before).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.comparison import aligned_inputs, compare_scores, min_boot
from reliquant.compare.crossfit import (
    JUDGED_COLUMNS,
    Units,
    canonical_order,
    cross_fit,
    family_candidates,
    group_labels,
    group_units,
    prediction_units,
    repeated_t,
    unit_auarc,
)
from reliquant.compare.families import FAMILIES, SCORE_FAMILY, check_families, score_family
from reliquant.compare.paired_stats import (
    family_verdict,
    identical_ranking,
    paired_t,
    tied_share,
)
from reliquant.compare.recommendation import recommendation
from reliquant.compare.rejection_plot import (
    CURVE_COLUMNS,
    bootstrap_curves,
    curve_at,
    group_curves,
    plot_accuracy_rejection,
)
from reliquant.core.arguments import check_int, check_level, check_seed

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CURVE_COLUMNS",
    "FAMILIES",
    "JUDGED_COLUMNS",
    "SCORE_FAMILY",
    "SCORE_VERDICTS",
    "VERDICT_COLUMNS",
    "ScoreVerdict",
    "curve_at",
    "family_verdict",
    "identical_ranking",
    "paired_t",
    "plot_accuracy_rejection",
    "score_family",
    "tied_share",
    "which_score",
]

#: What :attr:`ScoreVerdict.verdict` can say.
SCORE_VERDICTS = (
    "robustness better",
    "uncertainty better",
    "undecided",
    "identical ranking",
    "no comparison",
)

#: The columns of :attr:`ScoreVerdict.table`, in order.
VERDICT_COLUMNS = (
    "score",  # str: the score's name
    "family",  # str: "robustness" or "uncertainty"
    "auarc",  # float: AU-ARC on all predictions (with groups: mean of the per-group AU-ARCs)
    "ci_low",  # float: its interval (groups: t over groups; else percentile bootstrap), >= 0
    "ci_high",  # float: ... upper end, <= 1
    "diff_vs_best",  # float: auarc - auarc of the first row (<= 0)
    "diff_ci_low",  # float: paired interval of that difference, lower end (>= -1)
    "diff_ci_high",  # float: ... upper end (<= 1)
    "tied",  # float: share of predictions tied with another (groups: mean over groups)
    "folds_picked",  # int: folds whose pick (made without them) it was
    "picked",  # bool: its family's best on all units: the score the sentence names
)

#: Bootstrap resamples of the pointwise band of the curves without groups (at most n_boot).
_BAND_RESAMPLES = 200


@dataclass(frozen=True, eq=False, repr=False)
class ScoreVerdict:
    """The answer of :func:`which_score` (module docstring).

    Attributes
    ----------
    table
        One row per score, best AU-ARC on all predictions first, columns
        :data:`VERDICT_COLUMNS`.
    curves
        Accuracy-rejection curves of every score on a grid of rejected fractions with a
        pointwise band, columns :data:`CURVE_COLUMNS` (what :meth:`plot` draws).
    judged
        One row per unit (group, or fold without groups), columns :data:`JUDGED_COLUMNS`:
        the picks that judged it (made without it) and its paired difference. Every unit
        appears exactly once.
    robustness, uncertainty
        Each family's best on all units: the scores the sentence names (None when the family
        has no score).
    auarc_robustness, auarc_uncertainty
        The held-out (cross-fitted) AU-ARC of each family's picks: the mean over units of
        the unit's AU-ARC under its fold's pick.
    diff, ci_low, ci_high, p_value, dof
        Mean paired difference over the units, its t-interval (clipped to [-1, 1]), the
        two-sided p-value and the degrees of freedom ``U - 1``
        (:func:`reliquant.compare.crossfit.repeated_t`).
    verdict
        One of :data:`SCORE_VERDICTS`; ``reason`` says why in words.
    recommendation
        One sentence to act on, with the numbers.
    method
        ``"groups"`` (units are the groups) or ``"folds"`` (folds of the predictions).
    fold
        The fold of each prediction (in the order of ``correct``; without groups, in the
        first deal).
    n_units, n_folds, n_deals
        Units of the t-test (per deal), folds of the cross-fitting, deals of the predictions
        into folds (1 with groups; without, :data:`reliquant.compare.crossfit.DEFAULT_DEALS`).
    confidence
        Level of every interval.
    """

    table: pd.DataFrame
    curves: pd.DataFrame
    judged: pd.DataFrame
    robustness: str | None
    uncertainty: str | None
    auarc_robustness: float
    auarc_uncertainty: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    dof: int
    verdict: str
    reason: str
    recommendation: str
    method: str
    fold: np.ndarray
    n_units: int
    n_folds: int
    n_deals: int
    confidence: float

    def _shown(self) -> pd.DataFrame:
        t = self.table
        ci = [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(t["ci_low"], t["ci_high"], strict=True)]
        dci = [f"[{lo:+.3f}, {hi:+.3f}]"
               for lo, hi in zip(t["diff_ci_low"], t["diff_ci_high"], strict=True)]  # fmt: skip
        return pd.DataFrame(
            {
                "score": t["score"],
                "family": t["family"],
                "AU-ARC (all)": t["auarc"].map("{:.3f}".format),
                "interval": ci,
                "vs best": t["diff_vs_best"].map("{:+.3f}".format),
                "interval ": dci,
                "tied": t["tied"].map("{:.0%}".format),
                "picked": [f"{k}/{self.n_folds * self.n_deals}" for k in t["folds_picked"]],
                "compared": np.where(t["picked"], "*", ""),
            }
        )

    def __repr__(self) -> str:
        pct = f"{100 * self.confidence:g} %"
        unit = "groups" if self.method == "groups" else "folds"
        how = "t over groups" if self.method == "groups" else "bootstrap over predictions"
        lines = [
            f"ScoreVerdict: {self.verdict} ({self.reason})",
            f"AU-ARC (all): on all predictions{' (mean over groups)' * (unit == 'groups')}, "
            f"{pct} intervals ({how}); picked: folds whose pick it was (made without them); "
            f"* = compared, its family's best on all {self.n_units} {unit}. The sentence's "
            "AU-ARC is held out (cross-fitted):",
            self._shown().to_string(index=False),
            self.recommendation,
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from html import escape

        return (
            f"<p><b>{escape(self.verdict)}</b> ({escape(self.reason)})</p>"
            + self._shown().to_html(index=False)
            + f"<p>{escape(self.recommendation)}</p>"
        )

    def plot(self, ax: Axes | None = None, *, bands: str = "compared") -> Axes:
        """Accuracy-rejection curves of every score (:func:`plot_accuracy_rejection`): a line
        per score (robustness solid, uncertainty dashed; the two compared drawn thicker) and
        the pointwise band of ``bands``: ``"compared"`` (the two compared, or the best score
        when there is no comparison), ``"all"`` or ``"none"``. Without groups the band is a
        percentile bootstrap over the predictions; with groups the t-interval of the mean
        curve over groups, clipped to [0, 1]. Returns the Axes."""
        if bands not in ("compared", "all", "none"):
            raise ValueError(f"bands must be 'compared', 'all' or 'none'; got {bands!r}")
        names = list(self.table["score"])
        shown = [s for s in (self.robustness, self.uncertainty) if s is not None]
        if self.verdict == "no comparison":
            shown = names[:1]
        banded = {"compared": shown, "all": names, "none": []}[bands]
        curves, band = {}, {}
        for name, rows in self.curves.groupby("score", sort=False):
            x = rows["rejected"].to_numpy()
            curves[name] = (x, rows["accuracy"].to_numpy())
            if name in banded:
                band[name] = (rows["band_low"].to_numpy(), rows["band_high"].to_numpy())
        fam = dict(zip(self.table["score"], self.table["family"], strict=True))
        title = f"{self.verdict}: {' vs '.join(shown)}" if shown else self.verdict
        return plot_accuracy_rejection({n: curves[n] for n in names}, bands=band, families=fam,
                                       highlight=shown, title=title, ax=ax)  # fmt: skip


def _table_by_groups(per_group: np.ndarray, confidence: float) -> list[np.ndarray]:
    """Mean AU-ARC per score over groups with its t-interval, and the paired difference to
    the score with the largest mean (the first on a tie) with its t-interval."""
    mean = per_group.mean(axis=1)
    best = int(np.argmax(mean))
    own = [paired_t(row, confidence) for row in per_group]
    diff = [paired_t(row - per_group[best], confidence) for row in per_group]
    pick = lambda rows, key: np.array([r[key] for r in rows])  # noqa: E731
    return [mean, pick(own, "ci_low"), pick(own, "ci_high"), pick(diff, "diff_mean"),
            pick(diff, "ci_low"), pick(diff, "ci_high")]  # fmt: skip


def which_score(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    families: Mapping[str, str] | None = None,
    groups: ArrayLike | None = None,
    folds: int | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    curve_points: int = 100,
    progress: bool | None = None,
) -> ScoreVerdict:
    """Which score to trust: every score ranked by AU-ARC on all predictions, and the best
    robustness score against the best uncertainty score, cross-fitted (each unit judged by
    the two scores picked without it) and tested with a paired t-test over the units, with a
    verdict and a recommendation (module docstring; :mod:`reliquant.compare.crossfit`).

    The test: ``d_u = AU-ARC_u(r_k(u)) - AU-ARC_u(q_k(u))`` per unit ``u`` (a group, or a fold
    of the predictions without groups), ``mean d -/+ t_{(1+confidence)/2, U-1} sd(d) /
    sqrt(U)`` with ``U - 1`` degrees of freedom. With ``groups`` it carries the variation
    over **training sets** (other fits of the model) and test rows; without, the variation of
    the **test predictions only** (the recommendation then says so).

    Parameters
    ----------
    scores
        Name -> score array (higher = more reliable), one value per prediction, or a
        DataFrame whose columns are the scores. Each name needs a family: a name of
        :data:`SCORE_FAMILY`, or one given in ``families``.
    correct
        Whether each prediction is right (bool, or 0/1 integers). Pandas inputs (``correct``,
        ``groups``, a DataFrame or Series of scores) are matched by index label, as in
        :func:`reliquant.compare.compare_scores`.
    families
        Name -> ``"robustness"`` or ``"uncertainty"``, for scores of other names (or to
        override :data:`SCORE_FAMILY`); a name that is not a score is refused.
    groups
        One label per prediction naming its group, e.g. the split (its own training set and
        fitted model) that made it: at least 3 groups of at least 2 predictions (fewer than 5
        warn). Groups are identified by their label values, whatever the rows' order; compared
        by value: 1, 1.0 and "1" are one group.
    folds
        Folds of the cross-fitting. With ``groups``: ``None`` (default) makes every group its
        own fold (leave one group out, nothing drawn); an integer ``2..G`` deals the groups
        into that many folds (seeded). Without: the folds of the predictions, which are the
        units of the t-test (default :data:`reliquant.compare.crossfit.DEFAULT_FOLDS`, at
        least 3, at most ``n / 2``).
    n_boot
        Bootstrap resamples of the ranked table without groups (at least
        :func:`reliquant.compare.min_boot` of ``confidence``); the curves' band uses
        ``min(n_boot, 200)``. Unused with groups.
    confidence
        Level of every interval, in (0, 1); the verdict's test is at ``1 - confidence``.
    seed
        Seed of the folds (without groups, or with ``folds=``), the bootstrap and the band
        (an integer >= 0). With groups and ``folds=None`` the answer does not depend on it.
    curve_points
        Rejected fractions ``j / curve_points`` at which :attr:`ScoreVerdict.curves` holds
        the curves (an integer >= 2).
    progress
        Without ``groups``: a progress bar over the ranked table's bootstrap resamples
        (:func:`reliquant.compare.compare_scores`; by default on in a terminal only).

    Returns
    -------
    ScoreVerdict
        ``table``, ``curves``, ``judged``, the two scores compared, their held-out difference,
        interval and degrees of freedom, ``verdict`` (:data:`SCORE_VERDICTS`),
        ``recommendation``; ``.plot()``.

    Raises ``ValueError`` naming the argument or score at fault: a score without a family (and
    the fix), inputs as in :func:`reliquant.compare.compare_scores`, fewer than 3 groups, a
    group of one prediction, too few predictions for the folds, too few resamples;
    ``TypeError`` for an argument of the wrong type. Warns (``UserWarning``) with fewer than 5
    units, and when no unit holds both a right and a wrong prediction (no score can be told
    apart: verdict ``"no comparison"``).
    """
    level = check_level(confidence)
    check_int(n_boot, "n_boot", minimum=1)
    check_seed(seed)
    points = check_int(curve_points, "curve_points", minimum=2)
    names, s_in, c_in, g_in = aligned_inputs(scores, correct, groups)
    fam = check_families(names, families)
    codes = labels = None
    if g_in is not None:
        codes, labels = group_labels(g_in)
    order = canonical_order(s_in, c_in, codes)  # every later step reads this order
    s, c = s_in[:, order], c_in[order]
    grid = np.arange(points) / points
    if codes is None:
        units = prediction_units(c.size, folds, seed)
        if n_boot < min_boot(level):
            raise ValueError(
                f"n_boot={n_boot} is too few resamples for a {level:g} percentile interval: "
                f"need n_boot >= {min_boot(level)} = ceil(2 / (1 - confidence))"
            )
        ranked = compare_scores(dict(zip(names, s, strict=True)), c, n_boot=n_boot,
                                confidence=level, seed=seed, progress=progress)  # fmt: skip
        columns = [ranked[k].to_numpy() for k in
                   ("auarc", "ci_low", "ci_high", "diff_vs_best", "diff_ci_low", "diff_ci_high")]  # fmt: skip
        tied = np.array([tied_share(row) for row in s])
        curves = bootstrap_curves(s, c, grid, min(n_boot, _BAND_RESAMPLES), level, seed)
    else:
        units = group_units(codes[order], labels, folds, seed)
        members = units[0].members
        columns = _table_by_groups(unit_auarc(s, c, members), level)
        tied = np.array([np.mean([tied_share(row[m]) for m in members]) for row in s])
        curves = group_curves(s, c, members, grid, level)
    columns = [np.clip(v, lo, 1.0) for v, lo in zip(columns, (0, 0, 0, -1, -1, -1), strict=True)]
    decided = _judge(names, fam, s, c, units, level)
    picked = np.isin(names, [decided["robustness"], decided["uncertainty"]])
    values = [names, fam, *columns, tied, decided.pop("times_picked"), picked]
    frame = pd.DataFrame(dict(zip(VERDICT_COLUMNS, values, strict=True)))
    # the best (diff_vs_best = 0: the first with the largest AU-ARC) stays first on a tie
    table = frame.iloc[np.argsort(-frame["auarc"].to_numpy(), kind="stable")]
    curve_frame = pd.DataFrame(
        {"score": np.repeat(names, points), "family": np.repeat(fam, points),
         "rejected": np.tile(grid, len(names)), "accuracy": curves[0].ravel(),
         "band_low": curves[1].ravel(), "band_high": curves[2].ravel()}
    )  # fmt: skip
    fold = np.empty(c.size, dtype=np.int64)
    fold[order] = units[0].prediction_fold
    result = {**decided, "method": units[0].method, "fold": fold,
              "n_units": len(units[0].members), "n_folds": units[0].n_folds,
              "n_deals": len(units), "confidence": level}  # fmt: skip
    result["recommendation"] = recommendation(result, table)
    return ScoreVerdict(table=table.reset_index(drop=True),
                        curves=curve_frame[list(CURVE_COLUMNS)], **result)  # fmt: skip


def _judge(
    names: list[str], fam: list[str], s: np.ndarray, c: np.ndarray, deals: list[Units],
    level: float,
) -> dict[str, Any]:  # fmt: skip
    """The cross-fitted comparison (:func:`reliquant.compare.crossfit.cross_fit`) of every
    deal, tested with :func:`reliquant.compare.crossfit.repeated_t`: the fields of
    :class:`ScoreVerdict` it decides, ``judged``, and ``times_picked`` per score."""
    nan = float("nan")
    judged = pd.concat(
        [pd.DataFrame({"unit": u.labels, "deal": r, "fold": u.unit_fold,
                       "n": [m.size for m in u.members]}) for r, u in enumerate(deals)],
        ignore_index=True,
    )  # fmt: skip
    out: dict[str, Any] = {"robustness": None, "uncertainty": None, "auarc_robustness": nan,
                           "auarc_uncertainty": nan, "diff": nan, "ci_low": nan,
                           "ci_high": nan, "p_value": nan, "dof": len(deals[0].members) - 1,
                           "times_picked": np.zeros(len(names), dtype=np.int64)}  # fmt: skip
    candidates = family_candidates(names, fam)
    informative = any(c[m].any() and not c[m].all() for m in deals[0].members)
    if len(candidates) < 2 or not informative:
        if len(candidates) < 2:
            (present,) = candidates  # every score has a family: one of the two is present
            missing = next(f for f in FAMILIES if f not in candidates)
            reason = f"no {missing} score among the scores, only {present} scores"
        else:
            unit = "group" if deals[0].method == "groups" else "fold"
            reason = (f"every {unit} holds only right or only wrong predictions: each score's "
                      "AU-ARC is the accuracy, so no score can be told apart")  # fmt: skip
            warnings.warn(reason, UserWarning, stacklevel=3)
        for key in JUDGED_COLUMNS[4:]:
            judged[key] = None if key in FAMILIES else nan
        return {**out, "judged": judged, "verdict": "no comparison", "reason": reason}
    per_unit = [unit_auarc(s, c, u.members) for u in deals]
    fits = [cross_fit(a, u.unit_fold, candidates, s, u.members)
            for a, u in zip(per_unit, deals, strict=True)]  # fmt: skip
    t = repeated_t([f.diffs for f in fits], level)
    every = np.mean([a.mean(axis=1) for a in per_unit], axis=0)
    r, q = (max(candidates[f], key=lambda j: every[j]) for f in FAMILIES)
    picks = np.concatenate([f.picks[u.unit_fold] for f, u in zip(fits, deals, strict=True)])
    judged["robustness"] = [names[j] for j in picks[:, 0]]
    judged["uncertainty"] = [names[j] for j in picks[:, 1]]
    judged["auarc_robustness"] = np.concatenate([f.a for f in fits])
    judged["auarc_uncertainty"] = np.concatenate([f.b for f in fits])
    judged["diff"] = judged["auarc_robustness"] - judged["auarc_uncertainty"]
    out.update({"robustness": names[r], "uncertainty": names[q],
                "auarc_robustness": float(judged["auarc_robustness"].mean()),
                "auarc_uncertainty": float(judged["auarc_uncertainty"].mean()),
                "diff": t["diff_mean"], "ci_low": max(t["ci_low"], -1.0),
                "ci_high": min(t["ci_high"], 1.0), "p_value": t["p_value"],
                "times_picked": sum(f.times_picked(len(names)) for f in fits),
                "judged": judged})  # fmt: skip
    word = family_verdict(t["diff_mean"], t["p_value"], alpha=1 - level)
    if all(f.same for f in fits):
        out["verdict"] = "identical ranking"
        out["reason"] = "the two rank every judged unit's predictions identically, ties included"
    elif word == "undecided":
        out["verdict"], out["reason"] = "undecided", "the interval of the difference includes 0"
    else:
        out["verdict"] = f"{word} better"
        out["reason"] = "the interval of the difference excludes 0"
    return out
