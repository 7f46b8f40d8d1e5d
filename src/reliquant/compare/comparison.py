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
accuracy-rejection curves. A percentile interval needs ``n_boot >= ceil(2 / (1 -
confidence))`` resamples (:func:`min_boot`: at least one beyond each end).

**Inputs matched by index.** Numpy arrays are read by position. When two or more inputs carry
a pandas index (a DataFrame of scores, Series among the scores, ``correct`` as a Series), the
predictions are matched by index label: every such input is reordered to the order of
``correct`` (or of the first indexed score). A label that occurs twice in one input is refused
naming that input; labels found in one input and not in another, naming both.

**Memory.** The resamples are drawn and scored in chunks of about 65,536 entries (resamples x
predictions; at least one whole resample), so memory does not grow with ``n_boot``: the peak
is at most about 100 bytes per prediction and score (the point estimate's sort; a chunk of the
bootstrap needs about 50 bytes x ``max(n, 65536)``). Measured with ``bench/compare.py``
(two scores, ``n_boot = 1000``): 19.5 MB for 10^5 predictions and 195 MB for 10^6, where
drawing all ``(n_boot, n)`` resample indices at once took 861 MB and 7.45 GiB (a
``MemoryError``). The time is linear in ``n_boot x n``: 24 s for 10^5 predictions (51 s
before) and 2.5 minutes for 10^6, on one core of a shared machine.

Public API: :data:`COMPARISON_COLUMNS`, :func:`aligned_inputs`, :func:`bootstrap_auarc`,
:func:`compare_scores`, :func:`min_boot`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.compare.rejection import auarc_rows, check_correct, check_score
from reliquant.core.arguments import check_int, check_level, check_seed
from reliquant.core.progress import progress_bar
from reliquant.core.seeding import block_rng

__all__ = ["COMPARISON_COLUMNS", "aligned_inputs", "bootstrap_auarc", "compare_scores", "min_boot"]

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

#: Resample entries (bootstrap rows x predictions, at least one whole resample) drawn and
#: scored at once: bounds the memory of :func:`bootstrap_auarc` whatever ``n_boot`` (module
#: docstring, Memory); small enough that a chunk's arrays stay in the processor's cache.
_CHUNK_ELEMENTS = 2**16
#: The chunk of the earlier code (resample indices all drawn at once, then scored 10^6 entries
#: at a time): it fixed the order in which each resample's terms are summed (:func:`_row_sums`).
_LEGACY_CHUNK_ELEMENTS = 1_000_000


def _pandas_inputs(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    groups: ArrayLike | None = None,
) -> tuple[list[tuple[str, ArrayLike]], ArrayLike, ArrayLike | None]:
    """``(name, values)`` per score, ``correct`` and ``groups``, the pandas ones aligned on
    their index.

    When two or more inputs carry a pandas index (a DataFrame of scores, Series among the
    scores, ``correct`` or ``groups`` as a Series), predictions are matched by index label, not
    by position: every such input is reordered to the order of ``correct`` (or of the first
    indexed input when ``correct`` has no index). Each index must be unique and all must hold
    the same labels (``ValueError`` naming the inputs). Numpy arrays have no index and are read
    by position.
    """
    if isinstance(scores, pd.DataFrame):
        dup = scores.columns[scores.columns.duplicated()]
        if len(dup):
            raise ValueError(
                f"scores has the duplicated column(s) {sorted({str(c) for c in dup})}: each "
                "column is one score and needs its own name"
            )
        items: list[tuple[str, ArrayLike]] = [(str(c), scores[c]) for c in scores.columns]
    elif isinstance(scores, Mapping):
        items = [(str(k), v) for k, v in scores.items()]
    else:
        raise ValueError(
            "scores must be a non-empty mapping (or DataFrame) name -> score array; got "
            f"{type(scores).__name__}"
        )
    indexed: list[tuple[str, pd.Index]] = []
    if isinstance(correct, pd.Series):
        indexed.append(("correct", correct.index))
    if isinstance(scores, pd.DataFrame):
        indexed.append(("scores", scores.index))
    else:
        indexed += [(f"scores[{k!r}]", v.index) for k, v in items if isinstance(v, pd.Series)]
    if isinstance(groups, pd.Series):
        indexed.append(("groups", groups.index))
    if len(indexed) < 2:
        return items, correct, groups
    for what, index in indexed:
        if not index.is_unique:
            first = index[index.duplicated()].tolist()[0]
            raise ValueError(
                f"{what} has the index label {first!r} more than once: predictions are "
                "matched by index label, so each must occur once (pass numpy arrays, "
                ".to_numpy(), to match by position)"
            )
    ref_name, ref = indexed[0]
    for what, index in indexed[1:]:
        if len(index) == len(ref) and not index.equals(ref) and not index.isin(ref).all():
            only = index[~index.isin(ref)].tolist()[0]
            raise ValueError(
                f"{what} and {ref_name} hold different index labels (e.g. {only!r} only in "
                f"{what}): predictions are matched by index label; align them, or pass "
                "numpy arrays (.to_numpy()) to match by position"
            )

    def aligned(v: ArrayLike) -> ArrayLike:
        ok = isinstance(v, pd.Series) and len(v) == len(ref) and not v.index.equals(ref)
        return v.reindex(ref) if ok else v

    return [(k, aligned(v)) for k, v in items], aligned(correct), aligned(groups)


