"""Robustness scores (RQ): tree ensembles, Naive Bayes, and a black-box Monte Carlo for any
model with a batch ``predict``. Higher = more robust = more reliable.

* :func:`tree_robustness`: ``R(x) = P(f(x') = f(x))``, ``x' ~ noise`` around ``x`` (papers
  001/002, eq. 1), by :func:`reliquant.trees.robustness_batch` (certified bounds, then
  sampling); the score is its ``estimate``. Reproducible by default: a fixed draw budget
  per row (:data:`SCORE_MAX_BOXES`, :data:`SCORE_MAX_DRAWS`), identical numbers from
  identical calls on any machine; a per-row time budget only where a user asks for one.
* :func:`nbc_robustness`: paper 000's ``eps_glob`` (eq. 13) and ``eps_loc`` (Theorem 6.1) by
  :func:`reliquant.nbc.robustness`.
* :func:`black_box_robustness`: Scher & Truegler's Monte Carlo baseline (papers 001/002,
  Section 4.3) for any ``predict(X) -> labels``: ``R_hat(x) = (1/n) sum_j 1[f(x + e_j) =
  f(x)]`` with ``e_j ~ N(0, diag(variance))`` i.i.d., optionally clipped to a range (images
  in [0, 1]), and the exact Clopper-Pearson interval

      [B^-1(a/2; k, n - k + 1), B^-1(1 - a/2; k + 1, n - k)],  a = 1 - confidence,

  ``k`` the agreeing draws (lower end 0 when ``k = 0``, upper end 1 when ``k = n``).
  Draws of many samples are concatenated into batches of ``batch_rows`` rows, so a model
  that is fast on big batches (a CNN) sees big batches whatever ``n_draws``. Sample ``i``
  draws its noise from ``block_rng(seed, "black_box", i)``: the result depends on ``seed``
  and the inputs only, never on ``batch_rows`` or the other samples.

Throughput (:func:`black_box_throughput`): the time is the model's (e.g. the paper-004 CNN
through :func:`reliquant.mlm.predict_softmax`, channels-last, batch 512, 2 torch threads)
plus drawing one normal per input value and draw (float32 for float32 inputs; numpy's
ziggurat, one core). For a small CNN the drawing costs a sizeable share of the forward
pass; ``common_noise=True`` draws once for all samples and removes that cost.

Public API: :data:`SCORE_MAX_BOXES`, :data:`SCORE_MAX_DRAWS`, :class:`MonteCarloScores`,
:func:`clopper_pearson_interval`,
:func:`tree_robustness`, :func:`nbc_robustness`, :func:`black_box_robustness`,
:func:`black_box_throughput`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from reliquant.core.arguments import check_int, check_level, check_real, check_seed
from reliquant.core.binomial import clopper_pearson_bounds
from reliquant.core.labels import match_labels
from reliquant.core.progress import progress_bar
from reliquant.core.seeding import block_rng

__all__ = [
    "SCORE_MAX_BOXES",
    "SCORE_MAX_DRAWS",
    "MonteCarloScores",
    "black_box_robustness",
    "black_box_throughput",
    "clopper_pearson_interval",
    "nbc_robustness",
    "tree_robustness",
]


#: Boxes certified per row by :func:`tree_robustness` without ``time_budget``: none (a score
#: that ranks predictions gains little from certified bounds, whose box integrals cost a
#: large forest about a second a row; ``max_boxes=`` asks for them).
SCORE_MAX_BOXES = 0
#: Kernel draws per row by :func:`tree_robustness` without ``time_budget`` (a 95 % interval
#: half-width of at most about 0.006).
SCORE_MAX_DRAWS = 2**15


def tree_robustness(
    model: Any,
    X: ArrayLike,
    noise: Any,
    *,
    time_budget: float | None = None,
    seed: int = 0,
    return_frame: bool = False,
    **kwargs: Any,
) -> np.ndarray | pd.DataFrame:
    """Probabilistic robustness ``R(x)`` of a tree ensemble's prediction for every row of
    ``X`` under ``noise``, by :func:`reliquant.trees.robustness_batch`.

    ``model``: a fitted scikit-learn tree / forest / gradient boosting classifier, XGBoost or
    LightGBM classifier (anything :func:`reliquant.trees.extract_ensemble` reads).
    ``X``: a 2-D array in the model's feature order, or a DataFrame, whose columns are
    matched to the model's features **by name** when the model knows them (any order; a
    missing, unknown or repeated name is refused, naming both lists), as
    :func:`reliquant.trees.robustness_batch` does.
    ``noise``: :class:`reliquant.trees.Gaussian` (variance scalar, per feature or covariance)
    or :class:`reliquant.trees.Norta`, bound to each row. ``seed``: row ``i`` uses
    ``robustness_batch``'s per-row stream; ``kwargs`` go to :func:`reliquant.trees.robustness`
    (e.g. ``half_width``, ``max_boxes``, ``max_draws``).

    **Reproducible by default**: without ``time_budget`` every row is computed with a fixed
    amount of work, at most ``max_boxes`` certified boxes (default :data:`SCORE_MAX_BOXES`)
    and ``max_draws`` draws (default :data:`SCORE_MAX_DRAWS`): the numbers depend on the
    inputs and ``seed`` only, identical between two calls and across machines.
    ``time_budget`` (seconds per row, where a user asks for it): the timed mode, whose
    number of draws depends on how fast the machine is at that moment; every row gets one
    call (no reruns: a timed row always draws, and the batch's wall time stays within its
    budgets, see :func:`reliquant.trees.robustness_batch`).

    Returns the ``estimate`` column, float64 ``(n,)`` (higher = more robust), or with
    ``return_frame`` the whole table (``label``, ``lower``, ``upper``, ``estimate``,
    ``ci_low``, ``ci_high``, ``exact``, ``n_draws``, ``budget``, ...; ``attrs``: ``seconds``,
    ``overrun``, ``budget``, what bounded the rows).
    """
    from reliquant.trees import robustness_batch

    if time_budget is not None:
        check_real(time_budget, "time_budget", low=0.0, low_open=True)
    else:
        kwargs.setdefault("max_boxes", SCORE_MAX_BOXES)
        kwargs.setdefault("max_draws", SCORE_MAX_DRAWS)
    check_seed(seed)
    if isinstance(X, pd.DataFrame):
        # passed on as it is: robustness_batch matches its columns to the model's features by
        # name (reordered, or refused when a name is missing or unknown)
        x = X
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X must have at least one row and one column; got {X.shape}")
    else:
        x = np.asarray(X, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] == 0:
            raise ValueError(f"X must be 2-D (n_samples, n_features) with n >= 1; got {x.shape}")
    if time_budget is not None:
        kwargs["time_budget"] = time_budget
    frame = robustness_batch(model, x, noise, seed=seed, **kwargs)
    return frame if return_frame else frame["estimate"].to_numpy(dtype=np.float64)


def nbc_robustness(model: Any, X: pd.DataFrame | ArrayLike, **kwargs: Any) -> dict[str, np.ndarray]:
    """``eps_glob`` (paper 000, eq. 13) and ``eps_loc`` (Theorem 6.1) of a Naive Bayes
    classifier's predictions, by :func:`reliquant.nbc.robustness`.

    ``model``: :func:`reliquant.nbc.fit_table`'s result (``X`` a DataFrame of the training
    columns), or a scikit-learn ``CategoricalNB`` (``X`` integer codes). ``kwargs`` go to
    :func:`reliquant.nbc.robustness` (``tol``). Returns ``{"prediction", "eps_glob",
    "eps_loc"}`` as numpy arrays; both epsilons: higher = more robust.
    """
    from reliquant.nbc import robustness

    frame = robustness(model, X, **kwargs)
    return {
        "prediction": frame["prediction"].to_numpy(),
        "eps_glob": frame["eps_glob"].to_numpy(dtype=np.float64),
        "eps_loc": frame["eps_loc"].to_numpy(dtype=np.float64),
    }


def clopper_pearson_interval(
    k: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial interval for ``k`` successes of ``n`` (vectorised):
    ``[beta.ppf(a/2, k, n-k+1), beta.ppf(1-a/2, k+1, n-k)]``, ``a = 1 - confidence``, with
    0 below at ``k = 0`` and 1 above at ``k = n``
    (:func:`reliquant.core.binomial.clopper_pearson_bounds`)."""
    return clopper_pearson_bounds(k, n, confidence)


