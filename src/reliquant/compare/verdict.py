"""Which score should I trust? The best robustness score against the best uncertainty score,
judged with an interval, as one answer: :func:`which_score` returns a :class:`ScoreVerdict`
(the ranked table, the verdict, a sentence to act on, and ``.plot()``).

**Families.** A reliability score (higher = more reliable) is a *robustness* score when it
measures whether the prediction survives a perturbation (of the input: tree robustness, the
black-box Monte Carlo; of the model: ``eps_glob``, ``eps_loc`` of paper 000; and the log-ratio
of the two largest probabilities, robustness quantification for discriminative classifiers
after Lassance & De Bock, arXiv 2603.23318), an *uncertainty* score when it is read from the
predicted distribution (maximum probability, negative entropy, margin, centroid proximity,
the negated ``u_*`` of paper 000). :data:`SCORE_FAMILY` names the scores this library
computes (the workflow's compare topic reads the same mapping); ``families=`` adds or
overrides names.

**The comparator is fixed before the data it is judged on.** Each family's best score is
picked on a *selection part*, a seeded random ``validation_fraction`` of the predictions (or
of the groups, when ``groups`` is given; ``block_rng(seed, "which_score", "selection")``),
and the two picks are judged on the rest only. Picking the best of several scores on the
data that then judges it favours the lucky one; this split removes that bias. The log-ratio is
a transform of the probabilities (with two classes it ranks exactly as the maximum
probability): as in the workflow, where it gets its own rows and never stands in for the
papers' robustness scores, it is the robustness side only when no other robustness score is
given; the table ranks it with the rest.

**Intervals: which variation each carries.**

* ``groups`` given (e.g. split ids: each group its own training set, fitted model and test
  predictions): per group ``g``, ``AU-ARC_g(s)`` on the group's predictions, and the paired
  difference ``d_g = AU-ARC_g(r) - AU-ARC_g(u)`` of the two picks over the ``G`` judged groups:

      mean d = (1/G) sum_g d_g,   se = sd(d_g) / sqrt(G)   (sd with ddof = 1),
      interval: mean d -/+ t_{(1 + confidence)/2, G - 1} se,
      p: two-sided one-sample t-test of mean d = 0            (:func:`paired_t`).

  The spread of ``d_g`` carries the variation over **training sets** (another fit of the
  model) and over each group's test predictions. This is the workflow's method (its headline
  comparisons, docs/compare.md). Verdict: better when ``p < 1 - confidence``
  (:func:`family_verdict`), i.e. when the t-interval excludes 0.
* no ``groups``: a paired percentile bootstrap over the judged predictions
  (:func:`reliquant.compare.bootstrap_auarc`: the same resamples for both scores). It carries
  the variation of the **test predictions only**, for this one fitted model: it says nothing
  about how the comparison changes when the model is trained again. Verdict: better when the
  interval excludes 0. The recommendation says so.

The table ranks every score on *all* predictions: AU-ARC (with groups: the mean of the
per-group AU-ARCs, t-interval over groups; without: a percentile bootstrap interval,
:func:`reliquant.compare.compare_scores`), the difference to the best score with its paired
interval, and the share of tied predictions (:func:`tied_share`). Two scores that rank the
judged predictions identically (ties included, :func:`identical_ranking`; e.g. maximum
probability and log-ratio with two classes) have the same AU-ARC on every subset: the verdict
is ``"identical ranking"``, not a test.

Public API: :data:`SCORE_FAMILY`, :data:`FAMILIES`, :data:`SCORE_VERDICTS`,
:data:`VERDICT_COLUMNS`, :data:`CURVE_COLUMNS`, :func:`score_family`, :func:`paired_t`,
:func:`family_verdict`, :func:`identical_ranking`, :func:`tied_share`, :class:`ScoreVerdict`,
:func:`which_score`, :func:`plot_accuracy_rejection`, :func:`curve_at`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.comparison import (
    aligned_inputs,
    bootstrap_auarc,
    compare_scores,
    min_boot,
)
from reliquant.compare.rejection import accuracy_rejection_curve, auarc_rows
from reliquant.core.arguments import check_int, check_level, check_real, check_seed
from reliquant.core.labels import factorize_labels
from reliquant.core.seeding import block_rng

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CURVE_COLUMNS",
    "FAMILIES",
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

#: The two families of reliability scores.
FAMILIES = ("robustness", "uncertainty")

#: Every score this library computes (under the name its functions and the workflow give it)
#: -> its family. Read-only: pass ``families=`` to :func:`which_score` for other names.
SCORE_FAMILY: Mapping[str, str] = MappingProxyType(
    {
        "mc_robustness": "robustness",
        "tree_robustness": "robustness",
        "eps_glob": "robustness",
        "eps_loc": "robustness",
        "log_ratio": "robustness",
        "max_probability": "uncertainty",
        "negative_entropy": "uncertainty",
        "margin": "uncertainty",
        "centroid_proximity": "uncertainty",
        "negative_u_m": "uncertainty",
        "negative_u_H": "uncertainty",
        "negative_u_a": "uncertainty",
        "negative_u_t": "uncertainty",
        "negative_u_e": "uncertainty",
    }
)

#: Uncertainties in their source orientation (higher = less reliable) -> the negated score's
#: name, for the message that refuses them.
_NEGATE = {
    "entropy": "negative_entropy",
    "u_m": "negative_u_m",
    "u_H": "negative_u_H",
    "u_a": "negative_u_a",
    "u_t": "negative_u_t",
    "u_e": "negative_u_e",
}

#: Robustness scores computed from the predicted probabilities alone (module docstring): the
#: robustness side of the verdict is one of them only when no other robustness score is given.
_PROBABILITY_ROBUSTNESS = frozenset({"log_ratio"})

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
    "ci_low",  # float: its interval (groups: t over groups; else percentile bootstrap)
    "ci_high",  # float: ... upper end
    "diff_vs_best",  # float: auarc - auarc of the first row (<= 0)
    "diff_ci_low",  # float: paired interval of that difference, lower end
    "diff_ci_high",  # float: ... upper end
    "tied",  # float: share of predictions tied with another (groups: mean over groups)
    "auarc_selection",  # float: AU-ARC on the selection part (what picked the comparison)
    "picked",  # bool: its family's best on the selection part, judged in the verdict
)

#: The columns of :attr:`ScoreVerdict.curves` (long format, one row per score and point).
CURVE_COLUMNS = ("score", "family", "rejected", "accuracy", "band_low", "band_high")

#: Bootstrap resamples of the pointwise band of the curves without groups (at most n_boot).
_BAND_RESAMPLES = 200


def score_family(name: str, families: Mapping[str, str] | None = None) -> str:
    """The family (``"robustness"`` or ``"uncertainty"``) of score ``name``: from
    ``families`` if it names it, else from :data:`SCORE_FAMILY`. An unknown name raises a
    ``ValueError`` that names it and the fix (``families={name: "robustness"}``); an
    uncertainty in its source orientation (``entropy``, ``u_m``, ...) names its negation."""
    if families is not None and name in families:
        family = families[name]
        if family not in FAMILIES:
            raise ValueError(
                f"families[{name!r}] = {family!r}: a family is 'robustness' or 'uncertainty'"
            )
        return family
    if name in SCORE_FAMILY:
        return SCORE_FAMILY[name]
    if name in _NEGATE:
        raise ValueError(
            f"score {name!r} is an uncertainty (higher = less reliable); every score here is "
            f"higher = more reliable: pass its negation as {_NEGATE[name]!r}"
        )
    raise ValueError(
        f"score {name!r} has no known family (known: {', '.join(SCORE_FAMILY)}); say which "
        f"it is: families={{{name!r}: 'robustness'}} (or 'uncertainty')"
    )


def paired_t(diffs: Sequence[float] | np.ndarray, confidence: float) -> dict[str, float]:
    """Mean of the paired differences ``d_s`` over groups (splits), its standard error
    ``sd(d) / sqrt(S)``, the t-interval ``mean -/+ t_{(1+confidence)/2, S-1} se`` and the
    two-sided p-value of ``mean = 0``. One split: NaN interval and p. All ``d_s`` equal and
    non-zero: p = 0; all zero: p = 1. Keys: ``diff_mean, diff_se, ci_low, ci_high,
    p_value``."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1 or d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"diffs must be a non-empty 1-D array of finite values; got {d!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}")
    # imported on use: jobs that only read the tables need no scipy (tests/core/test_lazy_imports)
    from scipy import stats

    mean = float(d.mean())
    nan = float("nan")
    if d.size < 2:
        return {"diff_mean": mean, "diff_se": nan, "ci_low": nan, "ci_high": nan, "p_value": nan}
    se = float(d.std(ddof=1) / np.sqrt(d.size))
    half = float(stats.t.ppf((1 + confidence) / 2, d.size - 1)) * se
    if se == 0:
        p = 1.0 if mean == 0 else 0.0
    else:
        p = float(2 * stats.t.sf(abs(mean) / se, d.size - 1))
    return {"diff_mean": mean, "diff_se": se, "ci_low": mean - half, "ci_high": mean + half,
            "p_value": p}  # fmt: skip