def _check_scores(
    scores: Mapping[str, ArrayLike] | pd.DataFrame, correct: ArrayLike
) -> tuple[list[str], np.ndarray, np.ndarray]:
    names, s, c, _ = aligned_inputs(scores, correct)
    return names, s, c


def aligned_inputs(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    groups: ArrayLike | None = None,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray | None]:
    """The inputs of :func:`compare_scores` checked and matched: ``(names, s, c, g)`` with
    ``s`` the scores ``(S, n)`` float64 in the order of ``names``, ``c`` ``(n,)`` bool and
    ``g`` the ``groups`` ``(n,)`` as given (None without groups).

    Pandas inputs (a DataFrame of scores, Series among the scores, ``correct`` or ``groups``
    as a Series) are matched by index label (module docstring); numpy arrays by position.
    Raises ``ValueError`` naming the argument: NaN scores or groups, lengths that differ from
    ``correct``, empty input, non-boolean ``correct``, duplicated names, misaligned indexes.
    """
    items, correct, groups = _pandas_inputs(scores, correct, groups)
    if len(items) == 0:
        raise ValueError("scores must be a non-empty mapping (or DataFrame) name -> score array")
    c = check_correct(correct, "correct")
    names = [k for k, _ in items]
    if len(set(names)) != len(names):
        raise ValueError(f"scores has duplicate names: {names}")
    arrays = []
    for name, values in items:
        s = check_score(values, f"scores[{name!r}]")
        if s.size != c.size:
            raise ValueError(
                f"scores[{name!r}] and correct must have the same length; got {s.size} and {c.size}"
            )
        arrays.append(s)
    g = None
    if groups is not None:
        g = np.asarray(groups)
        if g.ndim != 1 or g.size != c.size:
            raise ValueError(
                f"groups must give one group per prediction: shape ({c.size},); got {g.shape}"
            )
        if pd.isna(g).any():
            first = int(np.flatnonzero(pd.isna(g))[0])
            raise ValueError(f"groups has a missing value (NaN/None), first at position {first}")
    return names, np.stack(arrays), c, g


def min_boot(confidence: float) -> int:
    """The fewest bootstrap resamples for a percentile interval at ``confidence``:
    ``ceil(2 / (1 - confidence))``, so that at least one resample lies beyond each end
    (``n_boot (1 - confidence) / 2 >= 1``; 40 at 0.95, 200 at 0.99). With fewer, an end is
    the most extreme resample rather than a quantile (``n_boot = 1``: the "interval" is one
    resampled value, which need not contain the estimate)."""
    level = check_level(confidence)
    return math.ceil(round(2.0 / (1.0 - level), 9))


def _check_settings(n_boot: int, confidence: float | None, seed: int) -> None:
    check_int(n_boot, "n_boot", minimum=1)
    check_seed(seed)
    if confidence is not None and n_boot < min_boot(confidence):
        raise ValueError(
            f"n_boot={n_boot} is too few resamples for a {confidence:g} percentile interval: "
            f"need n_boot >= {min_boot(confidence)} = ceil(2 / (1 - confidence)), at least "
            "one resample beyond each end"
        )