@dataclass(frozen=True)
class MonteCarloScores:
    """Black-box Monte Carlo robustness per sample: ``estimate = n_agree / n_draws`` (the
    score), ``[ci_low, ci_high]`` its Clopper-Pearson interval at ``confidence``, ``label``
    the clean prediction f(x), ``seconds`` the wall time, ``n_evaluated`` the noisy inputs
    predicted."""

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_agree: np.ndarray
    n_draws: int
    label: np.ndarray
    confidence: float
    seconds: float

    @property
    def n_evaluated(self) -> int:
        return int(self.n_draws * self.estimate.size)

    def to_frame(self) -> pd.DataFrame:
        """One row per sample: label, estimate, ci_low, ci_high, n_agree, n_draws."""
        return pd.DataFrame(
            {
                "label": self.label,
                "estimate": self.estimate,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "n_agree": self.n_agree,
                "n_draws": self.n_draws,
            }
        )


def _labels_of(predict: Callable[[np.ndarray], Any], batch: np.ndarray) -> np.ndarray:
    out = np.asarray(predict(batch))
    if out.shape != (batch.shape[0],):
        raise ValueError(
            f"predict must return one label per row: shape ({batch.shape[0]},); got {out.shape}"
        )
    return out


def _label_kind(a: np.ndarray) -> str:
    """What values an array of labels holds: "numbers" (bool, integer, float), "strings", or
    the type names of an object array's mixed contents."""
    if a.dtype.kind in "biuf":
        return "numbers"
    if a.dtype.kind in "US":
        return "strings"
    if a.dtype.kind == "O":
        kinds = {
            "strings" if isinstance(v, str | bytes)
            else "numbers" if isinstance(v, Real | np.number)
            else type(v).__name__
            for v in a.ravel()
        }  # fmt: skip
        return " and ".join(sorted(kinds))
    return f"dtype {a.dtype}"


