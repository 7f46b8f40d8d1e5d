"""Several reliability scores on the same predictions: AU-ARC with bootstrap intervals, and
paired differences against the best score.

For scores ``s_1..s_S`` (higher = more reliable) of the same ``n`` predictions with
correctness ``c``, :func:`compare_scores` computes each AU-ARC (:func:`reliquant.compare.auarc`)
on the full data and on ``n_boot`` bootstrap resamples of the predictions (``n`` indices drawn
with replacement). **The same resamples serve every score**, so the differences
``AU-ARC(s_j) - AU-ARC(s_best)`` are paired: resample ``b`` gives one difference per score, and
its percentile interval reflects only the variation that the two scores do not share. A
duplicated prediction ties with its copies; ties are averaged exactly.

Intervals are percentile intervals (Efron): the ``(1 - confidence) / 2`` and
``(1 + confidence) / 2`` quantiles of the bootstrap values (``numpy.quantile``, linear).
The best score is the one with the largest AU-ARC on the full data (the first listed on a
tie); its difference to itself is 0 on every resample, so its row has ``diff_vs_best =
diff_ci_low = diff_ci_high = 0``. The evaluation setting follows Detavernier & De Bock
(arXiv 2512.15492, 2603.22988), who compare robustness and uncertainty scores by their
accuracy-rejection curves.

Public API: :data:`COMPARISON_COLUMNS`, :func:`bootstrap_auarc`, :func:`compare_scores`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.rejection import auarc_rows, check_correct, check_score
from reliquant.core.seeding import block_rng

__all__ = ["COMPARISON_COLUMNS", "bootstrap_auarc", "compare_scores"]

#: The columns of :func:`compare_scores`, in order.
COMPARISON_COLUMNS = (
    "score",  # str: the score's name (the mapping key or DataFrame column)
    "auarc",  # float: AU-ARC on all predictions
    "ci_low",  # float: percentile bootstrap interval of the AU-ARC, lower end
    "ci_high",  # float: ... upper end
    "diff_vs_best",  # float: auarc - auarc of the best score (<= 0; 0 for the best)
    "diff_ci_low",  # float: paired percentile bootstrap interval of that difference, lower end
    "diff_ci_high",  # float: ... upper end
    "best",  # bool: the score with the largest auarc (exactly one row)
)

#: Most score values sorted at once (bootstrap rows x predictions), to bound memory.
_CHUNK_ELEMENTS = 1_000_000


def _check_scores(
    scores: Mapping[str, ArrayLike] | pd.DataFrame, correct: ArrayLike
) -> tuple[list[str], np.ndarray, np.ndarray]:
    if isinstance(scores, pd.DataFrame):
        scores = {str(col): scores[col].to_numpy() for col in scores.columns}
    if not isinstance(scores, Mapping) or len(scores) == 0:
        raise ValueError("scores must be a non-empty mapping (or DataFrame) name -> score array")
    c = check_correct(correct, "correct")
    names = [str(k) for k in scores]
    if len(set(names)) != len(names):
        raise ValueError(f"scores has duplicate names: {names}")
    arrays = []
    for name, values in zip(names, scores.values(), strict=True):
        s = check_score(values, f"scores[{name!r}]")
        if s.size != c.size:
            raise ValueError(
                f"scores[{name!r}] and correct must have the same length; got {s.size} and {c.size}"
            )
        arrays.append(s)
    return names, np.stack(arrays), c


def _check_settings(n_boot: int, confidence: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be an integer >= 1; got {n_boot!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1); got {confidence!r}")


def _resampled_auarc(score: np.ndarray, correct: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AU-ARC of resamples given as multiplicities ``weights`` ``(B, n)`` of the original
    predictions, without sorting each resample.

    A resample's tied groups are the original tied groups (a copy ties with its original).
    With ``b_g`` copies in group ``g`` (original order, most reliable first), ``c_g`` of them
    correct, ``r_g = c_g / b_g``, and ``N_g``, ``K_g`` the cumulative counts after group ``g``,
    ``E[C_m] = K_{g-1} + (m - N_{g-1}) r_g`` inside the group (closed form of
    :mod:`reliquant.compare.rejection`), so with harmonic numbers ``H_k = sum_{m<=k} 1/m``

        n AU-ARC = sum_g (K_{g-1} - N_{g-1} r_g) (H_{N_g} - H_{N_{g-1}}) + r_g b_g.
    """
    n = score.size
    order = np.argsort(-score, kind="stable")
    s = score[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    w = weights[:, order]
    hit = w * correct[order]
    if starts.size < n:
        w = np.add.reduceat(w, starts, axis=1)
        hit = np.add.reduceat(hit, starts, axis=1)
    cum_n = np.cumsum(w, axis=1)
    cum_k = np.cumsum(hit, axis=1)
    prev_n = cum_n - w
    prev_k = cum_k - hit
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(w > 0, hit / w, 0.0)
    harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, n + 1))]
    dh = harmonic[cum_n.astype(np.int64)] - harmonic[prev_n.astype(np.int64)]
    return ((prev_k - prev_n * rate) * dh + hit).sum(axis=1) / n