def family_verdict(diff_mean: float, p_value: float, *, alpha: float) -> str:
    """The verdict of a comparison ``robustness score - uncertainty score``: ``"undecided"``
    when ``p_value`` is NaN or ``>= alpha``, else the family of the better one
    (``"robustness"`` if ``diff_mean > 0``, else ``"uncertainty"``). With the two-sided
    t-test of :func:`paired_t` and ``alpha = 1 - confidence``, ``p < alpha`` exactly when the
    t-interval excludes 0."""
    if not np.isfinite(p_value) or p_value >= alpha:
        return "undecided"
    return "robustness" if diff_mean > 0 else "uncertainty"


def identical_ranking(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two scores order the same predictions identically, ties included (their
    average ranks are equal: rank correlation exactly 1 with the same ties)."""
    from scipy import stats

    return bool(np.array_equal(stats.rankdata(a), stats.rankdata(b)))


def tied_share(score: np.ndarray) -> float:
    """The share of predictions whose score equals another prediction's (a resolution
    measure: tied predictions cannot be ordered by the score)."""
    s = np.sort(np.asarray(score, dtype=np.float64))
    if s.size < 2:
        return 0.0
    same = s[1:] == s[:-1]
    tied = np.zeros(s.size, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    return float(tied.mean())


@dataclass(frozen=True, eq=False, repr=False)
class ScoreVerdict:
    """The answer of :func:`which_score` (module docstring).

    Attributes
    ----------
    table
        One row per score, best AU-ARC first, columns :data:`VERDICT_COLUMNS`.
    curves
        Accuracy-rejection curves of every score on a grid of rejected fractions with a
        pointwise band, columns :data:`CURVE_COLUMNS` (what :meth:`plot` draws).
    robustness, uncertainty
        The two scores compared: each family's best on the selection part (None when the
        family has no score).
    auarc_robustness, auarc_uncertainty
        Their AU-ARC on the judged part (with groups: mean over the judged groups).
    diff, ci_low, ci_high
        ``AU-ARC(robustness) - AU-ARC(uncertainty)`` on the judged part and its interval.
    p_value
        Two-sided t-test of ``diff = 0`` over the judged groups (NaN without groups).
    verdict
        One of :data:`SCORE_VERDICTS`; ``reason`` says why in words.
    recommendation
        One sentence to act on, with the numbers.
    method
        ``"groups"`` (t-interval over groups) or ``"bootstrap"`` (over predictions).
    selected
        Bool per prediction (in the order of ``correct``): True in the selection part, where
        the two compared scores were picked; False where they were judged.
    n_selection, n_judged
        Groups (or predictions, without groups) in the selection and the judged part.
    confidence
        Level of every interval.
    """

    table: pd.DataFrame
    curves: pd.DataFrame
    robustness: str | None
    uncertainty: str | None
    auarc_robustness: float
    auarc_uncertainty: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str
    reason: str
    recommendation: str
    method: str
    selected: np.ndarray
    n_selection: int
    n_judged: int
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
                "AU-ARC": t["auarc"].map("{:.3f}".format),
                "interval": ci,
                "vs best": t["diff_vs_best"].map("{:+.3f}".format),
                "interval ": dci,
                "tied": t["tied"].map("{:.0%}".format),
                "compared": np.where(t["picked"], "*", ""),
            }
        )

    def _unit(self) -> str:
        return "groups" if self.method == "groups" else "predictions"

    def __repr__(self) -> str:
        pct = f"{100 * self.confidence:g} %"
        lines = [
            f"ScoreVerdict: {self.verdict} ({self.reason})",
            f"scores ranked by AU-ARC on all predictions, {pct} intervals "
            f"({'t over groups' if self.method == 'groups' else 'bootstrap over predictions'}"
            f"); * = compared, picked on {self.n_selection} {self._unit()}, judged on "
            f"{self.n_judged}:",
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


def plot_accuracy_rejection(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    bands: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
    families: Mapping[str, str] | None = None,
    highlight: Sequence[str] = (),
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw accuracy-rejection curves: ``curves`` maps a name to ``(rejected, accuracy)``
    (as :func:`reliquant.compare.accuracy_rejection_curve` returns them), one step line each
    (``drawstyle="steps-post"``: the curve is constant between rejected fractions, and its
    mean is the AU-ARC). ``bands`` maps a name to ``(low, high)`` on the same rejected
    fractions, drawn as a filled band; ``families`` (name -> family) draws robustness scores
    solid and uncertainty scores dashed; ``highlight`` names the lines drawn thicker; ``title``
    the Axes' title. ``ax``: the Axes to draw on (default a new figure). Returns the Axes.

    Raises ``ValueError`` naming the curve or band whose arrays are not 1-D of equal length,
    or a band without its curve."""
    import matplotlib.pyplot as plt

    if not curves:
        raise ValueError("curves is empty: give name -> (rejected, accuracy)")
    bands = dict(bands or {})
    extra = sorted(set(bands) - set(curves))
    if extra:
        raise ValueError(f"bands {extra} have no curve: bands are drawn on curves of that name")
    new = ax is None
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6))
    colors = plt.get_cmap("tab10").colors
    for i, (name, pair) in enumerate(curves.items()):
        x, y = (np.asarray(v, dtype=np.float64) for v in pair)
        if x.ndim != 1 or x.shape != y.shape or x.size == 0:
            raise ValueError(
                f"curves[{name!r}] must be (rejected, accuracy), 1-D of equal length; got "
                f"shapes {x.shape} and {y.shape}"
            )
        color = colors[i % len(colors)]
        family = (families or {}).get(name)
        thick = name in highlight
        ax.plot(x, y, drawstyle="steps-post", color=color,
                linestyle="--" if family == "uncertainty" else "-",
                linewidth=2.2 if thick else 1.2, alpha=1.0 if thick or not highlight else 0.75,
                label=f"{name} ({family})" if family else name)  # fmt: skip
        if name in bands:
            lo, hi = (np.asarray(v, dtype=np.float64) for v in bands[name])
            if lo.shape != x.shape or hi.shape != x.shape:
                raise ValueError(
                    f"bands[{name!r}] must be (low, high) of the curve's length {x.size}; got "
                    f"shapes {lo.shape} and {hi.shape}"
                )
            ax.fill_between(x, lo, hi, step="post", color=color, alpha=0.2, linewidth=0)
    ax.set_xlabel("fraction rejected (least reliable first)")
    ax.set_ylabel("accuracy of the kept predictions")
    ax.set_xlim(0, 1)
    ax.legend(fontsize="small", loc="lower right")
    if title is not None:
        ax.set_title(title)
    if new:
        ax.figure.tight_layout()
    return ax