def _check_given_labels(labels: np.ndarray, predict: Callable, predicted: np.ndarray) -> np.ndarray:
    """``labels`` as ``predict`` returns them (``predicted``: its output on one row). When
    ``predict`` is a bound method of a model with ``classes_``, labels are matched to them by
    value (:func:`reliquant.core.labels.match_labels`: ``1.0`` and ``"1"`` are the class
    ``1``; a missing label or one outside ``classes_`` refused naming its row). Otherwise a
    missing label, or labels that can never equal what ``predict`` returns (the strings
    ``'1'`` against integer predictions: every draw would count as a change of prediction),
    are refused."""
    classes = getattr(getattr(predict, "__self__", None), "classes_", None)
    if classes is not None:
        classes = np.asarray(classes)
        return classes[match_labels(labels, classes, what="labels")]
    missing = np.flatnonzero(pd.isna(labels))
    if missing.size:
        raise ValueError(f"labels: row {missing[0]} has no label (NaN or None)")
    given, returned = _label_kind(labels), _label_kind(predicted)
    if given != returned:
        raise ValueError(
            f"labels hold {given} (dtype {labels.dtype}) but predict returns {returned} (dtype "
            f"{predicted.dtype}): a label would never equal a prediction; pass labels of the "
            f"predictions' type, e.g. predict(X) itself"
        )
    return labels