def bootstrap_auarc(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> tuple[list[str], np.ndarray]:
    """AU-ARC of every score on ``n_boot`` shared bootstrap resamples: ``(names, (S, n_boot))``.

    Resample ``b`` is row ``b`` of ``block_rng(seed, "compare_bootstrap").integers(0, n,
    size=(n_boot, n))``: it depends on ``seed``, ``n`` and ``n_boot`` only, and is the same
    for every score (paired). Each resample's AU-ARC equals :func:`reliquant.compare.auarc`
    of the resampled arrays (ties, copies included, averaged exactly), computed from the
    multiplicities of the original predictions in O(n) per resample after one sort per
    score (harmonic-number form of the closed form, :func:`_resampled_auarc`).
    """
    names, s, c = _check_scores(scores, correct)
    _check_settings(n_boot, 0.5)
    n = c.size
    idx = block_rng(seed, "compare_bootstrap").integers(0, n, size=(n_boot, n))
    out = np.empty((len(names), n_boot))
    step = max(1, _CHUNK_ELEMENTS // n)
    for lo in range(0, n_boot, step):
        rows = idx[lo : lo + step]
        b = rows.shape[0]
        flat = (rows + n * np.arange(b)[:, None]).ravel()
        weights = np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)
        for j in range(len(names)):
            out[j, lo : lo + b] = _resampled_auarc(s[j], c, weights)
    return names, out


def compare_scores(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """AU-ARC per score with a percentile bootstrap interval, and the paired difference to
    the best score with its interval (module docstring).

    Parameters
    ----------
    scores
        Name -> score array (higher = more reliable), one value per prediction, or a
        DataFrame whose columns are the scores. Names must be distinct.
    correct
        Whether each prediction is right (bool, or 0/1 integers).
    n_boot
        Bootstrap resamples (>= 1), shared by all scores.
    confidence
        Level of the percentile intervals, in (0, 1).
    seed
        Seed of the resamples (:func:`bootstrap_auarc`): equal inputs and seed give an
        identical table.

    Returns
    -------
    pandas.DataFrame
        One row per score, in input order, with the columns :data:`COMPARISON_COLUMNS`:
        ``score, auarc, ci_low, ci_high, diff_vs_best, diff_ci_low, diff_ci_high, best``.

    Raises ``ValueError`` naming the argument for NaN scores, lengths that differ from
    ``correct``, empty input or non-boolean ``correct``.
    """
    _check_settings(n_boot, confidence)
    names, s, c = _check_scores(scores, correct)
    point = auarc_rows(s, np.broadcast_to(c, s.shape))
    _, boot = bootstrap_auarc(dict(zip(names, s, strict=True)), c, n_boot=n_boot, seed=seed)
    best = int(np.argmax(point))
    q = [(1 - confidence) / 2, (1 + confidence) / 2]
    ci = np.quantile(boot, q, axis=1)
    diff = boot - boot[best]
    dci = np.quantile(diff, q, axis=1)
    frame = pd.DataFrame(
        {
            "score": names,
            "auarc": point,
            "ci_low": ci[0],
            "ci_high": ci[1],
            "diff_vs_best": point - point[best],
            "diff_ci_low": dci[0],
            "diff_ci_high": dci[1],
            "best": np.arange(len(names)) == best,
        }
    )
    return frame[list(COMPARISON_COLUMNS)]