def _families(names: list[str], families: Mapping[str, str] | None) -> list[str]:
    if families is not None:
        if not isinstance(families, Mapping):
            raise TypeError(
                f"families must be a mapping score name -> 'robustness' | 'uncertainty'; got "
                f"{type(families).__name__}"
            )
        unknown = sorted(set(map(str, families)) - set(names))
        if unknown:
            raise ValueError(
                f"families names {unknown}, not among the scores ({', '.join(names)}): check "
                "the spelling"
            )
    return [score_family(n, families) for n in names]


def _selection(size: int, fraction: float, seed: int, keep_judged: int) -> np.ndarray:
    """A boolean mask over ``size`` units: ``round(fraction size)`` of them (at least 1,
    leaving at least ``keep_judged`` to judge on), drawn with ``block_rng(seed,
    "which_score", "selection")``, are the selection part."""
    n_sel = min(max(int(round(fraction * size)), 1), size - keep_judged)
    mask = np.zeros(size, dtype=bool)
    mask[block_rng(seed, "which_score", "selection").permutation(size)[:n_sel]] = True
    return mask


def curve_at(score: np.ndarray, correct: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The accuracy-rejection curve (:func:`reliquant.compare.accuracy_rejection_curve`) at
    the rejected fractions ``grid``: at each, the curve's value at the largest ``k / n`` not
    above it (the workflow's curve table and :attr:`ScoreVerdict.curves`)."""
    n = correct.size
    k = np.minimum(np.floor(grid * n + 1e-9).astype(np.int64), n - 1)
    return accuracy_rejection_curve(score, correct)[1][k]


def _table_by_groups(
    per_group: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean AU-ARC per score over groups with its t-interval, and the paired difference to
    the score with the largest mean (the first on a tie) with its t-interval."""
    mean = per_group.mean(axis=1)
    best = int(np.argmax(mean))
    own = [paired_t(row, confidence) for row in per_group]
    diff = [paired_t(row - per_group[best], confidence) for row in per_group]
    pick = lambda rows, key: np.array([r[key] for r in rows])  # noqa: E731
    return (mean, pick(own, "ci_low"), pick(own, "ci_high"), pick(diff, "diff_mean"),
            pick(diff, "ci_low"), pick(diff, "ci_high"))  # fmt: skip


def which_score(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    families: Mapping[str, str] | None = None,
    groups: ArrayLike | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    validation_fraction: float = 0.5,
    curve_points: int = 100,
    progress: bool | None = None,
) -> ScoreVerdict:
    """Which score to trust: every score ranked by AU-ARC, and the best robustness score
    against the best uncertainty score, each picked on a selection part and judged on the
    rest, with a verdict and a recommendation (module docstring).

    What each interval carries: with ``groups``, the t-interval of the mean paired difference
    ``mean_g d_g -/+ t_{(1+confidence)/2, G-1} sd(d_g) / sqrt(G)`` over the ``G`` judged
    groups, the variation over **training sets** (other fits of the model) and test rows;
    without, the percentile interval of the paired bootstrap over the judged predictions, the
    variation of the **test predictions only** (the recommendation then says so).

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
        fitted model) that made it; at least 3 groups. Then every interval is a t-interval
        over groups (training-set variation included); without, a bootstrap over the
        predictions (test-row variation only). Compared by value: 1, 1.0 and "1" are one group.
    n_boot
        Bootstrap resamples without groups (at least :func:`reliquant.compare.min_boot` of
        ``confidence``); the curves' band uses ``min(n_boot, 200)``. Unused with groups.
    confidence
        Level of every interval, in (0, 1); the verdict's test is at ``1 - confidence``.
    seed
        Seed of the selection part, the bootstrap and the band (an integer >= 0).
    validation_fraction
        Share of the predictions (or groups) in the selection part, in (0, 1):
        ``round(validation_fraction x size)``, at least 1, leaving at least 1 prediction (2
        groups) to judge on.
    curve_points
        Rejected fractions ``j / curve_points`` at which :attr:`ScoreVerdict.curves` holds
        the curves (an integer >= 2).
    progress
        Without ``groups``: a progress bar over the ranked table's bootstrap resamples
        (:func:`reliquant.compare.compare_scores`; by default on in a terminal only).

    Returns
    -------
    ScoreVerdict
        ``table``, ``curves``, the two scores compared, their difference and interval,
        ``verdict`` (:data:`SCORE_VERDICTS`), ``recommendation``; ``.plot()``.

    Raises ``ValueError`` naming the argument or score at fault: a score without a family (and
    the fix), inputs as in :func:`reliquant.compare.compare_scores`, fewer than 3 groups, too
    few resamples; ``TypeError`` for an argument of the wrong type.
    """
    level = check_level(confidence)
    check_int(n_boot, "n_boot", minimum=1)
    check_seed(seed)
    fraction = check_real(validation_fraction, "validation_fraction", low=0.0, high=1.0,
                          low_open=True, high_open=True)  # fmt: skip
    points = check_int(curve_points, "curve_points", minimum=2)
    names, s, c, g = aligned_inputs(scores, correct, groups)
    fam = _families(names, families)
    grid = np.arange(points) / points
    if g is None:
        if n_boot < min_boot(level):
            raise ValueError(
                f"n_boot={n_boot} is too few resamples for a {level:g} percentile interval: "
                f"need n_boot >= {min_boot(level)} = ceil(2 / (1 - confidence))"
            )
        if c.size < 2:
            raise ValueError(f"need at least 2 predictions to select and judge; got {c.size}")
        parts = _Parts.by_predictions(s, c, fraction, seed)
        ranked = compare_scores(dict(zip(names, s, strict=True)), c, n_boot=n_boot,
                                confidence=level, seed=seed, progress=progress)  # fmt: skip
        columns = [ranked[k].to_numpy() for k in
                   ("auarc", "ci_low", "ci_high", "diff_vs_best", "diff_ci_low", "diff_ci_high")]  # fmt: skip
        tied = np.array([tied_share(row) for row in s])
        curves = _bootstrap_curves(s, c, grid, min(n_boot, _BAND_RESAMPLES), level, seed)
    else:
        codes, labels = factorize_labels(g, what="groups")  # 1, 1.0 and "1": one group
        if labels.size < 3:
            raise ValueError(
                f"groups has {labels.size} distinct group(s); a t-interval over groups needs "
                "at least 3 (2 to judge on, 1 to select on): pass more groups, or groups=None "
                "for a bootstrap over the predictions"
            )
        members = [np.flatnonzero(codes == k) for k in range(labels.size)]
        parts = _Parts.by_groups(s, c, members, fraction, seed)
        columns = list(_table_by_groups(parts.per_group, level))
        tied = np.array([np.mean([tied_share(row[m]) for m in members]) for row in s])
        curves = _group_curves(s, c, members, grid, level)
    judged = parts.judge(names, fam, level, seed, n_boot)
    picked = np.isin(names, [judged["robustness"], judged["uncertainty"]])
    values = [names, fam, *columns, tied, parts.selection_auarc, picked]
    frame = pd.DataFrame(dict(zip(VERDICT_COLUMNS, values, strict=True)))
    # the best (diff_vs_best = 0: the first with the largest AU-ARC) stays first on a tie
    order = np.argsort(-frame["auarc"].to_numpy(), kind="stable")
    table = frame.iloc[order].reset_index(drop=True)
    curve_frame = pd.DataFrame(
        {"score": np.repeat(names, points), "family": np.repeat(fam, points),
         "rejected": np.tile(grid, len(names)), "accuracy": curves[0].ravel(),
         "band_low": curves[1].ravel(), "band_high": curves[2].ravel()}
    )  # fmt: skip
    result = {**judged, "method": parts.method, "selected": parts.per_prediction(),
              "n_selection": parts.n_selection, "n_judged": parts.n_judged,
              "confidence": level}  # fmt: skip
    result["recommendation"] = _recommend(result, table)
    return ScoreVerdict(table=table, curves=curve_frame[list(CURVE_COLUMNS)], **result)


@dataclass(frozen=True)
class _Parts:
    """The selection part and the judged part of one call of :func:`which_score`."""

    method: str  # "groups" or "bootstrap"
    scores: np.ndarray  # (S, n)
    correct: np.ndarray  # (n,)
    selected: np.ndarray  # bool mask over groups (method groups) or predictions
    members: list[np.ndarray] | None  # prediction indices of each group
    per_group: np.ndarray | None  # (S, G) AU-ARC per group
    selection_auarc: np.ndarray  # (S,)

    @property
    def n_selection(self) -> int:
        return int(self.selected.sum())

    @property
    def n_judged(self) -> int:
        return int((~self.selected).sum())

    def per_prediction(self) -> np.ndarray:
        """The selection mask per prediction (a group's mask for each of its predictions)."""
        if self.members is None:
            return self.selected.copy()
        out = np.zeros(self.correct.size, dtype=bool)
        for k in np.flatnonzero(self.selected):
            out[self.members[k]] = True
        return out

    @classmethod
    def by_predictions(cls, s: np.ndarray, c: np.ndarray, fraction: float, seed: int) -> _Parts:
        sel = _selection(c.size, fraction, seed, keep_judged=1)
        auarc_sel = auarc_rows(s[:, sel], np.broadcast_to(c[sel], (s.shape[0], sel.sum())))
        return cls("bootstrap", s, c, sel, None, None, auarc_sel)

    @classmethod
    def by_groups(
        cls, s: np.ndarray, c: np.ndarray, members: list[np.ndarray], fraction: float, seed: int
    ) -> _Parts:
        per_group = np.column_stack(
            [auarc_rows(s[:, m], np.broadcast_to(c[m], (s.shape[0], m.size))) for m in members]
        )
        sel = _selection(len(members), fraction, seed, keep_judged=2)
        return cls("groups", s, c, sel, members, per_group, per_group[:, sel].mean(axis=1))

    def judge(
        self, names: list[str], fam: list[str], level: float, seed: int, n_boot: int
    ) -> dict[str, Any]:
        """The two picks (each family's largest selection AU-ARC, the first listed on a tie;
        the log-ratio only without another robustness score) judged on the rest: the fields
        of :class:`ScoreVerdict` it decides."""
        nan = float("nan")
        out: dict[str, Any] = {"robustness": None, "uncertainty": None, "auarc_robustness": nan,
                               "auarc_uncertainty": nan, "diff": nan, "ci_low": nan,
                               "ci_high": nan, "p_value": nan}  # fmt: skip
        picks = {}
        for family in FAMILIES:
            members = [j for j, f in enumerate(fam) if f == family]
            perturbed = [j for j in members if names[j] not in _PROBABILITY_ROBUSTNESS]
            members = perturbed or members  # the log-ratio stands in only when alone
            if members:
                picks[family] = max(members, key=lambda j: self.selection_auarc[j])
        missing = [f for f in FAMILIES if f not in picks]
        if missing:
            (present,) = picks  # every score has a family: one of the two is present
            out["verdict"] = "no comparison"
            out["reason"] = f"no {missing[0]} score among the scores, only {present} scores"
            return out
        r, u = picks["robustness"], picks["uncertainty"]
        out["robustness"], out["uncertainty"] = names[r], names[u]
        if self.method == "groups":
            judged = np.flatnonzero(~self.selected)
            a, b = self.per_group[r, judged], self.per_group[u, judged]
            t = paired_t(a - b, level)
            diff, lo, hi, p = t["diff_mean"], t["ci_low"], t["ci_high"], t["p_value"]
            same = all(identical_ranking(self.scores[r, self.members[k]],
                                         self.scores[u, self.members[k]]) for k in judged)  # fmt: skip
            word = family_verdict(diff, p, alpha=1 - level)
        else:
            rows = np.flatnonzero(~self.selected)
            pair = np.stack([self.scores[r, rows], self.scores[u, rows]])
            a, b = auarc_rows(pair, np.broadcast_to(self.correct[rows], pair.shape))
            _, boot = bootstrap_auarc(dict(zip((names[r], names[u]), pair, strict=True)),
                                      self.correct[rows], n_boot=n_boot, seed=seed)  # fmt: skip
            lo, hi = np.quantile(boot[0] - boot[1], [(1 - level) / 2, (1 + level) / 2])
            diff, p = float(a - b), nan
            same = identical_ranking(pair[0], pair[1])
            word = "robustness" if lo > 0 else "uncertainty" if hi < 0 else "undecided"
        out.update({"auarc_robustness": float(np.mean(a)), "auarc_uncertainty": float(np.mean(b)),
                    "diff": float(diff), "ci_low": float(lo), "ci_high": float(hi),
                    "p_value": float(p)})  # fmt: skip
        if same:
            out["verdict"] = "identical ranking"
            out["reason"] = "the two rank the judged predictions identically, ties included"
        elif word == "undecided":
            out["verdict"] = "undecided"
            out["reason"] = "the interval of the difference includes 0"
        else:
            out["verdict"] = f"{word} better"
            out["reason"] = "the interval of the difference excludes 0"
        return out


def _bootstrap_curves(
    s: np.ndarray, c: np.ndarray, grid: np.ndarray, n_resamples: int, level: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Curves ``(S, points)`` on all predictions and their pointwise percentile band over
    ``n_resamples`` bootstrap resamples of the predictions (``block_rng(seed, "which_score",
    "band")``, the same resamples for every score)."""
    curve = np.stack([curve_at(row, c, grid) for row in s])
    rng = block_rng(seed, "which_score", "band")
    boot = np.empty((n_resamples, *curve.shape))
    for b in range(n_resamples):
        idx = rng.integers(0, c.size, size=c.size)
        boot[b] = [curve_at(row[idx], c[idx], grid) for row in s]
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return curve, lo, hi


def _group_curves(
    s: np.ndarray, c: np.ndarray, members: list[np.ndarray], grid: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mean over groups of the per-group curves ``(S, points)`` and their pointwise
    t-interval ``mean -/+ t_{(1+level)/2, G-1} sd / sqrt(G)``, clipped to [0, 1] (an
    accuracy)."""
    from scipy import stats

    per = np.stack([[curve_at(row[m], c[m], grid) for row in s] for m in members])
    mean = per.mean(axis=0)
    half = stats.t.ppf((1 + level) / 2, len(members) - 1) * per.std(axis=0, ddof=1)
    half /= math.sqrt(len(members))
    return mean, np.clip(mean - half, 0.0, 1.0), np.clip(mean + half, 0.0, 1.0)


def _recommend(r: Mapping[str, Any], table: pd.DataFrame) -> str:
    """The one sentence of :attr:`ScoreVerdict.recommendation`."""
    pct = f"{100 * r['confidence']:g} %"
    if r["method"] == "groups":
        how = f"mean paired difference over {r['n_judged']} held-out groups, {pct} t-interval"
    else:
        how = (f"paired bootstrap over {r['n_judged']} held-out predictions, {pct} interval; "
               "it shows the variation of the test predictions only, not of training the model "
               "again: pass groups= (one per fitted model) for that")  # fmt: skip
    rq, uq = r["robustness"], r["uncertainty"]
    if r["verdict"] == "no comparison":
        best = table.iloc[0]
        return (f"No comparison between the families ({r['reason']}); the best score is "
                f"{best['score']}: AU-ARC {best['auarc']:.3f} [{best['ci_low']:.3f}, "
                f"{best['ci_high']:.3f}].")  # fmt: skip
    if r["verdict"] == "identical ranking":
        return (f"{rq} and {uq} rank the held-out predictions identically (AU-ARC "
                f"{r['auarc_robustness']:.3f} each): they reject the same predictions, so use "
                "either, the cheaper to compute.")  # fmt: skip
    d, lo, hi = r["diff"], r["ci_low"], r["ci_high"]
    if r["verdict"] == "robustness better":
        return (f"Use {rq}: held-out AU-ARC {r['auarc_robustness']:.3f}, {d:+.3f} "
                f"[{lo:+.3f}, {hi:+.3f}] over {uq}, the best uncertainty score ({how}).")  # fmt: skip
    if r["verdict"] == "uncertainty better":
        return (f"Use {uq}: held-out AU-ARC {r['auarc_uncertainty']:.3f}, {-d:+.3f} "
                f"[{-hi:+.3f}, {-lo:+.3f}] over {rq}, the best robustness score ({how}).")  # fmt: skip
    return (f"Undecided: {rq} (robustness) minus {uq} (uncertainty) is {d:+.3f} "
            f"[{lo:+.3f}, {hi:+.3f}] in held-out AU-ARC ({how}); the interval includes 0, so "
            "either will do: take the cheaper to compute.")  # fmt: skip
