"""The best of several reliability scores, with the guarantee kept (issue 43).

Several scores of the same calibration predictions (the maximum probability, the margin, a
robustness...): which one keeps the most predictions at a certified selective risk? Choosing
the best after certifying each at the full ``delta`` would spend ``delta`` once per score
(the issue's by-hand attempt: 6.3 % test error at a 5 % target). :func:`certify_best_score`
certifies each score at ``delta / S`` (``S`` scores, Bonferroni) with
:func:`reliquant.compare.certify_threshold` and picks the one of largest certified coverage:

    ``P(any of the S certificates fails) <= S (delta / S) = delta``,

so the chosen score's threshold keeps ``P(R > risk) <= delta`` although it was chosen on the
same data (exchangeable calibration and future predictions, as every certificate assumes).

:func:`plot_risk_coverage` draws each score's empirical selective risk against coverage on
any predictions (calibration or test), the target, and where each certified threshold lands.

Public API: :class:`BestScoreCertificate`, :func:`certify_best_score`,
:func:`plot_risk_coverage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.certified_selection import (
    CERTIFY_METHODS,
    ThresholdCertificate,
    certify_threshold,
    selective_risk_curve,
)
from reliquant.core.arguments import check_level

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["BestScoreCertificate", "certify_best_score", "plot_risk_coverage"]


@dataclass(frozen=True, eq=False)
class BestScoreCertificate:
    """The result of :func:`certify_best_score`.

    Attributes
    ----------
    score
        The name of the score of largest certified coverage (``None`` when none certifies).
    certificate
        Its :class:`ThresholdCertificate` (at ``delta / len(certificates)``), or ``None``.
    certificates
        Every score's certificate, each at ``delta / S`` (``S`` scores), in the order given.
    delta, risk, method
        The overall ``delta`` (the chosen certificate holds with probability ``>= 1 -
        delta``), the target and the method.
    certified, message
        Whether any score certifies ``risk``, and the answer in words.
    """

    score: str | None
    certificate: ThresholdCertificate | None
    certificates: Mapping[str, ThresholdCertificate] = field(repr=False)
    risk: float
    delta: float
    method: str
    certified: bool
    message: str

    def table(self) -> pd.DataFrame:
        """One row per score, largest certified coverage first: ``score, certified,
        threshold, coverage, empirical_risk, bound, n_accepted, n_errors``."""
        rows = [
            {"score": name, "certified": c.certified, "threshold": c.threshold,
             "coverage": c.coverage, "empirical_risk": c.empirical_risk, "bound": c.bound,
             "n_accepted": c.n_accepted, "n_errors": c.n_errors}
            for name, c in self.certificates.items()
        ]  # fmt: skip
        frame = pd.DataFrame(rows)
        order = np.lexsort((frame["bound"].to_numpy(), -frame["coverage"].to_numpy()))
        return frame.iloc[order].reset_index(drop=True)


def _score_columns(scores: Mapping[str, ArrayLike] | pd.DataFrame) -> dict[str, ArrayLike]:
    if isinstance(scores, pd.DataFrame):
        cols = {str(c): scores[c].to_numpy() for c in scores.columns}
    elif isinstance(scores, Mapping):
        cols = {str(k): v for k, v in scores.items()}
    else:
        raise TypeError(
            f"scores must be a mapping name -> score array or a DataFrame of score columns; "
            f"got {type(scores).__name__}"
        )
    if not cols:
        raise ValueError("scores is empty: give at least one score")
    if "prediction" in cols:
        raise ValueError(
            "scores has a 'prediction' column (score_predictions' predicted classes, not a "
            "score): drop it, e.g. scores.drop(columns='prediction')"
        )
    return cols


def certify_best_score(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    risk: float,
    delta: float,
    method: str = "sgr",
    n_grid: int | None = None,
) -> BestScoreCertificate:
    """Certify every score at ``delta / S`` (``S = len(scores)``) and pick the one of largest
    certified coverage (ties: the smaller bound, then the first given).

    Guarantee: ``P(any of the S certificates fails) <= S (delta / S) = delta`` (Bonferroni),
    so the chosen score's ``P(R > risk) <= delta`` although it was chosen on the same data;
    certifying each at ``delta`` and keeping the best would not hold (issue 43: 6.3 % test
    error at a 5 % target). ``scores``: name -> one value per prediction (higher = more
    reliable), or a DataFrame of score columns (e.g. :func:`reliquant.compare.score_predictions`
    without ``prediction``); other arguments as :func:`certify_threshold`.
    """
    risk, delta = check_level(risk, "risk"), check_level(delta, "delta")
    if method not in CERTIFY_METHODS:
        raise ValueError(f"method must be one of {CERTIFY_METHODS}; got {method!r}")
    columns = _score_columns(scores)
    each = delta / len(columns)
    certs = {}
    for name, s in columns.items():
        try:
            certs[name] = certify_threshold(s, correct, risk=risk, delta=each, method=method,
                                            n_grid=n_grid)  # fmt: skip
        except ValueError as err:
            raise ValueError(f"scores[{name!r}]: {err}") from None
    ok = [name for name, c in certs.items() if c.certified]
    if ok:
        best = min(ok, key=lambda k: (-certs[k].coverage, certs[k].bound))
        c = certs[best]
        message = (
            f"{best}: keep score >= {c.threshold:.6g}, {c.n_accepted} of {c.n} calibration "
            f"predictions ({c.coverage:.1%}), selective risk <= {c.bound:.2%} (target "
            f"{risk:.2%}) with probability >= {100 * (1 - delta):.4g} % over all {len(certs)} "
            f"scores (each certified at delta {each:.3g}, Bonferroni; {method})"
        )
    else:
        best = None
        message = (
            f"no score certifies a selective risk <= {risk:.2%} at delta {delta:g} "
            f"({len(certs)} scores, each at {each:.3g})"
        )
    return BestScoreCertificate(
        score=best, certificate=certs[best] if best is not None else None, certificates=certs, risk=risk,
        delta=delta, method=method, certified=best is not None, message=message,
    )  # fmt: skip


def plot_risk_coverage(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    risk: float | None = None,
    certificates: Mapping[str, ThresholdCertificate] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Draw each score's empirical risk-coverage curve on these predictions
    (:func:`reliquant.compare.selective_risk_curve`: the error rate among the kept
    predictions against the share kept, one point per distinct score value), a dashed line at
    the target ``risk``, and for each certificate in ``certificates`` (name -> its
    :class:`ThresholdCertificate`, e.g. :attr:`BestScoreCertificate.certificates`) a marker
    where its threshold lands on these predictions (filled: certified; its coverage and
    realised risk here, which on test data may differ from the calibration's). ``ax``: the
    Axes to draw on (default a new figure). Returns the Axes.

    Raises ``ValueError`` naming a score of different length than ``correct``, or a
    certificate without its score."""
    import matplotlib.pyplot as plt

    columns = _score_columns(scores)
    certificates = dict(certificates or {})
    extra = sorted(set(certificates) - set(columns))
    if extra:
        raise ValueError(f"certificates {extra} have no score: give their scores too")
    new = ax is None
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.6))
    colors = plt.get_cmap("tab10").colors
    for i, (name, s) in enumerate(columns.items()):
        try:
            _, coverage, curve = selective_risk_curve(s, correct)
        except ValueError as err:
            raise ValueError(f"scores[{name!r}]: {err}") from None
        color = colors[i % len(colors)]
        ax.plot(coverage, curve, drawstyle="steps-pre", color=color, linewidth=1.2, label=name)
        if name in certificates:
            kept = certificates[name].accepts(s)
            wrong = ~np.asarray(correct, dtype=bool)
            here = wrong[kept].mean() if kept.any() else 0.0
            ax.plot([kept.mean()], [here], marker="o", markersize=7, color=color,
                    markerfacecolor=color if certificates[name].certified else "none")  # fmt: skip
    if risk is not None:
        ax.axhline(risk, color="black", linestyle="--", linewidth=1, label=f"target {risk:g}")
    ax.set_xlabel("coverage (share of predictions kept)")
    ax.set_ylabel("error rate of the kept predictions")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="upper left")
    if title is not None:
        ax.set_title(title)
    if new:
        ax.figure.tight_layout()
    return ax