def black_box_robustness(
    predict: Callable[[np.ndarray], Any],
    X: ArrayLike,
    variance: float | ArrayLike,
    *,
    n_draws: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    clip: tuple[float, float] | None = None,
    batch_rows: int = 65536,
    labels: ArrayLike | None = None,
    common_noise: bool = False,
    progress: bool | None = None,
) -> MonteCarloScores:
    """Monte Carlo robustness of any model's predictions under Gaussian input noise (module
    docstring): ``R_hat(x_i)`` over ``n_draws`` copies ``x_i + e``, ``e ~ N(0, variance)``.

    Parameters
    ----------
    predict
        ``predict(batch) -> labels``, one label per row of a ``(rows, *X.shape[1:])`` batch
        (e.g. ``model.predict``, or a CNN's argmax of ``predict_softmax``).
    X
        Samples ``(n, ...)`` (tabular ``(n, d)`` or images ``(n, 28, 28)``); float32 inputs
        are perturbed in float32 (faster), anything else in float64.
    variance
        Noise variance: a scalar, or per feature (broadcastable to ``X.shape[1:]``); 0 holds a
        feature fixed.
    n_draws, seed, confidence
        Draws per sample (an integer >= 1), the seed of the per-sample streams (an integer
        >= 0), the interval's level (in (0, 1)).
    clip
        ``(low, high)``: noisy inputs clipped to that range (e.g. ``(0, 1)`` for images);
        ``None`` leaves them as drawn.
    batch_rows
        Noisy rows per ``predict`` call, an integer >= 1 (memory and speed only; results do
        not depend on it).
    labels
        The clean predictions ``f(x_i)`` if already known; default ``predict`` on ``X``.
        When ``predict`` is a bound method of a model with ``classes_``, matched to them by
        value (``1.0`` and ``"1"`` are the class ``1``; a label none of them is refused naming
        its row); otherwise refused (``ValueError`` naming both types) when they cannot equal
        ``predict``'s output (e.g. strings against integer predictions). A missing label
        (NaN, None) is refused naming its row.
    common_noise
        ``False`` (default): every sample draws its own noise (``block_rng(seed, "black_box",
        i)``). ``True``: one set of ``n_draws`` noise vectors (``block_rng(seed,
        "black_box_common")``, held in memory: ``n_draws x`` features) is added to every
        sample (common random numbers). Each sample's draws are still i.i.d., so its estimate
        and Clopper-Pearson interval stay exact; estimates of different samples become
        dependent. It removes the cost of drawing the noise (module docstring).
    progress
        A progress bar over the samples (:func:`reliquant.core.progress.show_progress`: by
        default on in a terminal only).
    """
    x = np.asarray(X)
    if x.ndim < 2 or x.shape[0] == 0:
        raise ValueError(f"X must be (n_samples, ...) with n >= 1 and features; got {x.shape}")
    dtype = np.float32 if x.dtype == np.float32 else np.float64
    x = x.astype(dtype, copy=False)
    if not np.isfinite(x).all():
        raise ValueError("X must be finite (no NaN or inf)")
    check_int(n_draws, "n_draws", minimum=1)
    check_int(batch_rows, "batch_rows", minimum=1)
    check_level(confidence)
    check_seed(seed)
    v = np.asarray(variance, dtype=np.float64)
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError("variance must be finite and >= 0")
    try:
        sd = np.broadcast_to(np.sqrt(v), x.shape[1:]).astype(dtype)
    except ValueError:
        raise ValueError(
            f"variance of shape {v.shape} does not broadcast to a sample's shape {x.shape[1:]}"
        ) from None
    if clip is not None and not clip[0] < clip[1]:
        raise ValueError(f"clip must be (low, high) with low < high; got {clip!r}")
    t0 = time.perf_counter()
    n = x.shape[0]
    if labels is None:
        lab = np.concatenate(
            [_labels_of(predict, x[i : i + batch_rows]) for i in range(0, n, batch_rows)]
        )
    else:
        lab = np.asarray(labels)
        if lab.shape != (n,):
            raise ValueError(f"labels must have one label per row of X ({n}); got {lab.shape}")
        lab = _check_given_labels(lab, predict, _labels_of(predict, x[:1]))

    rows = min(batch_rows, n * n_draws)
    buf = np.empty((rows, *x.shape[1:]), dtype=dtype)
    owner = np.empty(rows, dtype=np.int64)
    agree = np.zeros(n, dtype=np.int64)
    fill = 0

    def flush(m: int) -> None:
        batch = buf[:m]
        if clip is not None:
            np.clip(batch, clip[0], clip[1], out=batch)
        same = _labels_of(predict, batch) == lab[owner[:m]]
        agree[:] += np.bincount(owner[:m], weights=same, minlength=n).astype(np.int64)

    common = None
    if common_noise:
        common = block_rng(seed, "black_box_common").standard_normal(
            (n_draws, *x.shape[1:]), dtype=dtype
        )
        common *= sd
    bar = progress_bar(total=n, desc="Monte Carlo robustness", unit="sample", progress=progress)
    for i in range(n):
        bar.update(1)
        rng = None if common_noise else block_rng(seed, "black_box", i)
        left = n_draws
        while left:
            take = min(left, rows - fill)
            part = buf[fill : fill + take]
            if common is None:
                rng.standard_normal(dtype=dtype, out=part)
                part *= sd
                part += x[i]
            else:
                done = n_draws - left
                np.add(common[done : done + take], x[i], out=part)
            owner[fill : fill + take] = i
            fill += take
            left -= take
            if fill == rows:
                flush(fill)
                fill = 0
    if fill:
        flush(fill)
    bar.close()
    lo, hi = clopper_pearson_interval(agree, n_draws, confidence)
    return MonteCarloScores(
        estimate=agree / n_draws,
        ci_low=lo,
        ci_high=hi,
        n_agree=agree,
        n_draws=int(n_draws),
        label=lab,
        confidence=confidence,
        seconds=time.perf_counter() - t0,
    )


def black_box_throughput(
    predict: Callable[[np.ndarray], Any],
    X: ArrayLike,
    variance: float | ArrayLike,
    *,
    n_draws: int = 1000,
    **kwargs: Any,
) -> dict[str, float]:
    """Run :func:`black_box_robustness` once and report its speed: ``{"samples",
    "noisy_inputs", "seconds", "inputs_per_second"}`` (noise drawing, clipping and ``predict``
    included; the clean predictions too)."""
    res = black_box_robustness(predict, X, variance, n_draws=n_draws, **kwargs)
    return {
        "samples": float(res.estimate.size),
        "noisy_inputs": float(res.n_evaluated),
        "seconds": res.seconds,
        "inputs_per_second": res.n_evaluated / max(res.seconds, 1e-12),
    }