def _tie_groups(
    score: np.ndarray, correct: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """What :func:`_resampled_auarc` needs of one score, computed once for every resample:
    the order from most to least reliable (stable), the start of each tied group in that
    order (``None`` without ties), and ``correct`` in that order."""
    order = np.argsort(-score, kind="stable")
    s = score[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return order, (starts if starts.size < score.size else None), correct[order]


def _resampled_auarc(
    groups: tuple[np.ndarray, np.ndarray | None, np.ndarray],
    weights: np.ndarray,
    harmonic: np.ndarray,
    alone: np.ndarray,
) -> np.ndarray:
    """AU-ARC of resamples given as integer multiplicities ``weights`` ``(B, n)`` of the
    original predictions, without sorting each resample (``groups``: :func:`_tie_groups`;
    ``harmonic``: ``H_0..H_n``; ``alone``: :func:`_alone`, the order of the final sum).

    A resample's tied groups are the original tied groups (a copy ties with its original).
    With ``b_g`` copies in group ``g`` (original order, most reliable first), ``c_g`` of them
    correct, ``r_g = c_g / b_g``, and ``N_g``, ``K_g`` the cumulative counts after group ``g``,
    ``E[C_m] = K_{g-1} + (m - N_{g-1}) r_g`` inside the group (closed form of
    :mod:`reliquant.compare.rejection`), so with harmonic numbers ``H_k = sum_{m<=k} 1/m``

        n AU-ARC = sum_g (K_{g-1} - N_{g-1} r_g) (H_{N_g} - H_{N_{g-1}}) + r_g b_g.

    Counts stay integers (exact); the floating-point operations are the same, in the same
    order, whatever the chunk of resamples.
    """
    order, starts, correct_sorted = groups
    n = order.size
    w = np.take(weights, order, axis=1)  # C order, rows contiguous
    hit = w * correct_sorted
    if starts is not None:
        w = np.add.reduceat(w, starts, axis=1)
        hit = np.add.reduceat(hit, starts, axis=1)
    rate = hit / np.maximum(w, 1)  # r_g; 0 where the group has no copy (then hit = 0 too)
    cum_n = np.cumsum(w, axis=1)
    h = harmonic[cum_n]  # H_{N_g}; H_{N_{g-1}} is its left neighbour (H_0 = 0 first)
    term = (cum_n - w) * rate  # N_{g-1} r_g
    del cum_n, rate
    dh = np.empty_like(h)
    dh[:, 0] = h[:, 0]
    np.subtract(h[:, 1:], h[:, :-1], out=dh[:, 1:])
    del h
    np.subtract(np.cumsum(hit, axis=1) - hit, term, out=term)  # K_{g-1} - N_{g-1} r_g
    term *= dh
    term += hit
    return _row_sums(term, sequential=starts is None, alone=alone) / n


def _row_sums(a: np.ndarray, *, sequential: bool, alone: np.ndarray) -> np.ndarray:
    """Sum of each row of ``a`` (one resample each) in the order the earlier, unchunked code
    used, so that results stay bit-identical whatever the chunk size; ``a`` is overwritten.

    That order followed numpy's memory layout of a batch of :data:`_LEGACY_CHUNK_ELEMENTS`
    entries: without ties (``sequential``) left to right (``a[i, 0] + a[i, 1] + ...``), except
    a resample that formed a batch alone (``alone``), summed pairwise (numpy's ``sum`` of a
    row); with ties, pairwise.
    """
    if not sequential:
        return np.ascontiguousarray(a).sum(axis=1)
    out = np.empty(a.shape[0])
    for i in np.flatnonzero(alone):
        out[i] = a[i].sum()
    if not alone.all():
        np.cumsum(a, axis=1, out=a)
        out[~alone] = a[~alone, -1]
    return out


def _alone(n: int, n_boot: int, lo: int, b: int) -> np.ndarray:
    """For resamples ``lo..lo+b-1``: whether the earlier code scored each in a batch of its
    own (batches of ``max(1, _LEGACY_CHUNK_ELEMENTS // n)`` resamples, the last one shorter)."""
    step = max(1, _LEGACY_CHUNK_ELEMENTS // n)
    first = np.arange(lo, lo + b) // step * step
    return np.minimum(step, n_boot - first) == 1


def bootstrap_auarc(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    progress: bool | None = None,
) -> tuple[list[str], np.ndarray]:
    """AU-ARC of every score on ``n_boot`` shared bootstrap resamples: ``(names, (S, n_boot))``.

    Resample ``b`` is row ``b`` of ``block_rng(seed, "compare_bootstrap").integers(0, n,
    size=(n_boot, n))``: it depends on ``seed``, ``n`` and ``n_boot`` only, and is the same
    for every score (paired). Each resample's AU-ARC equals :func:`reliquant.compare.auarc`
    of the resampled arrays (ties, copies included, averaged exactly), computed from the
    multiplicities of the original predictions in O(n) per resample after one sort per
    score (harmonic-number form of the closed form, :func:`_resampled_auarc`). The resamples
    are drawn and scored in chunks (module docstring, Memory): the result does not depend on
    the chunk size. Inputs as in :func:`compare_scores` (pandas inputs matched by index);
    ``progress`` a bar over the resamples (:func:`reliquant.core.progress.show_progress`).
    """
    names, s, c = _check_scores(scores, correct)
    _check_settings(n_boot, None, seed)
    return names, _bootstrap(s, c, n_boot, seed, progress)


def _bootstrap(
    s: np.ndarray, c: np.ndarray, n_boot: int, seed: int, progress: bool | None = None
) -> np.ndarray:
    """:func:`bootstrap_auarc` of checked inputs: ``s`` ``(S, n)`` scores, ``c`` ``(n,)``."""
    n = c.size
    rng = block_rng(seed, "compare_bootstrap")
    out = np.empty((s.shape[0], n_boot))
    groups = [_tie_groups(score, c) for score in s]
    harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, n + 1))]
    step = max(1, _CHUNK_ELEMENTS // n)
    bar = progress_bar(total=n_boot, desc="bootstrap AU-ARC", unit="resample", progress=progress)
    for lo in range(0, n_boot, step):
        b = min(step, n_boot - lo)
        # rows lo..lo+b-1 of integers(0, n, size=(n_boot, n)): the generator's stream does
        # not depend on how the draws are split into calls
        rows = rng.integers(0, n, size=(b, n))
        flat = (rows + n * np.arange(b)[:, None]).ravel()
        del rows
        weights = np.bincount(flat, minlength=b * n).reshape(b, n)  # multiplicities, int64
        del flat
        alone = _alone(n, n_boot, lo, b)
        for j, g in enumerate(groups):
            out[j, lo : lo + b] = _resampled_auarc(g, weights, harmonic, alone)
        bar.update(b)
    bar.close()
    return out


def compare_scores(
    scores: Mapping[str, ArrayLike] | pd.DataFrame,
    correct: ArrayLike,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: bool | None = None,
) -> pd.DataFrame:
    """AU-ARC per score with a percentile bootstrap interval, and the paired difference to
    the best score with its interval (module docstring).

    Parameters
    ----------
    scores
        Name -> score array (higher = more reliable), one value per prediction, or a
        DataFrame whose columns are the scores. Names must be distinct.
    correct
        Whether each prediction is right (bool, or 0/1 integers). When it and the scores
        carry a pandas index, predictions are matched by index label (module docstring).
    n_boot
        Bootstrap resamples, shared by all scores: at least :func:`min_boot` of
        ``confidence`` (40 at 0.95). Memory does not grow with it (module docstring).
    confidence
        Level of the percentile intervals, in (0, 1).
    seed
        Seed of the resamples (an integer >= 0, :func:`bootstrap_auarc`): equal inputs and
        seed give an identical table.
    progress
        A progress bar over the resamples (:func:`reliquant.core.progress.show_progress`: by
        default on in a terminal only); 10^5 predictions take about 25 s at ``n_boot=1000``.

    Returns
    -------
    pandas.DataFrame
        One row per score, in input order, with the columns :data:`COMPARISON_COLUMNS`:
        ``score, auarc, ci_low, ci_high, diff_vs_best, diff_ci_low, diff_ci_high, best``.

    Raises ``ValueError`` naming the argument for NaN scores, lengths that differ from
    ``correct``, empty input, non-boolean ``correct``, duplicated score names or columns,
    misaligned indexes, or too few resamples; ``TypeError`` naming it for an argument of the
    wrong type (``n_boot=2.5``, ``confidence="0.95"``, ``seed=None``).
    """
    _check_settings(n_boot, confidence, seed)
    names, s, c = _check_scores(scores, correct)
    point = auarc_rows(s, np.broadcast_to(c, s.shape))
    boot = _bootstrap(s, c, n_boot, seed, progress)
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
